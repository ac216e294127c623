/**
 * The in-process controllers a real cluster runs next to its API server:
 * - owner-reference garbage collection (background, foreground and orphan propagation);
 * - the namespace controller (a deleted namespace empties, then disappears);
 * - CRD lifecycle (a created/updated CRD is served at once; a deleted one takes its objects along).
 *
 * It follows store commits, keeps an index of dependents by owner uid, and works off a queue on
 * the event loop so that API requests never wait for cascades.
 */
import type { Logger } from '../../../common/src/logger';
import { ApiError } from './api-error';
import { deepCopy, type KubeObject } from './kube-object';
import type { ObjectStore, StoredObject, StoreEvent } from './object-store';
import type { ResourceOperations } from './resource-operations';
import { resourceTypeFromCrd, type ResourceRegistry } from './resource-registry';
import { resourceKey, type ResourceType } from './resource-type';

type Task =
  | { type: 'ownerGone'; uid: string }
  | { type: 'foreground'; ref: string }
  | { type: 'orphan'; ref: string }
  | { type: 'namespace'; name: string }
  | { type: 'orphanCheck'; ref: string };

const NAMESPACES = resourceKey('', 'namespaces');
const CRDS = resourceKey('apiextensions.k8s.io', 'customresourcedefinitions');

function refOf(resource: string, namespace: string, name: string): string {
  return `${resource}\u0000${namespace}\u0000${name}`;
}

function splitRef(ref: string): { resource: string; namespace: string; name: string } {
  const [resource = '', namespace = '', name = ''] = ref.split('\u0000');
  return { resource, namespace, name };
}

function splitResourceKey(key: string): { group: string; plural: string } {
  const i = key.indexOf('/');
  return { group: key.slice(0, i), plural: key.slice(i + 1) };
}

export interface GarbageCollectorDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  operations: ResourceOperations;
  logger: Logger;
}

