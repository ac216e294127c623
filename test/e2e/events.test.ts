/**
 * Kubernetes Events end to end (issue 14): a scheduler created through the management API runs
 * create_scheduler, and `events.k8s.io/v1` Events about the Scheduler say that the operation
 * started and finished; the same Events are visible through core/v1 (what `kubectl describe`
 * reads). A room removed by id gets a GameRoomDeleted Event saying which operation removed it and
 * why. A major change tells VersionCreated, VersionSwitched and the rollout's progress. A room
 * whose pod was deleted gets a GameRoomDeleted Event saying what the health check does about its
 * place, which it then does; a GameRoom made with kubectl in a namespace that is no scheduler's gets
 * a Warning saying it is not managed and what to do. Runs on the sandbox, or on a real cluster when E2E_KUBECONFIG is set (the real
 * kube-apiserver tier runs it with the operator under the chart's RBAC).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { LOST_ROOMS_ANNOTATION } from '../../common/src/resources/labels';
import { describeScheduler, managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

const run = promisify(execFile);

const NAME = 'events-e2e';

describe('Kubernetes Events', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('an operation run end to end leaves Started and Finished Events on its Scheduler', async () => {
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const create = await waitFor(async () => (await stack.api.listOperations(NAME)).items
      .find((o) => o.spec.definitionName === 'create_scheduler' && o.status?.status === 'finished'), { timeoutMs: 60_000, message: 'create_scheduler finished' });
    const opName = create.metadata.name as string;
    const uid = (await stack.api.getScheduler(NAME)).metadata.uid;

    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const about = async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .filter((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === NAME && (e.note ?? '').includes(opName));
    const seen = await waitFor(async () => {
      const list = await about();
      return list.some((e) => e.reason === 'OperationFinished') ? list : undefined;
    }, { timeoutMs: 30_000, message: `Events about operation ${opName}` });
    expect(seen.map((e) => [e.type, e.reason, e.action]).sort()).toEqual([
      ['Normal', 'OperationFinished', 'ExecuteOperation'],
      ['Normal', 'OperationStarted', 'ExecuteOperation'],
    ]);
    for (const e of seen) {
      expect(e.regarding).toMatchObject({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', name: NAME, uid });
      expect(e.reportingController).toBe('roomkeeper.io/operator');
      expect(e.note).toMatch(new RegExp(`^Operation ${opName} \\(create_scheduler\\) (started|finished after \\d+\\.\\ds)$`));
    }

    // What kubectl describe reads: the core/v1 view of the same Events.
    const core = stack.kc.makeApiClient(k8s.CoreV1Api);
    const coreView = (await core.listNamespacedEvent({ namespace: 'default' })).items
      .filter((e) => e.involvedObject.kind === 'Scheduler' && e.involvedObject.name === NAME && (e.message ?? '').includes(opName));
    expect(coreView.map((e) => e.reason).sort()).toEqual(['OperationFinished', 'OperationStarted']);

    // And kubectl describe shows them.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-events-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      stack.writeKubeconfig(kubeconfig);
      const { stdout } = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'describe', 'scheduler', NAME], { timeout: 30_000 });
      const eventsPart = stdout.slice(stdout.lastIndexOf('Events:'));
      expect(eventsPart).toMatch(new RegExp(`Normal\\s+OperationStarted\\s+.*Operation ${opName} \\(create_scheduler\\) started`));
      expect(eventsPart).toMatch(new RegExp(`Normal\\s+OperationFinished\\s+.*Operation ${opName} \\(create_scheduler\\) finished`));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a room removed by id gets a GameRoomDeleted Event with the operation and the reason', async () => {
    const room = await waitFor(async () => (await stack.api.listGameRooms(NAME)).items.find((r) => !r.spec.validation && r.status?.status === 'ready'), { timeoutMs: 60_000, message: 'a ready room' });
    const roomName = room.metadata.name as string;
    const removal = await managementCall(stack, 'POST', `/schedulers/${NAME}/remove-rooms`, { roomsIds: [roomName] });
    expect(removal.status).toBe(200);
    const opName = String((removal.body as { operationId?: unknown }).operationId);
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const deleted = await waitFor(async () => (await events.listNamespacedEvent({ namespace: NAME })).items
      .find((e) => e.regarding?.kind === 'GameRoom' && e.regarding.name === roomName && e.reason === 'GameRoomDeleted'), { timeoutMs: 30_000, message: `a GameRoomDeleted Event for ${roomName}` });
    expect(deleted).toMatchObject({ type: 'Normal', action: 'DeleteRoom', regarding: { namespace: NAME, uid: room.metadata.uid } });
    expect(deleted.note).toBe(`Room deleted by operation ${opName} (reason: api)`);
    // The room's life before that: created by the operator, then ready (its first ready ping).
    const story = (await events.listNamespacedEvent({ namespace: NAME })).items
      .filter((e) => e.regarding?.kind === 'GameRoom' && e.regarding.name === roomName).map((e) => `${String(e.reason)}: ${String(e.note)}`);
    expect(story).toEqual(expect.arrayContaining(['GameRoomCreated: Room created for version v1.0.0', expect.stringMatching(/^GameRoomReady: Room is ready \(was (pending|unready)\)$/)]));
  });

  test('a major change tells the version it created, the switch and the rollout\'s progress', async () => {
    // The room removed above is replaced by the operator; a rollout needs an old-version room to
    // replace, so the change waits for the replacement (made after the switch, it would be new already).
    await waitFor(async () => (await stack.api.listGameRooms(NAME)).items.some((r) => !r.spec.validation && !r.metadata.deletionTimestamp && r.spec.version === 'v1.0.0' && r.status?.status === 'ready'),
      { timeoutMs: 60_000, message: 'a ready v1.0.0 room for the rollout to replace' });
    const shown = (await managementCall(stack, 'GET', `/schedulers/${NAME}`)).body as { scheduler: { spec: { containers: object[] } & Record<string, unknown> } & Record<string, unknown> };
    const { name: _n, state: _s, createdAt: _c, spec, ...rest } = shown.scheduler;
    const body = { ...rest, spec: { ...spec, version: undefined, containers: spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' })) } };
    expect((await managementCall(stack, 'POST', `/schedulers/${NAME}`, body)).status).toBe(200);
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const notes = async (reason: string) => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .filter((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === NAME && e.reason === reason).map((e) => e.note ?? '');
    expect(await waitFor(async () => (await notes('VersionCreated')).find((n) => n.startsWith('Created major version v2.0.0 (from v1.0.0)')), { timeoutMs: 60_000, message: 'VersionCreated v2.0.0' })).toBeTruthy();
    expect(await waitFor(async () => (await notes('VersionSwitched')).find((n) => n.startsWith('Active version switched from v1.0.0 to v2.0.0')), { timeoutMs: 60_000, message: 'VersionSwitched to v2.0.0' })).toBeTruthy();
    // When it fails, the rooms and operations say why (a room that went another way needs no rollout).
    expect(await waitFor(async () => (await notes('RolloutProgress')).find((n) => /^Rolling update to v2\.0\.0: (replacing|adding) \d+ rooms?/.test(n)), { timeoutMs: 60_000, message: 'RolloutProgress to v2.0.0' })
      .catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, NAME)}\nEvents: ${JSON.stringify(await notes('RolloutProgress'))}`);
      })).toBeTruthy();
  });

  test('a GameRoom made with kubectl in a namespace that is no scheduler\'s gets a Warning saying it is not managed and what to do', async () => {
    const namespace = `${NAME}-handmade`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-events-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      stack.writeKubeconfig(kubeconfig);
      const kubectl = (args: string[]) => run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
      const file = path.join(dir, 'room.yaml');
      fs.writeFileSync(file, JSON.stringify({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'my-room', namespace }, spec: { scheduler: namespace, version: 'v1.0.0' } }));
      await kubectl(['create', 'namespace', namespace]);
      await kubectl(['create', '-f', file]);
      const events = stack.kc.makeApiClient(k8s.EventsV1Api);
      const told = await waitFor(async () => (await events.listNamespacedEvent({ namespace })).items
        .find((e) => e.regarding?.kind === 'GameRoom' && e.regarding.name === 'my-room' && e.reason === 'GameRoomNotManaged'), { timeoutMs: 30_000, message: 'a GameRoomNotManaged Event' });
      expect(told).toMatchObject({ type: 'Warning', action: 'IgnoreRoom' });
      expect(told.note).toBe(`Not managed: namespace ${namespace} is no scheduler's (no Scheduler ${namespace}), so Roomkeeper makes no pod for this room, keeps no status and never deletes it. `
        + 'Rooms are made by their scheduler, in the namespace named as it: add rooms to a scheduler with POST /schedulers/<name>/add-rooms or '
        + `kubectl scale scheduler <name> --replicas=<n>, and delete this one with kubectl delete gameroom my-room -n ${namespace}`);
      const { stdout } = await kubectl(['describe', 'gameroom', 'my-room', '-n', namespace]);
      expect(stdout.slice(stdout.lastIndexOf('Events:'))).toMatch(/Warning\s+GameRoomNotManaged\s+.*Not managed: namespace/);
      await kubectl(['delete', 'namespace', namespace, '--wait=false']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a room whose pod was deleted gets a GameRoomDeleted Event that says the health check adds a room in its place, and it does', async () => {
    // The rollout above over: one ready v2.0.0 room, the whole fleet (roomsReplicas 1).
    const room = await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation);
      const only = rooms.length === 1 ? rooms[0] : undefined;
      return only && !only.metadata.deletionTimestamp && only.spec.version === 'v2.0.0' && only.status?.status === 'ready' ? only : undefined;
    }, { timeoutMs: 90_000, message: 'one ready v2.0.0 room, the rollout over' });
    const roomName = room.metadata.name as string;
    // What `kubectl delete pod` does.
    await stack.kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedPod({ name: roomName, namespace: NAME, gracePeriodSeconds: 0 });
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const deleted = await waitFor(async () => (await events.listNamespacedEvent({ namespace: NAME })).items
      .find((e) => e.regarding?.kind === 'GameRoom' && e.regarding.name === roomName && e.reason === 'GameRoomDeleted'), { timeoutMs: 60_000, message: `a GameRoomDeleted Event for ${roomName}` });
    expect(deleted.note).toBe('Room deleted: its pod was deleted; the health check adds a room in its place (an add_rooms naming it) '
      + 'if fewer than spec.roomsReplicas 1 rooms are available; none while 1 or more are');
    // And so it does.
    const replacing = await waitFor(async () => (await stack.api.listOperations(NAME)).items
      .find((o) => o.spec.definitionName === 'add_rooms' && (o.metadata.annotations?.[LOST_ROOMS_ANNOTATION] ?? '').split(',').includes(roomName)),
    { timeoutMs: 60_000, message: `an add_rooms naming ${roomName}` });
    expect(String(replacing.spec.input?.reason)).toContain(`lost: ${roomName} (its pod was deleted)`);
  });
});
