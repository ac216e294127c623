/**
 * Benchmark 6: forwarding overhead. Gateway ping req/s for rooms of a scheduler with 2 forwarders
 * (two real gRPC receivers, `startForwardReceiver`, in their own process) against rooms of a
 * scheduler without forwarders, same gateway, same load (see ping-throughput.ts). Every ping of a
 * room with forwarders is forwarded to both receivers (fire and forget, as Maestro forwards
 * pings). Target: with / without >= 0.8.
 */
import * as path from 'node:path';
import type { Forwarder } from '../common/src/generated/resources';
import { forkChild } from './support/child-rpc';
import { PROCESSES_DIR } from './support/bench-stack';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { sumMetric } from './support/metric-sum';
import { LOAD_SHAPE, startPingLab } from './support/ping-lab';
import { runStandalone } from './support/standalone';

const NAME = '6. forwarding overhead';
const ROOMS = 1000;
const DURATION_S = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const WARMUP_S = 3;
/**
 * Unchanged pings are forwarded at most once per resync interval per room (30 s by default). The
 * benchmark sets 1 s so every room really forwards during the window (~1,000 resyncs/s to each
 * receiver); BENCH_FORWARD_RESYNC_MS=0 measures Maestro's mode, where every ping is forwarded.
 */
const RESYNC_MS = Number(process.env.BENCH_FORWARD_RESYNC_MS ?? 1000);

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const lab = await startPingLab({ forwardResyncInterval: RESYNC_MS });
  const receivers = await forkChild<{ addresses: string[] }>(path.join(PROCESSES_DIR, 'receivers-child.ts'), { arg: 2 });
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
    const receivedBefore = await receivers.call<number[]>('received');
    const without = await lab.runLoad(url, plain, DURATION_S);
    const withFwd = await lab.runLoad(url, forwarded, DURATION_S);
    // Forwarding is fire and forget: let the last ones land before counting.
    await new Promise((r) => setTimeout(r, 1500));
    const ok = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'ok' }) - okBefore;
    const failed = sumMetric(m, 'roomkeeper_gateway_forwards_total', { type: 'ping', result: 'failed' }) - failedBefore;
    const received = (await receivers.call<number[]>('received')).map((n, i) => n - (receivedBefore[i] ?? 0));
    figures.push(figure(NAME, 'gateway pings without forwarders', without.requestsPerSec, 'req/s', { note: `p99 ${without.latencyP99Ms} ms` }));
    figures.push(figure(NAME, 'gateway pings with 2 forwarders', withFwd.requestsPerSec, 'req/s', { note: `p99 ${withFwd.latencyP99Ms} ms; forwards ok ${ok}, failed ${failed}; received ${received.join(' + ')}` }));
    figures.push(figure(NAME, 'with / without', withFwd.requestsPerSec / without.requestsPerSec, 'ratio', { target: { op: '>=', value: 0.8 } }));
    return {
      name: NAME, figures, durationMs: Date.now() - began,
      notes: [`autocannon ${LOAD_SHAPE.connections} connections, pipelining ${LOAD_SHAPE.pipelining}, ${DURATION_S} s each after ${WARMUP_S} s warm-up each, 1 measured run each (without first); ${ROOMS} rooms per scheduler; receivers in their own process; forwarder timeout 1000 ms; forward resync interval ${RESYNC_MS} ms.`],
    };
  } finally {
    await receivers.stop();
    await lab.stop();
  }
}

if (require.main === module) runStandalone(run);
