/**
 * Soak: a fleet of 10,000 rooms (10 schedulers x 1,000) kept for BENCH_SOAK_MINUTES (default 20)
 * with churn (every 10 s an add-rooms or remove-rooms of 20 rooms on one scheduler, through the
 * management API) and the leader operator SIGKILLed every BENCH_SOAK_KILL_SECONDS (default 120),
 * a fresh standby started each time (two operator replicas, as the chart runs them).
 *
 * Figures:
 *  - operator RSS: every operator process sampled every 5 s; the max over the soak (target
 *    <= 300 MB) and, for "flat", the leader's RSS 90 s into its term for the first and the last
 *    complete term (a leak grows from term to term; each leader rebuilds its caches);
 *  - API writes per ping: the gateway's writes (status patches + ping digests) over the pings
 *    sent during the soak (target <= 0.01); it includes the writes of the churned rooms' real
 *    status changes, so writes per unchanged ping are at most this;
 *  - leaks once the churn stops and the fleet settles: per scheduler |rooms - roomsReplicas|,
 *    rooms without a pod and pods without a room (target 0), and operations still pending or
 *    running (target 0); operations of the churn that ended in error are reported.
 *
 * Layout: as figure 3 (sandbox API server, operators, simulated kubelet + rooms each in their own
 * process; gateway in the bench process); kubeQps/kubeBurst 2000 as figure 3, the operators'
 * node flags as the chart's (operator.maxHeapMB), production defaults otherwise.
 */
import * as path from 'node:path';
import { retryTransient } from '../common/src/kube/clients';
import { forkChild, type ChildHandle } from './support/child-rpc';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { chartNodeFlags, PROCESSES_DIR, startBenchStack } from './support/bench-stack';
import { sumMetric } from './support/metric-sum';
import { MB, readProcessMemory } from './support/process-memory';
import { RoomReadiness } from './support/room-readiness';
import { benchSchedulerBody } from './support/scheduler-body';
import { runStandalone } from './support/standalone';
import type { OperatorChildArg } from './processes/operator-child';
import type { SimulationStats } from './processes/simulation-child';

const NAME = '9. soak, 10k rooms, churn and leader kills';
const TOTAL = Number(process.env.BENCH_SOAK_ROOMS ?? 10_000);
const SCHEDULERS = 10;
const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 20);
const KILL_EVERY_MS = Number(process.env.BENCH_SOAK_KILL_SECONDS ?? 120) * 1000;
const CHURN_EVERY_MS = 10_000;
const CHURN = 20;
const TERM_PROBE_MS = 90_000;

