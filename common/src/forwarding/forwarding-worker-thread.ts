/**
 * The forwarding worker thread: receives batches of pings to forward from the gateway's main
 * thread (forwarding-worker.ts), forwards them over gRPC through a ForwardPump (bounded,
 * coalescing queue, open-call cap and circuit per receiver), and sends back, every 100 ms, what
 * became of them: per-ping results, per-forward metric data, forwards lost (coalesced, dropped,
 * skipped), and how much is queued. Its gRPC work, timers and retries never run on the thread
 * that answers pings, and it runs at a lower CPU priority than that thread (Linux: a per-thread
 * nice value), so when the CPU is short, pings get it first and forwarding falls behind, which the
 * queues absorb and count.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder, forwardResultLabel, type RelayedForward } from './event-forwarder';
import { ForwardPump, forwarderLabel, type LostReason, type PingForward, type PingForwardResult } from './forward-pump';
import { counted } from '../text/counted';

export interface ForwardingWorkerSettings {
  logLevel: string;
  maxQueuedPerReceiver: number;
  maxInFlightPerReceiver: number;
  reportIntervalMs: number;
  /** The nice value the thread lowers itself to (never raises it). */
  nice: number;
}

export type ToWorker = { type: 'pings'; pings: PingForward[] };

/** The worker's first message: its thread id and the nice value it runs at, or why it could not lower it. */
export type WorkerStarted = { type: 'started'; threadId: number; nice: number } | { type: 'started'; error: string };

export interface WorkerReport {
  type: 'report';
  /** Pings taken off the message port since the last report. */
  accepted: number;
  pings: Record<PingForwardResult, number>;
  forwards: RelayedForward[];
  lost: { reason: LostReason; forwarder: string; scheduler: string; count: number }[];
  /** Forwards waiting in the worker's queues now. */
  queued: number;
  /** Receivers (`receiverKey`) whose circuit is open, and until when (Date.now time). */
  openCircuits: { receiver: string; until: number }[];
}

export type FromWorker = WorkerStarted | WorkerReport;

function emptyReport(): WorkerReport {
  return { type: 'report', accepted: 0, pings: { ok: 0, coalesced: 0, failed: 0, dropped: 0 }, forwards: [], lost: [], queued: 0, openCircuits: [] };
}

/**
 * Lowers the calling thread's CPU priority to `nice` (or leaves it when already lower). Linux
 * keeps a nice value per thread: the thread's id (from /proc/thread-self) names it to setpriority.
 */
function lowerThreadPriority(nice: number): WorkerStarted {
  try {
    const threadId = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (!Number.isInteger(threadId) || threadId <= 0) throw new Error('/proc/thread-self names no thread id');
    if (os.getPriority(threadId) < nice) os.setPriority(threadId, nice);
    return { type: 'started', threadId, nice: os.getPriority(threadId) };
  } catch (err) {
    return { type: 'started', error: err instanceof Error ? err.message : String(err) };
  }
}

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('forwarding-worker-thread.ts runs only as a worker thread');
  const settings = workerData as ForwardingWorkerSettings;
  const started: FromWorker = lowerThreadPriority(settings.nice);
  port.postMessage(started);
  const logger = createLogger('gateway-forwarder', { level: settings.logLevel });
  // The worker's own registry is not served; its numbers go to the main thread in each report.
  const forwarder = new EventForwarder({ logger, metrics: new MetricsRegistry() });
  let report = emptyReport();
  const forwards = new Map<string, RelayedForward & { durations: number[] }>();
  const lost = new Map<string, WorkerReport['lost'][number]>();

  const pump = new ForwardPump({
    maxQueuedPerReceiver: settings.maxQueuedPerReceiver,
    maxInFlightPerReceiver: settings.maxInFlightPerReceiver,
    onPingDone: (result) => { report.pings[result]++; },
    onLost: (reason, name, scheduler) => {
      const key = `${reason}\u0000${name}\u0000${scheduler}`;
      const entry = lost.get(key);
      if (entry) entry.count++;
      else lost.set(key, { reason, forwarder: name, scheduler, count: 1 });
    },
    onCircuit: ({ forwarder: name, address, state, failures, openMs }) => {
      if (state === 'open') logger.warn(`forwarder failed ${counted(failures, 'time')} in a row: its ping forwards are skipped for ${openMs} ms, then one is tried again`, { forwarder: name, address, failures, openMs });
      else logger.info('forwarder answers again: ping forwards to it resume', { forwarder: name, address });
    },
    send: async (f, ping) => {
      const started = process.hrtime.bigint();
      const outcome = ping.kind === 'resync'
        ? await forwarder.forwardPing([f], ping.room, ping.status, ping.metadata)
        : await forwarder.forwardStatus([f], ping.room, ping.status, ping.metadata);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const result = outcome.results[0];
      if (result) {
        const name = forwarderLabel(f);
        const label = forwardResultLabel(result);
        const key = `${name}\u0000${ping.room.schedulerName}\u0000${ping.kind}\u0000${label}`;
        const entry = forwards.get(key);
        if (entry) {
          entry.count++;
          entry.durations.push(seconds);
        } else {
          forwards.set(key, { forwarder: name, scheduler: ping.room.schedulerName, type: ping.kind, result: label, count: 1, durations: [seconds] });
        }
      }
      return outcome;
    },
  });

  port.on('message', (message: ToWorker) => {
    report.accepted += message.pings.length;
    for (const ping of message.pings) pump.offer(ping);
  });

  let reports = 0;
  setInterval(() => {
    // Lanes of receivers no longer used go about once a minute.
    if (++reports % Math.max(1, Math.round(60_000 / settings.reportIntervalMs)) === 0) pump.forgetIdleLanes();
    report.forwards = [...forwards.values()];
    report.lost = [...lost.values()];
    report.queued = pump.queued;
    report.openCircuits = pump.openCircuits();
    forwards.clear();
    lost.clear();
    const out = report;
    report = emptyReport();
    const pings = out.pings.ok + out.pings.coalesced + out.pings.failed + out.pings.dropped;
    if (out.accepted > 0 || out.forwards.length > 0 || out.lost.length > 0 || out.queued > 0 || out.openCircuits.length > 0 || pings > 0) port.postMessage(out);
  }, settings.reportIntervalMs);
}

main();
