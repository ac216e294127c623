/**
 * Values written straight into objects with kubectl that the CRD schema allows but no replica
 * writes (a status through `kubectl patch --subresource=status`, an Operation's free-form input).
 * They must not stall the operator nor reach code that does not expect them: an
 * Operation shown in progress under a lease that expires in year 9999 held its scheduler's queue
 * for good (every later operation stayed pending) and woke the queue's key every millisecond; a
 * GameRoom whose lastPingAt reads year 2100 never expired, however long the room stayed silent; one
 * whose allocation expired in year 9999 was kept from every matchmaker until then; a
 * create_new_scheduler_version whose input carried a definition no API server had judged failed
 * with "Cannot read properties of undefined (reading 'flatMap')"; a Scheduler whose status.version
 * was patched to v99.0.0, a version that never existed, got a SchedulerVersion v99.0.0 rebuilt from
 * its spec (said to be "deleted and rebuilt") and its rooms replaced to run it; one patched back to
 * v1.0.0, an older version that exists, had every room replaced to run v1.0.0 with no operation in
 * its history (the health check took status.version for the active version).
 * Runs on the sandbox, and on the real API server through the real-apiserver tier.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom, Operation } from '../../common/src/generated/resources';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { newVersionObject } from '../../operator/src/operations/definitions/shared';
import { VERSION_PROTECTION_FINALIZER } from '../../common/src/resources/labels';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued } from './management-bodies';


/** A create (or new version) body of one room running `image`. */
function createBodyWithImage(name: string, image: string): Record<string, unknown> {
  const object = schedulerObject(name, { roomsReplicas: 1 }) as { spec: { spec: { containers: { image: string }[] } } & Record<string, unknown> };
  object.spec.spec.containers[0]!.image = image;
  return { name, ...object.spec };
}
describe('status values written with kubectl', () => {
  let stack: Stack;
  beforeAll(async () => {
    // No operator yet: the status below is written before any replica can see the operation.
    stack = await startStack({ external: true, operators: 0, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('an operation in progress under a lease that expires in year 9999 ends in error, saying why, and the queue moves on', async () => {
    const name = 'far-lease';
    const created = await managementCall(stack, 'POST', '/schedulers', { name, ...(schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec });
    expect(created.status).toBe(200);
    const createId = (created.body as OperationEnqueued).operationId;

    const ghost = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: 'add_rooms', input: { amount: 1 }, source: 'kubectl', enqueuedAt: Date.now() });
    const ghostId = ghost.metadata.name as string;
    await stack.api.createOperation(ghost);
    await stack.api.patchOperationStatus(ghostId, { status: { status: 'in_progress', lease: { holder: 'ghost', ttl: '9999-12-31T23:59:59Z', renewedAt: new Date().toISOString() } } });

    await stack.addOperator();
    const create = await waitFor(async () => {
      const op = await stack.api.getOperation(createId);
      return op.status?.status === 'finished' ? op : undefined;
    }, { timeoutMs: 30_000, message: `create_scheduler ${createId} finished (not held behind the year-9999 lease)` });
    expect(create.status?.status).toBe('finished');

    const ended = await stack.api.getOperation(ghostId);
    expect(ended.status?.status).toBe('error');
    expect(ended.status?.lease).toBeUndefined();
    const invalid = ended.status?.conditions?.find((c) => c.type === 'Invalid');
    expect(invalid).toMatchObject({ status: 'True', reason: 'LeaseTooFarAhead' });
    expect(invalid?.message).toMatch(/^Operation lease expires at 9999-12-31T23:59:59\.000Z \(holder ghost\), further ahead than any operator replica writes one \(.* s, ROOMKEEPER_OPERATION_LEASE_TTL, plus 60 s of clock skew\): it was not written by a running operation/);
    expect(ended.status?.executionHistory?.map((h) => h.event)).toContain(invalid?.message);
  });
});

describe('Operations written with kubectl', () => {
  let stack: Stack;
  beforeAll(async () => {
    // No operator yet: the operations below are written before any replica can see them.
    stack = await startStack({ external: true, operators: 0, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const SCHEDULER = 'roomkeeper.io/scheduler';
  const DEFINITION = 'roomkeeper.io/definition';
  const MANAGED_BY = 'app.kubernetes.io/managed-by';
  /** What `kubectl create -f` of an Operation sends: the spec only, with the labels given, no source. */
  const kubectlOperation = (name: string, scheduler: string, definitionName: string, labels?: Record<string, string>): Operation => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name, ...(labels ? { labels } : {}) },
    spec: { schedulerName: scheduler, definitionName, enqueuedAt: new Date().toISOString(), input: definitionName === 'add_rooms' ? { amount: 1 } : {} },
  });
  const labeled = async (scheduler: string): Promise<string[]> => {
    const custom = stack.kc.makeApiClient(k8s.CustomObjectsApi);
    const list = await custom.listClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'operations', labelSelector: `${SCHEDULER}=${scheduler}` }) as { items: Operation[] };
    return list.items.map((o) => o.metadata.name as string);
  };

  test('one written without labels or source gets source kubectl and, once, the labels the gateway\'s carry, so a label selector finds it, also after a restart', async () => {
    const name = 'kubectl-op';
    const created = await managementCall(stack, 'POST', '/schedulers', { name, ...(schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec });
    expect(created.status).toBe(200);
    const createId = (created.body as OperationEnqueued).operationId;

    const bare = await stack.api.createOperation(kubectlOperation(`${name}-add`, name, 'add_rooms'));
    // The source is the CRD's default: whoever writes an Operation past the gateway and the operator.
    expect(bare.spec.source).toBe('kubectl');
    expect(bare.metadata.labels).toBeUndefined();
    // A label naming another scheduler than the spec, and another tool's managed-by.
    const mislabeled = await stack.api.createOperation(kubectlOperation(`${name}-unknown`, name, 'no_such_definition', { [SCHEDULER]: 'someone-else', [MANAGED_BY]: 'Helm', team: 'blue' }));
    expect(await labeled(name)).toEqual([createId]);

    await stack.addOperator();
    const both = await waitFor(async () => {
      const names = await labeled(name);
      return [`${name}-add`, `${name}-unknown`].every((n) => names.includes(n)) ? names : undefined;
    }, { timeoutMs: 30_000, message: `both kubectl-written operations listed by ${SCHEDULER}=${name}` });
    expect(both).toContain(createId);
    expect((await stack.api.getOperation(`${name}-add`)).metadata.labels).toEqual({ [SCHEDULER]: name, [DEFINITION]: 'add_rooms', [MANAGED_BY]: 'roomkeeper' });
    expect((await stack.api.getOperation(`${name}-unknown`)).metadata.labels).toEqual({ [SCHEDULER]: name, [DEFINITION]: 'no_such_definition', [MANAGED_BY]: 'Helm', team: 'blue' });
    expect((await stack.api.getOperation(`${name}-unknown`)).spec.source).toBe('kubectl');
    expect(mislabeled.spec.source).toBe('kubectl');

    // Both end (the add runs; the unknown definition is evicted), then nothing writes them again.
    const ended = async (op: string) => waitFor(async () => {
      const o = await stack.api.getOperation(op);
      return ['finished', 'evicted', 'error'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 30_000, message: `operation ${op} ended` });
    expect((await ended(`${name}-add`)).status?.status).toBe('finished');
    expect((await ended(`${name}-unknown`)).status?.status).toBe('evicted');
    // The add moved roomsReplicas: the version of that change was made by the same kubectl user.
    const version = await waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_new_scheduler_version'),
      { timeoutMs: 30_000, message: 'the version of the roomsReplicas the add moved' });
    expect(version.spec.source).toBe('kubectl');
    await ended(version.metadata.name as string);
    const before = [(await ended(`${name}-add`)).metadata.resourceVersion, (await ended(`${name}-unknown`)).metadata.resourceVersion];

    // A new leader labels what it finds unlabeled (a third, written while no replica ran) and
    // writes nothing to the ones labeled already: the labels are derived from each object.
    await stack.restartOperators({});
    await stack.api.createOperation(kubectlOperation(`${name}-later`, name, 'no_such_definition'));
    await waitFor(async () => (await labeled(name)).includes(`${name}-later`), { timeoutMs: 30_000, message: `${name}-later labeled by the new leader` });
    expect([(await stack.api.getOperation(`${name}-add`)).metadata.resourceVersion, (await stack.api.getOperation(`${name}-unknown`)).metadata.resourceVersion]).toEqual(before);
  });
});

describe('values written with kubectl, with an operator running', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300, roomPingTimeout: 3000 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('a silent room whose lastPingAt reads year 2100 still expires on the ping timeout', async () => {
    const name = 'far-ping';
    // The room pings ready, then hangs (a hung game server): only its ping timeout removes it.
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'stop-after:1' }]) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const room = await waitFor(async () => (await stack.api.listGameRooms(name)).items.find((r) => !r.spec.validation && r.status?.status === 'ready' && r.status.lastPingAt !== undefined), { timeoutMs: 30_000, message: 'a ready room' });
    const roomName = room.metadata.name as string;
    await stack.api.patchGameRoomStatus(name, roomName, { status: { lastPingAt: '2100-01-01T00:00:00Z' } });

    await waitFor(async () => {
      const now = (await stack.api.listGameRooms(name)).items.find((r) => r.metadata.name === roomName);
      return now === undefined || now.metadata.deletionTimestamp !== undefined;
    }, { timeoutMs: 30_000, message: `room ${roomName} removed on its ping timeout (3 s) despite a lastPingAt of year 2100` });
  });

  test('a new-version Operation whose input definition the Scheduler schema refuses ends in error naming each field under input, and changes nothing', async () => {
    const name = 'bad-definition';
    const spec = (schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.0.0', { timeoutMs: 30_000, message: 'version v1.0.0 active' });

    const op = buildOperation({
      id: newOperationId(), schedulerName: name, definitionName: 'create_new_scheduler_version', source: 'kubectl', enqueuedAt: Date.now(),
      input: { scheduler: { name, ...spec, spec: { terminationGracePeriod: '10s', containers: [{ name: 'x', image: 'y', ports: 7 }] } } },
    });
    await stack.api.createOperation(op);
    const ended = await waitFor(async () => {
      const o = await stack.api.getOperation(op.metadata.name as string);
      return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 30_000, message: 'the operation ended' });
    expect(ended.status?.status).toBe('error');
    expect(ended.status?.executionHistory?.map((h) => h.event)).toContain('Operation execution failed: input.scheduler.spec.containers[0].ports must be of type array; got number 7');
    expect((await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    expect((await stack.api.listGameRooms(name)).items.filter((r) => r.spec.validation)).toEqual([]);
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
  });

  test('a new-version Operation written with its own valid definition, not the Scheduler\'s spec, makes no version and says to change the spec; one without input.scheduler versions the spec', async () => {
    const name = 'own-definition';
    const spec = (schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.0.0', { timeoutMs: 30_000, message: 'version v1.0.0 active' });
    const ended = async (id: string): Promise<Operation> => waitFor(async () => {
      const o = await stack.api.getOperation(id);
      return ['finished', 'error', 'canceled'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 30_000, message: `operation ${id} ended` });

    const own = buildOperation({
      id: newOperationId(), schedulerName: name, definitionName: 'create_new_scheduler_version', source: 'kubectl', enqueuedAt: Date.now(),
      input: { scheduler: { ...createBodyWithImage(name, 'registry.example.com/elsewhere:9'), game: 'another-game' } },
    });
    await stack.api.createOperation(own);
    const refused = await ended(own.metadata.name as string);
    expect(refused.status?.status).toBe('error');
    const said = (refused.status?.executionHistory ?? []).map((h) => h.event).join('\n');
    expect(said).toMatch(/no version made: this operation's input\.scheduler is not the Scheduler's spec \(it differs in [^)]*game[^)]*\)/);
    expect(said).toContain(`kubectl edit scheduler ${name}, or POST /schedulers/${name}`);
    expect((await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    expect((await stack.api.listGameRooms(name)).items.filter((r) => r.spec.validation)).toEqual([]);

    // Without input.scheduler, the spec as it is: here unchanged, so no version either, and no error.
    const bare = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: 'create_new_scheduler_version', source: 'kubectl', enqueuedAt: Date.now(), input: {} });
    await stack.api.createOperation(bare);
    const done = await ended(bare.metadata.name as string);
    expect(done.status?.status).toBe('finished');
    expect(done.status?.executionHistory?.map((h) => h.event)).toContain('No change from the active version v1.0.0; no version created');
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
  });

  test('an Operation naming a scheduler by a name no Scheduler can have is refused at admission, naming schedulerName', async () => {
    const op = buildOperation({ id: newOperationId(), schedulerName: 'NOSUCH', definitionName: 'add_rooms', input: { amount: 1 }, source: 'kubectl', enqueuedAt: Date.now() });
    const refused = await stack.api.createOperation(op).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    expect(JSON.stringify(refused?.body)).toContain('spec.schedulerName');
    await expect(stack.api.getOperation(op.metadata.name as string)).rejects.toMatchObject({ code: 404 });
  });

  test.each([
    ['add_rooms with a negative amount', 'add_rooms', { amount: -3 }, 'spec.input.amount'],
    ['add_rooms with an amount in words', 'add_rooms', { amount: 'two' }, 'spec.input.amount'],
    ['add_rooms without an amount', 'add_rooms', { reason: 'more' }, 'spec.input.amount'],
    ['remove_rooms with both an amount and ids', 'remove_rooms', { amount: 1, roomsIds: ['a'] }, 'spec.input'],
    ['remove_rooms with neither', 'remove_rooms', {}, 'spec.input'],
    ['switch_active_version without a version', 'switch_active_version', { version: 'v1.0.0' }, 'spec.input.newActiveVersion'],
  ])('an Operation written with kubectl is refused at admission, naming the field: %s', async (_case, definitionName, input, field) => {
    const op = buildOperation({ id: newOperationId(), schedulerName: 'admission', definitionName, input: input, source: 'kubectl', enqueuedAt: Date.now() });
    const refused = await stack.api.createOperation(op).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    expect(JSON.stringify(refused?.body)).toContain(field);
    await expect(stack.api.getOperation(op.metadata.name as string)).rejects.toMatchObject({ code: 404 });
  });

  /** A scheduler of no rooms created through the API, once v1.0.0 is active, with the spec it was created with. */
  const createdAtV1 = async (name: string) => {
    const spec = (schedulerObject(name, { roomsReplicas: 0 }) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    const s = await waitFor(async () => {
      const found = await stack.api.getScheduler(name);
      return found.status?.version === 'v1.0.0' ? found : undefined;
    }, { timeoutMs: 30_000, message: 'version v1.0.0 active' });
    return { s, spec };
  };

  test('a SchedulerVersion numbered with more than 9 digits is refused at admission, naming spec.version: no later version could be numbered after it', async () => {
    const name = 'huge-version';
    const { s } = await createdAtV1(name);
    const version = 'v9007199254740991.0.0';
    const refused = await stack.api.createSchedulerVersion(newVersionObject(s, version, 'major', s.spec)).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    expect(JSON.stringify(refused?.body)).toContain('spec.version');
    expect((await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
  });

  test('a version whose definition today\'s Scheduler checks refuse (made under an older, laxer CRD) keeps taking writes: it goes with its scheduler, and the name can be used again', async () => {
    const name = 'older-checks';
    const { s, spec } = await createdAtV1(name);
    // Two forwarders of one name and a port above 65535: the Scheduler CRD of 2026-12-02 took both.
    const forwarder = { name: 'f', enable: true, type: 'gRPC' as const, address: '127.0.0.1:99999' };
    const older = newVersionObject(s, 'v1.1.0', 'minor', { ...s.spec, forwarders: [forwarder, { ...forwarder }] });
    older.metadata.finalizers = [VERSION_PROTECTION_FINALIZER];
    await stack.api.createSchedulerVersion(older);
    const refused = await stack.api.patchScheduler(name, { spec: { forwarders: [forwarder, { ...forwarder }] } }).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    expect(JSON.stringify(refused?.body)).toContain('spec.forwarders');

    expect((await managementCall(stack, 'DELETE', `/schedulers/${name}`)).status).toBe(200);
    await waitFor(async () => {
      const left = (await stack.api.listSchedulerVersions(name)).items.map((v) => v.metadata.name);
      const scheduler = await stack.api.getScheduler(name).then(() => true, () => false);
      return left.length === 0 && !scheduler ? true : undefined;
    }, { timeoutMs: 60_000, message: `scheduler ${name} and its versions (v1.1.0 with ${VERSION_PROTECTION_FINALIZER}) gone` });
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    await waitFor(async () => ((await stack.api.getScheduler(name)).status?.version === 'v1.0.0' ? true : undefined), { timeoutMs: 60_000, message: `${name} created again, v1.0.0 active` });
  });

  test('an allocation that expires in year 9999 (no allocate call takes a TTL over a year) is ended, and the room can be allocated again', async () => {
    const name = 'far-allocation';
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...(schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec })).status).toBe(200);
    const room = await waitFor(async () => (await stack.api.listGameRooms(name)).items.find((r) => !r.spec.validation && r.status?.status === 'ready'), { timeoutMs: 30_000, message: 'a ready room' });
    const roomName = room.metadata.name as string;
    const allocation = { id: 'kubectl-9999', requestHash: 'h', allocatedAt: new Date().toISOString(), expiresAt: '9999-12-31T23:59:59Z' };
    await stack.api.patchGameRoomStatus(name, roomName, { status: { allocation } });

    const ended = await waitFor(async () => {
      const r = await stack.api.getGameRoom(name, roomName);
      return r.status?.allocation?.endedAt !== undefined && r.status.status === 'ready' ? r : undefined;
    }, { timeoutMs: 30_000, message: `the year-9999 allocation of ${roomName} ended and the room ready` });
    expect(ended.status?.allocation).toMatchObject({ id: 'kubectl-9999', endReason: 'expired' });
    // The gateway allocates from its cache, which shows the end a moment after the API server does
    // (until then it answers 429, retry later).
    const allocated = await waitFor(async () => {
      const answer = await managementCall(stack, 'POST', `/scheduler/${name}/rooms/allocate`, {});
      return answer.status === 429 ? undefined : answer;
    }, { timeoutMs: 30_000, intervalMs: 200, message: `room ${roomName} allocatable again in the gateway's cache` });
    expect(allocated.status).toBe(200);
    expect(allocated.body).toMatchObject({ roomId: roomName });
  });

  test('status.version patched to a version no SchedulerVersion holds is set back to the active one: nothing is rebuilt and no room is replaced', async () => {
    const name = 'edited-version';
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...(schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec })).status).toBe(200);
    const room = await waitFor(async () => (await stack.api.listGameRooms(name)).items.find((r) => !r.spec.validation && r.status?.status === 'ready'), { timeoutMs: 30_000, message: 'a ready room' });
    const roomName = room.metadata.name as string;
    expect(room.spec.version).toBe('v1.0.0');

    const patched = await stack.api.patchSchedulerStatus(name, { status: { version: 'v99.0.0' } });
    expect(patched.status?.version).toBe('v99.0.0');

    // Set back: no operation queued or running, and the status counts the room on the active version.
    const settled = await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const busy = (await stack.api.listOperations(name)).items.some((op) => ['pending', 'in_progress'].includes(op.status?.status ?? 'pending'));
      const available = s.status?.conditions?.find((c) => c.type === 'ActiveVersionAvailable');
      return !busy && s.status?.version === 'v1.0.0' && available?.reason === 'Present' && s.status.rooms?.updated === 1 ? s : undefined;
    }, { timeoutMs: 30_000, message: 'status.version v1.0.0 again, ActiveVersionAvailable Present, no operation queued or running' });
    expect(settled.status?.roomsByVersion).toEqual({ 'v1.0.0': 1 });

    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const restored = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === name && e.reason === 'StatusVersionRestored'), { timeoutMs: 30_000, message: 'a StatusVersionRestored Event about the Scheduler' });
    expect(restored.note).toMatch(/^status\.version named v99\.0\.0, which no SchedulerVersion holds; v1\.0\.0 is active \(its SchedulerVersion says so\); status\.version was set back to it/);
    expect((await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    const rooms = (await stack.api.listGameRooms(name)).items.filter((r) => !r.spec.validation);
    expect(rooms.map((r) => [r.metadata.name, r.spec.version])).toEqual([[roomName, 'v1.0.0']]);
    expect((await stack.api.listOperations(name)).items.map((op) => op.spec.definitionName).filter((d) => d !== 'create_scheduler')).toEqual([]);
  });

  /** A scheduler of one room of game:1.0.0, ready, then a major change to game:2.0.0 sent. */
  const majorAfterReadyRoom = async (name: string): Promise<void> => {
    expect((await managementCall(stack, 'POST', '/schedulers', createBodyWithImage(name, 'example.com/game:1.0.0'))).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.rooms?.ready === 1, { timeoutMs: 30_000, message: 'a ready room' });
    expect((await managementCall(stack, 'POST', `/schedulers/${name}`, createBodyWithImage(name, 'example.com/game:2.0.0'))).status).toBe(200);
  };

  test('another version\'s status patched to say it is active is set back to inactive, with a Warning: it never becomes active without a switch', async () => {
    const name = 'edited-flag';
    await majorAfterReadyRoom(name);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v2.0.0', { timeoutMs: 60_000, message: 'v2.0.0 active' });
    await waitFor(async () => !(await stack.api.listOperations(name)).items.some((op) => ['pending', 'in_progress'].includes(op.status?.status ?? 'pending')), { timeoutMs: 30_000, message: 'no operation queued or running' });

    // kubectl patch rksv edited-flag-v1.0.0 --subresource=status --type=merge -p '{"status":{"active":true}}'
    await stack.api.patchSchedulerVersionStatus(`${name}-v1.0.0`, { status: { active: true } });
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const restored = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === name && e.reason === 'StatusVersionRestored'), { timeoutMs: 30_000, message: 'a StatusVersionRestored Event about the Scheduler' });
    expect([restored.type, restored.note]).toEqual(['Warning', `SchedulerVersion ${name}-v1.0.0 said it is active, but no switch_active_version made it so (an edit of its status): set back to inactive; v2.0.0 stays active and no room was made or replaced for v1.0.0: to run v1.0.0, switch to it: PUT /schedulers/${name} with {"version": "v1.0.0"}, `
      + `or kubectl create an Operation with spec {schedulerName: ${name}, definitionName: switch_active_version, input: {newActiveVersion: v1.0.0}} (README, kubectl)`]);
    await waitFor(async () => (await stack.api.getSchedulerVersion(`${name}-v1.0.0`)).status?.active === false, { timeoutMs: 30_000, message: 'v1.0.0 inactive again' });
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v2.0.0');
    await managementCall(stack, 'DELETE', `/schedulers/${name}`);
  });

  test('status.version patched back to an older version that exists is set back to the active one: no room of it is ever made, until a switch makes it active', async () => {
    const name = 'edited-older';
    await majorAfterReadyRoom(name);
    const live = async () => (await stack.api.listGameRooms(name)).items.filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp);
    await waitFor(async () => {
      const rooms = await live();
      return (await stack.api.getScheduler(name)).status?.version === 'v2.0.0' && rooms.length === 1 && rooms[0]!.spec.version === 'v2.0.0' && rooms[0]!.status?.status === 'ready';
    }, { timeoutMs: 60_000, message: 'v2.0.0 active and its one room ready' });
    // The v1.0.0 room the rollout replaced is gone too, not only being deleted (the count below is of every room stored).
    await waitFor(async () => !(await stack.api.listGameRooms(name)).items.some((r) => r.spec.version === 'v1.0.0'), { timeoutMs: 60_000, message: 'the v1.0.0 room gone' });

    // Every room the API server holds from here on, as a watch sees it come (not only the end state).
    const listed = await stack.api.listGameRooms(name);
    const made: { name: string; version: string; validation: boolean }[] = [];
    const watch = new k8s.Watch(stack.kc);
    const request = await watch.watch(`/apis/roomkeeper.io/v1/namespaces/${name}/gamerooms`, { resourceVersion: listed.metadata.resourceVersion },
      (type: string, room: GameRoom) => {
        if (type === 'ADDED') made.push({ name: room.metadata.name as string, version: room.spec.version, validation: room.spec.validation === true });
      }, () => undefined);
    try {
      await stack.api.patchSchedulerStatus(name, { status: { version: 'v1.0.0' } });

      const events = stack.kc.makeApiClient(k8s.EventsV1Api);
      const restored = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
        .find((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === name && e.reason === 'StatusVersionRestored'), { timeoutMs: 30_000, message: 'a StatusVersionRestored Event about the Scheduler' });
      expect(restored.type).toBe('Warning');
      expect(restored.note).toBe('status.version named v1.0.0, whose SchedulerVersion does not say it is active (no switch_active_version made it so); v2.0.0 is active (its SchedulerVersion says so); '
        + 'status.version was set back to it, and no room was made, replaced or rebuilt for v1.0.0: to run v1.0.0, switch to it: PUT /schedulers/edited-older with {"version": "v1.0.0"}, '
        + 'or kubectl create an Operation with spec {schedulerName: edited-older, definitionName: switch_active_version, input: {newActiveVersion: v1.0.0}} (README, kubectl)');
      await waitFor(async () => {
        const s = await stack.api.getScheduler(name);
        const busy = (await stack.api.listOperations(name)).items.some((op) => ['pending', 'in_progress'].includes(op.status?.status ?? 'pending'));
        return !busy && s.status?.version === 'v2.0.0' && s.status.conditions?.find((c) => c.type === 'ActiveVersionAvailable')?.reason === 'Present';
      }, { timeoutMs: 30_000, message: 'status.version v2.0.0 again, ActiveVersionAvailable Present, no operation queued or running' });
      // The room of v2.0.0 still runs; no room of v1.0.0 was made (watched) nor is there (listed).
      const [rooms, all] = [await live(), (await stack.api.listGameRooms(name)).items];
      expect(made.filter((r) => r.version === 'v1.0.0')).toEqual([]);
      expect(all.filter((r) => r.spec.version === 'v1.0.0').map((r) => r.metadata.name)).toEqual([]);
      expect(rooms.map((r) => r.spec.version)).toEqual(['v2.0.0']);

      // The way the Event tells: a switch made with kubectl makes v1.0.0 active, and only then its rooms.
      const before = made.length;
      await stack.api.createOperation({
        apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `${name}-switch-back` },
        spec: { schedulerName: name, definitionName: 'switch_active_version', enqueuedAt: new Date().toISOString(), input: { newActiveVersion: 'v1.0.0' } },
      });
      await waitFor(async () => {
        const r = await live();
        return (await stack.api.getScheduler(name)).status?.version === 'v1.0.0' && r.length === 1 && r[0]!.spec.version === 'v1.0.0' && r[0]!.status?.status === 'ready';
      }, { timeoutMs: 60_000, message: 'v1.0.0 active after the switch, its one room ready and the v2.0.0 room replaced' });
      expect(made.slice(0, before).filter((r) => r.version === 'v1.0.0')).toEqual([]);
      expect(made.slice(before).filter((r) => !r.validation).map((r) => r.version)).toContain('v1.0.0');
    } finally {
      request.abort();
    }
  }, 180_000);
});
