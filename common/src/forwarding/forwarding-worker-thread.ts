/**
 * The forwarding worker thread: receives batches of pings to forward from the gateway's main
 * thread (forwarding-worker.ts), forwards them over gRPC through a ForwardPump (bounded queue and
 * open-call cap per receiver), and sends back, every 100 ms, what became of them: per-ping
 * results, per-forward metric data, drops, and how much is queued. Its gRPC work, timers and
 * retries never run on the thread that answers pings.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder, forwardResultLabel, type RelayedForward } from './event-forwarder';
import { ForwardPump, forwarderLabel, type PingForward, type PingForwardResult } from './forward-pump';
import type { PingStatus } from './forwarder-types';

export interface ForwardingWorkerSettings {
  logLevel: string;
  maxQueuedPerReceiver: number;
  maxInFlightPerReceiver: number;
  reportIntervalMs: number;
}

export type ToWorker = { type: 'pings'; pings: PingForward[] };

export interface WorkerReport {
  type: 'report';
  /** Pings taken off the message port since the last report. */
  accepted: number;
  pings: Record<PingForwardResult, number>;
  forwards: RelayedForward[];
  dropped: { forwarder: string; scheduler: string; count: number }[];
  /** Forwards waiting in the worker's queues now. */
  queued: number;
}

function emptyReport(): WorkerReport {
  return { type: 'report', accepted: 0, pings: { ok: 0, failed: 0, dropped: 0 }, forwards: [], dropped: [] as WorkerReport['dropped'], queued: 0 };
}

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('forwarding-worker-thread.ts runs only as a worker thread');
  const settings = workerData as ForwardingWorkerSettings;
  const logger = createLogger('gateway-forwarder', { level: settings.logLevel });
  // The worker's own registry is not served; its numbers go to the main thread in each report.
  const forwarder = new EventForwarder({ logger, metrics: new MetricsRegistry() });
  let report = emptyReport();
  const forwards = new Map<string, RelayedForward & { durations: number[] }>();
  const drops = new Map<string, { forwarder: string; scheduler: string; count: number }>();

  const pump = new ForwardPump({
    maxQueuedPerReceiver: settings.maxQueuedPerReceiver,
    maxInFlightPerReceiver: settings.maxInFlightPerReceiver,
    onPingDone: (result) => { report.pings[result]++; },
    onDropped: (name, scheduler) => {
      const key = `${name}\u0000${scheduler}`;
      const d = drops.get(key);
      if (d) d.count++;
      else drops.set(key, { forwarder: name, scheduler, count: 1 });
    },
    send: async (f, ping) => {
      const started = process.hrtime.bigint();
      const outcome = ping.kind === 'resync'
        ? await forwarder.forwardPing([f], ping.room, ping.status as PingStatus, ping.metadata)
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
    if (message.type !== 'pings') return;
    report.accepted += message.pings.length;
    for (const ping of message.pings) pump.offer(ping);
  });

  let reports = 0;
  setInterval(() => {
    // Lanes of receivers no longer used go about once a minute.
    if (++reports % Math.max(1, Math.round(60_000 / settings.reportIntervalMs)) === 0) pump.forgetIdleLanes();
    report.forwards = [...forwards.values()];
    report.dropped = [...drops.values()];
    report.queued = pump.queued;
    forwards.clear();
    drops.clear();
    const out = report;
    report = emptyReport();
    if (out.accepted > 0 || out.forwards.length > 0 || out.dropped.length > 0 || out.queued > 0 || out.pings.ok + out.pings.failed + out.pings.dropped > 0) port.postMessage(out);
  }, settings.reportIntervalMs);
}

main();
