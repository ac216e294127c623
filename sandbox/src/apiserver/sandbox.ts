/**
 * `startSandbox()`: wires store, registry, operations, controllers, faults and the HTTP server
 * into one in-process Kubernetes API server on 127.0.0.1.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../../../common/src/logger';
import { ApiServer } from './api-server';
import { Discovery } from './discovery';
import { Faults, type FaultInjector } from './fault-injector';
import { GarbageCollector } from './garbage-collector';
import { kubeconfigYaml } from './kubeconfig';
import type { KubeObject } from './kube-object';
import { readManifests } from './manifest-files';
import { ObjectStore } from './object-store';
import { ResourceOperations } from './resource-operations';
import { ResourceRegistry, resourceTypeFromCrd } from './resource-registry';
import { resourceKey } from './resource-type';
import { systemClock, type Clock } from '../../../common/src/runtime/clock';
import { rfc3339 } from '../../../common/src/kube/timestamps';

export interface SandboxOptions {
  /** 0 = random (default). */
  port?: number;
  /** CRD YAML files/folders applied at start (default: none). */
  crdDirs?: string[];
  /** Events retained per resource for watch resume (default 10,000); older RV -> 410 Gone. */
  watchWindow?: number;
  /** Optional persistence: loaded at start if present, saved on stop and every `snapshotIntervalMs`. */
  snapshotFile?: string;
  snapshotIntervalMs?: number;
  /** How often watches that allow bookmarks get one (default 5 s). */
  bookmarkIntervalMs?: number;
  logger?: Logger;
  /** The clock (default: real time). */
  now?: Clock;
  /** Random source for fault injection (default Math.random). */
  random?: () => number;
  /**
   * Waits out injected latency (default: a timer, cleared when `signal` aborts: the request's
   * connection closed); a test passes one it can observe and release.
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Read-only counters for tests and benchmarks. */
export interface SandboxStore {
  /** Objects stored, for a resource (`pods`, `gamerooms`, `gamerooms.roomkeeper.io`) or all. */
  count(resource?: string, namespace?: string): number;
  /** API write requests (create/update/patch/delete, incl. subresources, dry runs, no-ops and refused ones; not injected faults) for a resource or all. */
  writeCount(resource?: string): number;
  /** The current resourceVersion. */
  readonly resourceVersion: number;
}

