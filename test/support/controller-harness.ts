/**
 * One operator controller on the sandbox API server, without the rest of the operator: the real
 * client-node clients and the operator's own informers (operator-informers.ts), the dependencies
 * wired as operator.ts wires them, and a count of the write requests the API server received.
 * A test calls the controller's `reconcile` itself, so it decides when each pass runs:
 *
 *   const h = await startControllerHarness();
 *   const controller = new SchedulerController(h.deps, { operationsOf: ... });
 *   await h.converge(() => controller.reconcile('s'));      // passes until one writes nothing
 *   expect(await h.writesOf(() => controller.reconcile('s'))).toBe(0);
 */
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { loadConfig, type Config } from '../../common/src/config';
import type { Scheduler } from '../../common/src/generated/resources';
import { makeKubeClients, type KubeClients } from '../../common/src/kube/clients';
import { EventRecorder, eventSinkOf } from '../../common/src/kube/event-recorder';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { silentLogger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { API_GROUP, PLURALS, ROOMKEEPER_API } from '../../common/src/resources/api-group';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_FINALIZER } from '../../common/src/resources/labels';
import type { OperatorDeps } from '../../operator/src/deps';
import { INITIAL_VERSION } from '../../operator/src/domain/versioning';
import { DEFINITIONS } from '../../operator/src/operations/definitions';
import { newVersionObject } from '../../operator/src/operations/definitions/shared';
import { OperationRunner } from '../../operator/src/operations/operation-runner';
import { createOperatorInformers, type OperatorInformers } from '../../operator/src/operator-informers';
import { RoomExpectations } from '../../operator/src/rooms/expectations';
import { RoomManager } from '../../operator/src/rooms/room-manager';
import { roomNamespaceLabels } from '../../operator/src/schedulers/room-namespace';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { schedulerObject } from './scheduler-object';
import { waitFor } from './wait';

export interface ControllerHarness {
  readonly sandbox: Sandbox;
  readonly clients: KubeClients;
  readonly api: RoomkeeperApi;
  readonly core: k8s.CoreV1Api;
  readonly informers: OperatorInformers;
  readonly deps: OperatorDeps;
  readonly config: Config;
  /**
   * The operation runner, wired to the operations informer as operator.ts wires it (observe,
   * forget), not leading: the operations' view of the other controllers (cache plus own writes).
   * A test of the runner itself calls `setLeading(true)`.
   */
  readonly runner: OperationRunner;
  /** The schedulers the runner asked to reconcile again (an execution ended), in order. */
  readonly runnerAsked: readonly string[];
  /** Write requests (create, update, patch, delete) the API server received so far. */
  writes(): number;
  /** Resolves once every cache holds what a fresh LIST returns (same objects, same resourceVersions). */
  caughtUp(): Promise<void>;
  /** The writes one call made, Events included; the caches catch up first. */
  writesOf(reconcile: () => Promise<unknown>): Promise<number>;
  /** Calls `reconcile` until a call writes nothing (at most `maxPasses`); the writes of each call. */
  converge(reconcile: () => Promise<unknown>, maxPasses?: number): Promise<number[]>;
  /**
   * A Scheduler as create_scheduler leaves it (operations/definitions/create-scheduler.ts): the
   * finalizer, its namespace, the active version v1.0.0 and the status naming it; no rooms.
   */
  createdScheduler(name: string, spec?: Record<string, unknown>): Promise<Scheduler>;
  /**
   * A room of the scheduler as it is once started: made by RoomManager (GameRoom and pod), its pod
   * running and ready on ROOM_HOST (as the kubelet reports it) and its ping `ready` (as the
   * gateway writes it). Resolves with the room's name.
   */
  readyRoom(scheduler: Scheduler): Promise<string>;
  stop(): Promise<void>;
}

/** The host IP of every room pod readyRoom starts. */
export const ROOM_HOST = '10.0.0.5';
const CRD_DIR = path.resolve(__dirname, '../../crds');
const ignore = (): void => undefined;

/**
 * Informer events enqueue nothing (the test calls reconcile itself); they keep the runner's view
 * and the room expectations as operator.ts does. The configuration is the production default.
 */
