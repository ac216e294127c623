/**
 * Benchmarks 3 and 5: 10,000 rooms held steady (10 schedulers x 1,000 rooms, created through the
 * management API with roomsReplicas 1000), simulated game servers pinging every 5 s through the
 * real gateway.
 *
 * 3. Operator resident memory, the operator alone in its own process: VmRSS sampled every second
 *    over the steady window (max and median), and VmHWM (its peak since start, incl. creation).
 *    Target: <= 300 MB.
 * 5. API writes caused by pings per ping in the steady window: the gateway's own count of the API
 *    writes it made (`roomkeeper_kube_writes_total` + refused writes, i.e. GameRoom status patches
 *    and PingDigest statuses; the gateway writes nothing else on the ping path) divided by the
 *    pings the simulated rooms sent (`rooms.stats().pingsSent`). Cross-checked with the API
 *    server's own count of writes to gamerooms + pingdigests, which also includes the operator's.
 *    Target: <= 0.01.
 *
 * Layout: sandbox API server, operator, simulated kubelet+rooms each in their own process; the
 * gateway in the bench process. Both clients' QPS limits are raised to 2000 for this benchmark
 * only, so building the fleet takes less time (this measures memory and writes, not rate).
 */
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { startBenchStack, type BenchStack } from './support/bench-stack';
import { sumMetric } from './support/metric-sum';
import { MB, readProcessMemory } from './support/process-memory';
import { RoomReadiness } from './support/room-readiness';
import { benchSchedulerBody } from './support/scheduler-body';
import { runStandalone } from './support/standalone';
import type { SimulationStats } from './processes/simulation-child';

