/**
 * In-memory storage of every object, the global resourceVersion counter, and the per-resource
 * event logs that watches resume from.
 *
 * Stored objects are never mutated after commit: writers build a new object and commit it. Each
 * stored object caches its JSON once, so lists and watch events are assembled from strings.
 */
import type { KubeObject } from './kube-object';
import { RevisionWaiters } from '../../../common/src/runtime/revision-waiters';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export class StoredObject {
  private cachedJson: string | undefined;

  constructor(readonly obj: KubeObject, readonly rv: number) {}

  get json(): string {
    if (this.cachedJson === undefined) this.cachedJson = JSON.stringify(this.obj);
    return this.cachedJson;
  }

  get namespace(): string {
    return this.obj.metadata.namespace ?? '';
  }

  get name(): string {
    return this.obj.metadata.name ?? '';
  }
}

export class StoreEvent {
  /** Serialized forms of this event, one per output format, built at most once. */
  readonly cache = new Map<string, string>();

  constructor(
    readonly resource: string,
    readonly type: EventType,
    readonly object: StoredObject,
    readonly previous: StoredObject | undefined,
  ) {}

  get rv(): number {
    return this.object.rv;
  }
}

export interface StoreWatcher {
  /** Only events in this namespace ('' or undefined = all). */
  readonly namespace?: string;
  onEvent(event: StoreEvent): void;
  /** Ends the watch (the client sees the stream close). */
  close?(): void;
}

export type CommitListener = (event: StoreEvent) => void;

class ResourceBucket {
  readonly byNamespace = new Map<string, Map<string, StoredObject>>();
  count = 0;
  writes = 0;
  private log: StoreEvent[] = [];
  private head = 0;
  /** Resuming from an RV older than this is 410 Gone. */
  compactedRv = 0;
  readonly watchers = new Set<StoreWatcher>();

  constructor(private readonly window: number) {}

  append(event: StoreEvent): void {
    this.log.push(event);
    const oldest = this.log[this.head];
    if (oldest && this.log.length - this.head > this.window) {
      this.compactedRv = oldest.rv;
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.log.length) {
        this.log = this.log.slice(this.head);
        this.head = 0;
      }
    }
  }

  /** Events with rv > `rv`, or undefined when some of them are no longer retained. */
  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    let lo = this.head;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.log[mid]?.rv ?? Number.POSITIVE_INFINITY) <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.log.slice(lo);
  }
}

export interface ObjectStoreOptions {
  /** Events retained per resource for watch resume (default 10,000). */
  watchWindow?: number;
  /** Told about a listener or watcher that threw (the commit itself stands). */
  onListenerError?: (err: unknown) => void;
}

export class ObjectStore {
  private readonly buckets = new Map<string, ResourceBucket>();
  private readonly listeners: CommitListener[] = [];
  private rv = 1;
  private forcedGoneRv = 0;
  private readonly window: number;

  private readonly onListenerError: (err: unknown) => void;
  /** Reads waiting for the store to reach a resourceVersion (`reached`). */
  private readonly rvWaiters = new RevisionWaiters();

