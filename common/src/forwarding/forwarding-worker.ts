/**
 * Ping forwarding off the gateway's event loop. The rooms API hands each ping to forward to
 * `ForwardingWorker.offer`, which only puts it in a bounded list; once per turn of the event loop
 * the list goes, as one message, to a worker thread (forwarding-worker-thread.ts) that makes the
 * gRPC calls at a lower CPU priority than the thread that answers pings. Pings are therefore
 * answered at nearly the same speed with or without forwarders, and a slow or dead receiver
 * cannot slow them or make them fail.
 *
 * Memory and work are bounded at every stage. A ping of a room whose previous ping still waits
 * takes its place (coalesced: the receiver gets the room's newest state); otherwise, when full,
 * the oldest forward is dropped. Each is counted by forwarder (`roomkeeper_forward_coalesced_total`,
 * `roomkeeper_forward_dropped_total`; `forwarder="(handoff)"` before the worker): the main thread
 * keeps at most `maxPending` pings not yet handed over and hands over no more while
 * `maxInTransit` are with the worker but not yet taken; the worker keeps at most
 * `maxQueuedPerReceiver` forwards per receiver with at most `maxInFlightPerReceiver` calls open,
 * and skips a receiver that keeps failing for a while (`roomkeeper_forward_skipped_total`, see
 * forward-pump.ts). The worker tells which receivers' circuits are open; a ping whose every
 * receiver is among them is not handed over at all (its forwards are counted as skipped), so dead
 * receivers cost the ping path nothing.
 *
 * A worker that exits (it should not) is replaced after a second; the forwards it held are counted
 * as dropped.
 *
 * The worker reports back every `reportIntervalMs`: per-ping results (for
 * `roomkeeper_gateway_forwards_total`), per-forward results and durations (recorded under the
 * EventForwarder's own metric names through `record`), forwards lost, and how much waits
 * (`roomkeeper_forward_queue_length`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import type { Counter, Gauge, MetricsRegistry } from '../metrics';
import { CoalescingQueue } from './coalescing-queue';
import type { RelayedForward } from './event-forwarder';
import { enabledForwarders } from './forwarder-options';
import { forwarderLabel, PING_FORWARD_RESULTS, pingForwardKey, receiverKey, type LostReason, type PingForward, type PingForwardResult } from './forward-pump';
import type { ForwardingWorkerSettings, FromWorker, ToWorker, WorkerReport, WorkerStarted } from './forwarding-worker-thread';

/** What the rooms API needs to forward pings without waiting. */
export interface PingForwardQueue {
  offer(ping: PingForward): void;
  /** `listener` learns, in bulk, what became of the pings offered. */
  onPingResults(listener: (result: PingForwardResult, count: number) => void): void;
}

export interface ForwardingWorkerOptions {
  logger: Logger;
  metrics: MetricsRegistry;
  /** Records forwards the worker made (EventForwarder.recordRelayed). */
  record: (forward: RelayedForward) => void;
  logLevel?: string;
  /** Pings not yet handed to the worker, at most. Default 20,000. */
  maxPending?: number;
  /** Pings handed to the worker and not yet taken by it, at most. Default 20,000. */
  maxInTransit?: number;
  /** Default 10,000. */
  maxQueuedPerReceiver?: number;
  /** Default 64. */
  maxInFlightPerReceiver?: number;
  /** Default 100 ms. */
  reportIntervalMs?: number;
  /**
   * The nice value of the worker thread (Linux; it never raises its priority): forwarding then
   * gets the CPU only after the pings. Default 10.
   */
  workerNice?: number;
  /** The clock, for open circuits; the worker thread uses `Date.now`. Default `Date.now`. */
  now?: () => number;
}

export const HANDOFF_LABEL = '(handoff)';

