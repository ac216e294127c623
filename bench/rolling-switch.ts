/**
 * Rolling switch: a major version change of a 1,000-room scheduler with maxSurge 25 %, timed
 * from the moment GET shows the new version active to the moment every room runs it (1,000
 * rooms of the new version ready, none of the old one left). Divided by the ideal, batches x one
 * room's start time (batches = rooms / maxSurge = 4), where one room's start time is measured on
 * the same stack: enqueue of add_rooms {amount: 1} on an idle scheduler -> that room ready, median
 * of 3. Target: <= 1.5.
 *
 * Rooms take BENCH_ROOM_START_MS (default 5,000 ms) to start: the simulated kubelet's start delay
 * before the container runs, then the room's first ping. A game server that starts in 200 ms
 * would make the ideal a fraction of a second and the figure a measure of API throughput
 * (figure 1 measures that); 5 s is a fast real game server.
 *
 * Layout as figure 1: sandbox API server, operator, simulated kubelet + rooms each in their own
 * process, gateway in the bench process, production defaults.
 */
import { waitFor } from '../test/support/wait';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { startBenchStack } from './support/bench-stack';
import { FleetByVersion } from './support/fleet-by-version';
import { RoomReadiness } from './support/room-readiness';
import { benchSchedulerBody, benchSchedulerSpec } from './support/scheduler-body';
import { runStandalone } from './support/standalone';

const NAME = '8. rolling switch, 1,000 rooms';
const SCHEDULER = 'bench-roll';
const PROBE = 'bench-probe';
const ROOMS = Number(process.env.BENCH_ROLL_ROOMS ?? 1000);
const START_MS = Number(process.env.BENCH_ROOM_START_MS ?? 5000);
const SURGE_PERCENT = 25;
const TARGET = 1.5;

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const stack = await startBenchStack({ operator: 'child', simulation: { nodes: 5, pingIntervalMs: 5000, startDelayMs: START_MS } });
  const readiness = new RoomReadiness(stack.kc, stack.clients.custom, Date.now);
  const fleet = new FleetByVersion(SCHEDULER);
  const informer = FleetByVersion.informer(fleet, stack.kc, stack.clients.custom);
  try {
    await readiness.start();
    await informer.start();

    // One room's start time, on an idle scheduler of its own.
    await stack.management.createScheduler(benchSchedulerBody(PROBE, { roomsReplicas: 0, portRange: { start: 30000, end: 30999 } }));
    await waitFor(async () => (await stack.api.getScheduler(PROBE)).status?.version, { timeoutMs: 60_000, intervalMs: 100 });
    const samples: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const t0 = Date.now();
      await stack.management.addRooms(PROBE, 1);
      samples.push((await readiness.whenReady(i, 60_000, PROBE)) - t0);
    }
    const startMs = [...samples].sort((a, b) => a - b)[1] as number;

    await stack.management.createScheduler({ ...benchSchedulerBody(SCHEDULER, { roomsReplicas: ROOMS }), maxSurge: `${SURGE_PERCENT}%` });
    await readiness.whenReady(ROOMS, 300_000, SCHEDULER);
    const v1 = (await stack.api.getScheduler(SCHEDULER)).status?.version as string;

    const spec = benchSchedulerSpec({ roomsReplicas: ROOMS }) as { spec: { containers: { image: string }[] } };
    spec.spec.containers = spec.spec.containers.map((c) => ({ ...c, image: 'example.com/bench-game:2.0.0' }));
    const tPost = Date.now();
    await stack.management.request('POST', `/schedulers/${SCHEDULER}`, { ...spec, maxSurge: `${SURGE_PERCENT}%` });
    const v2 = await waitFor(async () => {
      const v = (await stack.api.getScheduler(SCHEDULER)).status?.version;
      return v && v !== v1 ? v : undefined;
    }, { timeoutMs: 120_000, intervalMs: 50 });
    const tActive = Date.now();
    fleet.resetPeak();
    const tDone = await fleet.until(() => fleet.count(v2, true) >= ROOMS && fleet.count(v1, false) === 0, 600_000);
    const peak = fleet.peak;

    const batches = Math.ceil(100 / SURGE_PERCENT);
    const ideal = batches * startMs;
    const ratio = (tDone - tActive) / ideal;
    figures.push(figure(NAME, 'one room\'s start time (median of 3)', startMs / 1000, 's', { note: `samples ${samples.map((s) => (s / 1000).toFixed(2)).join(', ')} s` }));
    figures.push(figure(NAME, 'new version active -> all rooms on it', (tDone - tActive) / 1000, 's'));
    figures.push(figure(NAME, 'POST -> new version active (incl. validation room)', (tActive - tPost) / 1000, 's'));
    figures.push(figure(NAME, `rollout / ideal (${batches} batches x start time)`, ratio, 'ratio', { target: { op: '<=', value: TARGET } }));
    // Where the rollout's time went: in the health check's operations, or between them.
    const ops = (await stack.api.listOperations(SCHEDULER)).items
      .filter((o) => o.status?.startedAt && o.status.finishedAt && Date.parse(o.status.startedAt) >= tActive)
      .filter((o) => Date.parse(o.status?.finishedAt ?? '') <= tDone);
    const busy = (def: string) => ops.filter((o) => o.spec.definitionName === def)
      .reduce((sum, o) => sum + Date.parse(o.status?.finishedAt ?? '') - Date.parse(o.status?.startedAt ?? ''), 0) / 1000;
    figures.push(figure(NAME, 'time in add_rooms operations', busy('add_rooms'), 's', { note: `${ops.filter((o) => o.spec.definitionName === 'add_rooms').length} operations` }));
    figures.push(figure(NAME, 'time in remove_rooms operations', busy('remove_rooms'), 's', { note: `${ops.filter((o) => o.spec.definitionName === 'remove_rooms').length} operations` }));
    figures.push(figure(NAME, 'most rooms at once during the rollout', peak, 'rooms', { note: `bound: ${ROOMS} + maxSurge ${ROOMS * SURGE_PERCENT / 100}` }));
    notes.push(
      `Scheduler of ${ROOMS} rooms, maxSurge ${SURGE_PERCENT}%; POST /schedulers/${SCHEDULER} with a new image (a major change) creates ${v2}; timed from GET showing ${v2} active (polled every 50 ms) to the GameRoom watch event after which ${ROOMS} rooms of ${v2} are ready and none of ${v1} is left. 1 run.`,
      `Rooms start in ${START_MS} ms (simulated kubelet start delay, BENCH_ROOM_START_MS) plus their first ping; 5 simulated nodes; rooms ping every 5 s; production defaults for the operator (kubeQps ${stack.operatorConfig.kubeQps}, health interval ${stack.operatorConfig.healthInterval} ms).`,
    );
  } finally {
    await informer.stop();
    await readiness.stop();
    await stack.stop();
  }
  return { name: NAME, figures, notes, durationMs: Date.now() - began };
}

if (require.main === module) runStandalone(run);
