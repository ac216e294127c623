/**
 * Benchmark 4: gateway ping throughput against a bare `node:http` server answering the same route,
 * side by side in one run with the same load generator (autocannon in its own process, same
 * connections and pipelining, 10 s each after a 3 s warm-up each). The gateway path is the real
 * one: the rooms exist as GameRooms in the gateway's cache, per-room tokens are checked, and the
 * pings change nothing, so they are coalesced in memory. The load spreads over 2,000 room ids.
 * Target: gateway >= 50% of the bare server's req/s.
 */
import { startBarePingServer } from './support/bare-ping-server';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { sumMetric } from './support/metric-sum';
import { LOAD_SHAPE, startPingLab } from './support/ping-lab';
import { runStandalone } from './support/standalone';

const NAME = '4. ping throughput';
const ROOMS = 2000;
const DURATION_S = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const WARMUP_S = 3;

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const lab = await startPingLab();
  const bare = await startBarePingServer();
  try {
    const targets = await lab.addFleet('bench-ping', ROOMS);
    const gatewayUrl = lab.stack.gateway.roomsUrl;
    await lab.runLoad(bare.url, targets, WARMUP_S);
    await lab.runLoad(gatewayUrl, targets, WARMUP_S);
    const writesBefore = sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_kube_writes_total', { kind: 'gameroom_status' });
    const b = await lab.runLoad(bare.url, targets, DURATION_S);
    const g = await lab.runLoad(gatewayUrl, targets, DURATION_S);
    const statusWrites = sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_kube_writes_total', { kind: 'gameroom_status' }) - writesBefore;
    const bad = (r: typeof g) => r.non2xx + r.errors + r.timeouts + r.mismatches;
    figures.push(figure(NAME, 'bare node:http', b.requestsPerSec, 'req/s', { note: `p99 ${b.latencyP99Ms} ms; ${b.total} requests, ${bad(b)} not ok` }));
    figures.push(figure(NAME, 'gateway', g.requestsPerSec, 'req/s', { note: `p99 ${g.latencyP99Ms} ms; ${g.total} requests, ${bad(g)} not ok; ${statusWrites} status writes` }));
    figures.push(figure(NAME, 'bare p99 latency', b.latencyP99Ms, 'ms'));
    figures.push(figure(NAME, 'gateway p99 latency', g.latencyP99Ms, 'ms'));
    figures.push(figure(NAME, 'gateway / bare', g.requestsPerSec / b.requestsPerSec, 'ratio', { target: { op: '>=', value: 0.5 } }));
    if (bad(g) > 0) throw new Error(`${bad(g)} gateway pings were not answered {"success":true}`);
    return {
      name: NAME, figures, durationMs: Date.now() - began,
      notes: [`autocannon ${LOAD_SHAPE.connections} connections, pipelining ${LOAD_SHAPE.pipelining}, ${DURATION_S} s per target after ${WARMUP_S} s warm-up each, 1 measured run each (bare first); ${ROOMS} room ids round robin, each with its bearer token; both servers in the bench process, load generator in its own process.`],
    };
  } finally {
    await bare.close();
    await lab.stop();
  }
}

if (require.main === module) runStandalone(run);