interface Operator { handle: ChildHandle<{ opsUrl: string | undefined }>; startedAt: number; killed: boolean }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  const perScheduler = Math.ceil(TOTAL / SCHEDULERS);
  const fast = { kubeQps: 2000, kubeBurst: 2000 };
  const stack = await startBenchStack({ operator: 'none', operatorConfig: fast, gatewayConfig: fast, simulation: { nodes: 4, pingIntervalMs: 5000, concurrency: 64 } });
  const nodeFlags = chartNodeFlags('operator');
  const arg: OperatorChildArg = { kubeconfigYaml: stack.cluster.operatorKubeconfigYaml, config: { ...stack.operatorConfig } };
  const operators: Operator[] = [];
  const startOperator = async () => {
    const handle = await forkChild<{ opsUrl: string | undefined }>(path.join(PROCESSES_DIR, 'operator-child.ts'), { arg, nodeFlags });
    operators.push({ handle, startedAt: Date.now(), killed: false });
  };
  const readiness = new RoomReadiness(stack.kc, stack.clients.custom, Date.now);
  const names = Array.from({ length: SCHEDULERS }, (_, i) => `bench-soak-${i}`);
  try {
    await startOperator();
    await startOperator();
    await readiness.start();
    for (const [i, name] of names.entries()) {
      const start = 20000 + i * 2000;
      await stack.management.createScheduler(benchSchedulerBody(name, { roomsReplicas: perScheduler, portRange: { start, end: start + 1999 } }));
    }
    const t0 = Date.now();
    await readiness.whenReady(perScheduler * SCHEDULERS, 900_000);
    figures.push(figure(NAME, `fleet built: ${perScheduler * SCHEDULERS} rooms ready after`, (Date.now() - t0) / 1000, 's'));

    const counters = async () => ({
      pings: (await stack.simulation!.call<SimulationStats>('stats')).pingsSent,
      writes: sumMetric(stack.gatewayMetrics, 'roomkeeper_kube_writes_total') + sumMetric(stack.gatewayMetrics, 'roomkeeper_kube_write_errors_total'),
      statusWrites: sumMetric(stack.gatewayMetrics, 'roomkeeper_kube_writes_total', { kind: 'gameroom_status' }),
      digestWrites: sumMetric(stack.gatewayMetrics, 'roomkeeper_kube_writes_total', { kind: 'ping_digest' }),
    });
    const before = await counters();
    const soakEnd = Date.now() + MINUTES * 60_000;
    let maxRss = 0;
    const termProbes: { leaderSince: number; rssMb: number }[] = [];
    let kills = 0;
    let unexpectedExits = 0;
    let churnOps = 0;
    let churnRefused = 0;
    let nextKill = Date.now() + KILL_EVERY_MS;
    let nextChurn = Date.now() + CHURN_EVERY_MS;
    let nextProgress = Date.now() + 60_000;
    let leader: Operator | undefined;
    let leaderSince = Date.now();
    let probed = false;
    while (Date.now() < soakEnd) {
      for (const op of operators.filter((o) => !o.killed)) {
        const rss = (await readProcessMemory(op.handle.pid).catch(() => ({ rssBytes: 0 }))).rssBytes;
        maxRss = Math.max(maxRss, rss);
        const isLeader = await op.handle.call<boolean>('isLeader').catch(() => false);
        if (isLeader && leader !== op) {
          leader = op;
          leaderSince = Date.now();
          probed = false;
        }
        if (isLeader && !probed && Date.now() - leaderSince >= TERM_PROBE_MS) {
          termProbes.push({ leaderSince, rssMb: rss / MB });
          probed = true;
        }
      }
      if (Date.now() >= nextChurn) {
        nextChurn += CHURN_EVERY_MS;
        const name = names[churnOps % SCHEDULERS] as string;
        const add = Math.floor(churnOps / SCHEDULERS) % 2 === 0;
        churnOps++;
        await stack.management.request('POST', `/schedulers/${name}/${add ? 'add-rooms' : 'remove-rooms'}`, { amount: CHURN }).catch(() => {
          churnRefused++;
        });
      }
      // An operator that exited on its own (out of memory) is counted, and replaced.
      for (const op of operators.filter((o) => !o.killed && !alive(o.handle.pid))) {
        op.killed = true;
        unexpectedExits++;
        await startOperator();
      }
      if (Date.now() >= nextKill && leader && !leader.killed) {
        nextKill += KILL_EVERY_MS;
        process.kill(leader.handle.pid, 'SIGKILL');
        leader.killed = true;
        kills++;
        await startOperator();
      }
      if (Date.now() >= nextProgress) {
        nextProgress += 60_000;
        process.stdout.write(`[soak] ${Math.round((Date.now() - began) / 1000)} s: max operator RSS ${(maxRss / MB).toFixed(0)} MB, ${kills} kills, ${unexpectedExits} exits on their own, ${churnOps} churn operations (${churnRefused} refused)\n`);
      }
      await sleep(5000);
    }
    const after = await counters();

    // Settle: no new churn; the fleet converges and the queues empty.
    const settled = await waitSettled(stack, names, 300_000);
    const pings = after.pings - before.pings;
    figures.push(figure(NAME, 'operator RSS, max over the soak (every replica)', maxRss / MB, 'MB', { target: { op: '<=', value: 300 } }));
    const first = termProbes[0];
    const last = termProbes[termProbes.length - 1];
    if (first && last) {
      figures.push(figure(NAME, `leader RSS ${TERM_PROBE_MS / 1000} s into its term: first term`, first.rssMb, 'MB'));
      figures.push(figure(NAME, `leader RSS ${TERM_PROBE_MS / 1000} s into its term: last term`, last.rssMb, 'MB', { note: `${termProbes.length} terms probed: ${termProbes.map((p) => p.rssMb.toFixed(0)).join(', ')} MB` }));
    }
    // A ping that changes nothing costs at most a share of a ping digest; status patches are
    // changes (the churned rooms starting and stopping).
    const statusWrites = after.statusWrites - before.statusWrites;
    figures.push(figure(NAME, 'API writes per unchanged ping', (after.digestWrites - before.digestWrites) / (pings - statusWrites), 'writes/ping', { target: { op: '<=', value: 0.01 }, note: `${after.digestWrites - before.digestWrites} ping-digest writes / ${pings - statusWrites} pings that changed no status` }));
    figures.push(figure(NAME, 'gateway API writes per ping, all', (after.writes - before.writes) / pings, 'writes/ping', { note: `${after.writes - before.writes} writes (${statusWrites} status changes) / ${pings} pings` }));
    figures.push(figure(NAME, 'leader kills', kills, 'kills'));
    figures.push(figure(NAME, 'operator processes that exited on their own', unexpectedExits, 'exits', { target: { op: '<=', value: 0 }, note: 'e.g. out of memory at the heap limit' }));
    figures.push(figure(NAME, 'churn operations asked / refused', churnOps, 'operations', { note: `${churnRefused} refused (4xx/5xx)` }));
    figures.push(figure(NAME, 'leaked or missing rooms after settling', settled.roomDiff, 'rooms', { target: { op: '<=', value: 0 }, note: settled.detail }));
    figures.push(figure(NAME, 'operations pending or running after settling', settled.unfinished, 'operations', { target: { op: '<=', value: 0 }, note: `${settled.errors} operations ended in error over the soak` }));
    notes.push(
      `${SCHEDULERS} schedulers x ${perScheduler} rooms; ${MINUTES} min soak; every ${CHURN_EVERY_MS / 1000} s add-rooms or remove-rooms of ${CHURN} rooms on one scheduler in turn; the leader SIGKILLed every ${KILL_EVERY_MS / 1000} s and a new standby started; RSS of every operator process every 5 s from /proc; settled = every scheduler's rooms equal roomsReplicas with a pod each and no operation pending or running (up to 5 min after the soak).`,
      `Operators under Node 22 with tsx's loader and node flags "${nodeFlags.join(' ')}" (the chart's operator.maxHeapMB); kubeQps/kubeBurst ${fast.kubeQps}/${fast.kubeBurst} (operators and gateway); production defaults otherwise (lease ${stack.operatorConfig.leaseDuration} ms).`,
    );
  } finally {
    await readiness.stop();
    for (const op of operators) if (!op.killed) await op.handle.stop().catch(() => undefined);
    await stack.stop();
  }
  return { name: NAME, figures, notes, durationMs: Date.now() - began };
}

