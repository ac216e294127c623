/**
 * Creating a room never fails on a name (the 10,000-room issue), on the real API server under the
 * chart's RBAC: the operator's random source is forced to a tiny alphabet so room names collide
 * all the time, and a fault proxy in front of kube-apiserver loses the answer of a share of the
 * GameRoom and Pod creates after they landed (so the client's retry meets its own object: 409).
 * add_rooms finishes with exactly the requested count: every room has its pod, no room is made
 * twice, and the history says so. And, named in advance: a room whose pod name another pod holds
 * is made again under another name, and that pod is left alone.
 */
import * as k8s from '@kubernetes/client-node';
import { makeKubeClients } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { roomName } from '../../operator/src/rooms/domain/pod-template';
import { startChartOperator, type ChartOperator } from '../support/chart-operator';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { realApiServer, reportNotRun } from '../support/real-apiserver';
import { schedulerObject } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'collide';
const AMOUNT = 150;

/** Deterministic, and only four values: names of five letters from a four-letter alphabet (1,024 names). */
function collidingRandom(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return [0.01, 0.3, 0.55, 0.8][(x >>> 16) % 4] as number;
  };
}

test('names forced to collide and creates whose answer is lost: add_rooms finishes with exactly the requested count', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('room creation on colliding names')).toMatch(/NOT RUN/);
    return;
  }
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(plane.adminKubeconfig);
  const clients = makeKubeClients(admin, { qps: 1000, burst: 1000 });
  const api = new RoomkeeperApi(clients.custom);
  let proxy: FaultProxy | undefined;
  let operator: ChartOperator | undefined;
  try {
    proxy = await startFaultProxy({ upstream: plane.url, caFile: plane.caFile });
    const operatorKc = new k8s.KubeConfig();
    operatorKc.loadFromFile(plane.operatorKubeconfig);
    operator = await startChartOperator(plane, { kubeConfig: proxy.kubeConfig(operatorKc), random: collidingRandom(7) });

    await api.createScheduler(schedulerObject(NAME, { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await api.getScheduler(NAME)).status?.version === 'v1.0.0', { timeoutMs: 60_000, message: `${NAME} created` });

    // A tenth of the room writes land but their answers are lost; the retry meets the object. (A
    // create fails only when all 5 tries of the client lose their answer: 1 in 100,000 at this rate.)
    proxy.set([{ verbs: ['create'], resources: ['gamerooms', 'pods'], rate: 0.1, fault: { kind: 'lost-answer' } }]);
    const id = newOperationId();
    await api.createOperation(buildOperation({ id, schedulerName: NAME, definitionName: 'add_rooms', input: { amount: AMOUNT }, source: 'api', enqueuedAt: Date.now() }));
    const ended = await waitFor(async () => {
      const o = await api.getOperation(id);
      return ['finished', 'error', 'canceled'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 180_000, message: 'add_rooms ended' });
    const lostAnswers = proxy.injected;
    proxy.clear();
    const events = ended.status?.executionHistory?.map((h) => h.event) ?? [];
    expect({ status: ended.status?.status, events }).toMatchObject({ status: 'finished', events: expect.arrayContaining([`Added ${AMOUNT} rooms`]) as unknown });

    const rooms = (await api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp);
    const pods = (await clients.core.listNamespacedPod({ namespace: NAME })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(rooms).toHaveLength(AMOUNT);
    expect(new Set(rooms.map((r) => r.metadata.uid)).size).toBe(AMOUNT);
    const owner = new Map(rooms.map((r) => [r.metadata.name, r.metadata.uid]));
    expect(pods).toHaveLength(AMOUNT);
    for (const pod of pods) expect(pod.metadata?.ownerReferences?.[0]?.uid).toBe(owner.get(pod.metadata?.name));
    expect((await api.getScheduler(NAME)).spec.roomsReplicas).toBe(AMOUNT);
    // The faults did happen: answers were lost, and names were taken.
    expect(lostAnswers).toBeGreaterThan(0);
    expect(operator.logged()).toMatch(/room name taken by another room; trying another name/);
  } finally {
    proxy?.clear();
    // Deleted while this operator runs, so the shared plane is left without it.
    await api.deleteScheduler(NAME).catch(() => undefined);
    await waitFor(async () => !(await api.listSchedulers()).items.some((s) => s.metadata.name === NAME), { timeoutMs: 120_000, message: `${NAME} deleted` }).catch(() => undefined);
    await operator?.operator.stop();
    await proxy?.close();
    clients.limiter.drain();
  }
}, 300_000);

test('a room whose pod name another pod holds is made again under another name, and that pod is kept', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('a room pod name held by another pod')).toMatch(/NOT RUN/);
    return;
  }
  const name = 'pod-held';
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(plane.adminKubeconfig);
  const clients = makeKubeClients(admin, { qps: 100, burst: 100 });
  const api = new RoomkeeperApi(clients.custom);
  // The operator's random source reads this script while it lasts: one value picks the room's
  // host port (the scheduler has one port), then five letters name the room `held`, then five
  // more `free` (ports and names are the operator's only uses of it).
  const script: number[] = [];
  const letters = (r: number) => Array.from({ length: 5 }, () => r);
  const held = roomName(name, () => 0.01);
  const free = roomName(name, () => 0.55);
  let operator: ChartOperator | undefined;
  try {
    const operatorKc = new k8s.KubeConfig();
    operatorKc.loadFromFile(plane.operatorKubeconfig);
    operator = await startChartOperator(plane, { kubeConfig: operatorKc, random: () => script.shift() ?? Math.random() });
    await api.createScheduler(schedulerObject(name, { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await api.getScheduler(name)).status?.version === 'v1.0.0', { timeoutMs: 60_000, message: `${name} created` });
    // A pod another tool made, under the name the first room will be given.
    await clients.core.createNamespacedPod({ namespace: name, body: { metadata: { name: held }, spec: { containers: [{ name: 'other', image: 'example.com/other:1' }] } } });

    script.push(0.5, ...letters(0.01), ...letters(0.55));
    const id = newOperationId();
    await api.createOperation(buildOperation({ id, schedulerName: name, definitionName: 'add_rooms', input: { amount: 1 }, source: 'api', enqueuedAt: Date.now() }));
    const ended = await waitFor(async () => {
      const o = await api.getOperation(id);
      return ['finished', 'error', 'canceled'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 120_000, message: 'add_rooms ended' });
    expect({ status: ended.status?.status, events: ended.status?.executionHistory?.map((h) => h.event) }).toMatchObject({ status: 'finished', events: expect.arrayContaining(['Added 1 room']) as unknown });

    // The room is `free`, with its pod; the GameRoom first made as `held` is gone; the other pod is kept.
    let seen = '';
    await waitFor(async () => {
      const items = (await api.listGameRooms(name)).items;
      seen = JSON.stringify(items.map((r) => [r.metadata.name, r.metadata.deletionTimestamp, r.metadata.finalizers, r.status?.status]));
      return items.every((r) => r.metadata.name === free);
    }, { timeoutMs: 60_000, message: `only ${free} left` }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}: ${seen}\n${(operator?.logged() ?? '').slice(-4000)}`);
    });
    expect((await api.listGameRooms(name)).items.map((r) => r.metadata.name)).toEqual([free]);
    const pods = (await clients.core.listNamespacedPod({ namespace: name })).items;
    const owners = new Map(pods.map((p) => [p.metadata?.name, p.metadata?.ownerReferences?.[0]?.name]));
    expect(owners).toEqual(new Map([[held, undefined], [free, free]]));
    expect(pods.find((p) => p.metadata?.name === held)?.metadata?.deletionTimestamp).toBeUndefined();
    expect(operator.logged()).toMatch(/room pod name held by another pod \(not a room's: another client made it, and it is left alone\); trying another name/);
  } finally {
    await api.deleteScheduler(name).catch(() => undefined);
    await waitFor(async () => !(await api.listSchedulers()).items.some((s) => s.metadata.name === name), { timeoutMs: 120_000, message: `${name} deleted` }).catch(() => undefined);
    await operator?.operator.stop();
    clients.limiter.drain();
  }
}, 300_000);
