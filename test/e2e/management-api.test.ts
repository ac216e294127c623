/**
 * The management API end to end: HTTP -> gateway -> API server -> operator -> simulated rooms
 * pinging back. Also: the kubectl path and the HTTP path leave the same history.
 */
import { execFile } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { Operation } from '../../common/src/generated/resources';
import { finalOperationStatuses, knownDefinitionNames } from '../../common/src/resources/operation-names';
import { describeScheduler, managementCall } from '../support/http';
import type { OperationAnswer, OperationEnqueued, OperationsAnswer, SchedulerAnswer, SchedulersInfoAnswer, VersionsAnswer } from './management-bodies';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { refuseChange } from '../support/refused-change';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

const run = promisify(execFile);

const call = managementCall;

/** Rooms the add-rooms behind a switch adds, one at a time: long enough to cancel the switch behind it. */
const ADDED = 20;

function createBody(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, ...(schedulerObject(name, overrides) as { spec: Record<string, unknown> }).spec };
}

async function liveRooms(stack: Stack, name: string) {
  return (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
}

async function finished(stack: Stack, id: string, status = 'finished'): Promise<Operation> {
  return waitFor(async () => {
    const op = await stack.api.getOperation(id);
    return op.status?.status === status ? op : undefined;
  }, { timeoutMs: 30_000, message: `operation ${id} ${status}` });
}

/** The user-visible history: operations that are not the operator's own healing, in queue order. */
async function userHistory(stack: Stack, name: string): Promise<string[]> {
  return (await stack.api.listOperations(name)).items
    .filter((o) => !o.spec.priority)
    .sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt))
    .map((o) => `${o.spec.definitionName}:${String(o.status?.status)}`);
}

