/**
 * A list+watch cache of one resource (client-node's informer), kept alive: client-node informers
 * stop for good after a watch error other than 410 or a timeout (DESIGN.md pitfalls), so every
 * error restarts it with capped exponential backoff.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../../common/src/logger';

export interface ResourceCacheOptions<T extends k8s.KubernetesObject> {
  kc: k8s.KubeConfig;
  /** Watch path, e.g. `/apis/roomkeeper.io/v1/gamerooms` (all namespaces). */
  path: string;
  list: () => Promise<k8s.KubernetesListObject<T>>;
  /** For logs. */
  resource: string;
  logger: Logger;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export class ResourceCache<T extends k8s.KubernetesObject> {
  private readonly informer: k8s.Informer<T> & k8s.ObjectCache<T>;
  private synced = false;
  private stopped = false;
  private erroredSinceStart = false;
  private backoffMs: number;
  private restartTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;

  constructor(private readonly options: ResourceCacheOptions<T>) {
    this.backoffMs = options.initialBackoffMs ?? 500;
    this.informer = k8s.makeInformer<T>(options.kc, options.path, options.list);
    this.informer.on('error', (err: unknown) => this.onError(err));
  }

  /** Starts listing and watching; resolves after the first attempt (successful or not). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.attempt();
  }

  /** True once a list succeeded. */
  get isSynced(): boolean {
    return this.synced;
  }

  get error(): string | undefined {
    return this.lastError;
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(namespace?: string): T[] {
    return [...this.informer.list(namespace)];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.informer.stop();
  }

  private async attempt(): Promise<void> {
    this.erroredSinceStart = false;
    try {
      await this.informer.start();
    } catch (err) {
      this.onError(err);
      return;
    }
    if (!this.erroredSinceStart && !this.stopped) {
      this.synced = true;
      this.lastError = undefined;
      this.backoffMs = this.options.initialBackoffMs ?? 500;
    }
  }

  private onError(err: unknown): void {
    this.erroredSinceStart = true;
    if (this.stopped) return;
    this.lastError = err instanceof Error ? err.message : typeof err === 'object' && err !== null && 'message' in err ? String((err as { message: unknown }).message) : String(err);
    this.options.logger.warn('watch failed; restarting', { resource: this.options.resource, error: this.lastError, retryInMs: this.backoffMs });
    if (this.restartTimer) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.maxBackoffMs ?? 30_000);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped) void this.attempt();
    }, delay);
    this.restartTimer.unref();
  }
}
