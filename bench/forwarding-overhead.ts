/**
 * Benchmark 6: forwarding overhead. Gateway ping req/s for rooms of a scheduler with 2 forwarders
 * (two real gRPC receivers, `startForwardReceiver`, in their own process) against rooms of a
 * scheduler without forwarders, same gateway, same load (see ping-throughput.ts). Forwarding is
 * fire and forget. Targets (with / without) per mode:
 *  - default (>= 0.9): unchanged pings forwarded as a resync at most every 30 s per room, over a window
 *    longer than that, so every room really forwards during it;
 *  - stress (>= 0.8): a resync every second per room (~1,000 forwards/s to each receiver);
 *  - maestro (>= 0.7): every ping forwarded (ROOMKEEPER_FORWARD_RESYNC_INTERVAL=0);
 *  - dead receiver (>= 0.9, RSS bounded): every ping forwarded, one receiver never answers, 60 s; the bench
 *    process's RSS (the gateway runs in it) is sampled every 5 s.
 * Pings are forwarded from a worker thread at a lower CPU priority through bounded per-receiver
 * queues (issue 15): while a receiver is behind, a room's newer ping replaces its waiting one
 * (coalesced), what still does not fit is dropped, oldest first, and a receiver that keeps failing
 * is skipped for a while (circuit); all counted, the notes say how many.
 * BENCH_FORWARD_RESYNC_MS runs one mode with that interval instead (BENCH_FORWARD_DEAD=1: with one
 * silent receiver).
 */
import * as path from 'node:path';
import type { Forwarder } from '../common/src/generated/resources';
import { forkChild } from './support/child-rpc';
import { PROCESSES_DIR } from './support/bench-stack';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { sumMetric } from './support/metric-sum';
import { LOAD_SHAPE, startPingLab } from './support/ping-lab';
import { runStandalone } from './support/standalone';

const ROOMS = 1000;
const WARMUP_S = 3;

interface Mode { name: string; resyncMs: number; seconds: number; target: number; deadReceiver?: boolean }

const MODES: Mode[] = process.env.BENCH_FORWARD_RESYNC_MS !== undefined
  ? [{ name: `resync ${process.env.BENCH_FORWARD_RESYNC_MS} ms${process.env.BENCH_FORWARD_DEAD === '1' ? ', one dead receiver' : ''}`, resyncMs: Number(process.env.BENCH_FORWARD_RESYNC_MS), seconds: Number(process.env.BENCH_LOAD_SECONDS ?? 10), target: Number(process.env.BENCH_FORWARD_RESYNC_MS) === 0 && process.env.BENCH_FORWARD_DEAD !== '1' ? 0.7 : 0.9, deadReceiver: process.env.BENCH_FORWARD_DEAD === '1' }]
  : [
    { name: 'default (resync 30 s)', resyncMs: 30_000, seconds: 40, target: 0.9 },
    { name: 'stress (resync 1 s)', resyncMs: 1000, seconds: 10, target: 0.8 },
    { name: 'maestro (every ping)', resyncMs: 0, seconds: 10, target: 0.7 },
    { name: 'dead receiver (every ping)', resyncMs: 0, seconds: 60, target: 0.9, deadReceiver: true },
  ];