describe('management API end to end', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300, addRoomsConcurrency: 1 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('create, rooms ping, info counts, add-rooms, remove-rooms, a new major version, operation stages and cancel', async () => {
    const created = await call(stack, 'POST', '/schedulers', createBody('http-game', { roomsReplicas: 2 }));
    expect(created.status).toBe(200);
    // Created without matchAllocation: shown with Maestro's default, one match a room, as the list shows it.
    expect((created.body as SchedulerAnswer).scheduler).toMatchObject({ name: 'http-game', state: 'creating', spec: { version: 'v1.0.0' }, matchAllocation: { maxMatches: 1 } });
    expect(((await call(stack, 'GET', '/schedulers?name=http-game')).body as { schedulers: unknown[] }).schedulers).toEqual([expect.objectContaining({ name: 'http-game', matchAllocation: { maxMatches: 1 } })]);

    await waitFor(async () => {
      const info = await call(stack, 'GET', '/schedulers/info?game=test-game');
      return (info.body as Partial<SchedulersInfoAnswer>).schedulers?.find((s) => s.name === 'http-game' && s.roomsReady === 2);
    }, { timeoutMs: 30_000, message: 'info shows 2 ready rooms' });

    const added = await call(stack, 'POST', '/schedulers/http-game/add-rooms', { amount: 2 });
    expect(added.status).toBe(200);
    await finished(stack, (added.body as OperationEnqueued).operationId);
    await waitFor(async () => (await liveRooms(stack, 'http-game')).filter((r) => r.status?.status === 'ready').length === 4, { timeoutMs: 30_000, message: '4 ready rooms' });

    const removed = await call(stack, 'POST', '/schedulers/http-game/remove-rooms', { amount: 1 });
    expect(removed.status).toBe(200);
    await finished(stack, (removed.body as OperationEnqueued).operationId);
    await waitFor(async () => (await liveRooms(stack, 'http-game')).length === 3, { timeoutMs: 30_000, message: '3 rooms' });
    await waitFor(async () => (await stack.api.getScheduler('http-game')).status?.state === 'in-sync', { timeoutMs: 30_000 });

    // A new major version over HTTP replaces the rooms.
    const current = (await call(stack, 'GET', '/schedulers/http-game')).body as SchedulerAnswer;
    expect(current.scheduler.roomsReplicas).toBe(3);
    const next = { ...current.scheduler, spec: { ...current.scheduler.spec } };
    next.spec.containers = next.spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' }));
    delete next.spec.version;
    const version = await call(stack, 'POST', '/schedulers/http-game', next);
    expect(version.status).toBe(200);
    await finished(stack, (version.body as OperationEnqueued).operationId);
    await waitFor(async () => {
      const rooms = await liveRooms(stack, 'http-game');
      return rooms.length === 3 && rooms.every((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready');
    }, { timeoutMs: 60_000, message: 'rooms replaced by v2.0.0' });
    const versions = (await call(stack, 'GET', '/schedulers/http-game/versions')).body as VersionsAnswer;
    expect(versions.versions.find((v) => v.isActive)!.version).toBe('v2.0.0');

    // Stages and cancel: a long add_rooms runs, a second one waits.
    const long = (await call(stack, 'POST', '/schedulers/http-game/add-rooms', { amount: 500 })).body as OperationEnqueued;
    const queued = (await call(stack, 'POST', '/schedulers/http-game/add-rooms', { amount: 1 })).body as OperationEnqueued;
    await waitFor(async () => (await stack.api.getOperation(long.operationId)).status?.status === 'in_progress');
    const active = (await call(stack, 'GET', '/schedulers/http-game/operations?stage=active')).body as OperationsAnswer;
    expect(active.operations.map((o) => o.id)).toContain(long.operationId);
    expect(active.operations[0]!.lease!.ttl).toBeDefined();
    const pending = (await call(stack, 'GET', '/schedulers/http-game/operations?stage=pending')).body as OperationsAnswer;
    expect(pending.operations.map((o) => o.id)).toContain(queued.operationId);

    expect((await call(stack, 'POST', `/schedulers/http-game/operations/${queued.operationId}/cancel`)).status).toBe(200);
    expect((await call(stack, 'POST', `/schedulers/http-game/operations/${long.operationId}/cancel`)).status).toBe(200);
    await finished(stack, queued.operationId, 'canceled');
    const canceled = await finished(stack, long.operationId, 'canceled');
    expect(canceled.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/Operation canceled by the user[\s\S]*Starting operation rollback/);
    const refused = await call(stack, 'POST', `/schedulers/http-game/operations/${(added.body as OperationEnqueued).operationId}/cancel`);
    expect(refused.status).toBe(409);

    const final = (await call(stack, 'GET', '/schedulers/http-game/operations?stage=final&perPage=100')).body as OperationsAnswer;
    const definitions = final.operations.map((o) => o.definitionName);
    expect(definitions).toEqual(expect.arrayContaining(['create_scheduler', 'add_rooms', 'remove_rooms', 'create_new_scheduler_version', 'switch_active_version']));
    await waitFor(async () => (await liveRooms(stack, 'http-game')).length === 3, { timeoutMs: 30_000, message: 'rollback of the canceled add_rooms left 3 rooms' });
  });

  test('a Maestro client finds the switch by the id in the new version\'s history, and sees the health check\'s add_rooms with its reason in the final stage', async () => {
    const name = 'compat-game';
    // On every Operation event of this scheduler: only Maestro's definition names and statuses
    // (never a health_controller operation), and a history whose last line agrees with the status.
    const problems: string[] = [];
    let seen = 0;
    const informer = k8s.makeInformer<Operation & k8s.KubernetesObject>(stack.kc, '/apis/roomkeeper.io/v1/operations', () => stack.api.listOperations());
    const check = (op: Operation) => {
      if (op.spec.schedulerName !== name) return;
      seen++;
      const id = op.metadata.name ?? '';
      const status = op.status?.status ?? 'pending';
      if (!(knownDefinitionNames as readonly string[]).includes(op.spec.definitionName)) problems.push(`${id}: definition ${op.spec.definitionName}`);
      if (!['pending', 'in_progress', ...finalOperationStatuses].includes(status)) problems.push(`${id}: status ${status}`);
      const last = op.status?.executionHistory?.at(-1)?.event;
      if (status === 'finished' && last !== 'Operation finished') problems.push(`${id}: finished, last history line ${String(last)}`);
      if (status !== 'finished' && last === 'Operation finished') problems.push(`${id}: ${status}, yet its history says it finished`);
    };
    informer.on('add', check);
    informer.on('update', check);
    await informer.start();
    try {
      expect((await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 2 }))).status).toBe(200);
      await waitFor(async () => ((await call(stack, 'GET', `/schedulers/${name}`)).body as Partial<SchedulerAnswer>).scheduler?.state === 'in-sync', { timeoutMs: 30_000, message: 'in-sync' });

      // A major change: the new version's history names its switch as Maestro's does.
      const patched = await call(stack, 'PATCH', `/schedulers/${name}`, { spec: { containers: [{ image: 'example.com/game:2.0.0' }] } });
      expect(patched.status).toBe(200);
      const history = (await finished(stack, (patched.body as OperationEnqueued).operationId)).status?.executionHistory?.map((h) => h.event) ?? [];
      const ids = history.map((e) => /^enqueued switch active version operation with id: (\S+)$/.exec(e)?.[1]).filter((x): x is string => x !== undefined);
      expect(ids).toHaveLength(1);
      const switchOp = await call(stack, 'GET', `/schedulers/${name}/operations/${ids[0]!}`);
      expect(switchOp.status).toBe(200);
      expect((switchOp.body as OperationAnswer).operation).toMatchObject({ id: ids[0], definitionName: 'switch_active_version', schedulerName: name, input: { newActiveVersion: 'v2.0.0' } });
      await finished(stack, ids[0]!);
      await waitFor(async () => {
        const rooms = await liveRooms(stack, name);
        return rooms.length === 2 && rooms.every((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready');
      }, { timeoutMs: 60_000, message: 'rooms replaced by v2.0.0' });

      // A room's pod is deleted: the health check's add_rooms is listed in the final stage with its reason.
      const victim = (await liveRooms(stack, name))[0]!.metadata.name as string;
      await stack.core.deleteNamespacedPod({ name: victim, namespace: name, gracePeriodSeconds: 0 });
      const healing = await waitFor(async () => {
        const list = await call(stack, 'GET', `/schedulers/${name}/operations?stage=final&perPage=100`);
        const adds = ((list.body as Partial<OperationsAnswer>).operations ?? []).filter((o) => o.definitionName === 'add_rooms' && o.status === 'finished');
        for (const add of adds) {
          const detail = ((await call(stack, 'GET', `/schedulers/${name}/operations/${add.id}`)).body as OperationAnswer).operation;
          if (String(detail.input.reason).includes(victim)) return detail;
        }
        return undefined;
      }, { timeoutMs: 30_000, message: 'the health check\'s add_rooms naming the lost room in the final stage' }).catch(async (err: unknown) => {
        // What the operator did instead: the rooms, the operations and the Scheduler's loss records.
        const lost = JSON.stringify((await stack.api.getScheduler(name)).status?.lostRooms ?? []);
        throw new Error(`${(err as Error).message} (room ${victim})\n${await describeScheduler(stack, name)}\nlostRooms: ${lost}`);
      });
      expect(healing.executionHistory.map((h) => h.event)).toContain(`Added 1 room (reason: ${String(healing.input.reason)})`);
      expect(seen).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  test('a GET answer POSTed back unchanged is answered 409 "no change found" and changes nothing: a forwarder created without options (GET shows the timeout that applies) as any other scheduler', async () => {
    const answers: Record<string, { status: number; body: unknown; versions: string[]; history: string[]; specWritten: boolean }> = {};
    for (const [name, overrides] of [['same-plain', {}], ['same-forwarder', { forwarders: [{ name: 'recv', enable: false, address: 'recv.example:9090' }] }]] as const) {
      expect((await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1, ...overrides }))).status).toBe(200);
      await waitFor(async () => (await stack.api.getScheduler(name)).status?.state === 'in-sync', { timeoutMs: 30_000, message: `${name} in sync` });
      const generation = (await stack.api.getScheduler(name)).metadata.generation;
      const shown = ((await call(stack, 'GET', `/schedulers/${name}`)).body as SchedulerAnswer).scheduler;
      const posted = await call(stack, 'POST', `/schedulers/${name}`, shown);
      const op = posted.status === 200 ? await finished(stack, (posted.body as OperationEnqueued).operationId) : undefined;
      const versions = ((await call(stack, 'GET', `/schedulers/${name}/versions`)).body as VersionsAnswer).versions.map((v) => v.version);
      const specWritten = (await stack.api.getScheduler(name)).metadata.generation !== generation;
      answers[name] = { status: posted.status, body: posted.body, versions, history: op?.status?.executionHistory?.map((h) => h.event) ?? [], specWritten };
    }
    expect(((await call(stack, 'GET', '/schedulers/same-forwarder')).body as SchedulerAnswer).scheduler.forwarders).toEqual([
      { name: 'recv', enable: false, type: 'gRPC', address: 'recv.example:9090', options: { timeout: '1000', metadata: {} } },
    ]);
    expect(answers['same-plain']).toEqual({ status: 409, body: { code: 6, message: 'no change found to scheduler same-plain', details: [] }, versions: ['v1.0.0'], history: [], specWritten: false });
    expect(answers['same-forwarder']).toEqual({ ...answers['same-plain'], body: { code: 6, message: 'no change found to scheduler same-forwarder', details: [] } });
  });

  test('a GET answer that shows Maestro\'s zero values ("") for an imagePullPolicy, requests and limits never set is taken back: as a new version it is no change (409), under another name it creates a clone', async () => {
    const name = 'bare-container';
    const bare = createBody(name, { roomsReplicas: 1 }) as { spec: { containers: Record<string, unknown>[] } };
    bare.spec.containers = bare.spec.containers.map(({ imagePullPolicy: _p, requests: _r, limits: _l, ...rest }) => rest);
    expect((await call(stack, 'POST', '/schedulers', bare)).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.state === 'in-sync', { timeoutMs: 30_000, message: `${name} in sync` });
    const shown = ((await call(stack, 'GET', `/schedulers/${name}`)).body as SchedulerAnswer).scheduler;
    expect(shown.spec.containers[0]).toMatchObject({ imagePullPolicy: '', requests: { memory: '', cpu: '' }, limits: { memory: '', cpu: '' } });

    const generation = (await stack.api.getScheduler(name)).metadata.generation;
    expect(await call(stack, 'POST', `/schedulers/${name}`, shown)).toEqual({ status: 409, body: { code: 6, message: `no change found to scheduler ${name}`, details: [] } });
    expect((await stack.api.getScheduler(name)).metadata.generation).toBe(generation);

    const clone = await call(stack, 'POST', '/schedulers', { ...shown, name: `${name}-clone` });
    expect(clone.status).toBe(200);
    await finished(stack, (clone.body as OperationEnqueued).operationId);
    const cloned = ((await call(stack, 'GET', `/schedulers/${name}-clone`)).body as SchedulerAnswer).scheduler;
    expect(cloned.spec.containers).toEqual(shown.spec.containers);
  });

  test('a PATCH from a client that sends its empty lists (protojson\'s EmitUnpopulated) changes only what it sets, as Maestro reads it: forwarders, command, environment and ports stay, and the change is minor', async () => {
    const name = 'patch-empty-lists';
    const forwarders = [{ name: 'recv', enable: false, type: 'gRPC', address: 'recv.example:9090', options: { timeout: '500', metadata: {} } }];
    const body = createBody(name, { roomsReplicas: 1, forwarders }) as { spec: { containers: Record<string, unknown>[] } };
    body.spec.containers = body.spec.containers.map((c) => ({ ...c, environment: [{ name: 'MODE', value: 'ranked' }] }));
    expect((await call(stack, 'POST', '/schedulers', body)).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.state === 'in-sync', { timeoutMs: 30_000, message: `${name} in sync` });
    const before = ((await call(stack, 'GET', `/schedulers/${name}`)).body as SchedulerAnswer).scheduler;

    const patched = await call(stack, 'PATCH', `/schedulers/${name}`, { maxSurge: '5', forwarders: [], spec: { containers: [{ command: [], environment: [], ports: [] }] } });
    expect(patched.status).toBe(200);
    await finished(stack, (patched.body as OperationEnqueued).operationId);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.1.0', { timeoutMs: 30_000, message: `${name} switched to v1.1.0` });
    const after = ((await call(stack, 'GET', `/schedulers/${name}`)).body as SchedulerAnswer).scheduler;
    expect(after).toEqual({ ...before, state: after.state, maxSurge: '5', spec: { ...before.spec, version: 'v1.1.0' } });
  });

  test('a scheduler named as a namespace Roomkeeper did not make: its create_scheduler fails saying what to do, and its deletion leaves the namespace', async () => {
    const name = 'taken-ns';
    const core = stack.kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name, labels: { owner: 'someone-else' } } } });
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    expect(created.status).toBe(200);
    const op = await finished(stack, (created.body as OperationEnqueued).operationId, 'error');
    expect(op.status?.executionHistory?.map((h) => h.event)).toContain(`Operation execution failed: namespace ${name} already exists and is not managed by Roomkeeper: `
      + `a scheduler's rooms live in the namespace of its name, and Roomkeeper never takes over one it did not make; `
      + `delete this scheduler (DELETE /schedulers/${name}, or kubectl delete rks ${name}: the namespace is left as it is) and create it under another name`);
    // Doing what it says: the scheduler goes, the namespace stays as it was.
    const deleted = await call(stack, 'DELETE', `/schedulers/${name}`);
    expect(deleted.status).toBe(200);
    await waitFor(async () => (await call(stack, 'GET', `/schedulers/${name}`)).status === 404, { timeoutMs: 30_000, message: `${name} deleted` });
    const ns = await core.readNamespace({ name });
    expect(ns.metadata?.deletionTimestamp).toBeUndefined();
    expect(ns.metadata?.labels).toEqual(expect.objectContaining({ owner: 'someone-else' }));
    await core.deleteNamespace({ name });
  });

  test('a scheduler whose namespace lost its roomkeeper.io/scheduler label (kubectl) is deleted with its rooms and their pods; the namespace is left, as not Roomkeeper\'s', async () => {
    const name = 'unlabelled-ns';
    const core = stack.kc.makeApiClient(k8s.CoreV1Api);
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 2 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    await waitFor(async () => (await stack.api.listGameRooms(name)).items.length === 2, { timeoutMs: 30_000, message: 'two rooms' });
    await core.patchNamespace({ name, body: [{ op: 'remove', path: '/metadata/labels/roomkeeper.io~1scheduler' }] }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch));
    const deleted = await call(stack, 'DELETE', `/schedulers/${name}`);
    expect(deleted.status).toBe(200);
    const op = await finished(stack, (deleted.body as OperationEnqueued).operationId);
    expect(op.status?.executionHistory?.map((h) => h.event)).toContain(`Namespace ${name} is not labelled as Roomkeeper's (roomkeeper.io/scheduler=${name}: the label was removed, or Roomkeeper did not make it), so it is left in place; `
      + 'deleting the 2 rooms and 2 room pods of this scheduler in it, which Roomkeeper made');
    await waitFor(async () => (await stack.api.listGameRooms(name)).items.length === 0 && (await core.listNamespacedPod({ namespace: name })).items.length === 0,
      { timeoutMs: 60_000, message: 'its rooms and their pods gone' });
    expect((await core.readNamespace({ name })).metadata?.deletionTimestamp).toBeUndefined();
    await core.deleteNamespace({ name });
  });

  test('a deletion held by another tool\'s finalizer on a GameRoom says which finalizer holds it, once the room pods are gone, and ends once it is removed', async () => {
    const name = 'held-room';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    const [room] = await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms(name)).items;
      return rooms.length === 1 ? rooms : undefined;
    }, { timeoutMs: 30_000, message: 'one room' });
    const roomName = room?.metadata.name as string;
    await stack.api.jsonPatchGameRoom(name, roomName, [{ op: 'add', path: '/metadata/finalizers', value: [...(room?.metadata.finalizers ?? []), 'example.com/hold'] }]);
    const deleted = await call(stack, 'DELETE', `/schedulers/${name}`);
    const id = (deleted.body as OperationEnqueued).operationId;
    await waitFor(async () => (await stack.api.getOperation(id)).status?.executionHistory?.some((h) => h.event === `Every room pod is gone; waiting for 1 GameRoom to be deleted, held by the finalizer example.com/hold, `
      + `which Roomkeeper does not remove: the tool that set it must (kubectl get gamerooms -n ${name} -o yaml)`), { timeoutMs: 60_000, message: 'the deletion names the finalizer' });
    const held = await stack.api.getGameRoom(name, roomName);
    await stack.api.jsonPatchGameRoom(name, roomName, [{ op: 'replace', path: '/metadata/finalizers', value: (held.metadata.finalizers ?? []).filter((f) => f !== 'example.com/hold') }]);
    await finished(stack, id);
  });

  test('a Scheduler held by another tool\'s finalizer: the deletion says that everything else is deleted and what holds the object, no version stays held, and a create of its name says what holds it', async () => {
    const name = 'foreign-fin';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    // JSON patches, not conditional on the resourceVersion, which the operator's status writes move.
    await stack.api.jsonPatchScheduler(name, [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/block' }]);
    const deleted = await call(stack, 'DELETE', `/schedulers/${name}`);
    const op = await finished(stack, (deleted.body as OperationEnqueued).operationId);
    const events = op.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(events).toContain(`Everything of scheduler ${name} is deleted; the Scheduler object itself waits on the finalizer example.com/block, `
      + `which Roomkeeper does not remove: the tool that set it must (kubectl get scheduler ${name} -o yaml); it can be created again once it is gone`);
    expect(events).not.toContain(`Scheduler ${name} deleted`);
    await waitFor(async () => (await stack.api.listSchedulerVersions(name)).items.length === 0, { timeoutMs: 30_000, message: 'no version left (none held by its protection)' });
    const again = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toContain('it is also held by the finalizer example.com/block of another tool, which must remove it');

    const at = (await stack.api.getScheduler(name)).metadata.finalizers?.indexOf('example.com/block') ?? -1;
    await stack.api.jsonPatchScheduler(name, [{ op: 'test', path: `/metadata/finalizers/${at}`, value: 'example.com/block' }, { op: 'remove', path: `/metadata/finalizers/${at}` }]);
    await waitFor(async () => (await call(stack, 'GET', `/schedulers/${name}`)).status === 404, { timeoutMs: 30_000, message: `${name} gone` });
  });

  test('a canceled delete_scheduler says that the deletion goes on, and the next attempt deletes the scheduler; one created again under its name has a history of its own', async () => {
    const name = 'cancel-delete';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 2 }));
    expect(created.status).toBe(200);
    await finished(stack, (created.body as OperationEnqueued).operationId);
    const deleted = await call(stack, 'DELETE', `/schedulers/${name}`);
    expect(deleted.status).toBe(200);
    const id = (deleted.body as OperationEnqueued).operationId;
    // Sent at once: the deletion (namespace, two room pods) is still pending or running.
    const canceled = await call(stack, 'POST', `/schedulers/${name}/operations/${id}/cancel`);
    expect(canceled).toMatchObject({ status: 200, body: {} });
    const op = await finished(stack, id, 'canceled');
    const events = op.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(events).toContain(`A cancel does not undo a deletion: scheduler ${name} stays marked for deletion, and the scheduler controller enqueues another delete_scheduler after a backoff (DELETE /schedulers/${name} enqueues it at once)`);
    expect(events[events.length - 1]).toBe('Operation canceled');
    await waitFor(async () => (await call(stack, 'GET', `/schedulers/${name}`)).status === 404, { timeoutMs: 60_000, message: `${name} deleted by the next attempt` });
    // Its history stays readable while no scheduler has the name.
    const deletions = await waitFor(async () => {
      const ops = (await stack.api.listOperations(name)).items;
      return ops.length >= 2 && ops.every((o) => o.spec.definitionName === 'delete_scheduler' && ['finished', 'canceled'].includes(o.status?.status ?? '')) ? ops : undefined;
    }, { timeoutMs: 30_000, message: 'both delete_scheduler attempts ended' });
    expect((await call(stack, 'GET', `/schedulers/${name}/operations/${id}`)).status).toBe(200);

    // A scheduler created again under the name at once has a history of its own: the old one's
    // operations are neither listed nor found by id, and the operator prunes them.
    const again = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    expect(again.status).toBe(200);
    const createId = (again.body as OperationEnqueued).operationId;
    for (const stage of ['pending', 'active', 'final']) {
      const listed = ((await call(stack, 'GET', `/schedulers/${name}/operations?stage=${stage}`)).body as OperationsAnswer).operations;
      expect(listed.filter((o) => o.definitionName === 'delete_scheduler')).toEqual([]);
    }
    for (const old of deletions) expect((await call(stack, 'GET', `/schedulers/${name}/operations/${old.metadata.name as string}`)).status).toBe(404);
    await finished(stack, createId);
    await waitFor(async () => (await stack.api.listOperations(name)).items.every((o) => o.spec.definitionName !== 'delete_scheduler'), { timeoutMs: 30_000, message: 'the old scheduler\'s operations pruned' });
    expect(((await call(stack, 'GET', `/schedulers/${name}/operations?stage=final`)).body as OperationsAnswer).operations.map((o) => o.id)).toContain(createId);
    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('a major change that did not apply (canceled, or its operation deleted while it ran) is tried again when the same body is sent again, not answered 409 "no change found"', async () => {
    const name = 'send-again';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    expect(created.status).toBe(200);
    await finished(stack, (created.body as OperationEnqueued).operationId);
    // A game server that never pings: the change's validation room waits, so it is caught running.
    const v2 = createBody(name, { roomsReplicas: 1 });
    const container = ((v2.spec as { containers: Record<string, unknown>[] }).containers[0]) as Record<string, unknown>;
    Object.assign(container, { image: 'example.com/game:2.0.0', environment: [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }] });
    const change = async (): Promise<string> => {
      const sent = await call(stack, 'POST', `/schedulers/${name}`, v2);
      expect(sent.status).toBe(200);
      const id = (sent.body as OperationEnqueued).operationId;
      await waitFor(async () => (await stack.api.getOperation(id)).status?.executionHistory?.some((h) => h.event.startsWith('Major change detected')), { timeoutMs: 30_000, message: `operation ${id} validating` });
      return id;
    };
    const pendingChanges = async () => (await stack.api.getScheduler(name)).status?.conditions?.find((c) => c.type === 'PendingChanges');

    // Canceled: told, and the same body sent again is another attempt of the change.
    const first = await change();
    expect((await call(stack, 'POST', `/schedulers/${name}/operations/${first}/cancel`)).status).toBe(200);
    await finished(stack, first, 'canceled');
    const second = await change();
    expect(second).not.toBe(first);
    expect((await stack.api.getOperation(second)).status?.executionHistory?.[1]?.event).toBe(`The same change was sent again through the API after operation ${first} did not apply it: tried again`);

    // Deleted while it ran (kubectl delete rkop): the condition says the change is not applied; sent again, tried again.
    await stack.api.deleteOperation(second);
    const told = await waitFor(async () => {
      const c = await pendingChanges();
      return c?.reason === 'SpecChangeFailed' ? c : undefined;
    }, { timeoutMs: 30_000, message: 'PendingChanges SpecChangeFailed' }).catch(async (err: unknown) => {
      const ops = (await stack.api.listOperations(name)).items.map((o) => `${o.metadata.name as string} ${o.spec.definitionName} ${o.status?.status ?? 'pending'}${o.metadata.deletionTimestamp ? ' (being deleted)' : ''} [${(o.metadata.finalizers ?? []).join(',')}]: ${(o.status?.executionHistory ?? []).map((h) => h.event).join(' | ')}`);
      throw new Error(`${(err as Error).message}; PendingChanges ${JSON.stringify(await pendingChanges())}; operations:\n${ops.join('\n')}`);
    });
    expect([told.status, told.message]).toEqual(['False', expect.stringMatching(/^the spec's last change .*was not applied/)]);
    // The successor of the canceled one again: the deleted attempt left no trace to follow.
    const third = await change();
    expect(third).toBe(second);
    const whileRunning = await call(stack, 'POST', `/schedulers/${name}`, v2);
    expect([whileRunning.status, (whileRunning.body as { code: number }).code]).toEqual([400, 9]);
    expect((await call(stack, 'POST', `/schedulers/${name}/operations/${third}/cancel`)).status).toBe(200);
    await finished(stack, third, 'canceled');
    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('a switch back to a version made with another room count keeps the count in force, and says so: it adds or removes no room; a switch to a version it does not have is a 404', async () => {
    const name = 'switch-count';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    expect((await call(stack, 'PATCH', `/schedulers/${name}`, { roomsReplicas: 2 })).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.1.0', { timeoutMs: 30_000, message: 'v1.1.0 active' });
    // A version it does not have (a mistyped rollback) is told at once, and nothing is enqueued.
    const missing = await call(stack, 'PUT', `/schedulers/${name}`, { version: 'v1.9.0' });
    expect([missing.status, missing.body]).toEqual([404, { code: 5, message: `version v1.9.0 of scheduler ${name} not found; nothing was enqueued: GET /schedulers/${name}/versions lists its versions`, details: [] }]);
    expect((await stack.api.listOperations(name)).items.filter((o) => (o.spec.input as { newActiveVersion?: string } | undefined)?.newActiveVersion === 'v1.9.0')).toEqual([]);
    const put = await call(stack, 'PUT', `/schedulers/${name}`, { version: 'v1.0.0' });
    expect(put.status).toBe(200);
    const op = await finished(stack, (put.body as OperationEnqueued).operationId);
    expect(op.status?.executionHistory?.map((h) => h.event)).toContain(
      `roomsReplicas stays 2, the count in force (version v1.0.0 was made with 1): a switch adds or removes no room; to change it, PATCH /schedulers/${name} with {"roomsReplicas": n} or kubectl scale`);
    const s = await stack.api.getScheduler(name);
    expect([s.status?.version, s.spec.roomsReplicas]).toEqual(['v1.0.0', 2]);
    // The spec is versioned as it stands: no version operation follows for the count.
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.versionedGeneration === s.metadata.generation, { timeoutMs: 15_000, message: 'the switched spec versioned' });
    expect((await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'create_new_scheduler_version')).toHaveLength(1);
    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  /**
   * A scheduler of 1 room on v1.0.0, then a major change to image 2.0.0 whose validation room
   * pings 1 s after it starts (so it is validated for a second at least); its operation's id.
   */
  async function slowMajorChange(name: string): Promise<string> {
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    const v2 = createBody(name, { roomsReplicas: 1 });
    const container = ((v2.spec as { containers: Record<string, unknown>[] }).containers[0]) as Record<string, unknown>;
    Object.assign(container, { image: 'example.com/game:2.0.0', environment: [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'start-after:1' }] });
    const change = await call(stack, 'POST', `/schedulers/${name}`, v2);
    expect(change.status).toBe(200);
    return (change.body as OperationEnqueued).operationId;
  }

  test('an add-rooms that ran while a major change\'s switch waited keeps its count when the switch is canceled, not the declined image: the count is versioned on the active version, and a Warning says so', async () => {
    const name = 'add-behind-switch';
    // The new version's game servers ping 1 s after they start: the add-rooms is queued in time.
    const changeId = await slowMajorChange(name);
    // Queued before the switch the change enqueues when it ends, so it runs first, on the spec that
    // still holds the change; its rooms are made one at a time (addRoomsConcurrency 1), and the
    // switch is canceled while it waits behind them.
    const add = await call(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount: ADDED });
    expect(add.status).toBe(200);
    const addId = (add.body as OperationEnqueued).operationId;
    const switchId = await waitFor(async () => (await stack.api.listOperations(name)).items
      .find((o) => o.spec.definitionName === 'switch_active_version')?.metadata.name, { timeoutMs: 30_000, intervalMs: 10, message: 'the switch enqueued' });
    // The add_rooms moved the count on the spec holding the change (a cancel before that would be
    // seen by the add_rooms itself, which then builds on the active version).
    await waitFor(async () => (await stack.api.getScheduler(name)).spec.roomsReplicas === 1 + ADDED, { timeoutMs: 30_000, intervalMs: 10, message: 'the add_rooms moved the count' });
    const canceled = await call(stack, 'POST', `/schedulers/${name}/operations/${switchId}/cancel`);
    expect(canceled.status).toBe(200);
    await finished(stack, switchId, 'canceled');
    const added = await finished(stack, addId);
    expect(added.status?.executionHistory?.map((h) => h.event)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^The scheduler's spec held a definition/)]));

    const settled = await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const ops = (await stack.api.listOperations(name)).items;
      const busy = ops.some((o) => !['finished', 'error', 'canceled'].includes(o.status?.status ?? 'pending'));
      return !busy && s.status?.versionedGeneration === s.metadata.generation && s.status?.rooms?.ready === 1 + ADDED ? s : undefined;
    }, { timeoutMs: 60_000, message: `the count versioned and ${1 + ADDED} rooms ready` });
    expect({ image: settled.spec.spec.containers[0]?.image, roomsReplicas: settled.spec.roomsReplicas, version: settled.status?.version })
      .toEqual({ image: 'example.com/game:1.0.0', roomsReplicas: 1 + ADDED, version: 'v1.1.0' });
    // The version of the declined change stays, never active: it says so (kubectl get rksv's ACTIVE column reads it).
    expect((await stack.api.getSchedulerVersion(`${name}-v2.0.0`)).status).toEqual({ active: false });
    // The declined image was validated once, by the change itself.
    const changes = (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'create_new_scheduler_version');
    expect(changes.map((o) => o.status?.status)).toEqual(['finished', 'finished']);
    expect(changes.flatMap((o) => o.status?.executionHistory ?? []).filter((h) => h.event.startsWith('Major change detected'))).toHaveLength(1);
    const warning = await waitFor(async () => (await stack.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })).items
      .find((e) => e.reason === 'SpecRebasedOnActiveVersion'), { timeoutMs: 15_000, message: 'the SpecRebasedOnActiveVersion Warning' });
    expect(warning.message).toBe(`roomsReplicas was set to ${1 + ADDED} by add_rooms operation ${addId}, which ran before the spec's last change was decided; `
      + `that change made a version whose switch, operation ${switchId}, was canceled (operation ${changeId}); `
      + `versioning that spec would try the refused change again, so the spec now holds the active version v1.0.0's definition with roomsReplicas ${1 + ADDED}. To try the refused change again, send it again`);
    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('a kubectl scale while a major change is validated gets a version of its own after the switch (the switch does not take the scaled spec for the version it made)', async () => {
    const name = 'scale-behind-switch';
    // The new version's game servers ping 1 s after they start: the scale lands while it is validated.
    const changeId = await slowMajorChange(name);
    // Once the change has taken its definition (its validation started): a scale before that, even
    // one that lands between its claim (in_progress) and its read of the spec, is versioned with it.
    await waitFor(async () => (await stack.api.getOperation(changeId)).status?.executionHistory?.some((h) => h.event === 'Major version detected, starting game room validation process...'),
      { timeoutMs: 30_000, intervalMs: 10, message: 'the change validating' });
    await stack.api.patchScheduler(name, { spec: { roomsReplicas: 2 } }); // as kubectl scale writes it
    // The precondition: the change had not ended when the scale landed (its switch not enqueued yet).
    expect((await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'switch_active_version')).toEqual([]);
    await finished(stack, changeId);

    const settled = await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const ops = (await stack.api.listOperations(name)).items;
      const busy = ops.some((o) => !['finished', 'error', 'canceled'].includes(o.status?.status ?? 'pending'));
      return !busy && s.status?.versionedGeneration === s.metadata.generation && s.status?.version !== 'v2.0.0' && s.status?.rooms?.ready === 2 ? s : undefined;
    }, { timeoutMs: 60_000, message: 'the scale versioned after the switch to v2.0.0, and 2 rooms ready' }).catch(async (err: unknown) => {
      const s = await stack.api.getScheduler(name);
      const ops = (await stack.api.listOperations(name)).items.map((o) => `${o.spec.definitionName} ${o.spec.source ?? ''} ${o.status?.status ?? 'pending'}: ${(o.status?.executionHistory ?? []).map((h) => h.event).join(' | ')}`);
      throw new Error(`${(err as Error).message}; generation ${String(s.metadata.generation)}, versioned ${String(s.status?.versionedGeneration)}, version ${String(s.status?.version)}, rooms ${JSON.stringify(s.status?.rooms)}; operations:\n${ops.join('\n')}`);
    });
    expect(settled.status?.version).toBe('v2.1.0');
    expect((await stack.api.getSchedulerVersion(`${name}-v2.0.0`)).spec.definition.roomsReplicas).toBe(1);
    expect((await stack.api.getSchedulerVersion(`${name}-v2.1.0`)).spec.definition).toMatchObject({ roomsReplicas: 2, spec: { containers: [{ image: 'example.com/game:2.0.0' }] } });
    const versioning = (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'create_new_scheduler_version');
    // The API's change, then the scale's (a list's order is the API server's: sorted here).
    expect(versioning.map((o) => [o.spec.source, o.status?.status]).sort()).toEqual([['api', 'finished'], ['kubectl', 'finished']]);
    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('a change through the API that moved roomsReplicas and was refused, or canceled before it ran, says that its count took effect when it was written and stays, and how to go back', async () => {
    const name = 'count-kept';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 1 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    const keptLine = (count: number, before: number | string) => new RegExp(`^roomsReplicas ${count}, which this change set \\(it was ${String(before)}\\), took effect when the change was written and stays: `
      + `the spec's roomsReplicas is the count in force whatever the version, so it is not undone with the rest of the change; to go back, PATCH /schedulers/${name} with \\{"roomsReplicas": ${String(before)}\\}$`);

    // Canceled before it ran: queued behind an add-rooms that makes its rooms one at a time.
    const add = await call(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount: ADDED });
    await waitFor(async () => (await stack.api.getScheduler(name)).spec.roomsReplicas === 1 + ADDED, { timeoutMs: 30_000, message: 'the add_rooms moved the count' });
    const patched = await call(stack, 'PATCH', `/schedulers/${name}`, { roomsReplicas: 3, maxSurge: '35%' });
    expect(patched.status).toBe(200);
    const patchId = (patched.body as OperationEnqueued).operationId;
    expect((await call(stack, 'POST', `/schedulers/${name}/operations/${patchId}/cancel`)).status).toBe(200);
    const canceled = await finished(stack, patchId, 'canceled');
    expect(canceled.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining([expect.stringMatching(keptLine(3, 1 + ADDED))]));

    // Refused: its validation room never starts.
    await finished(stack, (add.body as OperationEnqueued).operationId);
    await refuseChange(stack, name, { roomsReplicas: 2 });
    const refused = (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_new_scheduler_version' && o.status?.status === 'error');
    expect(refused?.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining([expect.stringMatching(keptLine(2, 3))]));
    await waitFor(async () => (await liveRooms(stack, name)).length === 2, { timeoutMs: 60_000, message: '2 rooms, the count in force' });

    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('a PATCH that raises roomsReplicas with a major change refused (an image that is never pulled) says that its count took effect and stays, and how to go back', async () => {
    const name = 'count-kept-up';
    const created = await call(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 2 }));
    await finished(stack, (created.body as OperationEnqueued).operationId);
    const image = ((created.body as { scheduler: { spec: { containers: { image: string }[] } } }).scheduler.spec.containers[0]?.image ?? '').replace(/:[^:/]*$/, '');
    const patched = await call(stack, 'PATCH', `/schedulers/${name}`, { roomsReplicas: 3, spec: { containers: [{ image: `${image}:image-pull-failure` }] } });
    expect(patched.status).toBe(200);
    const refused = await finished(stack, (patched.body as OperationEnqueued).operationId, 'error');
    expect(refused.status?.executionHistory?.map((h) => h.event)).toContain(`roomsReplicas 3, which this change set (it was 2), took effect when the change was written and stays: `
      + `the spec's roomsReplicas is the count in force whatever the version, so it is not undone with the rest of the change; to go back, PATCH /schedulers/${name} with {"roomsReplicas": 2}`);
    await call(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('a definition that sets a label or env Roomkeeper sets on every room is told so in its operation\'s history; the rooms carry Roomkeeper\'s values', async () => {
    const name = 'reserved-keys';
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 1, labels: { team: 'arena', 'roomkeeper.io/version': 'mine' } }, [{ name: 'ROOMKEEPER_ROOM_ID', value: 'someone-else' }]) as { spec: Record<string, unknown> }).spec };
    expect((await call(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const create = await waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_scheduler' && o.status?.status === 'finished'), { timeoutMs: 30_000, message: 'create_scheduler finished' });
    expect(create.status?.executionHistory?.map((h) => h.event)).toContain(
      "Roomkeeper sets label roomkeeper.io/version, container server's env ROOMKEEPER_ROOM_ID on every room itself, so the definition's own values are not used: rename them to pass them to the rooms");
    const pod = await waitFor(async () => (await stack.core.listNamespacedPod({ namespace: name })).items[0], { timeoutMs: 30_000, message: 'a room pod' });
    expect(pod.metadata?.labels).toMatchObject({ team: 'arena', 'roomkeeper.io/version': 'v1.0.0' });
    expect(pod.spec?.containers[0]?.env?.filter((e) => e.name === 'ROOMKEEPER_ROOM_ID')).toEqual([{ name: 'ROOMKEEPER_ROOM_ID', value: pod.metadata?.name }]);
  });

  test('the same change through kubectl and through HTTP leaves the same history', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-same-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      stack.writeKubeconfig(kubeconfig);
      const kubectl = (args: string[], env: Record<string, string> = {}) =>
        run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });

      // HTTP
      expect((await call(stack, 'POST', '/schedulers', createBody('same-http', { roomsReplicas: 1 }))).status).toBe(200);
      await waitFor(async () => (await stack.api.getScheduler('same-http')).status?.state === 'in-sync', { timeoutMs: 30_000 });
      const patched = await call(stack, 'PATCH', '/schedulers/same-http', { spec: { containers: [{ image: 'example.com/game:2.0.0' }] } });
      expect(patched).toMatchObject({ status: 200, body: {} });

      // kubectl
      fs.writeFileSync(path.join(dir, 's.yaml'), stringify(schedulerObject('same-kubectl', { roomsReplicas: 1 })));
      await kubectl(['apply', '-f', path.join(dir, 's.yaml')]);
      await waitFor(async () => (await stack.api.getScheduler('same-kubectl')).status?.state === 'in-sync', { timeoutMs: 30_000 });
      await kubectl(['edit', 'rks', 'same-kubectl'], { KUBE_EDITOR: 'sed -i s#example.com/game:1.0.0#example.com/game:2.0.0#' });

      for (const name of ['same-http', 'same-kubectl']) {
        await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v2.0.0' && (await stack.api.getScheduler(name)).status?.state === 'in-sync', { timeoutMs: 60_000 });
      }
      const expected = ['create_scheduler:finished', 'create_new_scheduler_version:finished', 'switch_active_version:finished'];
      expect(await userHistory(stack, 'same-http')).toEqual(expected);
      expect(await userHistory(stack, 'same-kubectl')).toEqual(expected);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
