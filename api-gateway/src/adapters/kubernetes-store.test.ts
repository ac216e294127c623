/**
 * The Kubernetes adapter against the sandbox API server, through the real client.
 */
import { createHash } from 'node:crypto';
import { silentLogger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import { makeKubeClients, MERGE_PATCH, type KubeClients } from '../../../common/src/kube/clients';
import type { GameRoom, PingDigest } from '../../../common/src/generated/resources';
import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { waitFor } from '../../../test/support/wait';
import { StoreAlreadyExistsError, StoreConflictError, StoreInvalidError, StoreNotFoundError } from '../errors';
import { validSpec } from '../testing/fixtures';
import { RoomkeeperApi } from '../../../common/src/kube/roomkeeper-api';
import { SPEC_CHANGE_SOURCE_ANNOTATION, specChangeSource } from '../../../common/src/resources/labels';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { ALLOCATION_CLAIM_STALE_MS } from '../store-ports';
import { inShareOf } from '../use-cases/replica-shares';
import { RoomAllocations } from '../use-cases/room-allocation';
import { KubernetesStore } from './kubernetes-store';

jest.setTimeout(30_000);

let sandbox: Sandbox;
let clients: KubeClients;
let store: KubernetesStore;
let metrics: MetricsRegistry;

beforeAll(async () => {
  sandbox = await startSandbox({ crdDirs: ['crds'] });
  const kc = sandbox.kubeConfig();
  clients = makeKubeClients(kc, { qps: 1000, burst: 1000 });
  metrics = new MetricsRegistry();
  store = new KubernetesStore({ kc, custom: clients.custom, core: clients.core, logger: silentLogger(), metrics });
  await store.start();
  await waitFor(() => store.notReadyReason() === undefined, { timeoutMs: 10_000, message: 'caches synced' });
});

afterAll(async () => {
  // Undefined when beforeAll failed before assigning them.
  await (store as KubernetesStore | undefined)?.stop();
  await (sandbox as Sandbox | undefined)?.stop();
});

async function createNamespace(name: string): Promise<void> {
  await clients.core.createNamespace({ body: { metadata: { name } } });
}

async function createRoom(namespace: string, name: string): Promise<GameRoom> {
  const body = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace }, spec: { scheduler: namespace, version: 'v1.0.0' } };
  return (await clients.custom.createNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace, plural: 'gamerooms', body })) as GameRoom;
}