const NAME3 = '3. operator memory, 10k rooms';
const NAME5 = '5. API writes per ping';
const TOTAL = Number(process.env.BENCH_FLEET_ROOMS ?? 10_000);
const SCHEDULERS = 10;
const WINDOW_S = Number(process.env.BENCH_STEADY_SECONDS ?? 45);
const SETTLE_S = 10;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const perScheduler = Math.ceil(TOTAL / SCHEDULERS);
  const fast = { kubeQps: 2000, kubeBurst: 2000 };
  const stack = await startBenchStack({
    operator: 'child',
    operatorConfig: fast,
    gatewayConfig: fast,
    simulation: { nodes: 4, pingIntervalMs: 5000, concurrency: 64 },
  });
  const readiness = new RoomReadiness(stack.kc, stack.clients.custom, Date.now);
  const operatorPid = stack.operatorChild!.pid;
  try {
    await readiness.start();
    const t0 = Date.now();
    for (let i = 0; i < SCHEDULERS; i++) {
      const start = 20000 + i * 2000;
      await stack.management.createScheduler(benchSchedulerBody(`bench-fleet-${i}`, { roomsReplicas: perScheduler, portRange: { start, end: start + 1999 } }));
    }
    const tReady = await readiness.whenReady(perScheduler * SCHEDULERS, 900_000);
    figures.push(figure(NAME3, `fleet built: ${perScheduler * SCHEDULERS} rooms ready after`, (tReady - t0) / 1000, 's'));
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));

    const snapshot = async () => {
      const sim = await stack.simulation!.call<SimulationStats>('stats');
      const m = stack.gatewayMetrics;
      return {
        at: Date.now(),
        pingsSent: sim.pingsSent,
        pingFailures: sim.pingFailures,
        pingsReceived: sumMetric(m, 'roomkeeper_pings_total'),
        gatewayWrites: sumMetric(m, 'roomkeeper_kube_writes_total') + sumMetric(m, 'roomkeeper_kube_write_errors_total'),
        statusWrites: sumMetric(m, 'roomkeeper_kube_writes_total', { kind: 'gameroom_status' }),
        digestWrites: sumMetric(m, 'roomkeeper_kube_writes_total', { kind: 'ping_digest' }),
        apiRoomWrites: await sandboxOf(stack).call<number>('writeCount', 'gamerooms'),
        apiDigestWrites: await sandboxOf(stack).call<number>('writeCount', 'pingdigests'),
      };
    };
    const before = await snapshot();
    const rss: number[] = [];
    const windowEnd = Date.now() + WINDOW_S * 1000;
    while (Date.now() < windowEnd) {
      rss.push((await readProcessMemory(operatorPid)).rssBytes);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const after = await snapshot();
    const mem = await readProcessMemory(operatorPid);
    const heap = await stack.operatorChild!.call<NodeJS.MemoryUsage>('memory');
    const readyAtEnd = readiness.readyCount();
    // Diagnosis (BENCH_OPERATOR_NODE_FLAGS=--expose-gc): how much of the heap is really retained.
    const afterGc = (process.env.BENCH_OPERATOR_NODE_FLAGS ?? '').includes('--expose-gc')
      ? { heap: await stack.operatorChild!.call<NodeJS.MemoryUsage>('memoryAfterGc'), rss: (await readProcessMemory(operatorPid)).rssBytes }
      : undefined;

    figures.push(figure(NAME3, 'operator RSS, max in steady window', Math.max(...rss) / MB, 'MB', { target: { op: '<=', value: 300 } }));
    figures.push(figure(NAME3, 'operator RSS, median in steady window', median(rss) / MB, 'MB'));
    figures.push(figure(NAME3, 'operator RSS peak since start (VmHWM)', mem.peakRssBytes / MB, 'MB', { note: 'includes building the fleet' }));
    figures.push(figure(NAME3, 'operator V8 heap used at end', heap.heapUsed / MB, 'MB'));
    if (afterGc) {
      figures.push(figure(NAME3, 'diagnosis: V8 heap used after a forced full GC', afterGc.heap.heapUsed / MB, 'MB'));
      figures.push(figure(NAME3, 'diagnosis: RSS after a forced full GC', afterGc.rss / MB, 'MB'));
      figures.push(figure(NAME3, 'diagnosis: V8 heap total / external / arrayBuffers after GC', afterGc.heap.heapTotal / MB, 'MB', { note: `external ${(afterGc.heap.external / MB).toFixed(1)} MB, arrayBuffers ${(afterGc.heap.arrayBuffers / MB).toFixed(1)} MB` }));
    }
    figures.push(figure(NAME3, 'rooms ready at end of window', readyAtEnd, 'rooms'));

    const pings = after.pingsSent - before.pingsSent;
    const gatewayWrites = after.gatewayWrites - before.gatewayWrites;
    const apiWrites = (after.apiRoomWrites - before.apiRoomWrites) + (after.apiDigestWrites - before.apiDigestWrites);
    const seconds = (after.at - before.at) / 1000;
    figures.push(figure(NAME5, 'gateway API writes per ping', gatewayWrites / pings, 'writes/ping', {
      target: { op: '<=', value: 0.01 },
      note: `${gatewayWrites} writes (${after.statusWrites - before.statusWrites} status, ${after.digestWrites - before.digestWrites} digests) / ${pings} pings`,
    }));
    figures.push(figure(NAME5, 'all gamerooms+pingdigests writes per ping (incl. operator)', apiWrites / pings, 'writes/ping', { note: `${apiWrites} writes counted by the API server` }));
    figures.push(figure(NAME5, 'pings sent in window', pings / seconds, 'pings/s', { note: `${pings} in ${seconds.toFixed(0)} s; ${after.pingFailures - before.pingFailures} failed; gateway received ${after.pingsReceived - before.pingsReceived}` }));
    notes.push(
      `${SCHEDULERS} schedulers x ${perScheduler} rooms created with POST /schedulers (roomsReplicas ${perScheduler}); steady window ${WINDOW_S} s starting ${SETTLE_S} s after all rooms were ready; RSS from /proc/<pid>/status every 1 s; 1 run.`,
      `Operator child runs under Node 22 with tsx's loader (adds a little memory over compiled JS) and node flags "${process.env.BENCH_OPERATOR_NODE_FLAGS ?? '--max-old-space-size=160'}" (the chart's operator.maxHeapMB); production defaults except kubeQps/kubeBurst ${fast.kubeQps}/${fast.kubeBurst} (operator and gateway) and port 0. Gateway ping flush interval ${stack.gatewayConfig.pingFlushInterval} ms (default).`,
    );
  } finally {
    await readiness.stop();
    await stack.stop();
  }
  return { name: `${NAME3} + ${NAME5}`, figures, notes, durationMs: Date.now() - began };
}

if (require.main === module) runStandalone(run);

/** Write counts come from the sandbox's own store. */
function sandboxOf(stack: BenchStack): NonNullable<BenchStack['sandbox']> {
  if (!stack.sandbox) throw new Error('the steady-fleet benchmark counts writes in the sandbox; it runs on the sandbox target only');
  return stack.sandbox;
}
