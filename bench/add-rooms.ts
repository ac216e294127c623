/**
 * Benchmark 1: add_rooms of 1,000 rooms on the sandbox, timed from the enqueue
 * (`POST /schedulers/{name}/add-rooms` with amount 1000) to the moment the 1,000th new GameRoom
 * has status `ready` (its pod Running and its simulated game server's first ping recorded by the
 * gateway). Target: within 20 s.
 *
 * Layout: sandbox API server, operator and simulated kubelet+rooms each in their own process;
 * the gateway in the bench process. Production defaults (incl. kubeQps/kubeBurst), rooms ping
 * every 5 s, the kubelet's default 200 ms start delay. A warm-up add of 20 rooms goes first.
 */
import { waitFor } from '../test/support/wait';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { startBenchStack, type BenchTarget } from './support/bench-stack';
import { RoomReadiness } from './support/room-readiness';
import { benchSchedulerBody } from './support/scheduler-body';
import { runStandalone } from './support/standalone';

const NAMES = { sandbox: '1. add_rooms 1,000', real: '1r. add_rooms 1,000, real API server' } as const;
const SCHEDULER = 'bench-add';
const WARMUP = 20;
const ROOMS = Number(process.env.BENCH_ADD_ROOMS ?? 1000);
const TARGET_S = 20;

function historyTime(history: { createdAt: string; event: string }[] | undefined, pattern: RegExp): number | undefined {
  const e = (history ?? []).filter((h) => pattern.test(h.event)).pop();
  return e ? Date.parse(e.createdAt) : undefined;
}

export async function run(target: BenchTarget = 'sandbox'): Promise<BenchOutcome> {
  const NAME = NAMES[target];
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const stack = await startBenchStack({ operator: 'child', simulation: { nodes: 3, pingIntervalMs: 5000 }, target });
  const readiness = new RoomReadiness(stack.kc, stack.clients.custom, Date.now);
  try {
    await readiness.start();
    await stack.management.createScheduler(benchSchedulerBody(SCHEDULER, { roomsReplicas: WARMUP }));
    await readiness.whenReady(WARMUP, 60_000, SCHEDULER);
    await waitFor(async () => (await stack.api.listOperations(SCHEDULER)).items.every((o) => o.status?.status === 'finished'), { timeoutMs: 30_000, intervalMs: 100 });

    const t0 = Date.now();
    const { operationId } = await stack.management.addRooms(SCHEDULER, ROOMS);
    const tReady = await readiness.whenReady(WARMUP + ROOMS, 120_000, SCHEDULER);
    const op = await waitFor(async () => {
      const o = await stack.api.getOperation(operationId);
      return o.status?.status === 'finished' || o.status?.status === 'error' ? o : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });

    const seconds = (tReady - t0) / 1000;
    figures.push(figure(NAME, `enqueue -> all ${ROOMS} ready`, seconds, 's', { target: { op: '<=', value: TARGET_S } }));
    figures.push(figure(NAME, 'rooms ready per second', ROOMS / seconds, 'rooms/s'));
    const started = op.status?.startedAt ? Date.parse(op.status.startedAt) : undefined;
    const created = historyTime(op.status?.executionHistory, new RegExp(`^Created ${ROOMS}/${ROOMS} rooms`));
    if (started !== undefined) figures.push(figure(NAME, 'enqueue -> operation started', (started - t0) / 1000, 's'));
    if (started !== undefined && created !== undefined) figures.push(figure(NAME, `operation start -> ${ROOMS} rooms created`, (created - started) / 1000, 's'));
    if (created !== undefined) figures.push(figure(NAME, 'last room created -> all ready', (tReady - created) / 1000, 's'));
    notes.push(
      `Timed from POST /schedulers/${SCHEDULER}/add-rooms {amount: ${ROOMS}} to the watch event of the ${ROOMS}th new GameRoom with status ready; 1 run after a warm-up of ${WARMUP} rooms.`,
      `Processes: ${target === 'real' ? 'real kube-apiserver v1.28 + etcd + kube-controller-manager (operator as the chart\'s ServiceAccount)' : 'sandbox API server'}, operator, simulated kubelet (3 nodes, 200 ms start delay) + rooms (5 s pings) each alone; gateway in the bench process. Operator: production defaults (kubeQps ${stack.operatorConfig.kubeQps}, kubeBurst ${stack.operatorConfig.kubeBurst}, addRoomsConcurrency ${stack.operatorConfig.addRoomsConcurrency}). Operation ${String(op.status?.status)}.`,
    );
  } finally {
    await readiness.stop();
    await stack.stop();
  }
  return { name: NAME, figures, notes, durationMs: Date.now() - began };
}

if (require.main === module) runStandalone(() => run(process.env.BENCH_TARGET === 'real' ? 'real' : 'sandbox'));