describe('KubernetesStore on the sandbox', () => {
  it('creates, reads, lists and updates schedulers with a spec generation precondition', async () => {
    const created = await store.createScheduler('adapter-a', validSpec());
    expect(created.metadata.uid).toBeTruthy();
    expect(created.metadata.generation).toBe(1);
    await expect(store.createScheduler('adapter-a', validSpec())).rejects.toBeInstanceOf(StoreAlreadyExistsError);
    expect((await store.getScheduler('adapter-a'))?.spec.game).toBe('tennis');
    expect(await store.getScheduler('missing')).toBeUndefined();
    expect(await store.getScheduler('Not A Name')).toBeUndefined();

    const updated = await store.updateSchedulerSpec(created, validSpec({ roomsReplicas: 4 }), 'op-gen-2');
    expect(updated.metadata.generation).toBe(2);
    await expect(store.updateSchedulerSpec(created, validSpec({ roomsReplicas: 5 }), 'op-gen-2')).rejects.toBeInstanceOf(StoreConflictError);
    // A status write (the operator's) changes the resourceVersion, not the generation: no conflict.
    await new RoomkeeperApi(clients.custom).patchSchedulerStatus('adapter-a', { status: { state: 'in-sync' } });
    expect((await store.updateSchedulerSpec(updated, validSpec({ roomsReplicas: 6 }), 'op-gen-3')).metadata.generation).toBe(3);
    await waitFor(async () => (await store.listSchedulers()).some((s) => s.metadata.name === 'adapter-a' && s.spec.roomsReplicas === 6));
  });

  it('a spec update says, in the same write, that the API made that generation, for its operation; other annotations stay', async () => {
    const created = await store.createScheduler('adapter-source', validSpec());
    // Created through the API, its first generation says so: a create_scheduler the operator
    // enqueues again (the first deleted with kubectl before it ran) is the API's.
    expect(specChangeSource(created.metadata.annotations, 1)).toEqual({ source: 'api', operation: 'create_scheduler' });
    const first = await store.updateSchedulerSpec(created, validSpec({ roomsReplicas: 4 }), 'op-of-gen-2');
    expect(specChangeSource(first.metadata.annotations, 2)).toEqual({ source: 'api', operation: 'op-of-gen-2' });
    await new RoomkeeperApi(clients.custom).jsonPatchScheduler('adapter-source', [{ op: 'add', path: '/metadata/annotations/team', value: 'arena' }]);
    const read = await store.getScheduler('adapter-source');
    const second = await store.updateSchedulerSpec(read!, validSpec({ roomsReplicas: 5 }), 'op-of-gen-3');
    expect(second.metadata.annotations).toEqual({ team: 'arena', [SPEC_CHANGE_SOURCE_ANNOTATION]: '3 api op-of-gen-3' });
    expect(specChangeSource(second.metadata.annotations, 3)).toEqual({ source: 'api', operation: 'op-of-gen-3' });
  });

  it('a spec update of a scheduler without annotations loses to no status write, and to an annotation added meanwhile it conflicts instead of replacing it', async () => {
    // Written with kubectl (the API's own have an annotation from their creation).
    const kubectlCreate = (name: string) => new RoomkeeperApi(clients.custom).createScheduler({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name }, spec: validSpec() });
    const created = await kubectlCreate('adapter-fresh');
    expect(created.metadata.annotations).toBeUndefined();
    // The operator writes the status after the read (a new resourceVersion, the same generation).
    await new RoomkeeperApi(clients.custom).patchSchedulerStatus('adapter-fresh', { status: { state: 'in-sync' } });
    const first = await store.updateSchedulerSpec(created, validSpec({ roomsReplicas: 4 }), 'op-fresh-gen-2');
    expect([first.metadata.generation, first.metadata.annotations]).toEqual([2, { [SPEC_CHANGE_SOURCE_ANNOTATION]: '2 api op-fresh-gen-2' }]);
    // Someone annotates a scheduler read without annotations, after the read: the write must not drop it.
    const other = await kubectlCreate('adapter-fresh-2');
    await new RoomkeeperApi(clients.custom).jsonPatchScheduler('adapter-fresh-2', [{ op: 'add', path: '/metadata/annotations', value: { team: 'arena' } }]);
    await expect(store.updateSchedulerSpec(other, validSpec({ roomsReplicas: 4 }), 'op-fresh2-gen-2')).rejects.toBeInstanceOf(StoreConflictError);
    expect((await store.getScheduler('adapter-fresh-2'))?.metadata.annotations).toEqual({ team: 'arena' });
  });

  it('a dry-run spec update is judged by the API server (the CRD\'s CEL rules too) and stores nothing; it is no write in the metrics', async () => {
    const created = await store.createScheduler('adapter-dry', validSpec());
    const writes = async () => /roomkeeper_kube_writes_total\{kind="scheduler"\} (\d+)/.exec(await metrics.render())?.[1];
    const writesBefore = await writes();
    const admitted = await store.updateSchedulerSpec(created, validSpec({ roomsReplicas: 4 }), 'op-dry-gen-2', { dryRun: true });
    expect([admitted.metadata.generation, admitted.spec.roomsReplicas]).toEqual([2, 4]);
    const minAboveMax = validSpec({ autoscaling: { enabled: true, min: 5, max: 2, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } });
    const refused = await store.updateSchedulerSpec(created, minAboveMax, 'op-dry-gen-2', { dryRun: true }).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(StoreInvalidError);
    expect((refused as StoreInvalidError).violations).toContainEqual({ field: 'autoscaling.min', message: 'min must be less than or equal to max' });
    const stale = { ...created, metadata: { ...created.metadata, generation: 7 } };
    await expect(store.updateSchedulerSpec(stale, validSpec({ roomsReplicas: 4 }), 'op-dry-gen-8', { dryRun: true })).rejects.toBeInstanceOf(StoreConflictError);
    const stored = await store.getScheduler('adapter-dry');
    expect([stored?.metadata.generation, stored?.metadata.resourceVersion, stored?.spec]).toEqual([1, created.metadata.resourceVersion, created.spec]);
    expect(await writes()).toBe(writesBefore);
  });

  it('creates operations once (AlreadyExists is "exists"), lists them from the cache and requests cancellation', async () => {
    const made = buildOperation({ id: 'op-adapter-1', schedulerName: 'adapter-a', definitionName: 'add_rooms', input: { amount: 1 }, source: 'api', enqueuedAt: Date.parse('2026-01-01T00:00:00.000Z') });
    expect(await store.createOperation(made)).toBe('created');
    expect(await store.createOperation(made)).toBe('exists');
    const op = await store.getOperation('op-adapter-1');
    expect(op?.metadata.labels).toMatchObject({ 'roomkeeper.io/scheduler': 'adapter-a', 'roomkeeper.io/definition': 'add_rooms' });
    await waitFor(async () => (await store.listOperations('adapter-a')).length === 1);
    expect(await store.listOperations('someone-else')).toEqual([]);
    await store.requestCancel('op-adapter-1');
    expect((await store.getOperation('op-adapter-1'))?.spec.cancelRequested).toBe(true);
    expect(await store.getOperation('nope')).toBeUndefined();
  });

  it('finds versions by scheduler and version', async () => {
    const body = { apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 'adapter-a-v1.0.0', labels: { 'roomkeeper.io/scheduler': 'adapter-a' } }, spec: { scheduler: 'adapter-a', version: 'v1.0.0', kind: 'initial', definition: validSpec() } };
    await clients.custom.createClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulerversions', body });
    expect((await store.getVersion('adapter-a', 'v1.0.0'))?.spec.version).toBe('v1.0.0');
    expect(await store.getVersion('adapter-a', 'v9.9.9')).toBeUndefined();
    expect(await store.getVersion('adapter-a', '../x')).toBeUndefined();
    await waitFor(async () => (await store.listVersions('adapter-a')).length === 1);
    await waitFor(() => store.findVersion('adapter-a', 'v1.0.0'));
  });

  it('finds rooms in the cache and patches their status subresource', async () => {
    await createNamespace('adapter-rooms');
    await createRoom('adapter-rooms', 'room-1');
    const room = await waitFor(() => store.findRoom('adapter-rooms', 'room-1'));
    expect(room.spec.scheduler).toBe('adapter-rooms');
    const cachedAt = room.metadata.resourceVersion as string;
    await store.patchRoomStatus('adapter-rooms', 'room-1', cachedAt, { pingStatus: 'occupied', status: 'occupied', runningMatches: 1, lastPingAt: '2026-01-01T00:00:00.000Z', pingTimestamp: 1_767_225_600 });
    await waitFor(() => store.findRoom('adapter-rooms', 'room-1')?.status?.pingStatus === 'occupied');
    // The ping's timestamp, kept in the cache for the next ping's judgement.
    expect(store.findRoom('adapter-rooms', 'room-1')?.status?.pingTimestamp).toBe(1_767_225_600);
    expect(store.listRooms('adapter-rooms')).toHaveLength(1);
    // Composed from a version the room has moved past: refused (409), and nothing changes.
    await expect(store.patchRoomStatus('adapter-rooms', 'room-1', cachedAt, { pingStatus: 'ready', status: 'ready', runningMatches: 0, lastPingAt: '2026-01-01T00:00:01.000Z', pingTimestamp: null })).rejects.toMatchObject({ code: 409 });
    expect(store.findRoom('adapter-rooms', 'room-1')?.status?.pingStatus).toBe('occupied');
    // Without a version: no condition.
    await store.patchRoomStatus('adapter-rooms', 'room-1', undefined, { pingStatus: 'terminated', status: 'terminated', runningMatches: 0, lastPingAt: '2026-01-01T00:00:02.000Z', pingTimestamp: null });
    await waitFor(() => store.findRoom('adapter-rooms', 'room-1')?.status?.pingStatus === 'terminated');
    // A report without a timestamp (null) removes the last one.
    expect(store.findRoom('adapter-rooms', 'room-1')?.status?.pingTimestamp).toBeUndefined();
    await expect(store.patchRoomStatus('adapter-rooms', 'ghost', cachedAt, { pingStatus: 'ready', status: 'ready', runningMatches: 0, lastPingAt: '2026-01-01T00:00:00.000Z', pingTimestamp: null })).rejects.toMatchObject({ code: 404 });
  });

  it('remembers the rooms its cache saw deleted, until a room of the same name is made again', async () => {
    await createNamespace('adapter-gone');
    await createRoom('adapter-gone', 'room-1');
    await waitFor(() => store.findRoom('adapter-gone', 'room-1'));
    expect(store.roomDeletedAt('adapter-gone', 'room-1')).toBeUndefined();
    const before = Date.now();
    await clients.custom.deleteNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace: 'adapter-gone', plural: 'gamerooms', name: 'room-1' });
    const at = await waitFor(() => store.roomDeletedAt('adapter-gone', 'room-1'));
    expect(at).toBeGreaterThanOrEqual(before);
    expect(store.findRoom('adapter-gone', 'room-1')).toBeUndefined();
    await createRoom('adapter-gone', 'room-1');
    await waitFor(() => store.findRoom('adapter-gone', 'room-1'));
    expect(store.roomDeletedAt('adapter-gone', 'room-1')).toBeUndefined();
  });

  it('indexes the rooms that may be allocated, in groups, the busy rooms per host and the rooms marked silent, following every change', async () => {
    await createNamespace('adapter-index');
    const api = new RoomkeeperApi(clients.custom);
    const setStatus = (name: string, status: Record<string, unknown>) => api.patchGameRoomStatus('adapter-index', name, { status: { instanceStatus: 'ready', runningMatches: 0, lastPingAt: '2026-01-01T00:00:00.000Z', ...status } });
    for (const name of ['i-1', 'i-2', 'i-3']) await createRoom('adapter-index', name);
    await setStatus('i-1', { status: 'ready', pingStatus: 'ready', host: 'h-1' });
    await setStatus('i-2', { status: 'ready', pingStatus: 'ready', host: 'h-1' });
    await setStatus('i-3', { status: 'occupied', pingStatus: 'occupied', host: 'h-2' });
    // Filed by group (host and running matches here): a group empty after a change is gone.
    const allocatable = () => store.listAllocatableGroups('adapter-index').map((g) => `${g.host}/${g.runningMatches}:${g.rooms().map((r) => r.metadata.name).sort().join('+')}`).sort();
    await waitFor(() => allocatable().join() === 'h-1/0:i-1+i-2' && store.countBusyRooms('adapter-index', 'h-2') === 1, { message: 'indexes after the first statuses' });
    expect(store.countBusyRooms('adapter-index', 'h-1')).toBe(0);
    // A room taken leaves the first index and joins the second; one freed does the reverse; one deleted leaves both.
    await setStatus('i-1', { status: 'occupied', pingStatus: 'occupied', host: 'h-1' });
    await setStatus('i-3', { status: 'ready', pingStatus: 'ready', host: 'h-2' });
    await waitFor(() => allocatable().join() === 'h-1/0:i-2,h-2/0:i-3' && store.countBusyRooms('adapter-index', 'h-1') === 1 && store.countBusyRooms('adapter-index', 'h-2') === 0, { message: 'indexes after the changes' });
    await api.deleteGameRoom('adapter-index', 'i-1', undefined, 'Background');
    await api.deleteGameRoom('adapter-index', 'i-2', undefined, 'Background');
    await waitFor(() => allocatable().join() === 'h-2/0:i-3' && store.countBusyRooms('adapter-index', 'h-1') === 0, { message: 'indexes after the deletions' });
    expect(store.listAllocatableGroups('no-such-scheduler')).toEqual([]);
    // Marked silent by the operator: out of the allocatable index, in the silent one; the mark gone, back.
    const silent = () => store.silentRooms('adapter-index').map((r) => r.metadata.name).join();
    await api.patchGameRoomStatus('adapter-index', 'i-3', { status: { silentSince: '2026-01-01T00:00:00.000Z' } });
    await waitFor(() => allocatable().join() === '' && silent() === 'i-3', { message: 'indexes after the mark' });
    await api.patchGameRoomStatus('adapter-index', 'i-3', { status: { silentSince: null } });
    await waitFor(() => allocatable().join() === 'h-2/0:i-3' && silent() === '', { message: 'indexes after the mark went' });
  });

  it('indexes the rooms by the allocationIds they hold and held, per scheduler, following every change', async () => {
    await createNamespace('adapter-ids');
    await createNamespace('adapter-ids-other');
    const api = new RoomkeeperApi(clients.custom);
    const allocation = (id: string) => ({ id, requestHash: 'h', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z' });
    const ended = (id: string) => ({ ...allocation(id), endedAt: '2026-01-01T00:01:00.000Z', endReason: 'occupied', supersededAt: '2026-01-01T00:02:00.000Z' });
    for (const name of ['a-1', 'a-2']) await createRoom('adapter-ids', name);
    await createRoom('adapter-ids-other', 'a-1');
    const holders = (scheduler: string, id: string) => store.roomsWithAllocationId(scheduler, id).map((r) => r.metadata.name).sort().join();
    await api.patchGameRoomStatus('adapter-ids', 'a-1', { status: { status: 'allocated', allocation: allocation('m-1') } });
    await api.patchGameRoomStatus('adapter-ids-other', 'a-1', { status: { status: 'allocated', allocation: allocation('m-1') } });
    await waitFor(() => holders('adapter-ids', 'm-1') === 'a-1' && holders('adapter-ids-other', 'm-1') === 'a-1', { message: 'an id in two schedulers' });
    // A newer allocation keeps the earlier id findable through previousAllocations; one dropped from there is gone.
    await api.patchGameRoomStatus('adapter-ids', 'a-1', { status: { status: 'active', allocation: allocation('m-2'), previousAllocations: [ended('m-1')] } });
    await api.patchGameRoomStatus('adapter-ids', 'a-2', { status: { status: 'allocated', allocation: allocation('m-3') } });
    await waitFor(() => holders('adapter-ids', 'm-1') === 'a-1' && holders('adapter-ids', 'm-2') === 'a-1' && holders('adapter-ids', 'm-3') === 'a-2', { message: 'current and earlier ids' });
    await api.patchGameRoomStatus('adapter-ids', 'a-1', { status: { allocation: allocation('m-4'), previousAllocations: [ended('m-2')] } });
    await waitFor(() => holders('adapter-ids', 'm-1') === '' && holders('adapter-ids', 'm-2') === 'a-1' && holders('adapter-ids', 'm-4') === 'a-1', { message: 'an earlier id dropped' });
    await api.deleteGameRoom('adapter-ids', 'a-1', undefined, 'Background');
    await waitFor(() => holders('adapter-ids', 'm-2') === '' && holders('adapter-ids', 'm-4') === '', { message: 'a deleted room' });
    expect(holders('adapter-ids', 'm-3')).toBe('a-2');
    expect(holders('adapter-ids-other', 'm-1')).toBe('a-1');
  });

  it('tells when its rooms cache has caught up with a room write: every room write made before it, by any client, is then in it', async () => {
    await createNamespace('adapter-fresh');
    const api = new RoomkeeperApi(clients.custom);
    for (let i = 0; i < 20; i++) {
      const name = `f-${String(i)}`;
      await createRoom('adapter-fresh', name);
      await api.patchGameRoomStatus('adapter-fresh', name, { status: { status: 'allocated', allocation: { id: `match-${String(i)}`, requestHash: 'h', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z' } } });
      const later = await createRoom('adapter-fresh', `later-${String(i)}`);
      // No wait for the watch: once the cache shows the later write, the earlier one must be in it.
      expect(await store.roomsCacheCaughtUp(later.metadata.resourceVersion as string, 5_000)).toBe(true);
      expect(store.findRoom('adapter-fresh', name)?.status?.allocation?.id).toBe(`match-${String(i)}`);
    }
    // A later write of something else moves the API server on; no room changes, so the cache cannot tell.
    const other = await clients.core.createNamespacedConfigMap({ namespace: 'adapter-fresh', body: { metadata: { name: 'not-a-room' } } });
    expect(await store.roomsCacheCaughtUp(other.metadata?.resourceVersion as string, 200)).toBe(false);
    // A room written while it waits lets it tell.
    const waiting = store.roomsCacheCaughtUp(other.metadata?.resourceVersion as string, 10_000);
    await createRoom('adapter-fresh', 'f-late');
    expect(await waiting).toBe(true);
  });

  it('caches rooms and operations slim; direct reads return them whole', async () => {
    await createNamespace('adapter-slim');
    const api = new RoomkeeperApi(clients.custom);
    await api.createGameRoom({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: 'room-s', namespace: 'adapter-slim', labels: { tier: 'gold' }, annotations: { 'roomkeeper.io/create-request': 'req-1' } },
      spec: { scheduler: 'adapter-slim', version: 'v1.0.0', validation: false },
    });
    await api.patchGameRoomStatus('adapter-slim', 'room-s', { status: {
      status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: '10.0.0.7', lastPingAt: '2026-01-01T00:00:00.000Z',
      createdAt: '2026-01-01T00:00:00.000Z', ports: [{ name: 'game', protocol: 'UDP', port: 20001, containerPort: 7777 }],
    } });
    const cached = await waitFor(() => {
      const room = store.findRoom('adapter-slim', 'room-s');
      return room?.status?.host === '10.0.0.7' ? room : undefined;
    });
    expect(cached.metadata).toEqual({ name: 'room-s', namespace: 'adapter-slim', resourceVersion: expect.any(String) as string, labels: { tier: 'gold' } });
    expect(cached.status).toEqual({ status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, lastPingAt: '2026-01-01T00:00:00.000Z', host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 20001 }] });
    const whole = await store.getRoom('adapter-slim', 'room-s');
    expect(whole?.metadata.annotations).toEqual({ 'roomkeeper.io/create-request': 'req-1' });
    expect(whole?.status?.lastPingAt).toBe('2026-01-01T00:00:00.000Z');

    const made = buildOperation({ id: 'op-adapter-slim', schedulerName: 'adapter-slim', definitionName: 'remove_rooms', input: { roomsIds: ['room-s'] }, source: 'api', enqueuedAt: Date.parse('2026-01-01T00:00:00.000Z') });
    await store.createOperation(made);
    await api.patchOperationStatus('op-adapter-slim', { status: { status: 'finished', executionHistory: [{ createdAt: '2026-01-01T00:00:01.000Z', event: 'removed 1 room' }] } });
    const listed = await waitFor(async () => (await store.listOperations('adapter-slim')).find((o) => o.status?.status === 'finished'));
    expect(listed.status).toEqual({ status: 'finished' });
    expect(listed.spec.input).toBeUndefined();
    const op = await store.getOperation('op-adapter-slim');
    expect(op?.status?.executionHistory).toEqual([{ createdAt: '2026-01-01T00:00:01.000Z', event: 'removed 1 room' }]);
    expect(op?.spec.input).toEqual({ roomsIds: ['room-s'] });
  });

  it('creates the PingDigest and patches its status, then only patches its status', async () => {
    await createNamespace('adapter-digest');
    const labels = { 'roomkeeper.io/ping-digest': 'true' };
    const digest = (lastPings: string, flushedAt: string) => ({ namespace: 'adapter-digest', name: 'roomkeeper-pings-gw', labels, spec: { scheduler: 'adapter-digest', replica: 'gw' }, status: { lastPings, flushedAt } });
    await store.writeDigest(digest('{"a":1}', '1'));
    expect(await metrics.render()).toMatch(/roomkeeper_kube_writes_total\{kind="ping_digest"\} 2/);
    await store.writeDigest(digest('{"a":2}', '2'));
    const written = (await clients.custom.getNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'pingdigests', namespace: 'adapter-digest', name: 'roomkeeper-pings-gw' })) as PingDigest;
    expect(written.status).toEqual({ lastPings: '{"a":2}', flushedAt: '2' });
    expect(written.spec).toEqual({ scheduler: 'adapter-digest', replica: 'gw' });
    expect(written.metadata.labels).toMatchObject(labels);
    expect(await metrics.render()).toMatch(/roomkeeper_kube_writes_total\{kind="ping_digest"\} 3/);
  });

  it('answers namespace-gone for a digest whose namespace is missing or being deleted', async () => {
    const digest = (namespace: string) => ({ namespace, name: 'roomkeeper-pings-gw', labels: {}, spec: { scheduler: namespace, replica: 'gw' }, status: { lastPings: '{}', flushedAt: '1' } });
    expect(await store.writeDigest(digest('adapter-no-such-namespace'))).toBe('namespace-gone');
    await createNamespace('adapter-doomed');
    // A held object keeps the deleted namespace terminating.
    await clients.core.createNamespacedConfigMap({ namespace: 'adapter-doomed', body: { metadata: { name: 'held', finalizers: ['test/hold'] } } });
    await clients.core.deleteNamespace({ name: 'adapter-doomed' });
    expect(await store.writeDigest(digest('adapter-doomed'))).toBe('namespace-gone');
    await clients.core.patchNamespacedConfigMap({ name: 'held', namespace: 'adapter-doomed', body: { metadata: { finalizers: null } } }, MERGE_PATCH);
  });

  it('claims an allocationId for one try: a second claim finds the first; a release deletes only that claim; a missing namespace is the scheduler gone', async () => {
    await createNamespace('adapter-claims');
    // An id may hold characters a name may not.
    const first = await store.claimAllocationId('adapter-claims', 'Match:7_a.b', { requestHash: 'h1', replica: 'gw-0' });
    expect(first).toMatchObject({ created: true, claim: { requestHash: 'h1', replica: 'gw-0' } });
    expect(first.claim?.uid).toBeTruthy();
    expect(Math.abs((first.claim?.createdAt ?? 0) - Date.now())).toBeLessThan(60_000);
    const second = await store.claimAllocationId('adapter-claims', 'Match:7_a.b', { requestHash: 'h2', replica: 'gw-1' });
    expect(second).toEqual({ created: false, claim: first.claim });
    expect(await store.readAllocationClaim('adapter-claims', 'Match:7_a.b')).toEqual(first.claim);
    // Another id is another claim.
    expect((await store.claimAllocationId('adapter-claims', 'match:7_a.b', { requestHash: 'h1', replica: 'gw-0' })).created).toBe(true);
    // A release with another uid (a claim made since by another try) leaves the claim.
    await store.releaseAllocationClaim('adapter-claims', 'Match:7_a.b', { ...first.claim!, uid: 'not-this-one' });
    expect(await store.readAllocationClaim('adapter-claims', 'Match:7_a.b')).toEqual(first.claim);
    await store.releaseAllocationClaim('adapter-claims', 'Match:7_a.b', first.claim!);
    expect(await store.readAllocationClaim('adapter-claims', 'Match:7_a.b')).toBeUndefined();
    await store.releaseAllocationClaim('adapter-claims', 'Match:7_a.b', first.claim!);
    await expect(store.claimAllocationId('adapter-no-such-scheduler', 'm-1', { requestHash: 'h', replica: 'gw-0' })).rejects.toBeInstanceOf(StoreNotFoundError);
  });

  it('deletes the claims it keeps after their try in a batch once due (deletecollection by label), leaving other replicas\' claims', async () => {
    await createNamespace('adapter-kept-claims');
    const kept = await store.claimAllocationId('adapter-kept-claims', 'kept-1', { requestHash: 'h', replica: 'gw-0' });
    const kept2 = await store.claimAllocationId('adapter-kept-claims', 'kept-2', { requestHash: 'h', replica: 'gw-0' });
    // Another replica's claim, made in the same second.
    const labels = (await clients.custom.getNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'allocationclaims', namespace: 'adapter-kept-claims', name: `id-${createHash('sha256').update('kept-1').digest('hex').slice(0, 40)}` }) as { metadata: { labels: Record<string, string> } }).metadata.labels;
    await clients.custom.createNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'allocationclaims', namespace: 'adapter-kept-claims', body: {
      apiVersion: 'roomkeeper.io/v1', kind: 'AllocationClaim', metadata: { name: 'id-other', labels: { ...labels, 'roomkeeper.io/claim-replica': 'another' } },
      spec: { scheduler: 'adapter-kept-claims', allocationId: 'other-1', replica: 'gw-1' },
    } });
    await store.releaseAllocationClaim('adapter-kept-claims', 'kept-1', kept.claim!, 300);
    await store.releaseAllocationClaim('adapter-kept-claims', 'kept-2', kept2.claim!, 300);
    expect(await store.readAllocationClaim('adapter-kept-claims', 'kept-1')).toBeDefined();
    await waitFor(async () => (await store.readAllocationClaim('adapter-kept-claims', 'kept-1')) === undefined && (await store.readAllocationClaim('adapter-kept-claims', 'kept-2')) === undefined,
      { timeoutMs: 10_000, message: 'the kept claims deleted once due' });
    const left = await clients.custom.listNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'allocationclaims', namespace: 'adapter-kept-claims' }) as { items: { metadata: { name: string } }[] };
    expect(left.items.map((c) => c.metadata.name)).toEqual(['id-other']);
  });

  it('deletes abandoned claims (older than the age given) of every replica, and leaves younger ones', async () => {
    await createNamespace('adapter-abandoned-claims');
    await store.claimAllocationId('adapter-abandoned-claims', 'left-1', { requestHash: 'h', replica: 'gw-0' });
    expect(await store.deleteAbandonedClaims(10 * 60_000)).toBe(0);
    expect(await store.readAllocationClaim('adapter-abandoned-claims', 'left-1')).toBeDefined();
    // Any age: every claim counts as abandoned (creationTimestamp has whole seconds).
    expect(await store.deleteAbandonedClaims(-60_000)).toBeGreaterThanOrEqual(1);
    expect(await store.readAllocationClaim('adapter-abandoned-claims', 'left-1')).toBeUndefined();
  });

  it('an allocation names its replica; a replica that lost a room to another replica\'s allocation counts it and tries its own share of equally good rooms first', async () => {
    const ns = 'adapter-shares';
    await store.createScheduler(ns, validSpec());
    const api = new RoomkeeperApi(clients.custom);
    await api.patchSchedulerStatus(ns, { status: { version: 'v1.0.0' } });
    await createNamespace(ns);
    const names = Array.from({ length: 8 }, (_, i) => `room-${i}`);
    for (const name of names) {
      await createRoom(ns, name);
      await api.patchGameRoomStatus(ns, name, { status: { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 40123 }] } });
    }
    await waitFor(() => store.findScheduler(ns)?.status?.version === 'v1.0.0' && names.every((n) => store.findRoom(ns, n)?.status?.status === 'ready'), { message: 'the ready rooms in the cache' });
    const metricsA = new MetricsRegistry();
    const metricsB = new MetricsRegistry();
    const a = new RoomAllocations({ rooms: store, schedulers: store, store, logger: silentLogger(), metrics: metricsA, now: Date.now, replicaId: 'Gateway-A' });
    const before = new Map(names.map((n) => [n, store.findRoom(ns, n) as GameRoom]));
    const first = await a.allocate(ns, {}, undefined);
    expect((await api.getGameRoom(ns, first.roomId)).status?.allocation?.replica).toBe('gateway-a');
    // Replica B's cache has not seen A's write yet: it shows A's room as it was, first (B draws rooms in order).
    let behind = true;
    const viewOfB = Object.assign(Object.create(store) as KubernetesStore, {
      listAllocatableGroups: (scheduler: string) => store.listAllocatableGroups(scheduler).map((g) => ({
        ...g, rooms: () => (behind ? [before.get(first.roomId) as GameRoom, ...g.rooms().filter((r) => r.metadata.name !== first.roomId)] : g.rooms()),
      })),
    });
    const b = new RoomAllocations({ rooms: store, schedulers: store, store: viewOfB, logger: silentLogger(), metrics: metricsB, now: Date.now, replicaId: 'gateway-b', random: () => 0 });
    expect(await metricsB.render()).toMatch(/^roomkeeper_allocation_replicas 1$/m);
    const second = await b.allocate(ns, {}, undefined);
    expect(second.roomId).not.toBe(first.roomId);
    expect(metricsB.sum('roomkeeper_allocation_conflicts_total')).toBe(1);
    expect((await api.getGameRoom(ns, second.roomId)).status?.allocation?.replica).toBe('gateway-b');
    expect(await metricsB.render()).toMatch(/^roomkeeper_allocation_replicas 2$/m);
    // From now on B takes a room of its own share while one is free (these names leave some in each share).
    behind = false;
    await waitFor(() => [first.roomId, second.roomId].every((n) => store.findRoom(ns, n)?.status?.status === 'allocated'), { message: 'both allocations in the cache' });
    const share = (n: string) => inShareOf(n, ['gateway-a', 'gateway-b'], 'gateway-b');
    const ownFree = names.filter((n) => n !== first.roomId && n !== second.roomId && share(n));
    expect(ownFree.length).toBeGreaterThan(0);
    expect(names.filter((n) => !share(n)).length).toBeGreaterThan(0);
    const third = await b.allocate(ns, {}, undefined);
    expect(ownFree).toContain(third.roomId);
  });

  it('a claim left by a replica killed mid-request is taken over, once stale, by a retry of its id on another replica: it allocates one room, which a replay answers again', async () => {
    await store.createScheduler('adapter-takeover', validSpec());
    const api = new RoomkeeperApi(clients.custom);
    await api.patchSchedulerStatus('adapter-takeover', { status: { version: 'v1.0.0' } });
    await createNamespace('adapter-takeover');
    await createRoom('adapter-takeover', 'room-1');
    await api.patchGameRoomStatus('adapter-takeover', 'room-1', { status: { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 40123 }] } });
    await waitFor(() => store.findScheduler('adapter-takeover')?.status?.version === 'v1.0.0' && store.findRoom('adapter-takeover', 'room-1')?.status?.status === 'ready',
      { message: 'the scheduler and its ready room in the cache' });
    // The killed replica's try made its claim, and never wrote a room nor let the claim go.
    const dead = new KubernetesStore({ kc: sandbox.kubeConfig(), custom: clients.custom, core: clients.core, logger: silentLogger(), metrics: new MetricsRegistry() });
    const left = await dead.claimAllocationId('adapter-takeover', 'k9-5', { requestHash: 'h', replica: 'gw-dead' });
    expect(left.created).toBe(true);
    // The retry, on another replica whose clock reads the claim as stale.
    const metricsAlive = new MetricsRegistry();
    const allocations = new RoomAllocations({ rooms: store, schedulers: store, store, logger: silentLogger(), metrics: metricsAlive, now: () => Date.now() + ALLOCATION_CLAIM_STALE_MS + 1_000, replicaId: 'gw-alive' });
    const answer = await allocations.allocate('adapter-takeover', { allocationId: 'k9-5', ttlSeconds: 120 }, undefined);
    expect(answer).toMatchObject({ roomId: 'room-1', allocationId: 'k9-5', message: '' });
    expect(metricsAlive.sum('roomkeeper_allocation_id_waits_total', { outcome: 'taken_over' })).toBe(1);
    expect((await api.getGameRoom('adapter-takeover', 'room-1')).status?.allocation?.id).toBe('k9-5');
    // The dead replica's claim is gone (the retry's own claim may linger a few seconds).
    expect((await store.readAllocationClaim('adapter-takeover', 'k9-5'))?.uid).not.toBe(left.claim?.uid);
    const replay = await allocations.allocate('adapter-takeover', { allocationId: 'k9-5', ttlSeconds: 120 }, undefined);
    expect(replay).toMatchObject({ roomId: 'room-1', message: 'replayed: this allocationId was already answered with this room' });
  });

  it('each replica sweeps, periodically, the stale claims (over 60 s old) of every replica, leaving younger ones', async () => {
    await createNamespace('adapter-swept-claims');
    const dead = new KubernetesStore({ kc: sandbox.kubeConfig(), custom: clients.custom, core: clients.core, logger: silentLogger(), metrics: new MetricsRegistry() });
    await dead.claimAllocationId('adapter-swept-claims', 'k9-1', { requestHash: 'h', replica: 'gw-dead' });
    // Young, it stays.
    await store.deleteAbandonedClaims(ALLOCATION_CLAIM_STALE_MS);
    expect(await store.readAllocationClaim('adapter-swept-claims', 'k9-1')).toMatchObject({ replica: 'gw-dead' });
    // A replica whose clock reads it as stale deletes it at its next timed sweep, with no request for that id.
    const sweeper = new KubernetesStore({
      kc: sandbox.kubeConfig(), custom: clients.custom, core: clients.core, logger: silentLogger(), metrics: new MetricsRegistry(),
      claimSweepIntervalMs: 50, now: () => Date.now() + ALLOCATION_CLAIM_STALE_MS + 1_000,
    });
    await sweeper.start();
    try {
      await waitFor(async () => (await store.readAllocationClaim('adapter-swept-claims', 'k9-1')) === undefined, { message: 'the timed sweep to delete the stale claim' });
    } finally {
      await sweeper.stop();
    }
  });

  it('deletes schedulers, ignoring missing ones', async () => {
    await store.deleteScheduler('adapter-a');
    await store.deleteScheduler('adapter-a');
    await waitFor(async () => (await store.getScheduler('adapter-a')) === undefined);
  });
});