/** Waits until every scheduler's rooms equal roomsReplicas (a pod each) and no operation is pending or running. */
async function waitSettled(stack: Awaited<ReturnType<typeof startBenchStack>>, names: readonly string[], timeoutMs: number): Promise<{ roomDiff: number; unfinished: number; errors: string; detail: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let roomDiff = 0;
    let unfinished = 0;
    let errors = 0;
    const reasons = new Map<string, number>();
    const detail: string[] = [];
    for (const name of names) {
      // A read the loaded API server drops is asked again on the next round.
      const s = await retryTransient(() => stack.api.getScheduler(name), 10);
      const rooms = (await retryTransient(() => stack.api.listGameRooms(name), 10)).items.filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp);
      const pods = new Set((await retryTransient(() => stack.clients.core.listNamespacedPod({ namespace: name }), 10)).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name));
      const roomNames = new Set(rooms.map((r) => r.metadata.name));
      const withoutPod = rooms.filter((r) => !pods.has(r.metadata.name)).length;
      const podWithoutRoom = [...pods].filter((p) => !roomNames.has(p)).length;
      const diff = Math.abs(rooms.length - (s.spec.roomsReplicas ?? 0)) + withoutPod + podWithoutRoom;
      if (diff > 0) detail.push(`${name}: ${rooms.length} rooms for roomsReplicas ${s.spec.roomsReplicas ?? 0}, ${withoutPod} without pod, ${podWithoutRoom} pods without room`);
      roomDiff += diff;
      const ops = (await retryTransient(() => stack.api.listOperations(name), 10)).items;
      unfinished += ops.filter((o) => ['pending', 'in_progress'].includes(o.status?.status ?? 'pending')).length;
      for (const o of ops.filter((op) => op.status?.status === 'error')) {
        errors++;
        const why = `${o.spec.definitionName}: ${(o.status?.executionHistory?.at(-1)?.event ?? '').slice(0, 80)}`;
        reasons.set(why, (reasons.get(why) ?? 0) + 1);
      }
    }
    if ((roomDiff === 0 && unfinished === 0) || Date.now() > deadline) {
      return { roomDiff, unfinished, errors: `${errors}${errors > 0 ? ` (${[...reasons].map(([why, n]) => `${n} x ${why}`).join('; ')})` : ''}`, detail: detail.join('; ') || 'none' };
    }
    await sleep(2000);
  }
}

if (require.main === module) runStandalone(run);
