/**
 * Benchmark 12: one allocation at a time, with a new allocationId each, on a scheduler of N ready
 * rooms where nothing else allocates (a matchmaker at a low rate). While other objects change (a
 * ConfigMap every 200 ms, as leases and Events do on any cluster), the API server's revision moves
 * on without the rooms cache. Two cases, each with RUNS allocations about 2 s apart: (a) no room
 * changes anywhere; (b) a room of another scheduler changes every 500 ms. Before AllocationClaims,
 * a new id waited for the rooms cache to pass the API server's revision, which in case (a) nothing
 * moved (a list of the N rooms decided after 100 ms); now a try checks its cache once that cache
 * shows its own room write. Measured: each allocation's latency, and how each was made sure of
 * (roomkeeper_allocation_replay_checks_total). `BENCH_TARGET=real` runs it on
 * kube-apiserver; `BENCH_ROOMS` sets N (10,000 by default).
 */
import { MERGE_PATCH } from '../common/src/kube/clients';
import type { BenchTarget } from './support/bench-stack';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { sumMetric } from './support/metric-sum';
import { startPingLab } from './support/ping-lab';
import { runStandalone } from './support/standalone';

const RUNS = 5;
/** Apart from one allocation to the next: no multiple of the 200 ms and 500 ms changes, so each arrives at another point between them. */
const SPACING_MS = 2150;

export function loneAllocationBenchName(target: BenchTarget, rooms: number): string {
  return `12${target === 'real' ? 'r' : ''}. lone allocations with an allocationId, ${rooms.toLocaleString('en-US')} ready rooms${target === 'real' ? ', real API server' : ''}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function run(target: BenchTarget = 'sandbox', rooms = 10_000): Promise<BenchOutcome> {
  const name = loneAllocationBenchName(target, rooms);
  const began = Date.now();
  const figures: Figure[] = [];
  const lab = await startPingLab({}, target);
  const timers: NodeJS.Timeout[] = [];
  try {
    await lab.addFleet('bench-lone', rooms);
    await lab.addFleet('bench-lone-elsewhere', 1);
    const cfg = lab.stack.gatewayConfig;
    const authorization = `Basic ${Buffer.from(`${cfg.authUsername}:${cfg.authPassword}`).toString('base64')}`;
    const core = lab.stack.clients.core;
    await core.createNamespacedConfigMap({ namespace: 'bench-lone', body: { metadata: { name: 'tick' }, data: { n: '0' } } });
    let ticks = 0;
    timers.push(setInterval(() => {
      void core.patchNamespacedConfigMap({ namespace: 'bench-lone', name: 'tick', body: { data: { n: String(++ticks) } } }, MERGE_PATCH).catch(() => undefined);
    }, 200));
    const checks = () => ({ cache: sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_allocation_replay_checks_total', { by: 'cache' }), list: sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_allocation_replay_checks_total', { by: 'list' }) });
    let sent = 0;
    const lone = async (): Promise<{ latenciesMs: number[]; cache: number; list: number }> => {
      const before = checks();
      const latenciesMs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await sleep(SPACING_MS);
        const t0 = performance.now();
        const res = await fetch(`${lab.stack.gateway.managementUrl}/scheduler/bench-lone/rooms/allocate`, {
          method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ allocationId: `lone-${sent++}` }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`allocate answered ${res.status}`);
        latenciesMs.push(performance.now() - t0);
      }
      const after = checks();
      return { latenciesMs, cache: after.cache - before.cache, list: after.list - before.list };
    };
    const describe = (r: { latenciesMs: number[]; cache: number; list: number }) =>
      `${r.latenciesMs.map((ms) => ms.toFixed(0)).join(', ')} ms; after each write, no other room with the id made sure of by the cache ${r.cache} times, by a list ${r.list} times`;

    const quiet = await lone();
    figures.push(figure(name, 'no room changes anywhere: slowest allocation', Math.max(...quiet.latenciesMs), 'ms', { note: describe(quiet) }));
    let flip = 0;
    timers.push(setInterval(() => {
      void lab.stack.api.patchGameRoomStatus('bench-lone-elsewhere', 'bench-lone-elsewhere-00000', { status: { runningMatches: ++flip % 2 } }).catch(() => undefined);
    }, 500));
    const moving = await lone();
    figures.push(figure(name, 'a room elsewhere changes every 500 ms: slowest allocation', Math.max(...moving.latenciesMs), 'ms', { note: describe(moving) }));
    return {
      name, figures, durationMs: Date.now() - began,
      notes: [`${rooms} ready GameRooms ${target === 'real' ? 'on kube-apiserver v1.28 with etcd (local processes on the same cores)' : 'in the sandbox (own process)'}, gateway in the bench process with production defaults; a ConfigMap patched every 200 ms throughout; ${RUNS} allocations per case, one at a time, ${SPACING_MS} ms apart, each with a new allocationId; 1 run.`],
    };
  } finally {
    for (const t of timers) clearInterval(t);
    await lab.stop();
  }
}

if (require.main === module) runStandalone(() => run(process.env.BENCH_TARGET === 'real' ? 'real' : 'sandbox', Number(process.env.BENCH_ROOMS ?? 10_000)));
