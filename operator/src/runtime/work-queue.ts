/**
 * A keyed work queue (controller-runtime style). Informer callbacks only `add(key)`; a key is
 * queued at most once however many events arrive, and never processed by two workers at once
 * (an add while it is processing marks it dirty, so it runs again afterwards).
 *
 * The runtime owns retries: a reconciler returns `{ requeueAfterMs }` or throws. A thrown
 * error requeues the key with per-key exponential backoff (capped); a `TerminalError` is logged
 * and not retried; a conflict (HTTP 409) is a normal requeue logged at debug. Success resets
 * the key's backoff.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../common/src/logger';
import { apiStatus } from '../../../common/src/kube/clients';
import type { MetricsRegistry } from '../../../common/src/metrics';

export interface ReconcileResult { requeueAfterMs?: number }

export interface ReconcileContext { logger: Logger; reconcileId: string }

export type Reconciler = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult | void>;

/** An error that retrying cannot fix (bad input, a broken invariant). */
export class TerminalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TerminalError';
  }
}

export interface WorkQueueOptions {
  name: string;
  reconcile: Reconciler;
  logger: Logger;
  concurrency?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  metrics?: MetricsRegistry;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly idleWaiters: (() => void)[] = [];
  private running = false;
  private active = 0;
  private readonly concurrency: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly opts: WorkQueueOptions) {
    this.concurrency = opts.concurrency ?? 4;
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 30_000;
  }

  get length(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.pump();
  }

  /** Adds the key after a delay; an earlier pending delay for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, timer });
  }

  start(): void {
    this.running = true;
    this.pump();
  }

  /** Stops taking work, cancels delayed keys and waits for in-flight reconciles to end. */
  async stop(): Promise<void> {
    this.running = false;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    if (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running && this.active < this.concurrency && this.queue.length > 0) {
      const key = this.queue.shift() as string;
      this.queued.delete(key);
      this.processing.add(key);
      this.active++;
      void this.process(key);
    }
  }

  private async process(key: string): Promise<void> {
    const reconcileId = randomBytes(4).toString('hex');
    const logger = this.opts.logger.child({ controller: this.opts.name, key, reconcileId });
    const started = process.hrtime.bigint();
    let requeueAfterMs: number | undefined;
    let outcome = 'success';
    try {
      const result = await this.opts.reconcile(key, { logger, reconcileId });
      this.failures.delete(key);
      requeueAfterMs = result?.requeueAfterMs;
    } catch (err) {
      if (err instanceof TerminalError) {
        outcome = 'terminal';
        this.failures.delete(key);
        logger.error('reconcile failed, not retrying', { error: err.message });
      } else {
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        requeueAfterMs = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (n - 1));
        if (apiStatus(err) === 409) {
          outcome = 'conflict';
          logger.debug('conflict, requeueing', { requeueAfterMs });
        } else {
          outcome = 'error';
          logger.warn('reconcile failed, retrying', { error: errorMessage(err), attempt: n, requeueAfterMs });
        }
      }
    } finally {
      this.opts.metrics?.counter('roomkeeper_reconcile_total', 'Reconciles by controller and outcome.').inc({ controller: this.opts.name, outcome });
      this.opts.metrics?.histogram('roomkeeper_reconcile_duration_seconds', 'Reconcile duration by controller.')
        .observe(Number(process.hrtime.bigint() - started) / 1e9, { controller: this.opts.name });
      this.processing.delete(key);
      this.active--;
      if (this.dirty.delete(key)) this.add(key);
      if (requeueAfterMs !== undefined && this.running) this.addAfter(key, requeueAfterMs);
      if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
      this.pump();
    }
  }
}

export function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}
