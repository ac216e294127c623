/**
 * The operator's controller queue: the shared keyed work queue (`common/src/runtime/work-queue`:
 * a key queued once however many events arrive, never processed by two workers at once, per-key
 * exponential backoff) plus what a controller needs around each reconcile — a child logger
 * `{controller, key, reconcileId}`, metrics, and the runtime's retry policy (STYLE.md 4 and 5):
 * a reconciler returns `{ requeueAfterMs }` or throws; a `TerminalError` is logged and not
 * retried; a conflict (HTTP 409) is a normal requeue logged at debug; success resets the backoff.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../common/src/logger';
import { apiErrorFields, apiStatus } from '../../../common/src/kube/clients';
import type { MetricsRegistry } from '../../../common/src/metrics';
import type { Clock } from '../../../common/src/runtime/clock';
import { WorkQueue as KeyedQueue, type RunningKey } from '../../../common/src/runtime/work-queue';

/**
 * A reconcile's id in logs: this process's random tag and a sequence number. Unique across
 * processes and restarts like a random id, but without asking the system's random source for every
 * reconcile (that was 1 % of the operator's CPU while add_rooms created rooms).
 */
const PROCESS_TAG = randomBytes(4).toString('hex');
let reconcileSeq = 0;
function nextReconcileId(): string {
  reconcileSeq += 1;
  return `${PROCESS_TAG}-${reconcileSeq.toString(36)}`;
}

export interface ReconcileResult { requeueAfterMs?: number }

export interface ReconcileContext { logger: Logger; reconcileId: string }

export type Reconciler = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult | undefined>;

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
  /** The clock that ages running reconciles (`oldestRunning`, the liveness check). */
  now?: Clock;
}

export class WorkQueue {
  private readonly queue: KeyedQueue;
  /** Keys added before `start()`; controllers may enqueue while caches warm up. */
  private readonly early = new Set<string>();
  private started = false;

  constructor(private readonly opts: WorkQueueOptions) {
    const outcomes = opts.metrics?.counter('roomkeeper_reconcile_total', 'Reconciles by controller and outcome.');
    const duration = opts.metrics?.histogram('roomkeeper_reconcile_duration_seconds', 'Reconcile duration by controller.');
    this.queue = new KeyedQueue({
      concurrency: opts.concurrency ?? 4,
      baseBackoffMs: opts.baseDelayMs ?? 5,
      maxBackoffMs: opts.maxDelayMs ?? 30_000,
      ...(opts.now ? { now: opts.now } : {}),
      handler: async (key) => {
        const reconcileId = nextReconcileId();
        const logger = opts.logger.child({ controller: opts.name, key, reconcileId });
        const started = process.hrtime.bigint();
        let outcome = 'success';
        try {
          return (await opts.reconcile(key, { logger, reconcileId })) ?? {};
        } catch (err) {
          if (err instanceof TerminalError) {
            outcome = 'terminal';
            logger.error('reconcile failed, not retrying', { error: err.message });
            return {};
          }
          outcome = apiStatus(err) === 409 ? 'conflict' : 'error';
          throw err;
        } finally {
          outcomes?.inc({ controller: opts.name, outcome });
          duration?.observe(Number(process.hrtime.bigint() - started) / 1e9, { controller: opts.name });
        }
      },
      onError: (key, err, retryInMs) => {
        const logger = opts.logger.child({ controller: opts.name, key });
        if (apiStatus(err) === 409) logger.debug('conflict, requeueing', { requeueAfterMs: retryInMs });
        else logger.warn('reconcile failed, retrying', { ...apiErrorFields(err), requeueAfterMs: retryInMs });
      },
    });
  }

  get name(): string {
    return this.opts.name;
  }

  get length(): number {
    return this.queue.length + this.early.size;
  }

  /** The key whose reconcile has run longest not counting its waits on the Kubernetes API; undefined when none runs. */
  oldestRunning(): RunningKey | undefined {
    return this.queue.oldestRunning();
  }

  add(key: string): void {
    if (this.started) this.queue.add(key);
    else this.early.add(key);
  }

  /** Adds the key after a delay; an earlier pending delay for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (!this.started) this.early.add(key);
    else this.queue.addAfter(key, delayMs);
  }

  start(): void {
    this.started = true;
    for (const key of this.early) this.queue.add(key);
    this.early.clear();
  }

  /** Stops taking work, cancels delayed keys and waits for in-flight reconciles to end. */
  async stop(): Promise<void> {
    await this.queue.shutDown();
  }
}
