/**
 * The operator, assembled: caches (list+watch), work queues, controllers, the operation runner
 * and leader election. `startOperator` is used by `main.ts`, by `npm start` and by the tests
 * (several instances may run in one process, each with its own identity).
 *
 * Every replica keeps warm caches and is ready; only the leader reconciles and executes.
 */
import * as os from 'node:os';
import type * as k8s from '@kubernetes/client-node';
import type { Config } from '../../common/src/config';
import type { GameRoom, Operation, PingDigest, Scheduler, SchedulerVersion } from '../../common/src/generated/resources';
import { makeKubeClients } from '../../common/src/kube/clients';
import { EventRecorder, eventSinkOf } from '../../common/src/kube/event-recorder';
import { ResilientInformer, type ListPage } from '../../common/src/kube/informer';
import { slimPod } from '../../common/src/kube/slim-pod';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { createLogger, type Logger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { startOpsServer, type OpsServer } from '../../common/src/ops-server';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL } from '../../common/src/resources/labels';
import { isFinalOperationStatus } from '../../common/src/resources/operation-names';
import type { Caches, OperatorDeps, StatusForwarder } from './deps';
import { RoomExpectations } from './rooms/expectations';
import { registerFleetMetrics } from './fleet-metrics';
import { DEFINITIONS } from './operations/definitions';
import type { OperationDefinition } from './operations/execution';
import { OperationRunner } from './operations/operation-runner';
import { HealthController } from './rooms/health-controller';
import { RoomStatusController } from './rooms/room-status-controller';
import { SchedulerController } from './schedulers/scheduler-controller';
import { LeaderElector } from './runtime/leader-election';
import { WorkQueue } from './runtime/work-queue';


export interface OperatorOptions {
  kubeConfig: k8s.KubeConfig;
  config: Config;
  logger?: Logger;
  metrics?: MetricsRegistry;
  forwarder?: StatusForwarder;
  /** Extra operation definitions (tests add a `test_operation`). */
  extraDefinitions?: readonly OperationDefinition[];
  /** Serve /healthz, /readyz, /metrics on config.operatorPort (default true). */
  serveOps?: boolean;
  /** The random source of room names and host ports (tests force name collisions with it). */
  random?: () => number;
}

export interface RunningOperator {
  readonly identity: string;
  readonly isLeader: boolean;
  readonly opsUrl: string | undefined;
  readonly metrics: MetricsRegistry;
  /** Graceful stop: finish nothing new, release leadership. */
  stop(): Promise<void>;
  /** Stops dead, as a killed process would: no status writes, no lease release. */
  crash(): Promise<void>;
  /** For tests: how many operations this replica is executing now. */
  readonly runningOperations: number;
  /** For tests: this replica's caches (list+watch), to compare with a fresh LIST. */
  readonly caches: Caches;
}

/**
 * The slim pod, plus the deletion grace period: the API server dates a graceful deletion at the
 * END of the grace period, so when the deletion started is deletionTimestamp minus
 * deletionGracePeriodSeconds (rooms/room-manager.ts `deletionStartedAt`).
 */
function roomPod(pod: k8s.V1Pod): k8s.V1Pod {
  const slim = slimPod(pod);
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  return grace === undefined ? slim : { ...slim, metadata: { ...slim.metadata, deletionGracePeriodSeconds: grace } };
}

