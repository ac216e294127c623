/**
 * The room status controller alone on the sandbox API server, with the operator's real caches
 * and clients (test/support/controller-harness.ts): a room's status converges to what its pod
 * and ping say, a room whose pod is gone is recorded lost, told `terminated` and deleted once (also
 * across a leader change), and a reconcile of a converged room
 * makes no write at all.
 */
import { EventForwarder, startForwardReceiver } from '../../../common/src/forwarding';
import { MetricsRegistry } from '../../../common/src/metrics';
import { startControllerHarness, ROOM_HOST, type ControllerHarness } from '../../../test/support/controller-harness';
import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';
import { MAX_LOST_ROOMS } from './domain/lost-rooms';
import { RoomStatusController } from './room-status-controller';

describe('RoomStatusController on the sandbox', () => {
  let h: ControllerHarness;
  let controller: RoomStatusController;

  beforeAll(async () => {
    h = await startControllerHarness();
    controller = new RoomStatusController(h.deps);
  });

  afterAll(async () => {
    await h.stop();
  });

  test('a started room reads ready with its host and ports; once more: no write', async () => {
    const s = await h.createdScheduler('rs', { roomsReplicas: 0 });
    const room = await h.readyRoom(s);
    const passes = await h.converge(() => controller.reconcile(`rs/${room}`));
    expect(passes[0]).toBeGreaterThan(0);

    const written = await h.api.getGameRoom('rs', room);
    const pod = await h.core.readNamespacedPod({ name: room, namespace: 'rs' });
    const hostPort = pod.spec?.containers[0]?.ports?.[0]?.hostPort;
    expect(hostPort).toBeGreaterThanOrEqual(20000);
    expect(written.status).toMatchObject({
      status: 'ready', instanceStatus: 'ready', pingStatus: 'ready', host: ROOM_HOST,
      ports: [{ name: 'game', protocol: 'UDP', port: hostPort, containerPort: 7777 }],
    });
    expect(written.status?.reason).toBeUndefined();

    expect(await h.writesOf(() => controller.reconcile(`rs/${room}`))).toBe(0);
  });

  test('a room whose pod was deleted is recorded lost in its scheduler\'s status and deleted, once; once more: no write', async () => {
    const s = await h.createdScheduler('rl', { roomsReplicas: 0 });
    // The list already full: the oldest entry makes room for the new one.
    const earlier = Array.from({ length: MAX_LOST_ROOMS }, (_, i) => ({ name: `rl-old${i}`, reason: 'its pod never appeared', lostAt: new Date(Date.now() - 60_000 + i).toISOString() }));
    await h.api.patchSchedulerStatus('rl', { status: { lostRooms: earlier } });
    const room = await h.readyRoom(s);
    await h.converge(() => controller.reconcile(`rl/${room}`));
    await h.core.deleteNamespacedPod({ name: room, namespace: 'rl', gracePeriodSeconds: 0 });
    await waitFor(async () => (await h.core.listNamespacedPod({ namespace: 'rl' })).items.length === 0, { message: 'the pod gone' });

    await h.converge(() => controller.reconcile(`rl/${room}`));
    await waitFor(async () => !(await h.api.listGameRooms('rl')).items.some((r) => r.metadata.name === room), { message: 'the room deleted' });
    const lostRooms = (await h.api.getScheduler('rl')).status?.lostRooms;
    expect(lostRooms).toEqual([...earlier.slice(1), { name: room, reason: 'its pod was deleted', lostAt: expect.any(String) as string }]);

    expect(await h.writesOf(() => controller.reconcile(`rl/${room}`))).toBe(0);
    expect((await h.api.getScheduler('rl')).status?.lostRooms).toEqual(lostRooms);
  });

  test('a GameRoom made by hand in a namespace that is no scheduler\'s: one Warning saying why and what to do, and left alone, also past the pod\'s grace', async () => {
    await h.core.createNamespace({ body: { metadata: { name: 'handmade' } } });
    await h.api.createGameRoom({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'my-room', namespace: 'handmade' }, spec: { scheduler: 'handmade', version: 'v1.0.0' } });
    await waitFor(() => h.informers.rooms.get('my-room', 'handmade') !== undefined, { message: 'the room in the cache' });
    const events: { type: string; reason: string; note: string }[] = [];
    // A minute later: a room of a scheduler whose pod never appeared would count as lost by then.
    const later = new RoomStatusController({
      ...h.deps, now: () => Date.now() + 60_000,
      events: { record: (e: { type: string; reason: string; note: string }) => events.push(e) },
    });
    expect(await h.writesOf(() => later.reconcile('handmade/my-room'))).toBe(0);
    expect(await h.writesOf(() => later.reconcile('handmade/my-room'))).toBe(0);
    expect(events).toEqual([{
      regarding: expect.objectContaining({ kind: 'GameRoom', name: 'my-room', namespace: 'handmade' }) as object, type: 'Warning', reason: 'GameRoomNotManaged', action: 'IgnoreRoom',
      note: 'Not managed: namespace handmade is no scheduler\'s (no Scheduler handmade), so Roomkeeper makes no pod for this room, keeps no status and never deletes it. '
        + 'Rooms are made by their scheduler, in the namespace named as it: add rooms to a scheduler with POST /schedulers/<name>/add-rooms or '
        + 'kubectl scale scheduler <name> --replicas=<n>, and delete this one with kubectl delete gameroom my-room -n handmade',
    }]);
    expect((await h.api.getGameRoom('handmade', 'my-room')).metadata.deletionTimestamp).toBeUndefined();
    // Made again under the same name (another object): told again.
    const before = h.informers.rooms.get('my-room', 'handmade');
    await h.api.deleteGameRoom('handmade', 'my-room');
    await waitFor(() => h.informers.rooms.get('my-room', 'handmade') === undefined, { message: 'the room gone from the cache' });
    await later.roomDeleted(before as never);
    await h.api.createGameRoom({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'my-room', namespace: 'handmade' }, spec: { scheduler: 'handmade', version: 'v1.0.0' } });
    await waitFor(() => h.informers.rooms.get('my-room', 'handmade') !== undefined, { message: 'the room back in the cache' });
    await later.reconcile('handmade/my-room');
    expect(events.map((e) => e.reason)).toEqual(['GameRoomNotManaged', 'GameRoomNotManaged']);
  });

  /**
   * A ready room of `s` whose pod is deleted, with the pod's deletion in the cache; then the
   * Scheduler's watch events reach the cache 2 s late (the caller clears the faults).
   */
  async function lostWithSchedulerLate(s: Awaited<ReturnType<ControllerHarness['createdScheduler']>>): Promise<string> {
    const name = s.metadata.name as string;
    const room = await h.readyRoom(s);
    await h.converge(() => controller.reconcile(`${name}/${room}`));
    await h.core.deleteNamespacedPod({ name: room, namespace: name, gracePeriodSeconds: 0 });
    await waitFor(() => h.informers.pods.get(room, name) === undefined, { message: 'the pod gone from the cache' });
    await h.caughtUp();
    h.sandbox.faults.set({ watchDelayMs: 2_000, match: { verb: 'watch', resource: 'schedulers' } });
    h.sandbox.faults.cutWatches();
    await waitFor(() => h.sandbox.faults.openWatches() >= Object.keys(h.informers).length, { message: 'the watches open again' })
      .catch((err: unknown) => {
        h.sandbox.faults.clear();
        throw err;
      });
    return room;
  }

  test('a room whose pod goes with its namespace (the scheduler being deleted) is deleted, not recorded lost, and no Event is tried', async () => {
    const s = await h.createdScheduler('rns', { roomsReplicas: 0 });
    const room = await h.readyRoom(s);
    await h.converge(() => controller.reconcile(`rns/${room}`));
    const logs = captureLogs('debug', 'operator');
    const events: string[] = [];
    const deleting = new RoomStatusController({
      ...h.deps, logger: logs.logger,
      events: { record: (e: { reason: string }) => events.push(e.reason) },
    });
    // The GameRooms' watch events reach the cache 5 s late, so the reconcile sees the room as it
    // was while its pod is gone with the namespace (on a cluster: separate watches, either first).
    // A finalizer holds the room, and so the namespace, until the end.
    await h.api.jsonPatchGameRoom('rns', room, [{ op: 'add', path: '/metadata/finalizers', value: ['test.roomkeeper.io/hold'] }]);
    await h.caughtUp();
    h.sandbox.faults.set({ watchDelayMs: 5_000, match: { verb: 'watch', resource: 'gamerooms' } });
    try {
      h.sandbox.faults.cutWatches();
      await waitFor(() => h.sandbox.faults.openWatches() >= Object.keys(h.informers).length, { message: 'the watches open again' });
      await h.core.deleteNamespace({ name: 'rns' });
      await waitFor(() => Boolean(h.informers.namespaces.get('rns')?.metadata?.deletionTimestamp), { message: 'the namespace terminating in the cache' });
      await waitFor(() => h.informers.pods.get(room, 'rns') === undefined, { message: 'the pod gone from the cache' });
      expect(h.informers.rooms.get(room, 'rns')?.metadata.deletionTimestamp).toBeUndefined();
      await deleting.reconcile(`rns/${room}`);
    } finally {
      h.sandbox.faults.clear();
    }
    expect((await h.api.getScheduler('rns')).status?.lostRooms ?? []).toEqual([]);
    expect(events).toEqual([]);
    await waitFor(() => logs.lines.some((l) => l.message === 'room pod deleted with its namespace; deleting the room'), { message: 'the debug line' });
    expect(logs.lines.filter((l) => l.message === 'room lost, deleting it')).toEqual([]);
    expect((await h.api.getGameRoom('rns', room)).metadata.deletionTimestamp).toBeTruthy();
    await h.api.jsonPatchGameRoom('rns', room, [{ op: 'remove', path: '/metadata/finalizers' }]);
    await waitFor(async () => (await h.api.listGameRooms('rns')).items.length === 0, { message: 'the room deleted' });
  });

  test('a lost room whose deletion fails is recorded once, and told once (log line, Event), also when the retry comes before the cache shows the record', async () => {
    const s = await h.createdScheduler('rl-retry', { roomsReplicas: 0 });
    const logs = captureLogs('info', 'operator');
    const events: string[] = [];
    const told = new RoomStatusController({ ...h.deps, logger: logs.logger, events: { record: (e: { reason: string }) => events.push(e.reason) } });
    // A list already there: a record appends without a resourceVersion (lost-rooms.ts).
    const earlier = { name: 'rl-retry-old', reason: 'its pod never appeared', lostAt: new Date(Date.now() - 60_000).toISOString() };
    await h.api.patchSchedulerStatus('rl-retry', { status: { lostRooms: [earlier] } });
    // The Scheduler's events reach the cache 2 s late, and every GameRoom deletion fails.
    const room = await lostWithSchedulerLate(s);
    try {
      h.sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'delete', resource: 'gamerooms' } });
      await expect(told.reconcile(`rl-retry/${room}`)).rejects.toThrow();
      await expect(told.reconcile(`rl-retry/${room}`)).rejects.toThrow();
    } finally {
      h.sandbox.faults.clear();
    }
    await h.converge(() => told.reconcile(`rl-retry/${room}`));
    expect((await h.api.getScheduler('rl-retry')).status?.lostRooms?.map((l) => l.name)).toEqual([earlier.name, room]);
    expect((await h.api.listGameRooms('rl-retry')).items.map((r) => r.metadata.name)).toEqual([]);
    expect(logs.lines.filter((l) => l.message === 'room lost, deleting it' && l.room === room)).toHaveLength(1);
    expect(events.filter((e) => e === 'GameRoomDeleted')).toHaveLength(1);
  });

  test('a scheduler\'s first lost room is recorded by one reconcile also when the cache\'s Scheduler is behind the server', async () => {
    const s = await h.createdScheduler('rl-first', { roomsReplicas: 0 });
    // The Scheduler's events reach the cache 2 s late; its status moves meanwhile (as its room
    // counts do), so the first record's resourceVersion condition fails on the cached Scheduler.
    const room = await lostWithSchedulerLate(s);
    try {
      const before = (await h.api.getScheduler('rl-first')).metadata.resourceVersion;
      await h.api.patchSchedulerStatus('rl-first', { status: { roomsByVersion: { 'v1.0.0': 1 } } });
      expect((await h.api.getScheduler('rl-first')).metadata.resourceVersion).not.toBe(before);
      await controller.reconcile(`rl-first/${room}`);
    } finally {
      h.sandbox.faults.clear();
    }
    expect((await h.api.getScheduler('rl-first')).status?.lostRooms?.map((l) => l.name)).toEqual([room]);
    await waitFor(async () => !(await h.api.listGameRooms('rl-first')).items.some((r) => r.metadata.name === room), { message: 'the room deleted' });
  });

  test('a lost room is recorded by one reconcile also when the cache shows the list one short of full and the server has it full', async () => {
    const s = await h.createdScheduler('rl-full', { roomsReplicas: 0 });
    const entry = (i: number) => ({ name: `rl-full-old${i}`, reason: 'its pod never appeared', lostAt: new Date(Date.now() - 60_000 + i).toISOString() });
    const earlier = Array.from({ length: MAX_LOST_ROOMS - 1 }, (_, i) => entry(i));
    await h.api.patchSchedulerStatus('rl-full', { status: { lostRooms: earlier } });
    const room = await lostWithSchedulerLate(s);
    try {
      // Another loss fills the list on the server; the cache still shows one place free, so the
      // append it decides removes nothing and the API server refuses a 21st item.
      const last = entry(MAX_LOST_ROOMS);
      await h.api.patchSchedulerStatus('rl-full', { status: { lostRooms: [...earlier, last] } });
      await controller.reconcile(`rl-full/${room}`);
    } finally {
      h.sandbox.faults.clear();
    }
    const names = (await h.api.getScheduler('rl-full')).status?.lostRooms?.map((l) => l.name);
    expect(names).toEqual([...earlier.slice(1).map((e) => e.name), `rl-full-old${MAX_LOST_ROOMS}`, room]);
    await waitFor(async () => !(await h.api.listGameRooms('rl-full')).items.some((r) => r.metadata.name === room), { message: 'the room deleted' });
  });

  test('a lost room is told terminated once across a leader change: the next leader neither repeats nor skips it', async () => {
    const receiver = await startForwardReceiver();
    const forwarder = new EventForwarder({ logger: h.deps.logger, metrics: new MetricsRegistry() });
    try {
      const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
      const s = await h.createdScheduler('rf', { roomsReplicas: 0, forwarders });
      const lostRoom = await h.readyRoom(s);
      const removedRoom = await h.readyRoom(s);
      const terminatedTold = (room: string) => receiver.requestsOf('SendRoomStatus').filter((r) => r.room.roomId === room && r.statusType === 'terminated').length;
      const replica = () => new RoomStatusController({ ...h.deps, forwarder });

      // The old leader finds the room's pod gone, tells `terminated`, and dies before the room is
      // deleted (its delete request fails).
      const oldLeader = replica();
      await h.converge(() => oldLeader.reconcile(`rf/${lostRoom}`));
      await h.core.deleteNamespacedPod({ name: lostRoom, namespace: 'rf', gracePeriodSeconds: 0 });
      await waitFor(async () => !(await h.core.listNamespacedPod({ namespace: 'rf' })).items.some((p) => p.metadata?.name === lostRoom), { message: 'the pod gone' });
      await h.caughtUp();
      h.sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'delete', resource: 'gamerooms' } });
      try {
        await expect(oldLeader.reconcile(`rf/${lostRoom}`)).rejects.toThrow();
      } finally {
        h.sandbox.faults.clear();
      }
      expect(terminatedTold(lostRoom)).toBe(1);
      const lastState = await h.api.getGameRoom('rf', lostRoom);

      // The next leader deletes the room without telling it again, nor when its deletion is seen.
      const newLeader = replica();
      await h.converge(() => newLeader.reconcile(`rf/${lostRoom}`));
      await waitFor(async () => !(await h.api.listGameRooms('rf')).items.some((r) => r.metadata.name === lostRoom), { message: 'the lost room deleted' });
      await newLeader.roomDeleted(lastState);
      expect(terminatedTold(lostRoom)).toBe(1);

      // A room removed by an operation (not lost): its deletion seen by the new leader is told, once.
      const removed = await h.api.getGameRoom('rf', removedRoom);
      await h.api.deleteGameRoom('rf', removedRoom);
      await newLeader.roomDeleted(removed);
      expect(terminatedTold(removedRoom)).toBe(1);
    } finally {
      forwarder.close();
      await receiver.stop();
    }
  });
});
