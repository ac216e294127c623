/**
 * Benchmark 2: room creation throughput of the operator's add_rooms against a bare loop that
 * creates the same GameRoom + Pod objects (`support/bare-room-loop.ts`) with the same client,
 * concurrency (`addRoomsConcurrency`) and client-side rate limit (`kubeQps`/`kubeBurst`), against
 * the same sandbox API server (its own process), in the same run. Target: operator >= 70% of
 * the bare loop's rooms per second.
 *
 * Operator: rooms / (operation `startedAt` -> the moment the sandbox holds the last Pod, polled
 * every 10 ms from the API server's store). Bare loop: rooms / (first request -> last Pod created).
 * No kubelet runs (pods stay Pending), so both measure creation alone. The operator runs in the
 * bench process (like the loop); it is stopped before the loop runs so it does not react to it.
 */
import type { SchedulerSpec } from '../common/src/generated/resources';
import { makeKubeClients } from '../common/src/kube/clients';
import { waitFor } from '../test/support/wait';
import { createRoomsBare } from './support/bare-room-loop';
import { startBenchStack, type BenchTarget } from './support/bench-stack';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { benchSchedulerBody, benchSchedulerSpec } from './support/scheduler-body';
import { runStandalone } from './support/standalone';

const NAMES = { sandbox: '2. creation throughput', real: '2r. creation throughput, real API server' } as const;
const ROOMS = Number(process.env.BENCH_CREATE_ROOMS ?? 1000);
const WARMUP = 20;

export async function run(target: BenchTarget = 'sandbox'): Promise<BenchOutcome> {
  const NAME = NAMES[target];
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const overrides: Record<string, unknown> = {};
  if (process.env.BENCH_KUBE_QPS) overrides.kubeQps = Number(process.env.BENCH_KUBE_QPS);
  if (process.env.BENCH_KUBE_BURST) overrides.kubeBurst = Number(process.env.BENCH_KUBE_BURST);
  const stack = await startBenchStack({ operator: 'none', operatorConfig: overrides, target });
  const cfg = stack.operatorConfig;
  const podCount = (namespace: string) => stack.cluster.countPods(namespace);
  try {
    // The operator's add_rooms.
    const operator = await stack.startInlineOperator();
    await waitFor(() => operator.isLeader, { timeoutMs: 30_000 });
    await stack.management.createScheduler(benchSchedulerBody('bench-op', { roomsReplicas: WARMUP }));
    await waitFor(async () => (await podCount('bench-op')) >= WARMUP && (await stack.api.listOperations('bench-op')).items.every((o) => o.status?.status === 'finished'), { timeoutMs: 60_000, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, 2000)); // let the client's token bucket refill (burst) for both runs alike
    const { operationId } = await stack.management.addRooms('bench-op', ROOMS);
    const tLastPod = await waitFor(async () => ((await podCount('bench-op')) >= WARMUP + ROOMS ? Date.now() : 0), { timeoutMs: 180_000, intervalMs: 10 });
    const op = await waitFor(async () => {
      const o = await stack.api.getOperation(operationId);
      return o.status?.status === 'finished' || o.status?.status === 'error' ? o : undefined;
    }, { timeoutMs: 30_000, intervalMs: 50 });
    const started = Date.parse(op.status?.startedAt ?? '');
    const opSeconds = (tLastPod - started) / 1000;
    await operator.stop();

    // The bare loop, same client settings.
    await stack.clients.core.createNamespace({ body: { metadata: { name: 'bench-bare' } } });
    const clients = makeKubeClients(stack.kc, { qps: cfg.kubeQps, burst: cfg.kubeBurst });
    const definition = benchSchedulerSpec() as unknown as SchedulerSpec;
    const loop = (count: number) => createRoomsBare({
      clients, namespace: 'bench-bare', definition, count, concurrency: cfg.addRoomsConcurrency,
      roomsApiUrl: stack.gateway.roomsUrl, roomTokenSecret: cfg.roomTokenSecret, maestroEnv: cfg.maestroEnv,
    });
    await loop(WARMUP);
    await new Promise((r) => setTimeout(r, 2000));
    const t0 = Date.now();
    const bare = await loop(ROOMS);
    const bareSeconds = (Date.now() - t0) / 1000;
    clients.limiter.drain();
    if (bare.firstError) throw new Error(`bare loop failed after ${bare.created} rooms: ${bare.firstError}`);

    const opRate = ROOMS / opSeconds;
    const bareRate = ROOMS / bareSeconds;
    figures.push(figure(NAME, 'operator add_rooms', opRate, 'rooms/s', { note: `${ROOMS} rooms in ${opSeconds.toFixed(2)} s (operation ${String(op.status?.status)})` }));
    figures.push(figure(NAME, 'bare loop', bareRate, 'rooms/s', { note: `${ROOMS} rooms in ${bareSeconds.toFixed(2)} s` }));
    figures.push(figure(NAME, 'operator / bare loop', opRate / bareRate, 'ratio', { target: { op: '>=', value: 0.7 } }));
    notes.push(
      `1 run each, after a warm-up of ${WARMUP} rooms each; client limits kubeQps ${cfg.kubeQps}, kubeBurst ${cfg.kubeBurst}, concurrency ${cfg.addRoomsConcurrency}${Object.keys(overrides).length ? ' (overridden by BENCH_KUBE_QPS/BENCH_KUBE_BURST)' : ' (production defaults)'}; no kubelet.`,
      target === 'real'
        ? 'Real kube-apiserver v1.28 + etcd 3.4 + kube-controller-manager as local processes on the same 2 cores; operator (in process, administrator credentials, stopped after its run) and bare loop in the bench process; pods counted by the API server (one-item list, remainingItemCount) every 10 ms.'
        : 'Sandbox API server in its own process; operator (in process, stopped after its run) and bare loop in the bench process.',
    );
  } finally {
    await stack.stop();
  }
  return { name: NAME, figures, notes, durationMs: Date.now() - began };
}

if (require.main === module) runStandalone(() => run(process.env.BENCH_TARGET === 'real' ? 'real' : 'sandbox'));