  constructor(options: ObjectStoreOptions = {}) {
    this.window = Math.max(1, options.watchWindow ?? 10_000);
    this.onListenerError = options.onListenerError ?? (() => undefined);
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  private bucket(resource: string): ResourceBucket {
    let b = this.buckets.get(resource);
    if (!b) {
      b = new ResourceBucket(this.window);
      b.compactedRv = this.forcedGoneRv;
      this.buckets.set(resource, b);
    }
    return b;
  }

  get(resource: string, namespace: string, name: string): StoredObject | undefined {
    return this.buckets.get(resource)?.byNamespace.get(namespace)?.get(name);
  }

  /** All objects of a resource, or those of one namespace. Unordered. */
  list(resource: string, namespace?: string): StoredObject[] {
    const b = this.buckets.get(resource);
    if (!b) return [];
    if (namespace) return [...(b.byNamespace.get(namespace)?.values() ?? [])];
    const out: StoredObject[] = [];
    for (const m of b.byNamespace.values()) for (const o of m.values()) out.push(o);
    return out;
  }

  count(resource: string, namespace?: string): number {
    const b = this.buckets.get(resource);
    if (!b) return 0;
    return namespace ? (b.byNamespace.get(namespace)?.size ?? 0) : b.count;
  }

  /** Resources (storage keys) that hold at least one object. */
  resources(): string[] {
    return [...this.buckets.entries()].filter(([, b]) => b.count > 0).map(([k]) => k);
  }

  /**
   * Stores `obj` (ADDED/MODIFIED) or removes it (DELETED) under a fresh resourceVersion, logs the
   * event and tells listeners and watchers. `obj` must not be mutated afterwards.
   */
  commit(resource: string, type: EventType, obj: KubeObject): StoredObject {
    const b = this.bucket(resource);
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    const nsMap = b.byNamespace.get(ns);
    const previous = nsMap?.get(name);
    this.rv++;
    obj.metadata.resourceVersion = String(this.rv);
    const stored = new StoredObject(obj, this.rv);
    if (type === 'DELETED') {
      if (nsMap?.delete(name)) b.count--;
      if (nsMap && nsMap.size === 0) b.byNamespace.delete(ns);
    } else {
      if (nsMap) nsMap.set(name, stored);
      else b.byNamespace.set(ns, new Map([[name, stored]]));
      if (!previous) b.count++;
    }
    const event = new StoreEvent(resource, type, stored, previous);
    b.append(event);
    if (this.rvWaiters.size > 0) this.rvWaiters.advance(BigInt(this.rv));
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
    for (const w of b.watchers) {
      if (!w.namespace || w.namespace === ns) {
        try {
          w.onEvent(event);
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
    return stored;
  }

  /**
   * Resolves true once the store's resourceVersion is at least `rv` (at once when it is), false
   * when `timeoutMs` passes first: a read that names a resourceVersion the server has not reached
   * yet waits for it, as kube-apiserver's watch cache does.
   */
  reached(rv: bigint, timeoutMs: number): Promise<boolean> {
    if (BigInt(this.rv) >= rv) return Promise.resolve(true);
    return this.rvWaiters.wait(rv, timeoutMs);
  }

  /** Counts one write request (create/update/patch/delete) that reached the resource, whatever its outcome. */
  countWrite(resource: string): void {
    this.bucket(resource).writes++;
  }

  writeCount(resource?: string): number {
    if (resource !== undefined) return this.buckets.get(resource)?.writes ?? 0;
    let total = 0;
    for (const b of this.buckets.values()) total += b.writes;
    return total;
  }

  /** Events of a resource after `rv`, or undefined when `rv` is older than the retained window. */
  eventsSince(resource: string, rv: number): StoreEvent[] | undefined {
    return this.bucket(resource).since(rv);
  }

  /** The oldest RV a watch or continue token of this resource may resume from. */
  compactedRv(resource: string): number {
    return this.bucket(resource).compactedRv;
  }

  /**
   * Makes every resume from an RV older than now 410 Gone, and ends every open watch so that
   * clients come back, get 410 and relist.
   */
  forceGone(): void {
    // Step the RV so that every RV handed out so far is older than the compaction point, while
    // lists made from now on return an RV that can be resumed.
    this.rv++;
    this.forcedGoneRv = this.rv;
    for (const b of this.buckets.values()) {
      b.compactedRv = this.rv;
      for (const w of [...b.watchers]) w.close?.();
    }
  }

  /** Ends the open watches of one resource (its CRD was deleted). */
  closeWatchers(resource: string): void {
    const b = this.buckets.get(resource);
    if (b) for (const w of [...b.watchers]) w.close?.();
  }

  /** Ends every open watch (server shutdown). */
  closeAllWatchers(): void {
    for (const b of this.buckets.values()) for (const w of [...b.watchers]) w.close?.();
  }

  addWatcher(resource: string, watcher: StoreWatcher): void {
    this.bucket(resource).watchers.add(watcher);
  }

  removeWatcher(resource: string, watcher: StoreWatcher): void {
    this.buckets.get(resource)?.watchers.delete(watcher);
  }

  onCommit(listener: CommitListener): void {
    this.listeners.push(listener);
  }

  /** Every stored object by resource, for snapshots. */
  dump(): { resourceVersion: number; resources: Record<string, KubeObject[]> } {
    const resources: Record<string, KubeObject[]> = {};
    for (const [key, b] of this.buckets) {
      if (b.count === 0) continue;
      resources[key] = this.list(key).map((s) => s.obj);
    }
    return { resourceVersion: this.rv, resources };
  }

  /** Loads objects without events (used before the server starts serving). */
  load(dump: { resourceVersion: number; resources: Record<string, KubeObject[]> }): void {
    for (const [key, objects] of Object.entries(dump.resources)) {
      const b = this.bucket(key);
      for (const obj of objects) {
        const ns = obj.metadata.namespace ?? '';
        const rv = Number(obj.metadata.resourceVersion ?? 0);
        let m = b.byNamespace.get(ns);
        if (!m) b.byNamespace.set(ns, (m = new Map<string, StoredObject>()));
        if (!m.has(obj.metadata.name ?? '')) b.count++;
        m.set(obj.metadata.name ?? '', new StoredObject(obj, rv));
      }
    }
    this.rv = Math.max(this.rv, dump.resourceVersion);
    for (const b of this.buckets.values()) b.compactedRv = this.rv;
  }
}
