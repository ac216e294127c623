/**
 * The operator, assembled: caches (list+watch), work queues, controllers, the operation runner
 * and leader election. `startOperator` is used by `main.ts`, by `npm start` and by the tests
 * (several instances may run in one process, each with its own identity).
 *
 * Every replica keeps warm caches and is ready; only the leader reconciles and executes, and only
 * while no older Roomkeeper operator of another release leads (runtime/other-operators.ts).
 */
import * as os from 'node:os';
import type * as k8s from '@kubernetes/client-node';
import { ConfigError, operatorConfigProblems, type Config } from '../../common/src/config';
import type { GameRoom, Operation, Scheduler } from '../../common/src/generated/resources';
import { makeKubeClients, roomkeeperUserAgent } from '../../common/src/kube/clients';
import { EventRecorder, eventSinkOf } from '../../common/src/kube/event-recorder';
import { sightOfAll } from '../../common/src/kube/informer';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { createLogger, type Logger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { startOpsServer, type OpsServer } from '../../common/src/ops-server';
import { API_GROUP } from '../../common/src/resources/api-group';
import type { Caches, OperatorDeps, StatusForwarder } from './deps';
import { createOperatorInformers, watchLookups } from './operator-informers';
import { keysFor, type EventType, type QueueName, type WatchedObjects, type WatchSource } from './controller-watches';
import { RoomExpectations } from './rooms/expectations';
import { OutsideDeletions } from './rooms/outside-deletions';
import { registerFleetMetrics } from './fleet-metrics';
import { DEFINITIONS } from './operations/definitions';
import type { OperationDefinition } from './operations/execution';
import { OperationRunner } from './operations/operation-runner';
import { HealthController } from './rooms/health-controller';
import { RoomFailures } from './rooms/room-failures';
import { RoomStatusController } from './rooms/room-status-controller';
import { SchedulerController } from './schedulers/scheduler-controller';
import { LeaderElector, TAKEOVER_SETTLE_MS } from './runtime/leader-election';
import { OtherOperators, standBackMessage, type Verdict } from './runtime/other-operators';
import { WorkQueue, type ReconcileResult } from './runtime/work-queue';
import { systemClock, type Clock } from '../../common/src/runtime/clock';
import { cacheCheck, leaderLeaseCheck, Liveness, reconcileCheck } from '../../common/src/runtime/liveness';

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
  /** The clock of every part (default the system's). */
  now?: Clock;
  /** For tests: awaited before each reconcile of every controller queue (a test blocks one with it). */
  beforeReconcile?: (queue: QueueName, key: string) => Promise<void>;
}

export interface RunningOperator {
  readonly identity: string;
  readonly isLeader: boolean;
  /**
   * For tests: how long this replica has led (its clock), undefined while it does not. Deletions
   * of rooms begun in its first TAKEOVER_SETTLE_MS are not told as deletions outside Roomkeeper;
   * its Lease's acquireTime can be earlier (it leads once it has looked at the other operators' Leases).
   */
  readonly ledForMs: number | undefined;
  readonly opsUrl: string | undefined;
  readonly metrics: MetricsRegistry;
  /**
   * Graceful stop: start no operation; let the running ones go on for half the shutdown budget
   * (`ROOMKEEPER_SHUTDOWN_TIMEOUT`), then stop them at a safe point and hand them over with their
   * history written (3/10 of the budget); then release leadership. `reason` names the stop in
   * the operations' history (default `shutdown`); `drainMs` replaces the half (tests hand over
   * at once with 0).
   */
  stop(reason?: string, opts?: { drainMs?: number }): Promise<void>;
  /** Stops dead, as a killed process would: no status writes, no lease release. */
  crash(): Promise<void>;
  /** For tests: its election loop stops (no renewal, no release), as in a paused process; the rest runs on. */
  stallElection(): void;
  /** For tests: how many operations this replica is executing now. */
  readonly runningOperations: number;
  /** For tests: this replica's caches (list+watch), to compare with a fresh LIST. */
  readonly caches: Caches;
}