/** The worker's entry: the compiled .js next to this file, or the .ts source through tsx (tests, benchmarks). */
function startWorker(settings: ForwardingWorkerSettings): Worker {
  const js = path.join(__dirname, 'forwarding-worker-thread.js');
  if (fs.existsSync(js)) return new Worker(js, { workerData: settings });
  const ts = path.join(__dirname, 'forwarding-worker-thread.ts');
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(ts)});`, { eval: true, workerData: settings });
}

/** Wait before a worker that exited is replaced. */
const RESTART_DELAY_MS = 1000;

export class ForwardingWorker implements PingForwardQueue {
  private worker: Worker;
  private readonly settings: ForwardingWorkerSettings;
  private restartsValue = 0;
  private readonly pending: CoalescingQueue<PingForward>;
  private readonly maxInTransit: number;
  private inTransit = 0;
  private workerQueued = 0;
  private flushScheduled = false;
  private closed = false;
  private readonly listeners: ((result: PingForwardResult, count: number) => void)[] = [];
  private readonly lost: Record<LostReason, Counter>;
  private readonly handoffLost: Record<'coalesced' | 'dropped', { inc(by?: number): void }>;
  private readonly queueLength: Gauge;
  private startedValue?: WorkerStarted;
  /** Receivers whose circuit the worker reported open, and until when. */
  private openUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: ForwardingWorkerOptions) {
    this.now = options.now ?? Date.now;
    this.pending = new CoalescingQueue(options.maxPending ?? 20_000);
    this.maxInTransit = options.maxInTransit ?? 20_000;
    this.lost = {
      dropped: options.metrics.counter('roomkeeper_forward_dropped_total', `Ping forwards dropped, oldest first, because a receiver's queue was full (by forwarder; "${HANDOFF_LABEL}": before they reached the forwarding worker).`),
      coalesced: options.metrics.counter('roomkeeper_forward_coalesced_total', `Ping forwards replaced, while they waited, by a newer ping of the same room, which went instead (by forwarder; "${HANDOFF_LABEL}": before they reached the forwarding worker).`),
      skipped: options.metrics.counter('roomkeeper_forward_skipped_total', 'Ping forwards not attempted because the receiver failed repeatedly and its circuit was open (by forwarder); one call is tried again after a pause.'),
    };
    this.handoffLost = { dropped: this.lost.dropped.bind({ forwarder: HANDOFF_LABEL }), coalesced: this.lost.coalesced.bind({ forwarder: HANDOFF_LABEL }) };
    this.queueLength = options.metrics.gauge('roomkeeper_forward_queue_length', 'Ping forwards waiting: not yet handed to the forwarding worker, or queued there for a receiver.', () => {
      this.queueLength.set(this.pending.length + this.inTransit + this.workerQueued);
    });
    this.settings = {
      logLevel: options.logLevel ?? 'info',
      maxQueuedPerReceiver: options.maxQueuedPerReceiver ?? 10_000,
      maxInFlightPerReceiver: options.maxInFlightPerReceiver ?? 64,
      reportIntervalMs: options.reportIntervalMs ?? 100,
      nice: options.workerNice ?? 10,
    };
    this.worker = this.spawn();
  }

  /** The worker thread's id and nice value, or why its priority could not be lowered; undefined until it started. */
  get started(): WorkerStarted | undefined {
    return this.startedValue;
  }

  /** How many receivers' circuits the worker last reported open. */
  get openCircuits(): number {
    return this.openUntil.size;
  }

  /** How many times a worker that exited was replaced. */
  get restarts(): number {
    return this.restartsValue;
  }

  private spawn(): Worker {
    const worker = startWorker(this.settings);
    worker.unref();
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'report') this.onReport(message);
      else this.onStarted(message);
    });
    worker.on('error', (err) => this.options.logger.error('forwarding worker failed', { error: err.message }));
    worker.on('exit', (exitCode) => {
      if (this.closed || worker !== this.worker) return;
      // What the worker held is lost: count it as dropped, then start a new worker.
      const lost = this.inTransit + this.workerQueued;
      this.inTransit = 0;
      this.workerQueued = 0;
      if (lost > 0) this.lostBeforeWorker('dropped', lost);
      this.options.logger.error(`forwarding worker exited; ping forwards it held are dropped and a new worker starts in ${RESTART_DELAY_MS} ms`, { exitCode, forwardsDropped: lost });
      const timer = setTimeout(() => {
        if (this.closed) return;
        this.restartsValue++;
        this.worker = this.spawn();
        this.scheduleFlush();
      }, RESTART_DELAY_MS);
      timer.unref();
    });
    return worker;
  }

  onPingResults(listener: (result: PingForwardResult, count: number) => void): void {
    this.listeners.push(listener);
  }

  offer(ping: PingForward): void {
    if (this.closed) return;
    if (this.openUntil.size > 0 && this.skipIfAllOpen(ping)) return;
    const evicted = this.pending.push(pingForwardKey(ping), ping);
    if (evicted) this.lostBeforeWorker(evicted.reason, 1);
    this.scheduleFlush();
  }

  /** When every enabled receiver of `ping` has an open circuit: counts its forwards as skipped and the ping as failed. */
  private skipIfAllOpen(ping: PingForward): boolean {
    const now = this.now();
    const enabled = enabledForwarders(ping.forwarders);
    if (enabled.length === 0 || !enabled.every((f) => now < (this.openUntil.get(receiverKey(f)) ?? 0))) return false;
    for (const f of enabled) this.lost.skipped.inc({ forwarder: forwarderLabel(f) });
    for (const l of this.listeners) l('failed', 1);
    return true;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Stops the worker; forwards not yet made are abandoned. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.terminate();
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    const room = this.maxInTransit - this.inTransit;
    if (room <= 0 || this.pending.length === 0) return;
    const pings = this.pending.take(room);
    this.inTransit += pings.length;
    const message: ToWorker = { type: 'pings', pings };
    this.worker.postMessage(message);
  }

  private onReport(report: WorkerReport): void {
    this.inTransit = Math.max(0, this.inTransit - report.accepted);
    this.workerQueued = report.queued;
    this.openUntil = new Map(report.openCircuits.map((c) => [c.receiver, c.until]));
    for (const result of PING_FORWARD_RESULTS) {
      const n = report.pings[result];
      if (n > 0) for (const l of this.listeners) l(result, n);
    }
    for (const f of report.forwards) this.options.record(f);
    for (const l of report.lost) this.lost[l.reason].inc({ forwarder: l.forwarder }, l.count);
    // Pings held back while the worker was behind go now.
    if (this.pending.length > 0) this.scheduleFlush();
  }

  private onStarted(started: WorkerStarted): void {
    this.startedValue = started;
    if ('error' in started) this.options.logger.warn(`forwarding worker runs at the gateway's CPU priority (it could not lower it: ${started.error}); under CPU pressure forwarding competes with pings`);
    else this.options.logger.info(`forwarding worker started at nice ${started.nice}: pings get the CPU before forwarding`, { threadId: started.threadId, nice: started.nice });
  }

  private lostBeforeWorker(reason: 'coalesced' | 'dropped', n: number): void {
    this.handoffLost[reason].inc(n);
    for (const l of this.listeners) l(reason, n);
  }
}
