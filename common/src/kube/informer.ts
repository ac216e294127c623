/**
 * A list+watch cache that does not die. client-node's informer stops for good after a watch error
 * other than 410 Gone or a client timeout (DESIGN.md, known pitfalls); this wrapper restarts it
 * with capped exponential backoff, and tells callers whether the first list has synced.
 * Callbacks should only enqueue keys (STYLE.md principle 1).
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../logger';

export type EventType = 'add' | 'update' | 'delete';

export interface InformerOptions<T extends k8s.KubernetesObject> {
  kc: k8s.KubeConfig;
  /** Watch path, e.g. `/apis/roomkeeper.io/v1/schedulers` or `/api/v1/pods`. */
  path: string;
  list: () => Promise<k8s.KubernetesListObject<T>>;
  labelSelector?: string;
  name: string;
  logger: Logger;
  onEvent?: (type: EventType, obj: T) => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class ResilientInformer<T extends k8s.KubernetesObject> {
  private readonly informer: k8s.Informer<T> & k8s.ObjectCache<T>;
  private stopped = true;
  private backoffMs: number;
  private restartTimer: NodeJS.Timeout | undefined;
  private syncedOnce = false;
  private errors = 0;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(private readonly opts: InformerOptions<T>) {
    this.backoffMs = opts.minBackoffMs ?? 500;
    this.informer = k8s.makeInformer(opts.kc, opts.path, opts.list, opts.labelSelector);
    const emit = (type: EventType) => (obj: T) => {
      this.backoffMs = opts.minBackoffMs ?? 500;
      opts.onEvent?.(type, obj);
    };
    this.informer.on('add', emit('add'));
    this.informer.on('update', emit('update'));
    this.informer.on('delete', emit('delete'));
    this.informer.on('error', (err: unknown) => this.restartLater(err));
  }

  /** Starts list+watch; resolves once the first list has been loaded (or rejects if stopped). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.run();
    if (!this.syncedOnce) await new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  get synced(): boolean {
    return this.syncedOnce;
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.informer.stop();
    for (const w of this.syncWaiters.splice(0)) w();
  }

  private async run(): Promise<void> {
    const errorsBefore = this.errors;
    try {
      await this.informer.start();
      if (this.errors === errorsBefore && !this.syncedOnce) {
        this.syncedOnce = true;
        for (const w of this.syncWaiters.splice(0)) w();
      }
    } catch (err) {
      this.restartLater(err);
    }
  }

  private restartLater(err: unknown): void {
    this.errors++;
    if (this.stopped || this.restartTimer) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.opts.maxBackoffMs ?? 30_000, this.backoffMs * 2);
    this.opts.logger.warn('watch failed, restarting', { informer: this.opts.name, error: describe(err), retryInMs: delay });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped) void this.run();
    }, delay);
  }
}

function describe(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; code?: unknown; statusCode?: unknown };
    return [e.code ?? e.statusCode, e.message].filter((x) => x !== undefined).map(String).join(' ') || String(err);
  }
  return String(err);
}
