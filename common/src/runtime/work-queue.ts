/**
 * A keyed work queue with bounded concurrency, in the manner of client-go's workqueue.
 *
 * - A key is queued at most once; adding a key that is being processed marks it dirty, and it is
 *   processed again after the current run (bursts of events merge).
 * - `addAfter` keeps one timer per key, the earliest. A delay beyond the longest timer Node keeps
 *   (2^31-1 ms, 24.8 days) wakes the key after that long: Node would fire it after 1 ms, and a
 *   time written far ahead into an object (a lease or an allocation expiring in year 9999, with
 *   kubectl) made its key run without pause. Handlers are level-based, so they decide again then.
 * - The handler returns `{ requeueAfterMs }` to be woken later, or throws to be retried with a
 *   per-key exponential back-off; success resets the key's back-off.
 */
import { ApiWaits, countApiWaits } from './api-waits';
import { exponentialBackoff } from './backoff';
import { systemClock, type Clock } from './clock';

export interface WorkResult {
  requeueAfterMs?: number;
}

export type WorkHandler = (key: string) => Promise<WorkResult | undefined>;

export interface WorkQueueOptions {
  handler: WorkHandler;
  concurrency: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Called when the handler throws, before the retry is scheduled. */
  onError?: (key: string, err: unknown, retryInMs: number) => void;
  /** The clock that ages running keys (`oldestRunning`; default the system's). */
  now?: Clock;
}

/** A key whose handler runs: since when, and how long of that it waited on the Kubernetes API. */
export interface RunningKey { key: string; since: number; apiWaitMs: number }

/** The longest delay `setTimeout` keeps; longer ones fire after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkQueue {
  private readonly fifo: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  /** Key -> when its handler started, and how long it has waited on the Kubernetes API since. */
  private readonly processing = new Map<string, { since: number; api: ApiWaits }>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private active = 0;
  private stopped = false;

  constructor(private readonly options: WorkQueueOptions) {}

  /** Queues a key now. */
  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.fifo.push(key);
    this.pump();
  }

  /** Queues a key after a delay; an earlier pending wake-up wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const wait = Math.min(delayMs, MAX_TIMER_MS);
    const at = Date.now() + wait;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, wait);
    this.timers.set(key, { at, timer });
  }

  /** Drops a key's back-off history (e.g. when its object is gone). */
  forget(key: string): void {
    this.failures.delete(key);
    const t = this.timers.get(key);
    if (t) {
      clearTimeout(t.timer);
      this.timers.delete(key);
    }
  }

  get length(): number {
    return this.fifo.length - this.head;
  }

  get inFlight(): number {
    return this.active;
  }

  /**
   * The key whose handler has run longest not counting its waits on the Kubernetes API (see
   * `api-waits.ts`), since when it runs and how long it waited on the API; undefined when none runs.
   */
  oldestRunning(): RunningKey | undefined {
    let oldest: RunningKey | undefined;
    for (const [key, { since, api }] of this.processing) {
      const apiWaitMs = api.waitedMs();
      if (!oldest || since + apiWaitMs < oldest.since + oldest.apiWaitMs) oldest = { key, since, apiWaitMs };
    }
    return oldest;
  }

  /** Stops taking work, clears timers and waits for running handlers to finish. */
  async shutDown(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.fifo.length = 0;
    this.head = 0;
    this.queued.clear();
    this.dirty.clear();
    if (this.active === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (!this.stopped && this.active < this.options.concurrency && this.head < this.fifo.length) {
      const key = this.fifo[this.head] as string;
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.fifo.length) {
        this.fifo.splice(0, this.head);
        this.head = 0;
      }
      this.queued.delete(key);
      const now = this.options.now ?? systemClock;
      this.processing.set(key, { since: now(), api: new ApiWaits(now) });
      this.active++;
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    let requeueAfterMs: number | undefined;
    try {
      const running = this.processing.get(key);
      const handler = this.options.handler;
      const result = await (running ? countApiWaits(running.api, () => handler(key)) : handler(key));
      this.failures.delete(key);
      requeueAfterMs = result?.requeueAfterMs;
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const base = this.options.baseBackoffMs ?? 50;
      const max = this.options.maxBackoffMs ?? 10_000;
      requeueAfterMs = exponentialBackoff(base, n, max);
      this.options.onError?.(key, err, requeueAfterMs);
    } finally {
      this.processing.delete(key);
      this.active--;
    }
    if (!this.stopped) {
      if (this.dirty.delete(key)) this.add(key);
      if (requeueAfterMs !== undefined) this.addAfter(key, requeueAfterMs);
      this.pump();
    }
    if (this.active === 0 && this.idleWaiters.length > 0) for (const w of this.idleWaiters.splice(0)) w();
  }
}
