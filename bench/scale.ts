/**
 * Benchmark 10: one scheduler of 10,000 rooms on the real control plane (issue 19).
 *
 * Layout: kube-apiserver v1.28, etcd and kube-controller-manager as local processes; the operator
 * (the chart's ServiceAccount, the chart's heap limit), the gateway (its ServiceAccount and heap limit), the
 * simulated kubelet and the simulated game servers (rooms ping every 10 s) each in a process of
 * their own, so each one's memory is its own; the bench process holds only the management client,
 * a GameRoom watch and the bare loop. The four children run compiled JavaScript under plain node,
 * as the image runs them (no TypeScript loader in their memory).
 *
 * Phases, in order:
 *  1. the yardstick: a bare client-node loop (same client, rate limit and concurrency as the
 *     operator) creates N GameRooms with their Pods and marks each ready (pod status Running and
 *     Ready, GameRoom status ready): 4 writes per room, the least any system writes for a ready
 *     room; its namespace is deleted before Roomkeeper starts; the CPU each process spent per room
 *     (/proc/<pid>/stat: the control plane's and the loop's own);
 *  2. one room's start time on an idle scheduler (median of 3);
 *  3. `PATCH /schedulers/A {"roomsReplicas": N}` from 100: time to N rooms ready, ÷ the bare
 *     loop's time for as many rooms (target <= 1.2); API requests per room; the CPU each process
 *     spent per room (the rooms' pings included), beside the bare loop's, to say where the time goes;
 *  4. steady: 60 s with N rooms pinging: operator and gateway RSS (targets 300 / 200 MB), API
 *     writes per unchanged ping (target <= 0.01);
 *  5. a major rollout with maxSurge 10 %: time ÷ ideal (10 batches x one room's start time + N
 *     rooms at the bare loop's rate; target <= 1.5), most rooms at once (bound N + 10 %);
 *  6. five add-rooms of N/10 sent at once: every operation finished, 1.5 N rooms ready;
 *  7. rooms removed as expired, and rooms marked silent, over the run (every simulated room pings: any is false; target 0),
 *     operations in error (target 0);
 *  8. deletion of the scheduler: time to the Scheduler gone and 0 pods left; requests per room;
 *  9. `kubectl scale scheduler/B --replicas=N` from 100: time to N ready, ÷ the bare loop; then
 *     deletion with `kubectl delete`.
 *
 * `BENCH_SCALE_ROOMS` (default 10,000) sets N; `BENCH_TARGET=sandbox` runs it on the sandbox;
 * `BENCH_SCALE_SKIP` (`rollout`, `kubectl`, comma-separated) leaves out phase 5 or 9;
 * `BENCH_PING_MS` (default 10,000) the rooms' ping interval; `BENCH_SIM_NICE` (default -10) the
 * priority of the simulation's two processes and `BENCH_SIMULATION_NODE_FLAGS` (space-separated,
 * e.g. `--cpu-prof --cpu-prof-dir=DIR`) their node flags; `BENCH_SCALE_TRACE_SECONDS` (default 60) how often a
 * trace line is printed; `BENCH_LOG_LEVEL` (default error) the children's log level.
 * maxRoomsPerScheduler is raised to 2 N (a platform team's setting) so 1.5 N fit in one scheduler.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../common/src/config';
import type { SchedulerSpec } from '../common/src/generated/resources';
import type { RemoveRoomsByIdsInput } from '../common/src/operations/operation-inputs';
import { isNotFound, makeKubeClients, retryTransient } from '../common/src/kube/clients';
import { RoomkeeperApi } from '../common/src/kube/roomkeeper-api';
import { isFinalOperationStatus, RemoveRoomsReason } from '../common/src/resources/operation-names';
import { toolPath } from '../test/support/tools';
import { waitFor } from '../test/support/wait';
import { describeDelta, parseRequestCounts, requestDelta, type RequestCounts } from './support/apiserver-requests';
import { createRoomsBare } from './support/bare-room-loop';
import { BENCH_SECRETS, chartNodeFlags, startBenchCluster, type BenchTarget } from './support/bench-stack';
import { compiledScript } from './support/compiled-processes';
import { forkChild, type ChildHandle } from './support/child-rpc';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { FleetByVersion } from './support/fleet-by-version';
import { ManagementClient } from './support/management-client';
import { sumMetricText } from './support/metric-sum';
import { describeCpuPer, readMainThreadCpu, readProcessesCpuMs, type MainThreadCpu } from './support/process-cpu';
import { MB, readProcessMemory } from './support/process-memory';
import { describeSocketQueues, socketQueues, type SocketQueues } from './support/socket-queues';
import { benchSchedulerBody, benchSchedulerSpec } from './support/scheduler-body';
import { runStandalone } from './support/standalone';
import type { GatewayChildArg, GatewayReady } from './processes/gateway-child';
import type { OperatorChildArg } from './processes/operator-child';
import type { SimulationChildArg, SimulationStats } from './processes/simulation-child';
import type { SimRoomView } from '../sandbox/src/rooms/sim-rooms';

const ROOMS = Number(process.env.BENCH_SCALE_ROOMS ?? 10_000);
/** The benchmark's name on a target, with the N it runs at (10,000 unless BENCH_SCALE_ROOMS says otherwise). */
export function scaleBenchName(target: BenchTarget): string {
  const size = `${ROOMS.toLocaleString('en-US')} rooms`;
  return target === 'real' ? `10. scale, ${size}, real API server` : `10s. scale, ${size}, sandbox`;
}
const BASE = Math.min(100, Math.floor(ROOMS / 10));
const ADDS = 5;
const ADD_EACH = Math.round(ROOMS / 10);
/** The rooms' ping interval (BENCH_PING_MS): a shorter one loads the ping path of a smaller N as N rooms would. */
const PING_MS = Number(process.env.BENCH_PING_MS ?? 10_000);
const START_MS = Number(process.env.BENCH_ROOM_START_MS ?? 5000);
const SURGE_PERCENT = 10;
const NODES = 20;
const STEADY_MS = 60_000;
const PHASE_TIMEOUT_MS = Number(process.env.BENCH_SCALE_PHASE_MINUTES ?? 30) * 60_000;
const PORTS = { start: 10000, end: 39999 };
const BARE = 'bench-bare';
const A = 'bench-scale-a';
const B = 'bench-scale-b';
const PROBE = 'bench-scale-probe';
/** Phases left out (BENCH_SCALE_SKIP, comma-separated: `rollout`, `kubectl`), to reach the add-rooms sooner. */
const SKIP = new Set((process.env.BENCH_SCALE_SKIP ?? '').split(',').map((p) => p.trim()).filter(Boolean));