/** RSS of this process (the gateway's) every 5 s while `work` runs, in MB. */
async function sampleRss<T>(work: Promise<T>): Promise<{ result: T; samplesMb: number[] }> {
  const samplesMb: number[] = [process.memoryUsage().rss / 1e6];
  const timer = setInterval(() => samplesMb.push(process.memoryUsage().rss / 1e6), 5000);
  try {
    const result = await work;
    samplesMb.push(process.memoryUsage().rss / 1e6);
    return { result, samplesMb };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  for (const mode of MODES) {
    const outcome = await runMode(mode);
    figures.push(...outcome.figures);
    notes.push(...outcome.notes);
  }
  return { name: '6. forwarding overhead', figures, durationMs: Date.now() - began, notes };
}

async function runMode(mode: Mode): Promise<{ figures: Figure[]; notes: string[] }> {
  const NAME = `6. forwarding overhead, ${mode.name}`;
  const DURATION_S = mode.seconds;
  const RESYNC_MS = mode.resyncMs;
  const figures: Figure[] = [];
  const lab = await startPingLab({ forwardResyncInterval: RESYNC_MS });
  const receivers = await forkChild<{ addresses: string[] }>(path.join(PROCESSES_DIR, 'receivers-child.ts'), { arg: { count: 2, silent: mode.deadReceiver ? 1 : 0 } });
  try {
    const forwarders: Forwarder[] = receivers.ready.addresses.map((address, i) => ({ name: `receiver-${i + 1}`, enable: true, type: 'gRPC', address, options: { timeout: 1000 } }));
    const plain = await lab.addFleet('bench-nofwd', ROOMS);
    const forwarded = await lab.addFleet('bench-fwd', ROOMS, forwarders);
    const url = lab.stack.gateway.roomsUrl;
    await lab.runLoad(url, plain, WARMUP_S);
    await lab.runLoad(url, forwarded, WARMUP_S);
    const m = lab.stack.gatewayMetrics;
    const okBefore = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'ok' });
    const failedBefore = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'failed' });
    const droppedBefore = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'dropped' });
    const coalescedBefore = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'coalesced' });
    const skippedBefore = sumMetric(m, 'roomkeeper_forward_skipped_total', {});
    const receivedBefore = await receivers.call<number[]>('received');
    const without = await lab.runLoad(url, plain, DURATION_S);
    const { result: withFwd, samplesMb } = await sampleRss(lab.runLoad(url, forwarded, DURATION_S));
    // Forwarding is fire and forget: let the last ones land before counting.
    await new Promise((r) => setTimeout(r, 1500));
    const ok = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'ok' }) - okBefore;
    const failed = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'failed' }) - failedBefore;
    const dropped = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'dropped' }) - droppedBefore;
    const coalesced = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'coalesced' }) - coalescedBefore;
    const skipped = sumMetric(m, 'roomkeeper_forward_skipped_total', {}) - skippedBefore;
    const received = (await receivers.call<number[]>('received')).map((n, i) => n - (receivedBefore[i] ?? 0));
    figures.push(figure(NAME, 'gateway pings without forwarders', without.requestsPerSec, 'req/s', { note: `p99 ${without.latencyP99Ms} ms` }));
    figures.push(figure(NAME, 'gateway pings with 2 forwarders', withFwd.requestsPerSec, 'req/s', { note: `p99 ${withFwd.latencyP99Ms} ms; pings forwarded ok ${ok}, coalesced ${coalesced}, failed ${failed} (forwards skipped by an open circuit ${skipped}), dropped ${dropped}; received ${received.join(' + ')}` }));
    figures.push(figure(NAME, 'with / without', withFwd.requestsPerSec / without.requestsPerSec, 'ratio', { target: { op: '>=', value: mode.target } }));
    if (mode.deadReceiver) {
      const late = samplesMb.slice(Math.floor(samplesMb.length / 3));
      figures.push(figure(NAME, 'gateway RSS growth over the last two thirds', Math.max(...late) - (late[0] ?? 0), 'MB', {
        target: { op: '<=', value: 64 }, note: `RSS every 5 s: ${samplesMb.map((v) => v.toFixed(0)).join(', ')} MB`,
      }));
    }
    return {
      figures,
      notes: [`${mode.name}: autocannon ${LOAD_SHAPE.connections} connections, pipelining ${LOAD_SHAPE.pipelining}, ${DURATION_S} s each after ${WARMUP_S} s warm-up each, 1 measured run each (without first); ${ROOMS} rooms per scheduler; receivers in their own process; forwarder timeout 1000 ms; forward resync interval ${RESYNC_MS} ms.`],
    };
  } finally {
    await receivers.stop();
    await lab.stop();
  }
}

if (require.main === module) runStandalone(run);