export interface Sandbox {
  readonly url: string;
  kubeconfigYaml(): string;
  writeKubeconfig(file: string): Promise<void>;
  kubeConfig(): KubeConfig;
  readonly faults: FaultInjector;
  readonly store: SandboxStore;
  /** Write requests per resource (see SandboxStore.writeCount). */
  writeCount(resource?: string): number;
  /** Resolves when garbage collection and namespace cleanup have nothing pending. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<readonly [string, number, string]> = [
  ['system-node-critical', 2000001000, 'Used for system critical pods that must not be moved from their current node.'],
  ['system-cluster-critical', 2000000000, 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.'],
];

interface SnapshotFile {
  resourceVersion: number;
  resources: Record<string, KubeObject[]>;
}

function storageKeys(store: ObjectStore, registry: ResourceRegistry, resource: string | undefined): string[] | undefined {
  if (resource === undefined) return undefined;
  if (resource.includes('/')) return [resource];
  const dot = resource.indexOf('.');
  if (dot > 0) return [resourceKey(resource.slice(dot + 1), resource.slice(0, dot))];
  const keys = registry.all().filter((rt) => rt.plural === resource).map((rt) => resourceKey(rt.group, rt.plural));
  return keys.length > 0 ? keys : store.resources().filter((k) => k.endsWith(`/${resource}`));
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const logger = options.logger ?? silentLogger();
  const now = options.now ?? systemClock;
  const store = new ObjectStore({
    watchWindow: options.watchWindow,
    onListenerError: (err) => logger.error('store listener failed', { error: err instanceof Error ? err.stack : String(err) }),
  });
  const registry = new ResourceRegistry();
  const operations = new ResourceOperations({ store, registry, logger, now });

  let loadedSnapshot = false;
  if (options.snapshotFile) {
    try {
      const text = await fs.readFile(options.snapshotFile, 'utf8');
      store.load(JSON.parse(text) as SnapshotFile);
      for (const crd of store.list(resourceKey('apiextensions.k8s.io', 'customresourcedefinitions'))) {
        registry.add(resourceTypeFromCrd(crd.obj));
      }
      loadedSnapshot = true;
      logger.info('sandbox snapshot loaded', { file: options.snapshotFile, resourceVersion: store.resourceVersion });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  const gc = new GarbageCollector({ store, registry, operations, logger });
  gc.start();

  const nsType = registry.builtin('', 'namespaces');
  for (const name of NAMESPACES) {
    if (!store.get(resourceKey('', 'namespaces'), '', name)) {
      operations.create({ rt: nsType, version: 'v1', namespace: '' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }
  // kube-apiserver's own PriorityClasses (its bootstrap controller makes them).
  const pcType = registry.builtin('scheduling.k8s.io', 'priorityclasses');
  for (const [name, value, description] of SYSTEM_PRIORITY_CLASSES) {
    if (!store.get(resourceKey('scheduling.k8s.io', 'priorityclasses'), '', name)) {
      operations.create({ rt: pcType, version: 'v1', namespace: '' }, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, description, preemptionPolicy: 'PreemptLowerPriority' });
    }
  }
  if (options.crdDirs && options.crdDirs.length > 0) {
    const crdType = registry.builtin('apiextensions.k8s.io', 'customresourcedefinitions');
    const scope = { rt: crdType, version: 'v1', namespace: '' };
    for (const doc of await readManifests(options.crdDirs)) {
      if (doc.kind !== 'CustomResourceDefinition') continue;
      const name = (doc.metadata as { name?: string } | undefined)?.name ?? '';
      if (store.get(resourceKey('apiextensions.k8s.io', 'customresourcedefinitions'), '', name)) {
        operations.update(scope, name, doc, { fieldValidation: 'Ignore' });
      } else operations.create(scope, doc, { fieldValidation: 'Ignore' });
    }
  }

  const faults = new Faults(() => store.forceGone(), options.random);
  const server = new ApiServer({
    store,
    registry,
    operations,
    discovery: new Discovery(registry),
    faults,
    logger,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5_000,
    now,
    sleep: options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }).catch(() => undefined)),
  });
  faults.bindWatches({ cutWatches: () => server.cutWatches(), openWatches: (token) => server.openWatches(token) });
  const port = await server.listen(options.port ?? 0);
  const url = `http://127.0.0.1:${port}`;
  logger.info('sandbox API server listening', { url, snapshot: loadedSnapshot });

  const saveSnapshot = async (): Promise<void> => {
    if (!options.snapshotFile) return;
    const file = options.snapshotFile;
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(store.dump()));
    await fs.rename(tmp, file);
  };
  let snapshotTimer: NodeJS.Timeout | undefined;
  if (options.snapshotFile) {
    snapshotTimer = setInterval(() => {
      saveSnapshot().catch((err: unknown) => logger.warn('sandbox snapshot failed; the snapshot file keeps the state of the last snapshot written', { error: err instanceof Error ? err.message : String(err) }));
    }, options.snapshotIntervalMs ?? 30_000);
    snapshotTimer.unref();
  }

  let stopping: Promise<void> | undefined;
  const sandboxStore: SandboxStore = {
    count(resource?: string, namespace?: string): number {
      const keys = storageKeys(store, registry, resource) ?? store.resources();
      return keys.reduce((n, k) => n + store.count(k, namespace), 0);
    },
    writeCount(resource?: string): number {
      const keys = storageKeys(store, registry, resource);
      return keys ? keys.reduce((n, k) => n + store.writeCount(k), 0) : store.writeCount();
    },
    get resourceVersion(): number {
      return store.resourceVersion;
    },
  };
  const yaml = kubeconfigYaml(url);
  return {
    url,
    kubeconfigYaml: () => yaml,
    async writeKubeconfig(file: string): Promise<void> {
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, yaml, { mode: 0o600 });
    },
    kubeConfig(): KubeConfig {
      const kc = new KubeConfig();
      kc.loadFromString(yaml);
      return kc;
    },
    faults,
    store: sandboxStore,
    writeCount: (resource?: string) => sandboxStore.writeCount(resource),
    idle: () => gc.whenIdle(),
    stop(): Promise<void> {
      stopping ??= (async () => {
        if (snapshotTimer) clearInterval(snapshotTimer);
        gc.stop();
        store.closeAllWatchers();
        await server.close();
        // A stop goes on whatever the snapshot does: the file keeps the last one written whole.
        await saveSnapshot().catch((err: unknown) => logger.error('sandbox snapshot at stop failed; the snapshot file keeps the state of the last snapshot written', {
          error: err instanceof Error ? err.message : String(err),
        }));
        logger.info('sandbox API server stopped', { url, at: rfc3339(now()) });
      })();
      return stopping;
    },
  };
}