/** The nice value of the simulated kubelet and game servers (BENCH_SIM_NICE; 0 leaves them as the rest). */
const SIM_NICE = Number(process.env.BENCH_SIM_NICE ?? -10);
/** The node flags of the simulated kubelet and game servers (BENCH_SIMULATION_NODE_FLAGS; none by default). */
const SIM_NODE_FLAGS = (process.env.BENCH_SIMULATION_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/** Sets a process's nice value; says what it did, for the notes. */
function raisePriority(pid: number, nice: number): string {
  if (nice === 0) return 'at the same priority as the rest';
  try {
    os.setPriority(pid, nice);
    return `at nice ${nice}`;
  } catch (err) {
    return `at the same priority as the rest (nice ${nice} refused: ${err instanceof Error ? err.message : String(err)})`;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => ms / 1000;

/** What share of the machine's cores `cpuMs` of CPU over `wallMs` is, in words. */
function cpuShare(cpuMs: number, wallMs: number): string {
  return `${(cpuMs / wallMs).toFixed(2)} of the ${os.cpus().length} cores on average over the phase`;
}

/**
 * RSS of the operator and gateway processes, sampled every 5 s: max overall and per phase. The
 * other processes of the run (the simulation's, the control plane's) are sampled along with them,
 * max over the run only, so the run says which process held what.
 */
class RssSampler {
  readonly max = { operator: 0, gateway: 0 };
  phase = { operator: 0, gateway: 0 };
  /** Max over the run of each other process, by name. */
  readonly others = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pids: { operator: number; gateway: number }, private readonly otherPids: () => Record<string, number>) {
    this.timer = setInterval(() => void this.sample(), 5000);
  }
  async sample(): Promise<void> {
    for (const who of ['operator', 'gateway'] as const) {
      const rss = await rssMB(this.pids[who]);
      this.max[who] = Math.max(this.max[who], rss);
      this.phase[who] = Math.max(this.phase[who], rss);
    }
    for (const [who, pid] of Object.entries(this.otherPids())) this.others.set(who, Math.max(this.others.get(who) ?? 0, await rssMB(pid)));
  }
  resetPhase(): void {
    this.phase = { operator: 0, gateway: 0 };
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** A process's resident memory in MB; 0 when it cannot be read (the process is gone). */
async function rssMB(pid: number): Promise<number> {
  return (await readProcessMemory(pid).catch(() => ({ rssBytes: 0 }))).rssBytes / MB;
}

/**
 * Every BENCH_SCALE_TRACE_SECONDS (default 60; 0: off) one `[scale]` line of what happened since
 * the last: pings sent and failed (with the last failure), the gateway's pings by result, its
 * ping-digest writes and refusals, relists and watch restarts of each process's informers, the
 * operator's expiry holds, API errors and GC pauses, how late each process's event loop ran (a
 * ping that fails in a game-server process that runs seconds late may never have left it), the CPU
 * time each child's main thread got and waited for, the operator's work-queue depths and its wait
 * for the client-side rate limiter, the pod and room watchers kube-apiserver closed for reading too
 * slowly, and the fullest socket queues of the rooms port (which end of a slow ping was behind).
 * What a MISS needs to be explained.
 */
class Trace {
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly queueTimer: NodeJS.Timeout | undefined;
  private last = new Map<string, number>();
  private busy = false;
  /** The fullest socket queues of the rooms port seen since the last line (sampled every 5 s). */
  private queues: SocketQueues | undefined;
  private readonly cpu = new Map<string, MainThreadCpu>();
  constructor(
    private readonly children: { operator: ChildHandle<unknown>; gateway: ChildHandle<unknown>; kubelet: ChildHandle<null>; gameServers: ChildHandle<null> },
    private readonly roomsPort: number,
    private readonly print: (line: string) => void,
    private readonly apiServerMetrics: () => Promise<string | undefined>,
  ) {
    const everyMs = Number(process.env.BENCH_SCALE_TRACE_SECONDS ?? 60) * 1000;
    if (everyMs > 0) {
      this.timer = setInterval(() => void this.sample(), everyMs);
      this.queueTimer = setInterval(() => void this.sampleQueues(), Math.min(everyMs, 5000));
    }
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.queueTimer) clearInterval(this.queueTimer);
  }
  /** Each child's main thread since the last line: seconds on a CPU, and seconds runnable waiting for one. */
  private async cpuSince(): Promise<string> {
    const parts: string[] = [];
    for (const [name, child] of Object.entries(this.children)) {
      const now = await readMainThreadCpu(child.pid);
      const was = this.cpu.get(name);
      if (now) this.cpu.set(name, now);
      if (now && was) parts.push(`${name} ${((now.runMs - was.runMs) / 1000).toFixed(1)} s (waited ${((now.waitMs - was.waitMs) / 1000).toFixed(1)} s)`);
    }
    return `main thread on a CPU: ${parts.join(', ') || 'first sample'}`;
  }
  private async sampleQueues(): Promise<void> {
    const q = await socketQueues(this.roomsPort);
    if (!q) return;
    const was = this.queues;
    this.queues = !was ? q : {
      serverUnread: q.serverUnread.bytes > was.serverUnread.bytes ? q.serverUnread : was.serverUnread,
      clientUnread: q.clientUnread.bytes > was.clientUnread.bytes ? q.clientUnread : was.clientUnread,
      acceptQueue: Math.max(q.acceptQueue, was.acceptQueue),
      backlog: q.backlog,
    };
  }
  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const [sim, simLoop, kubeletLoop, gw, op, server] = await Promise.all([
        this.children.gameServers.call<SimulationStats>('stats'),
        this.children.gameServers.call<{ maxMs: number }>('loopDelay'),
        this.children.kubelet.call<{ maxMs: number }>('loopDelay'),
        this.children.gateway.call<string>('metrics'),
        this.children.operator.call<string>('metrics'),
        this.apiServerMetrics().catch(() => undefined),
      ]);
      const now = new Map<string, number>([
        ['pings', sim.pingsSent], ['failed', sim.pingFailures],
        ...['recorded', 'status_written', 'write_pending', 'unknown_room', 'write_failed', 'rejected'].map((r) => [`gw ${r}`, sumMetricText(gw, 'roomkeeper_pings_total', { result: r })] as [string, number]),
        ['digest writes', sumMetricText(gw, 'roomkeeper_kube_writes_total', { kind: 'ping_digest' })],
        ['digest refused', sumMetricText(gw, 'roomkeeper_kube_write_errors_total', { kind: 'ping_digest' })],
        ['gw relists', sumMetricText(gw, 'roomkeeper_informer_relists_total')],
        ['gw watch restarts', sumMetricText(gw, 'roomkeeper_informer_watch_restarts_total')],
        ['gw api errors', sumMetricText(gw, 'roomkeeper_kube_api_request_errors_total')],
        ['op relists', sumMetricText(op, 'roomkeeper_informer_relists_total')],
        ['op watch restarts', sumMetricText(op, 'roomkeeper_informer_watch_restarts_total')],
        ['op pod watch restarts', sumMetricText(op, 'roomkeeper_informer_watch_restarts_total', { informer: 'pods' })],
        // Watchers kube-apiserver closed because their client read too slowly (its buffer holds about a second of events).
        ['server closed slow pod watchers', server === undefined ? 0 : sumMetricText(server, 'apiserver_terminated_watchers_total', { resource: 'pods' })],
        ['server closed slow room watchers', server === undefined ? 0 : sumMetricText(server, 'apiserver_terminated_watchers_total', { resource: 'gamerooms' })],
        // How late the operator's pod cache and the gateway's room cache learned of changes.
        ['op pod changes seen', changesOlderThan(op, 'pods', 0)],
        ['of them over 10 s old', changesOlderThan(op, 'pods', 10)],
        ['over 60 s old', changesOlderThan(op, 'pods', 60)],
        ['gw room changes seen over 10 s old', changesOlderThan(gw, 'gamerooms', 10)],
        // The operator's GameRoom lists (a rollout removal's serving floor reads the server's rooms): how many, and their total time.
        ['op room lists', sumMetricText(op, 'roomkeeper_kube_api_request_duration_seconds_count', { verb: 'list', resource: 'gamerooms' })],
        ['op room list ms', Math.round(1000 * sumMetricText(op, 'roomkeeper_kube_api_request_duration_seconds_sum', { verb: 'list', resource: 'gamerooms' }))],
        ['op limiter wait ms', Math.round(1000 * sumMetricText(op, 'roomkeeper_kube_client_rate_limiter_wait_seconds_sum'))],
        ['op api errors', sumMetricText(op, 'roomkeeper_kube_api_request_errors_total')],
        ['expiry held', sumMetricText(op, 'roomkeeper_room_expiry_held_total')],
        ['remove_rooms', sumMetricText(op, 'roomkeeper_operations_total', { definition: 'remove_rooms' })],
        ['gw gc ms', Math.round(1000 * sumMetricText(gw, 'nodejs_gc_duration_seconds_sum'))],
        ['op gc ms', Math.round(1000 * sumMetricText(op, 'nodejs_gc_duration_seconds_sum'))],
      ]);
      const parts = [...now].map(([k, v]) => `${k} +${v - (this.last.get(k) ?? 0)}`);
      // The operator's failed requests of the interval by status, verb and resource (those that grew).
      const errorParts: string[] = [];
      for (const [, labels = '', value] of op.matchAll(/^roomkeeper_kube_api_request_errors_total\{([^}]*)\} (\S+)$/gm)) {
        const key = `op errors ${labels}`;
        const grew = Number(value) - (this.last.get(key) ?? 0);
        now.set(key, Number(value));
        if (grew > 0) errorParts.push(`${labels.replace(/"/g, '')} +${grew}`);
      }
      const failure = sim.recentFailures.at(-1);
      this.last = now;
      const lag = `event loop delay max: game servers ${Math.round(simLoop.maxMs)} ms, kubelet ${Math.round(kubeletLoop.maxMs)} ms, gateway ${Math.round(1000 * sumMetricText(gw, 'nodejs_eventloop_lag_max_seconds'))} ms, operator ${Math.round(1000 * sumMetricText(op, 'nodejs_eventloop_lag_max_seconds'))} ms`;
      const cpu = await this.cpuSince();
      const depths = [...op.matchAll(/^roomkeeper_workqueue_depth\{controller="([^"]+)"\} (\S+)$/gm)].map((m) => `${m[1] ?? ''} ${m[2] ?? ''}`).join(', ');
      const queues = `operator work queues now: ${depths || 'not reported'}; rooms port at its fullest: ${describeSocketQueues(this.queues)}`;
      this.queues = undefined;
      this.print(`trace: ${sim.activeRooms} rooms running; ${parts.join(', ')}; ${lag}; ${cpu}; ${queues}${errorParts.length > 0 ? `; the operator's failed requests: ${errorParts.join(', ')}` : ''}${failure ? `; last failed ping ${JSON.stringify(failure)}` : ''}`);
    } catch (err) {
      this.print(`trace: not read (${err instanceof Error ? err.message : String(err)})`);
    } finally {
      this.busy = false;
    }
  }
}

/**
 * How many changes an informer took in that were over `seconds` old on arrival (all of them for 0),
 * from `roomkeeper_informer_change_age_seconds` in a process's metrics text; `seconds` is a bucket bound.
 */
function changesOlderThan(metricsText: string, informer: string, seconds: number): number {
  const all = sumMetricText(metricsText, 'roomkeeper_informer_change_age_seconds_count', { informer });
  return seconds === 0 ? all : all - sumMetricText(metricsText, 'roomkeeper_informer_change_age_seconds_bucket', { informer, le: String(seconds) });
}

/** What the simulated game server of an expired (or silent) room did, relative to the moment it was judged so. */
async function gameServerSaw(gameServers: ChildHandle<null>, scheduler: string, roomId: string, decidedAt: number): Promise<string> {
  const room = await gameServers.call<SimRoomView | null>('room', { roomId, scheduler }).catch(() => null);
  if (!room) return 'game server: never started';
  const ago = (t: number | undefined) => {
    if (t === undefined || Number.isNaN(decidedAt)) return 'never';
    const s = Math.round((decidedAt - t) / 1000);
    return s >= 0 ? `${s} s before` : `${-s} s after`;
  };
  return `game server: started ${ago(room.startedAt)}, last answered ping ${ago(room.lastOkAt)}, ${room.pingsSent} pings, ${room.pingFailures} failed, now ${room.state}`;
}

export async function run(target: BenchTarget = 'real'): Promise<BenchOutcome> {
  const NAME = scaleBenchName(target);
  const began = Date.now();
  const figures: Figure[] = [];
  const notes: string[] = [];
  // The heap limits the Helm chart gives each (operator.maxHeapMB, gateway.maxHeapMB), unless
  // BENCH_OPERATOR_NODE_FLAGS / BENCH_GATEWAY_NODE_FLAGS say otherwise.
  const nodeFlags = chartNodeFlags('operator');
  const gatewayNodeFlags = chartNodeFlags('gateway');
  const progress = (what: string) => process.stdout.write(`[scale] ${Math.round(seconds(Date.now() - began))} s: ${what}\n`);
  const cluster = await startBenchCluster(target);
  const stops: (() => Promise<void>)[] = [() => cluster.stop()];
  const admin = makeKubeClients(cluster.kc, { qps: 10_000, burst: 10_000 });
  stops.push(() => {
    admin.limiter.drain();
    return Promise.resolve();
  });
  const api = new RoomkeeperApi(admin.custom);
  const config = loadConfig({}, { logLevel: 'error', operatorPort: 0, gatewayPort: 0, roomsPort: 0, ...BENCH_SECRETS, maxRoomsPerScheduler: 2 * ROOMS });
  const overrides = { logLevel: process.env.BENCH_LOG_LEVEL ?? 'error', ...BENCH_SECRETS, maxRoomsPerScheduler: 2 * ROOMS };
  const apiRequests = async (): Promise<RequestCounts | undefined> => {
    const text = await cluster.apiServerMetrics().catch(() => undefined);
    return text === undefined ? undefined : parseRequestCounts(text);
  };
  const requestsNote = (before: RequestCounts | undefined, after: RequestCounts | undefined, per: number, unit: string) =>
    before && after ? describeDelta(requestDelta(before, after), per, unit) : 'API server request counts not available (sandbox)';
  const definition = benchSchedulerSpec({ portRange: PORTS }) as unknown as SchedulerSpec;
  let error: string | undefined;
  let simPriority = 'not started';
  try {
    // 1. The yardstick, before any Roomkeeper process runs.
    await admin.core.createNamespace({ body: { metadata: { name: BARE } } });
    if (target === 'real') await waitFor(() => admin.core.readNamespacedServiceAccount({ namespace: BARE, name: 'default' }), { timeoutMs: 60_000, intervalMs: 200 });
    const bareClients = makeKubeClients(cluster.kc, { qps: config.kubeQps, burst: config.kubeBurst });
    const barePids = { ...cluster.processes(), 'bench process (the loop)': process.pid };
    const cpuBeforeBare = await readProcessesCpuMs(barePids);
    const tBare = Date.now();
    const bare = await createRoomsBare({
      clients: bareClients, namespace: BARE, definition, count: ROOMS, concurrency: config.addRoomsConcurrency,
      roomsApiUrl: 'http://127.0.0.1:9', roomTokenSecret: config.roomTokenSecret, maestroEnv: config.maestroEnv, markReady: true,
    });
    const bareMs = Date.now() - tBare;
    const bareCpu = describeCpuPer(cpuBeforeBare, await readProcessesCpuMs(barePids), ROOMS, 'room');
    bareClients.limiter.drain();
    if (bare.firstError) throw new Error(`bare loop failed after ${bare.created} rooms: ${bare.firstError}`);
    const bareRate = ROOMS / seconds(bareMs);
    figures.push(figure(NAME, `bare loop: ${ROOMS} rooms created and marked ready`, seconds(bareMs), 's', { note: `${bareRate.toFixed(0)} rooms/s; GameRoom + Pod created, Pod status and GameRoom status written, ${config.addRoomsConcurrency} at a time, kubeQps ${config.kubeQps}` }));
    figures.push(figure(NAME, 'bare loop: CPU per room, all processes', bareCpu.totalMs, 'ms', { note: `${bareCpu.note}; ${cpuShare(bareCpu.totalMs * ROOMS, bareMs)}` }));
    progress(`bare loop done in ${seconds(bareMs).toFixed(1)} s; deleting its namespace`);
    await admin.core.deleteNamespace({ name: BARE });
    await waitFor(async () => {
      try {
        await admin.core.readNamespace({ name: BARE });
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    }, { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 2000, message: `namespace ${BARE} not gone` });

    // Roomkeeper, each part in its own process.
    const gatewayArg: GatewayChildArg = { kubeconfigYaml: cluster.gatewayKubeconfigYaml, config: { ...overrides, gatewayPort: 0, roomsPort: 0 } };
    const gateway = await forkChild<GatewayReady>(compiledScript('gateway-child'), { arg: gatewayArg, nodeFlags: gatewayNodeFlags, compiled: true });
    stops.push(() => gateway.stop());
    const operatorArg: OperatorChildArg = { kubeconfigYaml: cluster.operatorKubeconfigYaml, config: { ...overrides, operatorPort: 0, roomsApiUrl: gateway.ready.roomsUrl } };
    const operator = await forkChild<{ opsUrl: string | undefined }>(compiledScript('operator-child'), { arg: operatorArg, nodeFlags, compiled: true });
    stops.push(() => operator.stop());
    // The simulated kubelet and the game servers, each in a process of its own: in one, the
    // kubelet's bursts (thousands of pods started in an add-rooms) delayed the pings of 15,000
    // rooms until most timed out.
    const kubeletArg: SimulationChildArg = { kubeconfigYaml: cluster.simulationKubeconfigYaml, nodes: NODES, pingIntervalMs: PING_MS, startDelayMs: START_MS, concurrency: 200 };
    const kubelet: ChildHandle<null> = await forkChild<null>(compiledScript('simulation-child'), { arg: kubeletArg, compiled: true, nodeFlags: SIM_NODE_FLAGS });
    stops.push(() => kubelet.stop());
    const gameServersArg: SimulationChildArg = { kubeconfigYaml: cluster.simulationKubeconfigYaml, roomsApiUrl: gateway.ready.roomsUrl, roomsOnly: true, nodes: NODES, pingIntervalMs: PING_MS };
    const gameServers: ChildHandle<null> = await forkChild<null>(compiledScript('simulation-child'), { arg: gameServersArg, compiled: true, nodeFlags: SIM_NODE_FLAGS });
    stops.push(() => gameServers.stop());
    // They stand for machines of their own: on these 2 cores, at the priority of the rest, the
    // simulation fell seconds behind (answers of the gateway unread in its sockets, half its pings
    // timed out in one minute of the rollout) and rooms that never stopped were expired for it.
    // They run first, so the figures measure the operator.
    simPriority = `kubelet ${raisePriority(kubelet.pid, SIM_NICE)}, game servers ${raisePriority(gameServers.pid, SIM_NICE)}`;
    const rss = new RssSampler({ operator: operator.pid, gateway: gateway.pid }, () => ({
      'simulated kubelet': kubelet.pid, 'simulated game servers': gameServers.pid, ...cluster.processes(),
    }));
    stops.push(() => {
      rss.stop();
      return Promise.resolve();
    });
    const trace = new Trace({ operator, gateway, kubelet, gameServers }, Number(new URL(gateway.ready.roomsUrl).port), progress, () => cluster.apiServerMetrics());
    stops.push(() => {
      trace.stop();
      return Promise.resolve();
    });
    const management = new ManagementClient(gateway.ready.managementUrl, BENCH_SECRETS.authUsername, BENCH_SECRETS.authPassword);
    await waitFor(() => operator.call<boolean>('isLeader'), { timeoutMs: 120_000, intervalMs: 200, message: 'the operator did not become leader' });
    const fleetA = new FleetByVersion(A);
    const fleetB = new FleetByVersion(B);
    const probe = new FleetByVersion(PROBE);
    const informers = [FleetByVersion.informer(fleetA, cluster.kc, admin.custom), FleetByVersion.informer(fleetB, cluster.kc, admin.custom), FleetByVersion.informer(probe, cluster.kc, admin.custom)];
    for (const informer of informers) {
      await informer.start();
      stops.push(async () => informer.stop());
    }

    // 2. One room's start time.
    await management.createScheduler(benchSchedulerBody(PROBE, { roomsReplicas: 0, portRange: { start: 40000, end: 40099 } }));
    await waitFor(async () => (await api.getScheduler(PROBE)).status?.version, { timeoutMs: 120_000, intervalMs: 200 });
    const samples: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const t0 = Date.now();
      await management.addRooms(PROBE, 1);
      samples.push((await probe.until(() => probe.ready.size >= i, 120_000, 'probe room not ready')) - t0);
    }
    const startMs = [...samples].sort((a, b) => a - b)[1] as number;
    figures.push(figure(NAME, 'one room\'s start time (median of 3)', seconds(startMs), 's', { note: `samples ${samples.map((s) => seconds(s).toFixed(2)).join(', ')} s; simulated kubelet start delay ${START_MS} ms` }));
    await management.request('DELETE', `/schedulers/${PROBE}`);

    // 3. PATCH to N.
    await management.createScheduler({ ...benchSchedulerBody(A, { roomsReplicas: BASE, portRange: PORTS }), maxSurge: `${SURGE_PERCENT}%` });
    await fleetA.until(() => fleetA.ready.size >= BASE, PHASE_TIMEOUT_MS, `${BASE} rooms not ready`);
    const reqBeforeUp = await apiRequests();
    const fleetPids = { ...cluster.processes(), operator: operator.pid, gateway: gateway.pid, 'simulated kubelet': kubelet.pid, 'simulated game servers': gameServers.pid, 'bench process': process.pid };
    const cpuBeforeUp = await readProcessesCpuMs(fleetPids);
    const tPatch = Date.now();
    await management.request('PATCH', `/schedulers/${A}`, { roomsReplicas: ROOMS });
    const tUp = await fleetA.until(() => fleetA.ready.size >= ROOMS, PHASE_TIMEOUT_MS, `${ROOMS} rooms not ready`);
    const reqAfterUp = await apiRequests();
    const upMs = tUp - tPatch;
    const upCpu = describeCpuPer(cpuBeforeUp, await readProcessesCpuMs(fleetPids), ROOMS - BASE, 'room');
    const bareSameMs = bareMs * (ROOMS - BASE) / ROOMS;
    figures.push(figure(NAME, `PATCH roomsReplicas ${BASE} -> ${ROOMS}: all ready after`, seconds(upMs), 's', { note: requestsNote(reqBeforeUp, reqAfterUp, ROOMS - BASE, 'room created') }));
    figures.push(figure(NAME, 'PATCH to all ready / bare loop for as many rooms', upMs / bareSameMs, 'ratio', { target: { op: '<=', value: 1.2 } }));
    figures.push(figure(NAME, 'PATCH phase: CPU per room created, all processes (rooms pinging included)', upCpu.totalMs, 'ms', { note: `${upCpu.note}; ${cpuShare(upCpu.totalMs * (ROOMS - BASE), upMs)}` }));
    progress(`PATCH phase done in ${seconds(upMs).toFixed(1)} s`);

    // 4. Steady fleet.
    await sleep(2 * PING_MS); // every room has pinged since it became ready
    const gatewayCounters = async () => {
      const text = await gateway.call<string>('metrics');
      return {
        pings: (await gameServers.call<SimulationStats>('stats')).pingsSent,
        statusWrites: sumMetricText(text, 'roomkeeper_kube_writes_total', { kind: 'gameroom_status' }),
        digestWrites: sumMetricText(text, 'roomkeeper_kube_writes_total', { kind: 'ping_digest' }),
        heapUsed: sumMetricText(text, 'nodejs_heap_size_used_bytes'),
      };
    };
    rss.resetPhase();
    const steadyBefore = await gatewayCounters();
    await sleep(STEADY_MS);
    await rss.sample();
    const steadyAfter = await gatewayCounters();
    // What the gateway's live data needs, beside its RSS.
    figures.push(figure(NAME, `gateway V8 heap used, ${ROOMS} rooms pinging`, steadyAfter.heapUsed / MB, 'MB', { note: 'nodejs_heap_size_used_bytes at the end of the steady phase; the gateway runs with the chart\'s heap limit (gateway.maxHeapMB)' }));
    const steadyPings = steadyAfter.pings - steadyBefore.pings;
    const steadyStatus = steadyAfter.statusWrites - steadyBefore.statusWrites;
    figures.push(figure(NAME, `operator RSS, ${ROOMS} rooms pinging every ${PING_MS / 1000} s`, rss.phase.operator, 'MB', { target: { op: '<=', value: 300 } }));
    figures.push(figure(NAME, `gateway RSS, ${ROOMS} rooms pinging every ${PING_MS / 1000} s`, rss.phase.gateway, 'MB', { target: { op: '<=', value: 200 } }));
    figures.push(figure(NAME, 'API writes per unchanged ping', (steadyAfter.digestWrites - steadyBefore.digestWrites) / Math.max(1, steadyPings - steadyStatus), 'writes/ping', {
      target: { op: '<=', value: 0.01 },
      note: `${steadyAfter.digestWrites - steadyBefore.digestWrites} ping-digest writes and ${steadyStatus} status writes for ${steadyPings} pings over ${STEADY_MS / 1000} s`,
    }));

    // 5. Major rollout, maxSurge 10 %.
    if (!SKIP.has('rollout')) {
      const v1 = (await api.getScheduler(A)).status?.version as string;
      const spec = benchSchedulerSpec({ roomsReplicas: ROOMS, portRange: PORTS }) as { spec: { containers: { image: string }[] } };
      spec.spec.containers = spec.spec.containers.map((c) => ({ ...c, image: 'example.com/bench-game:2.0.0' }));
      await management.request('POST', `/schedulers/${A}`, { ...spec, maxSurge: `${SURGE_PERCENT}%` });
      const v2 = await waitFor(async () => {
        const v = (await api.getScheduler(A)).status?.version;
        return v && v !== v1 ? v : undefined;
      }, { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 200 });
      const tActive = Date.now();
      const reqBeforeRollout = await apiRequests();
      const cpuBeforeRollout = await readProcessesCpuMs(fleetPids);
      fleetA.resetPeak();
      const tRolled = await fleetA.until(() => fleetA.count(v2, true) >= ROOMS && fleetA.count(v2, false) === fleetA.live.size, PHASE_TIMEOUT_MS, 'rollout not complete');
      const batches = Math.ceil(100 / SURGE_PERCENT);
      const ideal = batches * startMs + (ROOMS / bareRate) * 1000;
      figures.push(figure(NAME, `major rollout of ${ROOMS} rooms, maxSurge ${SURGE_PERCENT}%: active -> all rooms on it`, seconds(tRolled - tActive), 's'));
      figures.push(figure(NAME, `rollout / ideal (${batches} x start time + ${ROOMS} rooms at the bare loop's rate)`, (tRolled - tActive) / ideal, 'ratio', { target: { op: '<=', value: 1.5 }, note: `ideal ${seconds(ideal).toFixed(1)} s` }));
      const rolloutCpu = describeCpuPer(cpuBeforeRollout, await readProcessesCpuMs(fleetPids), ROOMS, 'room replaced');
      figures.push(figure(NAME, 'rollout: CPU per room replaced (one made, one removed), all processes', rolloutCpu.totalMs, 'ms', {
        note: `${rolloutCpu.note}; ${cpuShare(rolloutCpu.totalMs * ROOMS, tRolled - tActive)}; ${requestsNote(reqBeforeRollout, await apiRequests(), ROOMS, 'room replaced')}`,
      }));
      figures.push(figure(NAME, 'most rooms at once during the rollout', fleetA.peak, 'rooms', { target: { op: '<=', value: ROOMS + ROOMS * SURGE_PERCENT / 100 } }));
      progress(`rollout done in ${seconds(tRolled - tActive).toFixed(1)} s`);
    }

    // 6. Five add-rooms at once.
    const tAdd = Date.now();
    const added = await Promise.all(Array.from({ length: ADDS }, () => management.addRooms(A, ADD_EACH)));
    const addOps = await Promise.all(added.map(({ operationId }) => waitFor(async () => {
      const o = await retryTransient(() => api.getOperation(operationId), 10);
      return isFinalOperationStatus(o.status?.status) ? o : undefined;
    }, { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 1000 })));
    const total = ROOMS + ADDS * ADD_EACH;
    const tAllAdded = await fleetA.until(() => fleetA.ready.size >= total, PHASE_TIMEOUT_MS, `${total} rooms not ready`);
    const addFailures = addOps.filter((o) => o.status?.status !== 'finished');
    figures.push(figure(NAME, `${ADDS} add-rooms of ${ADD_EACH} at once: ${total} rooms ready after`, seconds(tAllAdded - tAdd), 's'));
    figures.push(figure(NAME, `add-rooms operations not finished`, addFailures.length, 'operations', {
      target: { op: '<=', value: 0 },
      note: addFailures.map((o) => `${String(o.metadata.name)} ${String(o.status?.status)}: ${o.status?.executionHistory?.at(-1)?.event ?? ''}`).join('; ') || `all ${ADDS} finished; roomsReplicas ${(await api.getScheduler(A)).spec.roomsReplicas ?? '?'}`,
    }));

    // 7. Expired rooms and operations in error, over the run.
    const ops = (await retryTransient(() => api.listOperations(A), 10)).items;
    const expiredOps = ops.flatMap((o) => {
      const input = o.spec.input as Partial<RemoveRoomsByIdsInput> | undefined;
      return o.spec.definitionName === 'remove_rooms' && input?.reason === RemoveRoomsReason.ExpiredRoom
        ? [{ input, decidedAt: new Date(o.metadata.creationTimestamp ?? Number.NaN).getTime() }]
        : [];
    });
    const expired = expiredOps.reduce((n, { input }) => n + (input.roomsIds?.length ?? 0), 0);
    const errored = ops.filter((o) => o.status?.status === 'error');
    // Which rooms and why (the health check's reason per room), while the operations still exist,
    // and what each one's simulated game server did: whether the pings were sent and answered.
    const expiredWhy = await Promise.all(expiredOps.flatMap(({ input, decidedAt }) => (input.details ?? []).map((d) => ({ d, decidedAt })))
      .slice(0, 20).map(async ({ d, decidedAt }) => `${d} [${await gameServerSaw(gameServers, A, d.split(':')[0] ?? '', decidedAt)}]`));
    figures.push(figure(NAME, 'rooms removed as expired (all simulated rooms ping)', expired, 'rooms', { target: { op: '<=', value: 0 }, ...(expiredWhy.length > 0 ? { note: expiredWhy.join('; ') } : {}) }));
    // And what each one's simulated game server did by the time the mark was seen.
    const marked = await Promise.all([...fleetA.markedSilent].slice(0, 10)
      .map(async ([room, { since, seenAt }]) => `${room} (last ping ${since}; ${await gameServerSaw(gameServers, A, room, seenAt)})`));
    figures.push(figure(NAME, 'rooms marked silent (all simulated rooms ping)', fleetA.markedSilent.size, 'rooms', {
      target: { op: '<=', value: 0 }, note: marked.length > 0 ? marked.join('; ') : 'none: each room was heard within the silence timeout at every health check',
    }));
    figures.push(figure(NAME, 'operations in error', errored.length, 'operations', {
      target: { op: '<=', value: 0 },
      note: errored.map((o) => `${o.spec.definitionName}: ${(o.status?.executionHistory?.at(-1)?.event ?? '').slice(0, 100)}`).join('; ') || `${ops.length} operations kept`,
    }));
    progress(`add-rooms done; ${expired} expired, ${errored.length} in error`);

    // 8. Deletion.
    const reqBeforeDelete = await apiRequests();
    const tDelete = Date.now();
    await management.request('DELETE', `/schedulers/${A}`);
    await waitFor(async () => {
      try {
        await api.getScheduler(A);
        return false;
      } catch (err) {
        return isNotFound(err) && (await cluster.countPods(A)) === 0;
      }
    }, { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 1000, message: `scheduler ${A} not deleted` });
    const deleteMs = Date.now() - tDelete;
    const reqAfterDelete = await apiRequests();
    figures.push(figure(NAME, `deletion of the ${total}-room scheduler: gone, 0 pods left, after`, seconds(deleteMs), 's', { note: requestsNote(reqBeforeDelete, reqAfterDelete, total, 'room deleted') }));
    figures.push(figure(NAME, 'pods left after the deletion', await cluster.countPods(A), 'pods', { target: { op: '<=', value: 0 } }));
    progress(`deletion done in ${seconds(deleteMs).toFixed(1)} s`);

    // 9. kubectl scale.
    if (!SKIP.has('kubectl')) {
      const kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rk-scale-')), 'kubeconfig');
      fs.writeFileSync(kubeconfig, cluster.kubeconfigYaml, { mode: 0o600 });
      const kubectl = (...args: string[]) => promisify(execFile)(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args]);
      await management.createScheduler({ ...benchSchedulerBody(B, { roomsReplicas: BASE, portRange: PORTS }), maxSurge: `${SURGE_PERCENT}%` });
      await fleetB.until(() => fleetB.ready.size >= BASE, PHASE_TIMEOUT_MS, `${BASE} rooms of ${B} not ready`);
      const tScale = Date.now();
      await kubectl('scale', `scheduler/${B}`, `--replicas=${ROOMS}`);
      const tScaled = await fleetB.until(() => fleetB.ready.size >= ROOMS, PHASE_TIMEOUT_MS, `${ROOMS} rooms of ${B} not ready`);
      figures.push(figure(NAME, `kubectl scale ${BASE} -> ${ROOMS}: all ready after`, seconds(tScaled - tScale), 's'));
      figures.push(figure(NAME, 'kubectl scale to all ready / bare loop for as many rooms', (tScaled - tScale) / bareSameMs, 'ratio', { target: { op: '<=', value: 1.2 } }));
      const tKubectlDelete = Date.now();
      await kubectl('delete', 'scheduler', B, '--wait=true', `--timeout=${PHASE_TIMEOUT_MS / 1000}s`);
      await waitFor(async () => (await cluster.countPods(B)) === 0, { timeoutMs: PHASE_TIMEOUT_MS, intervalMs: 1000, message: `pods of ${B} left` });
      figures.push(figure(NAME, `kubectl delete of the ${ROOMS}-room scheduler: gone, 0 pods left, after`, seconds(Date.now() - tKubectlDelete), 's'));
    }

    await rss.sample();
    figures.push(figure(NAME, 'operator RSS, max over the run', rss.max.operator, 'MB', { target: { op: '<=', value: 300 } }));
    figures.push(figure(NAME, 'gateway RSS, max over the run', rss.max.gateway, 'MB', { target: { op: '<=', value: 200 } }));
    for (const [who, mb] of rss.others) figures.push(figure(NAME, `${who} RSS, max over the run`, mb, 'MB', { note: 'not a Roomkeeper process; sampled every 5 s as the two above are' }));
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
    progress(`failed: ${error}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
  notes.push(
    `${target === 'real' ? 'Real kube-apiserver v1.28 + etcd + kube-controller-manager as local processes' : 'Sandbox API server in its own process'}; compiled JavaScript under plain node for operator (chart identity, node flags "${nodeFlags.join(' ')}"), gateway (node flags "${gatewayNodeFlags.join(' ')}"), simulated kubelet (${NODES} nodes, start delay ${START_MS} ms) and simulated game servers (pings every ${PING_MS / 1000} s) each in its own process (${simPriority}); all on the same 2 cores; production defaults (kubeQps ${config.kubeQps}, addRoomsConcurrency ${config.addRoomsConcurrency}, addRoomsLimit ${config.addRoomsLimit}) except maxRoomsPerScheduler ${2 * ROOMS}. 1 run.`,
    'Requests per room are what the API server counted (apiserver_request_total) between the phase\'s start and end, from every client: operator, gateway, simulated kubelet and scheduler (binding, pod status), and the bench\'s own watches.',
  );
  return { name: NAME, figures, notes, durationMs: Date.now() - began, ...(error !== undefined ? { error } : {}) };
}

if (require.main === module) runStandalone(() => run(process.env.BENCH_TARGET === 'sandbox' ? 'sandbox' : 'real'));
