/**
 * A client-node informer that does not stay dead. client-node's ListWatch stops for good after a
 * watch or list error other than 410 or a client timeout; this wrapper restarts it from the
 * `error` handler with capped exponential back-off.
 */
import type { Informer, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import type { Logger } from '../../../common/src/logger';
import { errorMessage } from './api-errors';

export interface ResilientInformerOptions<T extends KubernetesObject> {
  name: string;
  informer: Informer<T> & ObjectCache<T>;
  logger: Logger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class ResilientInformer<T extends KubernetesObject> {
  private stopped = false;
  private started = false;
  private failures = 0;
  private restartCount = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private syncedFlag = false;
  private errorDuringStart = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(private readonly options: ResilientInformerOptions<T>) {
    options.informer.on('error', (err: unknown) => this.onError(err));
  }

  get cache(): ObjectCache<T> {
    return this.options.informer;
  }

  /** Restarts after errors so far. */
  get restarts(): number {
    return this.restartCount;
  }

  get hasSynced(): boolean {
    return this.syncedFlag;
  }

  onAdd(cb: (obj: T) => void): void { this.options.informer.on('add', cb); }
  onUpdate(cb: (obj: T) => void): void { this.options.informer.on('update', cb); }
  onDelete(cb: (obj: T) => void): void { this.options.informer.on('delete', cb); }

  /**
   * Starts the informer; resolves once the first list has been loaded (retrying until stopped).
   * Calling it again (e.g. from a second user of a shared informer) only waits for that.
   */
  async start(): Promise<void> {
    if (!this.started) {
      this.started = true;
      void this.attempt();
    }
    if (this.syncedFlag || this.stopped) return;
    await new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    for (const w of this.syncWaiters.splice(0)) w();
    await this.options.informer.stop();
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    this.errorDuringStart = false;
    try {
      await this.options.informer.start();
    } catch (err) {
      this.onError(err);
      return;
    }
    if (this.stopped || this.errorDuringStart) return;
    this.failures = 0;
    if (!this.syncedFlag) {
      this.syncedFlag = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private onError(err: unknown): void {
    this.errorDuringStart = true;
    if (this.stopped || this.restartTimer) return;
    this.failures++;
    const min = this.options.minBackoffMs ?? 200;
    const max = this.options.maxBackoffMs ?? 10_000;
    const delay = Math.min(max, min * 2 ** Math.min(this.failures - 1, 16));
    this.options.logger.warn('informer failed; restarting', { informer: this.options.name, error: errorMessage(err), retryInMs: delay });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restartCount++;
      void this.attempt();
    }, delay);
  }
}