export class GarbageCollector {
  private readonly dependents = new Map<string, Set<string>>();
  private readonly uids = new Map<string, string>();
  private readonly queue: Task[] = [];
  private readonly queued = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly deps: GarbageCollectorDeps) {}

  /** Follows the store from now on and indexes what it already holds. */
  start(): void {
    for (const key of this.deps.store.resources()) {
      for (const s of this.deps.store.list(key)) this.index(key, undefined, s.obj);
    }
    this.deps.store.onCommit((event) => this.onCommit(event));
  }

  stop(): void {
    this.stopped = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.resolveIdle();
  }

  /** Resolves when no cascade work is pending. */
  whenIdle(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private resolveIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private index(resource: string, previous: KubeObject | undefined, current: KubeObject | undefined): void {
    const obj = current ?? previous;
    if (!obj) return;
    const ref = refOf(resource, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    for (const o of previous?.metadata.ownerReferences ?? []) this.dependents.get(o.uid)?.delete(ref);
    for (const o of current?.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(o.uid);
      if (!set) this.dependents.set(o.uid, (set = new Set()));
      set.add(ref);
    }
    if (previous?.metadata.uid && !current) this.uids.delete(previous.metadata.uid);
    if (current?.metadata.uid) this.uids.set(current.metadata.uid, ref);
  }

  private enqueue(task: Task): void {
    if (this.stopped) return;
    const key = JSON.stringify(task);
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(task);
    this.scheduled ??= setImmediate(() => this.drain());
  }

  private onCommit(event: StoreEvent): void {
    const obj = event.object.obj;
    const meta = obj.metadata;
    const ref = refOf(event.resource, meta.namespace ?? '', meta.name ?? '');
    const deleted = event.type === 'DELETED';
    this.index(event.resource, event.previous?.obj, deleted ? undefined : obj);
    if (event.resource === CRDS) this.onCrd(event);
    if (deleted) {
      if (meta.uid) this.enqueue({ type: 'ownerGone', uid: meta.uid });
      for (const owner of meta.ownerReferences ?? []) {
        const ownerRef = this.uids.get(owner.uid);
        if (ownerRef) this.enqueue({ type: 'foreground', ref: ownerRef });
      }
      if (meta.namespace) {
        const ns = this.deps.store.get(NAMESPACES, '', meta.namespace);
        if (ns?.obj.metadata.deletionTimestamp) this.enqueue({ type: 'namespace', name: meta.namespace });
      }
      return;
    }
    if (event.type === 'ADDED' && (meta.ownerReferences ?? []).length > 0) this.enqueue({ type: 'orphanCheck', ref });
    if (meta.deletionTimestamp) {
      const finalizers = meta.finalizers ?? [];
      if (finalizers.includes('orphan')) this.enqueue({ type: 'orphan', ref });
      if (finalizers.includes('foregroundDeletion')) this.enqueue({ type: 'foreground', ref });
      if (event.resource === NAMESPACES) this.enqueue({ type: 'namespace', name: meta.name ?? '' });
    }
  }

  private onCrd(event: StoreEvent): void {
    const rt = resourceTypeFromCrd(event.object.obj);
    if (event.type !== 'DELETED') {
      if (rt.group && rt.plural && rt.versions.length > 0) this.deps.registry.add(rt);
      return;
    }
    this.deps.registry.remove(rt.group, rt.plural);
    const key = resourceKey(rt.group, rt.plural);
    for (const s of this.deps.store.list(key)) this.deps.store.commit(key, 'DELETED', deepCopy(s.obj));
    this.deps.store.closeWatchers(key);
  }

  private drain(): void {
    this.scheduled = undefined;
    const started = Date.now();
    while (!this.stopped) {
      const task = this.queue.shift();
      if (task === undefined) break;
      this.queued.delete(JSON.stringify(task));
      try {
        this.run(task);
      } catch (err) {
        this.deps.logger.warn('garbage collection step failed', { task, error: err instanceof Error ? err.message : String(err) });
      }
      if (Date.now() - started > 20 && this.queue.length > 0) {
        this.scheduled = setImmediate(() => this.drain());
        return;
      }
    }
    this.resolveIdle();
  }

  private lookup(ref: string): { rt: ResourceType; stored: StoredObject; obj: KubeObject; namespace: string; name: string } | undefined {
    const { resource, namespace, name } = splitRef(ref);
    const { group, plural } = splitResourceKey(resource);
    const rt = this.deps.registry.get(group, plural);
    const stored = this.deps.store.get(resource, namespace, name);
    if (!rt || !stored) return undefined;
    return { rt, stored, obj: stored.obj, namespace, name };
  }

  private deleteRef(ref: string, policy: 'Background' | 'Foreground'): void {
    const found = this.lookup(ref);
    if (!found || found.obj.metadata.deletionTimestamp) return;
    try {
      this.deps.operations.delete({ rt: found.rt, version: found.rt.versions[0]?.name ?? 'v1', namespace: found.namespace }, found.name, { propagationPolicy: policy });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }

  private run(task: Task): void {
    switch (task.type) {
      case 'ownerGone': {
        for (const ref of [...(this.dependents.get(task.uid) ?? [])]) {
          const found = this.lookup(ref);
          if (!found) continue;
          const others = (found.obj.metadata.ownerReferences ?? []).filter((o) => o.uid !== task.uid && this.uids.has(o.uid));
          if (others.length > 0) {
            this.deps.operations.updateMetadata(found.rt, found.stored, (m) => {
              m.ownerReferences = (m.ownerReferences ?? []).filter((o) => o.uid !== task.uid);
            });
          } else this.deleteRef(ref, 'Background');
        }
        if ((this.dependents.get(task.uid)?.size ?? 0) === 0) this.dependents.delete(task.uid);
        return;
      }
      case 'orphanCheck': {
        const found = this.lookup(task.ref);
        if (!found) return;
        const owners = found.obj.metadata.ownerReferences ?? [];
        if (owners.length > 0 && owners.every((o) => !this.uids.has(o.uid))) this.deleteRef(task.ref, 'Background');
        return;
      }
      case 'orphan': {
        const owner = this.lookup(task.ref);
        if (!owner?.obj.metadata.deletionTimestamp || !owner.obj.metadata.uid) return;
        const uid = owner.obj.metadata.uid;
        for (const ref of [...(this.dependents.get(uid) ?? [])]) {
          const dep = this.lookup(ref);
          if (!dep) continue;
          this.deps.operations.updateMetadata(dep.rt, dep.stored, (m) => {
            m.ownerReferences = (m.ownerReferences ?? []).filter((o) => o.uid !== uid);
            if (m.ownerReferences.length === 0) delete m.ownerReferences;
          });
        }
        this.removeFinalizer(task.ref, 'orphan');
        return;
      }
      case 'foreground': {
        const owner = this.lookup(task.ref);
        if (!owner?.obj.metadata.deletionTimestamp || !owner.obj.metadata.uid) return;
        if (!(owner.obj.metadata.finalizers ?? []).includes('foregroundDeletion')) return;
        const remaining = [...(this.dependents.get(owner.obj.metadata.uid) ?? [])].filter((ref) => this.lookup(ref));
        for (const ref of remaining) this.deleteRef(ref, 'Foreground');
        if (remaining.every((ref) => !this.lookup(ref))) this.removeFinalizer(task.ref, 'foregroundDeletion');
        return;
      }
      case 'namespace':
        this.cleanNamespace(task.name);
        return;
    }
  }

  private removeFinalizer(ref: string, finalizer: string): void {
    const found = this.lookup(ref);
    if (!found) return;
    this.deps.operations.updateMetadata(found.rt, found.stored, (m) => {
      m.finalizers = (m.finalizers ?? []).filter((f) => f !== finalizer);
      if (m.finalizers.length === 0) delete m.finalizers;
    });
  }

  private cleanNamespace(name: string): void {
    const ns = this.deps.store.get(NAMESPACES, '', name);
    if (!ns?.obj.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const rt of this.deps.registry.all()) {
      if (!rt.namespaced) continue;
      const key = resourceKey(rt.group, rt.plural);
      for (const s of this.deps.store.list(key, name)) {
        if (!s.obj.metadata.deletionTimestamp) this.deleteRef(refOf(key, name, s.name), 'Background');
      }
      remaining += this.deps.store.count(key, name);
    }
    for (const key of this.deps.store.resources()) {
      if (!this.deps.registry.get(splitResourceKey(key).group, splitResourceKey(key).plural)) remaining += this.deps.store.count(key, name);
    }
    if (remaining === 0) {
      const current = this.deps.store.get(NAMESPACES, '', name);
      if (!current) return;
      // As on kube-apiserver: the namespace controller's own finalizer (spec) goes once the
      // namespace is empty; the object stays Terminating until its metadata finalizers are gone too
      // (their release is an update of the namespace, which brings it back here).
      if ((current.obj.metadata.finalizers ?? []).length > 0) {
        const spec = current.obj.spec as { finalizers?: unknown[] } | undefined;
        if ((spec?.finalizers ?? []).length > 0) this.deps.store.commit(NAMESPACES, 'MODIFIED', { ...deepCopy(current.obj), spec: { finalizers: [] } });
        return;
      }
      this.deps.store.commit(NAMESPACES, 'DELETED', { ...deepCopy(current.obj), spec: { finalizers: [] } });
    }
  }
}