export async function startOperator(opts: OperatorOptions): Promise<RunningOperator> {
  const { config } = opts;
  const identity = config.identity ?? `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 7)}`;
  const logger = (opts.logger ?? createLogger('operator')).child({ identity });
  const metrics = opts.metrics ?? new MetricsRegistry();
  const clients = makeKubeClients(opts.kubeConfig, { qps: config.kubeQps, burst: config.kubeBurst }, metrics);
  const kc = clients.kc; // pooled connections for informers too
  const api = new RoomkeeperApi(clients.custom);
  const custom = clients.custom;

  let leading = false;
  const queues: WorkQueue[] = [];
  const informerLogger = logger.child({ part: 'informer' });
  const informer = <T extends k8s.KubernetesObject>(name: string, path: string, list: (page?: ListPage) => Promise<k8s.KubernetesListObject<T>>, onEvent: (type: 'add' | 'update' | 'delete', obj: T) => void, labelSelector?: string, transform?: (obj: T) => T) =>
    new ResilientInformer<T>({ kc, path, list, name, logger: informerLogger, onEvent, labelSelector, transform, metrics });

  const lostRooms = new Map<string, string[]>();
  // Late-bound: controllers need caches, informer callbacks need controllers.
  const hooks = {
    scheduler: (_t: string, _s: Scheduler) => undefined as void,
    operation: (_t: string, _o: Operation) => undefined as void,
    room: (_t: string, _r: GameRoom) => undefined as void,
    pod: (_t: string, _p: k8s.V1Pod) => undefined as void,
    digest: (_t: string, _d: PingDigest) => undefined as void,
    namespace: (_t: string, _n: k8s.V1Namespace) => undefined as void,
    version: (_t: string, _v: SchedulerVersion) => undefined as void,
  };
  const group = 'roomkeeper.io';
  const version = 'v1';
  const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
  const informers = {
    schedulers: informer<Scheduler>('schedulers', '/apis/roomkeeper.io/v1/schedulers',
      (page) => custom.listClusterCustomObject({ group, version, plural: 'schedulers', ...page }), (t, o) => hooks.scheduler(t, o)),
    versions: informer<SchedulerVersion>('schedulerversions', '/apis/roomkeeper.io/v1/schedulerversions',
      (page) => custom.listClusterCustomObject({ group, version, plural: 'schedulerversions', ...page }), (t, o) => hooks.version(t, o)),
    operations: informer<Operation>('operations', '/apis/roomkeeper.io/v1/operations',
      (page) => custom.listClusterCustomObject({ group, version, plural: 'operations', ...page }), (t, o) => hooks.operation(t, o)),
    rooms: informer<GameRoom>('gamerooms', '/apis/roomkeeper.io/v1/gamerooms',
      (page) => custom.listClusterCustomObject({ group, version, plural: 'gamerooms', ...page }), (t, o) => hooks.room(t, o)),
    pods: informer<k8s.V1Pod>('pods', '/api/v1/pods',
      (page) => clients.core.listPodForAllNamespaces({ labelSelector: managed, ...page }), (t, o) => hooks.pod(t, o), managed, roomPod),
    nodes: informer<k8s.V1Node>('nodes', '/api/v1/nodes', (page) => clients.core.listNode({ ...page }), () => undefined),
    digests: informer<PingDigest>('pingdigests', '/apis/roomkeeper.io/v1/pingdigests',
      (page) => custom.listClusterCustomObject({ group, version, plural: 'pingdigests', ...page }), (t, o) => hooks.digest(t, o)),
    namespaces: informer<k8s.V1Namespace>('namespaces', '/api/v1/namespaces',
      (page) => clients.core.listNamespace({ labelSelector: managed, ...page }), (t, o) => hooks.namespace(t, o), managed),
  };
  const caches: Caches = informers;
  let leaderSince = 0;
  const sight = () => {
    const parts = [informers.rooms.sight, informers.pods.sight, informers.digests.sight];
    return { impaired: parts.some((p) => p.impaired), since: Math.max(leaderSince, ...parts.map((p) => p.since)) };
  };
  const expectations = new RoomExpectations(Date.now);
  const events = new EventRecorder({ sink: eventSinkOf(clients.events), controller: 'roomkeeper.io/operator', instance: identity, logger: logger.child({ part: 'events' }) });
  const deps: OperatorDeps = { api, core: clients.core, caches, config, logger, metrics, identity, now: Date.now, ...(opts.random ? { random: opts.random } : {}), forwarder: opts.forwarder, sight, expectations, events };

  const runnerQueue = new WorkQueue({ name: 'operations', logger, metrics, concurrency: 8, reconcile: (key) => runner.reconcile(key) });
  const runner = new OperationRunner(deps, { definitions: [...DEFINITIONS, ...(opts.extraDefinitions ?? [])], enqueue: (s) => runnerQueue.add(s) });
  const schedulerController = new SchedulerController(deps, { operationsOf: (s) => runner.operationsOf(s), track: (op) => runner.track(op) });
  const schedulerQueue = new WorkQueue({ name: 'schedulers', logger, metrics, concurrency: 4, reconcile: (key) => schedulerController.reconcile(key) });
  const roomController = new RoomStatusController(deps, (scheduler, room, why) => {
    lostRooms.set(scheduler, [...(lostRooms.get(scheduler) ?? []), `${room} (${why})`]);
  });
  const roomQueue = new WorkQueue({ name: 'gamerooms', logger, metrics, concurrency: 16, reconcile: (key) => roomController.reconcile(key) });
  const health = new HealthController(deps, {
    operationsOf: (s) => runner.operationsOf(s),
    track: (op) => runner.track(op),
    takeLostRooms: (s) => {
      const lost = lostRooms.get(s) ?? [];
      lostRooms.delete(s);
      return lost;
    },
  });
  const healthQueue = new WorkQueue({ name: 'health', logger, metrics, concurrency: 4, reconcile: (key) => health.reconcile(key) });
  queues.push(runnerQueue, schedulerQueue, roomQueue, healthQueue);
  registerFleetMetrics(metrics, caches, queues);

  const whenLeading = (fn: () => void) => {
    if (leading) fn();
  };
  hooks.scheduler = (_t, s) => whenLeading(() => {
    const name = s.metadata.name as string;
    schedulerQueue.add(name);
    runnerQueue.add(name);
    healthQueue.addAfter(name, config.autoscaleDebounce);
  });
  hooks.operation = (t, op) => {
    if (t === 'delete') runner.forget(op);
    else runner.observe(op);
    whenLeading(() => {
      runnerQueue.add(op.spec.schedulerName);
      schedulerQueue.add(op.spec.schedulerName);
      // An operation that ended frees the queue for the health check's next decision (a rollout's
      // next batch): at once, not after the debounce meant for bursts of room changes.
      if (t !== 'delete' && isFinalOperationStatus(op.status?.status)) healthQueue.add(op.spec.schedulerName);
      else healthQueue.addAfter(op.spec.schedulerName, config.autoscaleDebounce);
    });
  };
  hooks.room = (t, room) => whenLeading(() => {
    expectations.observe(t, room);
    const ns = room.metadata.namespace as string;
    if (t === 'delete') void roomController.roomDeleted(room);
    else roomQueue.add(`${ns}/${room.metadata.name}`);
    schedulerQueue.add(ns);
    healthQueue.addAfter(ns, config.autoscaleDebounce);
  });
  hooks.pod = (_t, pod) => whenLeading(() => {
    roomQueue.add(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
  });
  hooks.digest = (_t, digest) => whenLeading(() => {
    healthQueue.addAfter(digest.metadata.namespace as string, config.autoscaleDebounce);
  });
  // A scheduler's namespace or versions changed (kubectl delete included): the scheduler
  // controller rebuilds or protects them, the health check re-decides.
  hooks.namespace = (_t, ns) => whenLeading(() => {
    const scheduler = ns.metadata?.labels?.[SCHEDULER_LABEL];
    if (!scheduler) return;
    schedulerQueue.add(scheduler);
    healthQueue.addAfter(scheduler, config.autoscaleDebounce);
  });
  hooks.version = (_t, v) => whenLeading(() => {
    schedulerQueue.add(v.spec.scheduler);
  });

  const enqueueAll = () => {
    for (const s of informers.schedulers.list()) {
      const name = s.metadata.name as string;
      schedulerQueue.add(name);
      runnerQueue.add(name);
      healthQueue.add(name);
    }
    for (const op of informers.operations.list()) runnerQueue.add(op.spec.schedulerName);
    for (const r of informers.rooms.list()) roomQueue.add(`${r.metadata.namespace}/${r.metadata.name}`);
  };
  const leaderGauge = metrics.gauge('roomkeeper_operator_leader', 'Whether this replica is the leader (1) or a standby (0).');
  leaderGauge.set(0);
  const leaderTransitions = metrics.counter('roomkeeper_operator_leader_transitions_total', 'Times this replica started (to="leader") or stopped (to="standby") leading.', { labelNames: ['to'] });
  const setLeading = (value: boolean) => {
    if (value !== leading) leaderTransitions.inc({ to: value ? 'leader' : 'standby' });
    if (value && !leading) leaderSince = Date.now();
    leading = value;
    leaderGauge.set(value ? 1 : 0);
    runner.setLeading(value);
    if (value) enqueueAll();
  };

  // Health and readiness answer while the caches sync: /readyz says what keeps them from it.
  const ops: OpsServer | undefined = opts.serveOps === false ? undefined : await startOpsServer({
    port: config.operatorPort,
    metrics,
    readiness: [{
      name: 'caches',
      ready: () => Object.values(informers).every((i) => i.synced),
      why: () => Object.values(informers).filter((i) => !i.synced && i.lastError).map((i) => `${i.name}: ${i.lastError}`)[0],
    }],
  });

  await Promise.all(Object.values(informers).map((i) => i.start()));
  for (const q of queues) q.start();

  const elector = config.leaderElection
    ? new LeaderElector({
      coordination: clients.coordination,
      namespace: config.leaseNamespace,
      name: config.leaseName,
      identity,
      leaseDurationMs: config.leaseDuration,
      renewDeadlineMs: config.renewDeadline,
      retryPeriodMs: config.retryPeriod,
      logger,
      onStartedLeading: () => setLeading(true),
      onStoppedLeading: () => setLeading(false),
    })
    : undefined;
  if (elector) {
    await ensureNamespace(clients.core, config.leaseNamespace);
    elector.start();
  } else {
    setLeading(true);
  }

  let stopped = false;
  const shutdown = async (graceful: boolean): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (graceful) {
      setLeading(false);
      await elector?.stop();
    } else {
      runner.abandonAll('crashed');
      leading = false;
      runner.setLeading(false);
    }
    await Promise.all(queues.map((q) => q.stop()));
    await Promise.all(Object.values(informers).map((i) => i.stop()));
    if (graceful) await events.close();
    else events.abandon();
    await clients.close();
    await ops?.close();
    logger.info(graceful ? 'operator stopped' : 'operator crashed (simulated)');
  };

  return {
    identity,
    get isLeader() {
      return leading;
    },
    opsUrl: ops?.url,
    metrics,
    stop: () => shutdown(true),
    crash: async () => {
      elector?.halt();
      await shutdown(false);
    },
    get runningOperations() {
      return runner.runningCount;
    },
    caches,
  };
}

async function ensureNamespace(core: k8s.CoreV1Api, name: string): Promise<void> {
  try {
    await core.readNamespace({ name });
  } catch {
    try {
      await core.createNamespace({ body: { metadata: { name } } });
    } catch {
      // another replica made it, or we may not create namespaces: the lease write will say
    }
  }
}