export async function startControllerHarness(): Promise<ControllerHarness> {
  const sandbox = await startSandbox({ crdDirs: [CRD_DIR] });
  const config = loadConfig({}, { operatorPort: 0 });
  const clients = makeKubeClients(sandbox.kubeConfig(), { qps: 2000, burst: 2000 });
  const logger = silentLogger();
  const metrics = new MetricsRegistry();
  const now = (): number => Date.now();
  const informers = createOperatorInformers(clients, {
    logger,
    metrics,
    on: {
      schedulers: (t, s) => expectations.observeScheduler(t, s),
      schedulerversions: ignore,
      operations: (t, op) => (t === 'delete' ? runner.forget(op) : runner.observe(op)),
      gamerooms: (t, room) => expectations.observe(t, room),
      pods: ignore,
      pingdigests: ignore,
      namespaces: ignore,
      nodes: ignore,
    },
  });
  const api = new RoomkeeperApi(clients.custom);
  const expectations = new RoomExpectations(now);
  const identity = 'controller-test';
  const events = new EventRecorder({ sink: eventSinkOf(clients.events), controller: `${API_GROUP}/operator`, instance: identity, logger, now });
  const deps: OperatorDeps = {
    api, core: clients.core, caches: informers, config, logger, metrics, identity, now,
    expectations, events,
    sight: () => ({ impaired: false, since: 0 }),
  };
  const runnerAsked: string[] = [];
  const runner = new OperationRunner(deps, { definitions: DEFINITIONS, enqueue: (s) => runnerAsked.push(s) });
  await Promise.all(Object.values(informers).map((i) => i.start()));

  const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
  const crdList = (plural: string) => async () => ((await clients.custom.listClusterCustomObject({ ...ROOMKEEPER_API, plural })) as k8s.KubernetesListObject<k8s.KubernetesObject>).items;
  const fresh: Record<keyof OperatorInformers, () => Promise<k8s.KubernetesObject[]>> = {
    schedulers: crdList(PLURALS.Scheduler),
    versions: crdList(PLURALS.SchedulerVersion),
    operations: crdList(PLURALS.Operation),
    rooms: crdList(PLURALS.GameRoom),
    digests: crdList(PLURALS.PingDigest),
    pods: async () => (await clients.core.listPodForAllNamespaces({ labelSelector: managed })).items,
    nodes: async () => (await clients.core.listNode()).items,
    namespaces: async () => (await clients.core.listNamespace({ labelSelector: managed })).items,
  };
  const versions = (objects: readonly k8s.KubernetesObject[]): string => objects
    .map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`).sort().join(',');
  const caughtUp = async (): Promise<void> => {
    await waitFor(async () => {
      for (const [name, list] of Object.entries(fresh) as [keyof OperatorInformers, () => Promise<k8s.KubernetesObject[]>][]) {
        if (versions(await list()) !== versions(informers[name].list())) return false;
      }
      return true;
    }, { message: 'the caches did not catch up with the API server' });
  };
  const writes = (): number => sandbox.writeCount();
  const writesOf = async (reconcile: () => Promise<unknown>): Promise<number> => {
    await caughtUp();
    const before = writes();
    await reconcile();
    await events.flush();
    return writes() - before;
  };

  return {
    sandbox, clients, api, core: clients.core, informers, deps, config, runner, runnerAsked,
    writes,
    caughtUp,
    writesOf,
    async converge(reconcile, maxPasses = 8) {
      const passes: number[] = [];
      while (passes.length < maxPasses) {
        passes.push(await writesOf(reconcile));
        if (passes[passes.length - 1] === 0) return passes;
      }
      throw new Error(`no convergence: ${maxPasses} reconciles each wrote (${passes.join(', ')} writes)`);
    },
    async createdScheduler(name, spec = {}) {
      const s = await api.createScheduler({ ...schedulerObject(name, spec), metadata: { name, finalizers: [SCHEDULER_FINALIZER] } } as never);
      await clients.core.createNamespace({ body: { metadata: { name, labels: roomNamespaceLabels(name, config) } } });
      const v = await api.createSchedulerVersion(newVersionObject(s, INITIAL_VERSION, 'initial', s.spec));
      await api.patchSchedulerVersionStatus(v.metadata.name as string, { status: { active: true } });
      return api.patchSchedulerStatus(name, { status: { version: INITIAL_VERSION, versionedGeneration: s.metadata.generation ?? 1, createdAt: s.metadata.creationTimestamp } });
    },
    async readyRoom(scheduler) {
      const name = await new RoomManager(deps).createRoom({ scheduler, version: scheduler.status?.version ?? INITIAL_VERSION, definition: scheduler.spec });
      const namespace = scheduler.metadata.name as string;
      const startedAt = new Date().toISOString();
      await clients.core.patchNamespacedPodStatus({
        name, namespace,
        body: [{ op: 'replace', path: '/status', value: {
          phase: 'Running', hostIP: ROOM_HOST, startTime: startedAt,
          conditions: [{ type: 'Ready', status: 'True' }, { type: 'ContainersReady', status: 'True' }],
          containerStatuses: [{ name: 'server', ready: true, restartCount: 0, image: 'example.com/game:1.0.0', imageID: '', started: true, state: { running: { startedAt } } }],
        } }],
      });
      await api.patchGameRoomStatus(namespace, name, { status: { pingStatus: 'ready', lastPingAt: startedAt } });
      return name;
    },
    async stop() {
      runner.setLeading(false);
      await events.close();
      await Promise.all(Object.values(informers).map((i) => i.stop()));
      await clients.close();
      await sandbox.stop();
    },
  };
}
