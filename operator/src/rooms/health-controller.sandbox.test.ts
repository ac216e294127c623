/**
 * The health check alone on the sandbox API server, with the operator's real caches and clients
 * (test/support/controller-harness.ts): it writes its decision and enqueues what heals the fleet
 * once, and a check of a fleet it already decided on makes no write at all.
 */
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { newOperationId } from '../../../common/src/operations/operation-id';
import { LOST_ROOMS_ANNOTATION } from '../../../common/src/resources/labels';
import { newVersionObject } from '../operations/definitions/shared';
import { OperationDefinition, OperationSourceName } from '../../../common/src/resources/operation-names';
import { ROOM_HOST, startControllerHarness, type ControllerHarness } from '../../../test/support/controller-harness';
import { waitFor } from '../../../test/support/wait';
import { RoomExpectations } from './expectations';
import { HealthController } from './health-controller';
import { RoomStatusController } from './room-status-controller';

describe('HealthController on the sandbox', () => {
  let h: ControllerHarness;
  let health: HealthController;
  /** The health check of a replica that has just become the leader: nothing in memory it shares with the one before. */
  const newLeaderHealth = () => new HealthController({ ...h.deps, expectations: new RoomExpectations(h.deps.now) }, {
    operationsOf: (s) => h.runner.operationsOf(s),
    track: (op) => h.runner.track(op),
  });

  /** A ready room, seen by a room status controller (`rooms`), whose pod is then deleted. */
  const roomWithPodDeleted = async (scheduler: string, rooms: RoomStatusController): Promise<string> => {
    const room = await h.readyRoom(await h.api.getScheduler(scheduler));
    await h.converge(() => rooms.reconcile(`${scheduler}/${room}`));
    await h.core.deleteNamespacedPod({ name: room, namespace: scheduler, gracePeriodSeconds: 0 });
    await waitFor(async () => (await h.core.listNamespacedPod({ namespace: scheduler })).items.length === 0, { message: 'the pod gone' });
    return room;
  };
  /**
   * The add_rooms `first` ends without a room (as if its room failed too); the leader changes
   * again: the reasons of the add_rooms the next leader's health check enqueues.
   */
  const nextAddReasons = async (scheduler: string, first: string): Promise<unknown[]> => {
    await h.api.patchOperationStatus(first, { status: { status: 'finished', finishedAt: new Date().toISOString() } });
    await h.converge(() => newLeaderHealth().reconcile(scheduler));
    return (await h.api.listOperations(scheduler)).items.filter((op) => op.metadata.name !== first).map((op) => op.spec.input?.reason);
  };

  beforeAll(async () => {
    h = await startControllerHarness();
    health = new HealthController(h.deps, {
      operationsOf: (s) => h.runner.operationsOf(s),
      track: (op) => h.runner.track(op),
    });
  });

  afterAll(async () => {
    await h.stop();
  });

  test('a scheduler without rooms gets its desired count and one add_rooms operation; once more: no write', async () => {
    await h.createdScheduler('empty', { roomsReplicas: 2 });
    await h.api.patchSchedulerStatus('empty', { status: { lostRooms: [{ name: 'empty-gone', reason: 'its pod was deleted', lostAt: new Date().toISOString() }] } });
    await h.converge(() => health.reconcile('empty'));

    const s = await h.api.getScheduler('empty');
    expect(s.status?.autoscaling).toMatchObject({ desired: 2 });
    const ops = (await h.api.listOperations('empty')).items;
    expect(ops).toHaveLength(1);
    expect(ops[0]?.spec).toMatchObject({ definitionName: OperationDefinition.AddRooms, priority: true, source: OperationSourceName.Operator, input: { amount: 2 } });
    expect(String(ops[0]?.spec.input?.reason)).toContain('lost: empty-gone (its pod was deleted)');

    expect(await h.writesOf(() => health.reconcile('empty'))).toBe(0);
    expect((await h.api.listOperations('empty')).items).toHaveLength(1);
  });

  test('a room lost under one leader is named in the add_rooms of the next leader\'s health check, and only once', async () => {
    await h.createdScheduler('failover', { roomsReplicas: 1 });
    // The old leader's room status controller sees the room's pod gone, deletes the room, and dies.
    const oldLeader = new RoomStatusController(h.deps);
    const room = await roomWithPodDeleted('failover', oldLeader);
    await h.converge(() => oldLeader.reconcile(`failover/${room}`));
    await waitFor(async () => (await h.api.listGameRooms('failover')).items.length === 0, { message: 'the lost room deleted' });

    await h.converge(() => newLeaderHealth().reconcile('failover'));
    const ops = (await h.api.listOperations('failover')).items;
    expect(ops).toHaveLength(1);
    expect(ops[0]?.spec).toMatchObject({ definitionName: OperationDefinition.AddRooms, source: OperationSourceName.Operator, input: { amount: 1 } });
    expect(String(ops[0]?.spec.input?.reason)).toContain(`; lost: ${room} (its pod was deleted)`);

    // The next add_rooms no longer names the room the first one replaced.
    expect(await nextAddReasons('failover', ops[0]?.metadata.name as string)).toEqual(['roomsReplicas is 1; 0 available of 1 desired']);
  });

  test('a room whose pod is gone, its loss not yet recorded: the add_rooms names it, and not again once it is recorded', async () => {
    await h.createdScheduler('podless', { roomsReplicas: 1 });
    const rooms = new RoomStatusController(h.deps);
    const room = await roomWithPodDeleted('podless', rooms);
    // Its game server's last ping (as the gateway writes it) reaches the health check first.
    await h.api.patchGameRoomStatus('podless', room, { status: { status: 'terminating', pingStatus: 'terminating' } });

    await h.converge(() => newLeaderHealth().reconcile('podless'));
    const [first, ...others] = (await h.api.listOperations('podless')).items;
    expect(others).toEqual([]);
    expect(String(first?.spec.input?.reason)).toBe(`roomsReplicas is 1; 0 available of 1 desired; lost: ${room} (its pod was deleted)`);
    expect(first?.metadata.annotations?.[LOST_ROOMS_ANNOTATION]).toBe(room);

    // Then the room status controller records the loss and deletes the room; the next add_rooms
    // does not name the room again.
    await h.converge(() => rooms.reconcile(`podless/${room}`));
    expect((await h.api.getScheduler('podless')).status?.lostRooms?.map((l) => l.name)).toEqual([room]);
    expect(await nextAddReasons('podless', first?.metadata.name as string)).toEqual(['roomsReplicas is 1; 0 available of 1 desired']);
  });

  test('a room whose game server pinged terminating while its pod is still in the cache: the add_rooms names it, and not again once it is lost', async () => {
    await h.createdScheduler('pinged-first', { roomsReplicas: 1 });
    const rooms = new RoomStatusController(h.deps);
    const room = await h.readyRoom(await h.api.getScheduler('pinged-first'));
    await h.converge(() => rooms.reconcile(`pinged-first/${room}`));
    // The ping (its pod is being deleted) reaches the operator before the pod's deletion does.
    await h.api.patchGameRoomStatus('pinged-first', room, { status: { status: 'terminating', pingStatus: 'terminating' } });
    await waitFor(() => h.informers.rooms.get(room, 'pinged-first')?.status?.pingStatus === 'terminating', { message: 'the ping in the cache' });
    expect(h.informers.pods.get(room, 'pinged-first')).toBeDefined();

    await h.converge(() => newLeaderHealth().reconcile('pinged-first'));
    const [first, ...others] = (await h.api.listOperations('pinged-first')).items;
    expect(others).toEqual([]);
    expect(String(first?.spec.input?.reason)).toBe(`roomsReplicas is 1; 0 available of 1 desired; lost: ${room} (its game server pinged terminating)`);

    // Then its pod goes, and the room status controller records the loss: not named again.
    await h.core.deleteNamespacedPod({ name: room, namespace: 'pinged-first', gracePeriodSeconds: 0 });
    await waitFor(() => h.informers.pods.get(room, 'pinged-first') === undefined, { message: 'the pod gone from the cache' });
    await h.converge(() => rooms.reconcile(`pinged-first/${room}`));
    expect((await h.api.getScheduler('pinged-first')).status?.lostRooms?.map((l) => l.name)).toEqual([room]);
    expect(await nextAddReasons('pinged-first', first?.metadata.name as string)).toEqual(['roomsReplicas is 1; 0 available of 1 desired']);
  });

  test('a lost room whose deletion the cache shows before the Scheduler\'s record of it: the health check waits for the record, and its add_rooms names the room', async () => {
    await h.createdScheduler('late-record', { roomsReplicas: 1 });
    const rooms = new RoomStatusController(h.deps);
    const room = await roomWithPodDeleted('late-record', rooms);
    await h.caughtUp();
    // The Scheduler's events reach the caches 2 s late; the rooms' at once (separate watches).
    h.sandbox.faults.set({ watchDelayMs: 2_000, match: { verb: 'watch', resource: 'schedulers' } });
    h.sandbox.faults.cutWatches();
    try {
      await waitFor(() => h.sandbox.faults.openWatches() >= Object.keys(h.informers).length, { message: 'the watches open again' });
      await rooms.reconcile(`late-record/${room}`);
      await waitFor(() => h.informers.rooms.get(room, 'late-record') === undefined, { message: 'the room\'s deletion in the cache' });
      expect(h.informers.schedulers.get('late-record')?.status?.lostRooms).toBeUndefined();

      expect((await health.reconcile('late-record')).requeueAfterMs).toBeGreaterThan(0);
      expect((await h.api.listOperations('late-record')).items).toEqual([]);
    } finally {
      h.sandbox.faults.clear();
    }
    await h.converge(() => health.reconcile('late-record'));
    const ops = (await h.api.listOperations('late-record')).items;
    expect(ops.map((op) => op.spec.input?.reason)).toEqual([`roomsReplicas is 1; 0 available of 1 desired; lost: ${room} (its pod was deleted)`]);
  });

  test('status.version edited back to an older version that exists: the health check adds, removes and replaces no room, and an add_rooms run meanwhile makes rooms of the version flagged active', async () => {
    const created = await h.createdScheduler('edited', { roomsReplicas: 1 });
    // v2.0.0 made active as a switch makes it: the versions' flags first, status.version last.
    const v2 = await h.api.createSchedulerVersion(newVersionObject(created, 'v2.0.0', 'major', created.spec));
    await h.api.patchSchedulerVersionStatus('edited-v1.0.0', { status: { active: false } });
    await h.api.patchSchedulerVersionStatus(v2.metadata.name as string, { status: { active: true } });
    const switched = await h.api.patchSchedulerStatus('edited', { status: { version: 'v2.0.0' } });
    const room = await h.readyRoom(switched);
    await h.converge(() => health.reconcile('edited'));
    expect((await h.api.listOperations('edited')).items).toEqual([]);

    // kubectl patch --subresource=status: no rolling update towards v1.0.0, no write at all.
    await h.api.patchSchedulerStatus('edited', { status: { version: 'v1.0.0' } });
    expect(await h.writesOf(() => health.reconcile('edited'))).toBe(0);
    expect((await h.api.listOperations('edited')).items).toEqual([]);

    // An add_rooms the health check enqueued just before the edit runs after it: a room of v2.0.0.
    const add = buildOperation({ id: newOperationId(h.deps.now()), schedulerName: 'edited', definitionName: OperationDefinition.AddRooms, input: { amount: 1 }, priority: true, source: OperationSourceName.Operator });
    await h.api.createOperation(add);
    await h.caughtUp();
    h.runner.setLeading(true);
    try {
      await h.runner.reconcile('edited');
      await waitFor(async () => (await h.api.getOperation(add.metadata.name as string)).status?.status === 'finished', { timeoutMs: 30_000, message: 'add_rooms finished' });
    } finally {
      h.runner.setLeading(false);
    }
    const rooms = (await h.api.listGameRooms('edited')).items;
    expect(rooms.filter((r) => r.metadata.name !== room).map((r) => r.spec.version)).toEqual(['v2.0.0']);
    expect((await h.api.getOperation(add.metadata.name as string)).status?.executionHistory?.map((e) => e.event))
      .toContain('status.version names v1.0.0, which no switch_active_version made active: the rooms are made of v2.0.0, the version whose SchedulerVersion says it is active; the scheduler controller sets status.version back to it');
  });

  test('a scheduler whose rooms are all there and ready: its decision written once; once more: no write', async () => {
    const s = await h.createdScheduler('whole', { roomsReplicas: 2 });
    await h.readyRoom(s);
    await h.readyRoom(s);
    await h.converge(() => health.reconcile('whole'));

    expect((await h.api.getScheduler('whole')).status?.autoscaling?.desired).toBe(2);
    expect((await h.api.listOperations('whole')).items).toEqual([]);

    expect(await h.writesOf(() => health.reconcile('whole'))).toBe(0);
  });

  test('a GameRoom of another scheduler written into a scheduler\'s namespace (kubectl) is no room of it: the health check removes nothing for it', async () => {
    const s = await h.createdScheduler('stray-host', { roomsReplicas: 1 });
    await h.readyRoom(s);
    await h.api.createGameRoom({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'stray-visitor', namespace: 'stray-host' }, spec: { scheduler: 'elsewhere', version: 'v1.0.0' } } as never);
    await waitFor(() => h.deps.caches.rooms.get('stray-visitor', 'stray-host') !== undefined, { message: 'the cache has the stray GameRoom' });
    await h.converge(() => health.reconcile('stray-host'));
    expect((await h.api.listOperations('stray-host')).items).toEqual([]);
    expect(await h.writesOf(() => health.reconcile('stray-host'))).toBe(0);
  });

  test('a room that pinged and whose pod lost Ready long after it started is pending, not expired (the initialization timeout is for rooms that never pinged); silent past the ping timeout, it goes', async () => {
    const s = await h.createdScheduler('blip', { roomsReplicas: 1 });
    const room = await h.readyRoom(s);
    // As kube-controller-manager leaves a pod whose node missed its heartbeats (an API server outage):
    // running for ten minutes, Ready False; the game server still pings, so the room composes `pending`.
    const startedAt = new Date(Date.now() - 600_000).toISOString();
    await h.core.patchNamespacedPodStatus({
      name: room, namespace: 'blip',
      body: [{ op: 'replace', path: '/status', value: {
        phase: 'Running', hostIP: ROOM_HOST, startTime: startedAt,
        conditions: [{ type: 'Ready', status: 'False', reason: 'NodeNotReady', lastTransitionTime: startedAt }, { type: 'ContainersReady', status: 'True' }],
        containerStatuses: [{ name: 'server', ready: true, restartCount: 0, image: 'example.com/game:1.0.0', imageID: '', started: true, state: { running: { startedAt } } }],
      } }],
    });
    await h.api.patchGameRoomStatus('blip', room, { status: { status: 'pending', pingStatus: 'ready', lastPingAt: new Date().toISOString() } });
    await h.converge(() => health.reconcile('blip'));
    expect((await h.api.listOperations('blip')).items.map((o) => o.spec.definitionName)).toEqual([]);

    await h.api.patchGameRoomStatus('blip', room, { status: { lastPingAt: new Date(Date.now() - 241_000).toISOString() } });
    await h.converge(() => health.reconcile('blip'));
    const ops = (await h.api.listOperations('blip')).items;
    expect(ops.map((o) => [o.spec.definitionName, o.spec.input?.roomsIds])).toEqual([[OperationDefinition.RemoveRooms, [room]]]);
    expect(ops[0]?.spec.input?.details).toEqual([expect.stringMatching(new RegExp(`^${room}: no ping recorded for 24\\ds \\(timeout 240s\\); its game server stopped pinging \\(hung or crashed: see its log\\), or the gateway refused its pings \\(see the gateway's warnings\\)$`))]);
  });
});
