/**
 * A list+watch cache of one resource for the gateway: the shared resilient informer
 * (`common/src/kube/informer.ts`: relist on 410, resume after a clean end, backoff on errors),
 * started without blocking so readiness can report "not synced" and why.
 */
import type * as k8s from '@kubernetes/client-node';
import type { AccessAnswers } from '../../../common/src/kube/api-access';
import { ResilientInformer, type EventType, type Indexer, type ListPage } from '../../../common/src/kube/informer';
import type { Logger } from '../../../common/src/logger';
import type { MetricsRegistry } from '../../../common/src/metrics';

export interface ResourceCacheOptions<T extends k8s.KubernetesObject> {
  kc: k8s.KubeConfig;
  /** Watch path, e.g. `/apis/roomkeeper.io/v1/gamerooms` (all namespaces). */
  path: string;
  list: (page?: ListPage) => Promise<k8s.KubernetesListObject<T>>;
  /** For logs. */
  resource: string;
  /** Keeps what the gateway reads of each object (`cache-shapes.ts`); default the whole object. */
  transform?: (obj: T) => T;
  /** Named indexes of the cached objects (the informer's `indexers`). */
  indexers?: Record<string, Indexer<T>>;
  /** Told each change the cache applied (the informer's `onEvent`). */
  onEvent?: (type: EventType, obj: T) => void;
  logger: Logger;
  /** Counts relists and watch restarts, and how old changes are when they arrive (by resource). */
  metrics?: MetricsRegistry;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Told how the API server answered each list and watch (/readyz). */
  access?: AccessAnswers;
}

export class ResourceCache<T extends k8s.KubernetesObject> {
  private readonly informer: ResilientInformer<T>;

  constructor(options: ResourceCacheOptions<T>) {
    this.informer = new ResilientInformer<T>({
      kc: options.kc,
      path: options.path,
      list: options.list,
      name: options.resource,
      logger: options.logger,
      metrics: options.metrics,
      transform: options.transform,
      indexers: options.indexers,
      onEvent: options.onEvent,
      minBackoffMs: options.initialBackoffMs,
      maxBackoffMs: options.maxBackoffMs,
      access: options.access,
    });
  }

  /** Starts listing and watching; resolves after the first attempt (successful or not). */
  async start(): Promise<void> {
    await this.informer.begin();
  }

  /** True once a list succeeded. */
  get isSynced(): boolean {
    return this.informer.synced;
  }

  get error(): string | undefined {
    return this.informer.lastError;
  }

  /** The resource cached (its plural). */
  get name(): string {
    return this.informer.name;
  }

  /** The list or watch start waiting for its answer now, and since when (the liveness check's view). */
  get pendingRequest(): { since: number; verb: 'list' | 'watch' } | undefined {
    return this.informer.pendingRequest;
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  /** A new array on each call (the informer's own; not copied again). */
  list(namespace?: string): T[] {
    return this.informer.list(namespace);
  }

  /** The cached objects filed under `key` in the index `index`: a new array. */
  byIndex(index: string, key: string): T[] {
    return this.informer.byIndex(index, key);
  }

  /** The keys of an index in one group (keys `group\u0000...`): a new array. */
  indexKeys(index: string, group: string): string[] {
    return this.informer.indexKeys(index, group);
  }

  indexCount(index: string, key: string): number {
    return this.informer.indexCount(index, key);
  }

  /** True once the cache has applied every change up to `resourceVersion`; false after `timeoutMs`. */
  waitForResourceVersion(resourceVersion: string, timeoutMs: number): Promise<boolean> {
    return this.informer.waitForResourceVersion(resourceVersion, timeoutMs);
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }
}