export async function startOperator(opts: OperatorOptions): Promise<RunningOperator> {
  const { config } = opts;
  const problems = operatorConfigProblems(config);
  if (problems.length > 0) throw new ConfigError(problems);
  const identity = config.identity ?? `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 7)}`;
  const logger = (opts.logger ?? createLogger('operator')).child({ identity });
  const metrics = opts.metrics ?? new MetricsRegistry();
  const now = opts.now ?? systemClock;
  const clients = makeKubeClients(opts.kubeConfig, { qps: config.kubeQps, burst: config.kubeBurst }, { metrics, userAgent: roomkeeperUserAgent('operator'), logger: logger.child({ part: 'api-access' }) });
  const api = new RoomkeeperApi(clients.custom);

  let leading = false;
  const queues: WorkQueue[] = [];
  // Late-bound: controllers need caches, informer callbacks need controllers. Which keys an event
  // enqueues is declared in controller-watches.ts; the hooks do what an event does besides.
  let enqueue: <S extends WatchSource>(source: S, type: EventType, obj: WatchedObjects[S], before?: WatchedObjects[S]) => void = () => undefined;
  const hooks: { scheduler: (t: EventType, s: Scheduler) => void; operation: (t: EventType, o: Operation) => void; room: (t: EventType, r: GameRoom) => void } = {
    scheduler: () => undefined,
    operation: () => undefined,
    room: () => undefined,
  };
  const informers = createOperatorInformers(clients, {
    logger: logger.child({ part: 'informer' }),
    metrics,
    on: {
      schedulers: (t, o) => hooks.scheduler(t, o),
      schedulerversions: (t, o) => enqueue('schedulerversions', t, o),
      operations: (t, o) => hooks.operation(t, o),
      gamerooms: (t, o) => hooks.room(t, o),
      pods: (t, o) => enqueue('pods', t, o),
      pingdigests: (t, o) => enqueue('pingdigests', t, o),
      namespaces: (t, o) => enqueue('namespaces', t, o),
      nodes: (t, o, before) => enqueue('nodes', t, o, before),
    },
  });
  const caches: Caches = informers;
  const lookups = watchLookups(informers);
  let leaderSince = 0;
  const sight = () => {
    const all = sightOfAll([informers.rooms.sight, informers.pods.sight, informers.digests.sight]);
    return { impaired: all.impaired, since: Math.max(leaderSince, all.since) };
  };
  // The caches the health check decides on (nodes only name hosts).
  const decisionCaches = { schedulers: informers.schedulers, operations: informers.operations, rooms: informers.rooms, pods: informers.pods, digests: informers.digests, namespaces: informers.namespaces };
  const staleCaches = () => Object.entries(decisionCaches).filter(([, i]) => i.sight.impaired).map(([name]) => name);
  const expectations = new RoomExpectations(now);
  const events = new EventRecorder({ sink: eventSinkOf(clients.events), controller: `${API_GROUP}/operator`, instance: identity, logger: logger.child({ part: 'events' }), now });
  const floorSight = () => sightOfAll([informers.rooms.sight, informers.pods.sight]);
  const roomFailures = new RoomFailures(metrics, now);
  const deps: OperatorDeps = { api, core: clients.core, caches, config, logger, metrics, identity, now, ...(opts.random ? { random: opts.random } : {}), forwarder: opts.forwarder, sight, floorSight, staleCaches, expectations, roomFailures, events };

  // Only the leader reconciles. Keys a replica still holds when it stops leading (a requeue, a
  // delayed add) are dropped, not reconciled: its health checks went on every interval while
  // another replica led. Leading again looks at everything (enqueueAll). The runner checks itself.
  const ifLeading = (reconcile: (key: string) => Promise<ReconcileResult>) => (key: string): Promise<ReconcileResult> => (leading ? reconcile(key) : Promise.resolve({}));
  const { beforeReconcile } = opts;
  const newQueue = (name: QueueName, concurrency: number, reconcile: (key: string) => Promise<ReconcileResult>) => new WorkQueue({
    name, logger, metrics, concurrency, now,
    reconcile: beforeReconcile ? async (key) => { await beforeReconcile(name, key); return reconcile(key); } : reconcile,
  });
  const runnerQueue = newQueue('operations', 8, (key) => runner.reconcile(key));
  // An operation that ended frees the scheduler for the health check's next decision (a rollout's
  // next batch) without waiting for the watch to bring its last status back.
  const runner = new OperationRunner(deps, { definitions: [...DEFINITIONS, ...(opts.extraDefinitions ?? [])], enqueue: (s) => runnerQueue.add(s), ended: (s) => {
    healthQueue.add(s);
    // Its status (PendingChanges, the last operation) once the runner no longer counts it as running:
    // an operation deleted while it ran went before its rollback ended, and no event follows then.
    schedulerQueue.add(s);
  } });
  const schedulerController = new SchedulerController(deps, { operationsOf: (s) => runner.operationsOf(s), track: (op) => runner.track(op), heldExpiry: (s) => health.heldExpiryOf(s), churn: (s) => health.churnOf(s) });
  const schedulerQueue = newQueue('schedulers', 4, ifLeading((key) => schedulerController.reconcile(key)));
  const roomController = new RoomStatusController(deps);
  const roomQueue = newQueue('gamerooms', 16, ifLeading((key) => roomController.reconcile(key)));
  const outside = new OutsideDeletions({ caches, expectations });
  const health = new HealthController(deps, {
    operationsOf: (s) => runner.operationsOf(s),
    track: (op) => runner.track(op),
    outside,
    heldExpiryChanged: (s) => schedulerQueue.add(s),
    churnChanged: (s) => schedulerQueue.add(s),
  });
  const healthQueue = newQueue('health', 4, ifLeading((key) => health.reconcile(key)));
  queues.push(runnerQueue, schedulerQueue, roomQueue, healthQueue);
  registerFleetMetrics(metrics, caches, queues, now);

  const whenLeading = (fn: () => void) => {
    if (leading) fn();
  };
  const queueOf: Readonly<Record<QueueName, WorkQueue>> = { schedulers: schedulerQueue, operations: runnerQueue, gamerooms: roomQueue, health: healthQueue };
  enqueue = (source, type, obj, before) => whenLeading(() => {
    for (const e of keysFor(source, type, obj, { before, lookups })) {
      if (e.debounced) queueOf[e.queue].addAfter(e.key, config.autoscaleDebounce);
      else queueOf[e.queue].add(e.key);
    }
  });
  hooks.scheduler = (t, s) => {
    expectations.observeScheduler(t, s);
    if (t === 'delete' || s.metadata.deletionTimestamp) runner.schedulerDeleting(s.metadata.name as string);
    if (t === 'delete') roomFailures.schedulerGone(s.metadata.name as string);
    enqueue('schedulers', t, s);
  };
  hooks.operation = (t, op) => {
    if (t === 'delete') runner.forget(op);
    else runner.observe(op);
    enqueue('operations', t, op);
  };
  const roomChanged = (t: EventType, room: GameRoom) => {
    expectations.observe(t, room);
    if (t === 'delete') {
      roomFailures.roomGone(room);
      void roomController.roomDeleted(room);
    }
    enqueue('gamerooms', t, room);
  };
  hooks.room = (t, room) => {
    // On every replica, before the expectations forget the deletions this one asked for.
    outside.observe(t, room, leading && now() - leaderSince >= TAKEOVER_SETTLE_MS);
    whenLeading(() => roomChanged(t, room));
  };

  const enqueueAll = () => {
    for (const s of informers.schedulers.list()) {
      const name = s.metadata.name as string;
      schedulerQueue.add(name);
      runnerQueue.add(name);
      healthQueue.add(name);
    }
    for (const op of informers.operations.list()) runnerQueue.add(op.spec.schedulerName);
    for (const r of informers.rooms.list()) roomQueue.add(`${r.metadata.namespace as string}/${r.metadata.name as string}`);
  };
  const leaderGauge = metrics.gauge('roomkeeper_operator_leader', 'Whether this replica is the leader (1) or a standby (0).');
  leaderGauge.set(0);
  const leaderTransitions = metrics.counter('roomkeeper_operator_leader_transitions_total', 'Times this replica started (to="leader") or stopped (to="standby") leading.', { labelNames: ['to'] });
  /** `why`: why this replica stops leading, for the account of the executions it leaves. */
  const setLeading = (value: boolean, why = 'this replica stopped leading') => {
    if (value !== leading) leaderTransitions.inc({ to: value ? 'leader' : 'standby' });
    if (value && !leading) {
      leaderSince = now();
      roomFailures.startWatching();
    }
    leading = value;
    leaderGauge.set(value ? 1 : 0);
    runner.setLeading(value, why);
    if (value) enqueueAll();
  };

  // Leading is holding the Lease while no other Roomkeeper operator it stands back for leads.
  const ownLease = { namespace: config.leaseNamespace, name: config.leaseName };
  let elected = false;
  const others = new OtherOperators({
    coordination: clients.coordination,
    own: ownLease,
    intervalMs: Math.max(config.retryPeriod, Math.floor(config.leaseDuration / 3)),
    logger,
    now,
    onChange: () => decideLeading(),
  });
  let toldStandBack: string | undefined;
  // Won the Lease, but a newer operator may still lead: this one waits until `until` (undefined:
  // it does not wait). Set on winning the Lease, until a fresh look at the cluster's operator Leases.
  let hold: { until: number; timer?: NodeJS.Timeout } | undefined;
  const endHold = () => {
    clearTimeout(hold?.timer);
    hold = undefined;
  };
  const won = () => {
    elected = true;
    hold = { until: Infinity };
    decideLeading();
    // The verdict before may be older than the Lease of an operator that led while this one was
    // down: that one stands back once it sees this one's Lease live, within its Lease's duration
    // (it looks at least every third of it). Until then, this one does not lead beside it.
    void others.lookNow().finally(() => {
      if (!elected || hold?.until !== Infinity) return;
      const newer = others.verdict.newer;
      const waitMs = Math.max(0, ...newer.map((l) => l.durationMs));
      if (waitMs === 0) endHold();
      else {
        const until = now() + waitMs;
        logger.warn(`this operator won its Lease ${ownLease.namespace}/${ownLease.name} while a newer Roomkeeper operator's Lease is live (${newer.map((l) => `${l.namespace}/${l.name}, held by ${l.holder}`).join('; ')}): that one stands back once it sees this Lease, so this one reconciles from ${new Date(until).toISOString()}, after that Lease's duration, and not beside it`, { lease: `${ownLease.namespace}/${ownLease.name}` });
        hold = { until, timer: setTimeout(() => { endHold(); decideLeading(); }, waitMs) };
      }
      decideLeading();
    });
  };
  let lostBecause: string | undefined;
  const lost = (reason: string) => {
    elected = false;
    lostBecause = reason;
    endHold();
    decideLeading();
  };
  const decideLeading = () => {
    const { standBackFor, newer } = others.verdict;
    // The newer operators' Leases released or expired: nobody left to wait for.
    if (hold && hold.until !== Infinity && newer.length === 0) endHold();
    if (leading !== (elected && !standBackFor && !hold)) {
      const why = !elected ? `this replica stopped leading: ${lostBecause ?? 'it lost its leader Lease'}`
        : standBackFor ? `this replica stood back for another Roomkeeper operator (Lease ${standBackFor.namespace}/${standBackFor.name})` : undefined;
      setLeading(!leading, why);
    }
    // The elected replica says so on its Lease, once for each operator it stands back for.
    const key = standBackFor ? `${standBackFor.namespace}/${standBackFor.name}` : undefined;
    if (!standBackFor) toldStandBack = undefined;
    else if (elected && key !== toldStandBack) {
      toldStandBack = key;
      events.record({
        regarding: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...ownLease },
        type: 'Warning', reason: 'AnotherOperatorLeads', action: 'StandBack', note: standBackMessage(ownLease, standBackFor),
      });
    }
  };
  const standingBack = (v: Verdict) => (v.standBackFor ? standBackMessage(ownLease, v.standBackFor) : undefined);
  const othersGauge = metrics.gauge('roomkeeper_operator_other_operators', 'Other Roomkeeper operators (other releases) whose leader Lease is live in this cluster; 0 when this one is alone.', () => othersGauge.set(others.verdict.others));

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
      now,
      onStartedLeading: won,
      onStoppedLeading: lost,
    })
    : undefined;
  // A replica that lost its Lease writes nothing but its Lease until it leads again, also when a
  // pause of the process let its work resume before its election loop noticed.
  if (elector) clients.fenceWrites(() => elector.writeFence());
  // Liveness fails only on what a restart fixes: a reconcile that never ends, a leader whose
  // election loop stopped renewing, a cache request that will never be answered.
  const liveness = new Liveness([
    reconcileCheck(queues, config.livenessReconcileTimeout),
    ...(elector ? [leaderLeaseCheck(elector, config.leaseDuration, config.livenessLeaseSlack)] : []),
    cacheCheck(Object.values(informers), config.livenessCacheTimeout),
  ], { logger, now });

  // Health and readiness answer from the start, while the caches make their first lists: /healthz
  // answers 200 (a start is no fault: the startupProbe only waits for the port), /readyz 503 naming
  // the caches still listing, until every cache synced. Then ready whether it leads or stands by,
  // unless the API server refuses us, does not answer, or another release's operator leads.
  const ops: OpsServer | undefined = opts.serveOps === false ? undefined : await startOpsServer({
    port: config.operatorPort,
    metrics,
    liveness,
    readiness: [
      { name: 'caches', notReadyReason: () => cachesNotSynced(Object.values(informers), Date.now()) },
      { name: 'api access', notReadyReason: () => clients.access.notReadyReason() },
      { name: 'api server', notReadyReason: () => clients.access.unreachableReason() },
      { name: 'one operator per cluster', notReadyReason: () => standingBack(others.verdict) },
    ],
  });

  await Promise.all(Object.values(informers).map((i) => i.start()));
  for (const q of queues) q.start();

  // The first look is over before this replica campaigns: it never reconciles beside an older operator.
  await others.start();
  if (elector) {
    await ensureNamespace(clients.core, config.leaseNamespace);
    elector.start();
  } else {
    elected = true;
    decideLeading();
  }

  let stopped = false;
  const shutdown = async (graceful: boolean, reason = 'shutdown', drainMs?: number): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (graceful) {
      // Still leading meanwhile (the Lease is renewed, the controllers run): an operation waits on
      // them (the scheduler status observing its change). The rest of the budget releases the
      // Lease and closes the connections.
      const budget = config.shutdownTimeout;
      await runner.shutDown(reason, { drainMs: drainMs ?? Math.floor(budget * 0.5), handOverMs: Math.floor(budget * 0.3) });
      setLeading(false, `this replica is stopping (${reason})`);
      endHold();
      others.stop();
      await elector?.stop();
    } else {
      endHold();
      others.stop();
      runner.abandonAll('crashed');
      leading = false;
      runner.setLeading(false, 'crashed');
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
    get ledForMs() {
      return leading ? now() - leaderSince : undefined;
    },
    opsUrl: ops?.url,
    metrics,
    stop: (reason, stopOpts) => shutdown(true, reason, stopOpts?.drainMs),
    crash: async () => {
      elector?.halt();
      await shutdown(false);
    },
    stallElection: () => elector?.halt(),
    get runningOperations() {
      return runner.runningCount;
    },
    caches,
  };
}

/** A cache as readiness sees it (`ResilientInformer`). */
interface CacheSync { readonly name: string; readonly synced: boolean; readonly lastError: string | undefined; readonly pendingRequest: { since: number; verb: 'list' | 'watch' } | undefined }

/** Undefined once every cache made its first list; otherwise which have not, how far, the first list error, and what to do. */
function cachesNotSynced(caches: readonly CacheSync[], now: number): string | undefined {
  const waiting = caches.filter((c) => !c.synced);
  if (waiting.length === 0) return undefined;
  const each = waiting.map((c) => (c.pendingRequest ? `${c.name} (listing for ${Math.round((now - c.pendingRequest.since) / 1000)} s)` : c.name));
  const failed = waiting.find((c) => c.lastError);
  const error = failed ? `; the ${failed.name} list failed: ${failed.lastError ?? ''}` : '';
  return `the caches have not all made their first list: ${each.join(', ')}${error}; this replica is ready once they have (tens of seconds at 10,000 rooms); a failed list is retried by itself`;
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
