/**
 * Every history line is true (issue 18): each operation's history is checked against what the
 * objects show afterwards — the rooms that exist, the rooms this operation created (seen on a
 * watch of the scheduler's GameRooms), roomsReplicas and the final status.
 */
import * as k8s from '@kubernetes/client-node';
import type { Operation } from '../../common/src/generated/resources';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { isServing } from '../../common/src/rooms/room-status';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const CONCURRENCY = 4;
const FINAL = ['finished', 'error', 'canceled', 'evicted'];

describe('every history line is true', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ config: { addRoomsConcurrency: CONCURRENCY } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  async function readyScheduler(name: string, replicas: number): Promise<string[]> {
    await stack.api.createScheduler(schedulerObject(name, { roomsReplicas: replicas }) as never);
    return waitFor(async () => {
      const rooms = (await stack.api.listGameRooms(name)).items;
      return rooms.length === replicas && rooms.every((r) => r.status?.status === 'ready') ? rooms.map((r) => r.metadata.name as string).sort() : undefined;
    }, { timeoutMs: 30_000, message: `${name} has ${replicas} ready rooms` });
  }

  async function enqueue(schedulerName: string, definitionName: string, input: Record<string, unknown>): Promise<string> {
    const op = buildOperation({ id: newOperationId(), schedulerName, definitionName, input, source: 'api', enqueuedAt: Date.now() });
    await stack.api.createOperation(op);
    return op.metadata.name as string;
  }

  async function ended(id: string): Promise<Operation> {
    return waitFor(async () => {
      const op = await stack.api.getOperation(id);
      return FINAL.includes(op.status?.status ?? '') ? op : undefined;
    }, { timeoutMs: 60_000, message: `operation ${id} ended` });
  }

  const eventsOf = (op: Operation): string[] => op.status?.executionHistory?.map((h) => h.event) ?? [];

  /** The names of every GameRoom created in a namespace while the watch runs, except `existing`. */
  async function watchCreatedRooms(namespace: string, existing: string[]): Promise<{ added: Set<string>; stop: () => void }> {
    const added = new Set<string>();
    const watch = new k8s.Watch(stack.kc);
    const controller = await watch.watch(`/apis/roomkeeper.io/v1/namespaces/${namespace}/gamerooms`, {}, (phase: string, obj: { metadata?: { name?: string } }) => {
      if (phase === 'ADDED' && obj.metadata?.name && !existing.includes(obj.metadata.name)) added.add(obj.metadata.name);
    }, () => undefined);
    return { added, stop: () => controller.abort() };
  }

  /**
   * A canceled add_rooms tells one story: nothing is created or added after the cancel, the
   * creation stopped with at most the requests in flight, the rollback deleted exactly what was
   * created, and the operation says it was canceled. Returns how many rooms it created.
   */
  function expectConsistentCanceledAddRooms(op: Operation, amount: number): number {
    const events = eventsOf(op);
    expect(op.status?.status).toBe('canceled');
    expect(events[events.length - 1]).toBe('Operation canceled');
    expect(events).not.toContain('Operation finished');
    expect(events.some((e) => e.startsWith('Added '))).toBe(false);
    const cancelAt = events.indexOf('Cancel requested by the user');
    expect(cancelAt).toBeGreaterThan(0);
    expect(events.slice(cancelAt).filter((e) => /^Created \d+\/\d+ rooms?$/.test(e))).toEqual([]);
    // Stopped part-way, or every room was requested before the cancel came.
    const stopped = events.map((e) => /^(?:Room creation stopped by the cancel|All \d+ rooms? had been requested when the cancel came): (\d+)\/(\d+) rooms? created(?: \(the (\d+) requests? in flight completed\))?$/.exec(e)).find(Boolean);
    const created = stopped ? Number(stopped[1]) : 0;
    if (stopped) {
      expect(Number(stopped[2])).toBe(amount);
      if (stopped[3] !== undefined) expect(Number(stopped[3])).toBeLessThanOrEqual(CONCURRENCY);
      else expect(created).toBe(amount);
      for (const e of events.slice(0, cancelAt)) {
        const progress = /^Created (\d+)\/\d+ rooms?$/.exec(e);
        if (progress) expect(Number(progress[1])).toBeLessThanOrEqual(created);
      }
    }
    // How far it had got when the cancel came, told with it: the rooms created then and those
    // then in flight make the count created in the end.
    const stopping = events.map((e) => /^When the cancel came: (\d+)\/(\d+) rooms created and (\d+) being created, which complete; (?:all (\d+) had been requested|the other (\d+) are not started)$/.exec(e)).find(Boolean);
    // Creation reached (else the cancel stopped it before): said with the cancel.
    if (stopped) expect(stopping).toBeTruthy();
    if (stopping) {
      const [atCreated, atCount, atInFlight] = [Number(stopping[1]), Number(stopping[2]), Number(stopping[3])];
      expect(events.indexOf(stopping[0])).toBeGreaterThan(cancelAt);
      expect(atCount).toBe(amount);
      expect(atCreated + atInFlight).toBe(created);
      expect(atCreated + atInFlight + Number(stopping[5] ?? 0)).toBe(amount);
      if (stopped?.[3] !== undefined) expect(atInFlight).toBe(Number(stopped[3]));
    }
    const deletedLines = events.filter((e) => e.startsWith('Deleted the '));
    expect(deletedLines).toEqual(created > 0 ? [`Deleted the ${created} rooms created by this operation`] : []);
    expect(events.indexOf('Operation canceled by the user')).toBeGreaterThan(cancelAt);
    expect(events).toContain('Operation rollback flow execution finished with success');
    return created;
  }

  async function expectRoomsBackTo(name: string, before: string[], replicas: number): Promise<void> {
    await waitFor(async () => {
      const names = (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp).map((r) => r.metadata.name as string).sort();
      return JSON.stringify(names) === JSON.stringify(before);
    }, { timeoutMs: 30_000, message: `only the rooms from before remain in ${name}` });
    expect((await stack.api.getScheduler(name)).spec.roomsReplicas).toBe(replicas);
  }

  test('remove_rooms by id: an unknown id and a room of another scheduler are skipped and said so; only the room deleted is counted', async () => {
    const mine = await readyScheduler('ht-remove-a', 2);
    const theirs = await readyScheduler('ht-remove-b', 1);
    const theirsBefore = await stack.api.getGameRoom('ht-remove-b', theirs[0]!);

    const id = await enqueue('ht-remove-a', 'remove_rooms', { roomsIds: [mine[0], 'ht-remove-a-nosuchroom', theirs[0]] });
    const op = await ended(id);
    const events = eventsOf(op);
    expect(op.status?.status).toBe('finished');
    expect(events).toContain(`Rooms ht-remove-a-nosuchroom, ${theirs[0]!} not found in scheduler ht-remove-a: skipped`);
    expect(events).toContain(`Removed 1 room by id (reason: api): ${mine[0]!}`);
    expect(events[events.length - 1]).toBe('Operation finished');

    // The room removed is gone (or going); the other room of the scheduler stays.
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('ht-remove-a')).items;
      const removed = rooms.find((r) => r.metadata.name === mine[0]);
      return removed === undefined || removed.metadata.deletionTimestamp !== undefined;
    }, { message: `${mine[0]!} deleted` });
    expect((await stack.api.getGameRoom('ht-remove-a', mine[1]!)).metadata.deletionTimestamp).toBeUndefined();
    // The other scheduler's room is untouched: same object, not being deleted.
    const theirsAfter = await stack.api.getGameRoom('ht-remove-b', theirs[0]!);
    expect(theirsAfter.metadata.uid).toBe(theirsBefore.metadata.uid);
    expect(theirsAfter.metadata.deletionTimestamp).toBeUndefined();
    expect((await stack.api.listGameRooms('ht-remove-b')).items.map((r) => r.metadata.name)).toEqual(theirs);

    // Only an unknown id: nothing removed, and the history says exactly that.
    const onlyUnknown = await ended(await enqueue('ht-remove-a', 'remove_rooms', { roomsIds: ['ht-remove-a-nosuchroom'] }));
    expect(onlyUnknown.status?.status).toBe('finished');
    expect(eventsOf(onlyUnknown)).toEqual(expect.arrayContaining([
      'Room ht-remove-a-nosuchroom not found in scheduler ht-remove-a: skipped',
      'Removed 0 rooms by id (reason: api)',
    ]));
  });


  test('a rollout\'s removal by id keeps its floor of serving rooms as the fleet is when it runs, and says which rooms it kept', async () => {
    const rooms = await readyScheduler('ht-floor', 3);
    // Decided when 4 rooms served (say); run when only 3 do: one deletion keeps the floor of 2.
    const id = await enqueue('ht-floor', 'remove_rooms', { roomsIds: [rooms[0], rooms[1]], reason: 'rolling_update_replace', keepServing: 2 });
    const op = await ended(id);
    const events = eventsOf(op);
    expect(op.status?.status).toBe('finished');
    expect(events).toContain(`Removed 1 room by id (reason: rolling_update_replace): ${rooms[0]!}`);
    expect(events).toContain(`Kept 1 ready room: removing it would leave fewer than 2 serving rooms, as the fleet is now (the health check replaces it once more rooms serve): ${rooms[1]!}`);
    expect((await stack.api.getGameRoom('ht-floor', rooms[1]!)).metadata.deletionTimestamp).toBeUndefined();
  });
  test('a rollout\'s removal by id counts a room whose pod is gone as not serving while the operator\'s rooms cache still shows it serving', async () => {
    const rooms = await readyScheduler('ht-floor-late', 3);
    const [a, b, c] = rooms as [string, string, string];
    // The GameRoom watches now deliver each change 5 s late: the operator's rooms cache lags the
    // server, while its pods cache does not.
    const faults = stack.sandbox!.faults;
    const open = faults.openWatches();
    // A watch keeps the delay it was opened with: every watch is cut and opened again.
    const reopenWatches = () => {
      faults.cutWatches();
      return waitFor(() => faults.openWatches() >= open, { timeoutMs: 15_000, message: 'the watches open again' });
    };
    faults.set({ watchDelayMs: 5_000, match: { verb: 'watch', resource: 'gamerooms' } });
    try {
      await reopenWatches();
      // Room c's pod goes (its node was lost, say): the operator sees it on its pods cache and
      // writes the room off on the server; its rooms cache still shows c ready for 5 s.
      await stack.core.deleteNamespacedPod({ namespace: 'ht-floor-late', name: c, gracePeriodSeconds: 0 });
      await waitFor(async () => {
        const room = await stack.api.getGameRoom('ht-floor-late', c).catch(() => undefined);
        return room === undefined || room.metadata.deletionTimestamp !== undefined || !isServing(room.status?.status);
      }, { timeoutMs: 5_000, message: `the operator wrote ${c} off on the server` });
      // Decided when a, b and c served: removing a leaves 2 by the rooms cache, but only b serves.
      const op = await ended(await enqueue('ht-floor-late', 'remove_rooms', { roomsIds: [a], reason: 'rolling_update_replace', keepServing: 2 }));
      expect(op.status?.status).toBe('finished');
      expect(eventsOf(op)).toContain(`Kept 1 ready room: removing it would leave fewer than 2 serving rooms, as the fleet is now (the health check replaces it once more rooms serve): ${a}`);
      expect((await stack.api.getGameRoom('ht-floor-late', a)).metadata.deletionTimestamp).toBeUndefined();
      expect((await stack.api.getGameRoom('ht-floor-late', b)).metadata.deletionTimestamp).toBeUndefined();
    } finally {
      faults.clear();
      await reopenWatches();
    }
  });
  test('a rollout\'s removal by id deletes no serving room while the operator\'s pods cache has lost its watch, and removes it once the cache is current again', async () => {
    // After an outage a restarted watch shows the pods as they were, and kube-controller-manager
    // marks pods not ready seconds later: a floor counted then deleted serving rooms below it.
    const rooms = await readyScheduler('ht-floor-blind', 3);
    const a = rooms[0] as string;
    const faults = stack.sandbox!.faults;
    const podsImpaired = () => stack.operators.some((o) => o.metrics.sum('roomkeeper_informer_impaired', { informer: 'pods' }) > 0);
    const podWatches = () => faults.requests({ verb: 'watch', resource: 'pods' });
    faults.set({ errorRate: 1, errorStatus: 500, match: { resource: 'pods' } });
    let id = '';
    try {
      faults.cutWatches();
      await waitFor(podsImpaired, { timeoutMs: 15_000, message: 'the operator\'s pods cache impaired' });
      id = await enqueue('ht-floor-blind', 'remove_rooms', { roomsIds: [a], reason: 'rolling_update_replace', keepServing: 2 });
      await waitFor(async () => (await stack.api.getOperation(id)).status?.status === 'in_progress', { timeoutMs: 15_000, message: 'the removal running' });
      // Two more failed watches of the pods later, the removal still waits and the room is there.
      const watchesBefore = podWatches();
      await waitFor(() => podWatches() >= watchesBefore + 2, { timeoutMs: 30_000, message: 'two more pod watches tried' });
      expect(podsImpaired()).toBe(true);
      expect((await stack.api.getOperation(id)).status?.status).toBe('in_progress');
      expect((await stack.api.getGameRoom('ht-floor-blind', a)).metadata.deletionTimestamp).toBeUndefined();
    } finally {
      faults.clear();
    }
    const op = await ended(id);
    expect(op.status?.status).toBe('finished');
    expect(eventsOf(op)).toContain(`Removed 1 room by id (reason: rolling_update_replace): ${a}`);
    expect(eventsOf(op).some((e) => e.startsWith('Kept'))).toBe(false);
  });

  test('remove_rooms by amount canceled mid-way: the history counts the rooms deleted before the cancel, and roomsReplicas, moved first, is set back', async () => {
    const name = 'ht-remove-cancel';
    const before = await readyScheduler(name, 12);
    try {
      stack.sandbox!.faults.set({ latencyMs: 400, match: { verb: 'delete', resource: 'gamerooms' } });
      const id = await enqueue(name, 'remove_rooms', { amount: 10 });
      const deletedOriginals = async (): Promise<string[]> => {
        const rooms = new Map((await stack.api.listGameRooms(name)).items.map((r) => [r.metadata.name as string, r]));
        return before.filter((n) => !rooms.has(n) || rooms.get(n)?.metadata.deletionTimestamp !== undefined);
      };
      await waitFor(async () => (await deletedOriginals()).length >= 1, { timeoutMs: 15_000, message: 'the first room deleted' });
      await stack.api.patchOperation(id, { spec: { cancelRequested: true } });
      const op = await ended(id);
      stack.sandbox!.faults.clear();
      const events = eventsOf(op);
      expect(op.status?.status).toBe('canceled');
      expect(events[events.length - 1]).toBe('Operation canceled');
      const removed = events.map((e) => /^Removed (\d+) rooms? \(reason: api\): (.+)$/.exec(e)).find(Boolean);
      expect(removed).toBeTruthy();
      const n = Number(removed![1]);
      // It names the rooms it deleted, and only those.
      expect(removed![2]!.split(', ').sort()).toEqual((await deletedOriginals()).sort());
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThan(10);
      // roomsReplicas went down before any room was deleted, and the rollback set it back.
      expect(events).toEqual(expect.arrayContaining(['roomsReplicas changed from 12 to 2', `Removal stopped by the cancel after ${n}/10 rooms; the rollback sets roomsReplicas back to 12`, 'roomsReplicas restored to 12']));
      expect((await deletedOriginals()).length).toBe(n);
      expect((await stack.api.getScheduler(name)).spec.roomsReplicas).toBe(12);
    } finally {
      stack.sandbox!.faults.clear();
    }
  });

  // The stages of add_rooms a cancel can hit: while roomsReplicas is being changed (before any
  // room), during the first batches (creation slowed down), and after half its rooms.
  test.each([
    { stage: 'early, before its first room', amount: 600, latencyMs: 1000, cancelAfterRooms: 0, held: false },
    { stage: 'early, during its first batches', amount: 600, latencyMs: 1000, cancelAfterRooms: 1, held: true },
    { stage: 'late, after half its rooms', amount: 200, latencyMs: 20, cancelAfterRooms: 100, held: true },
  ])('add_rooms canceled $stage: creation stops within one batch, no line after the cancel says created or added, counts agree with the objects', async ({ amount, latencyMs, cancelAfterRooms, held }) => {
    const name = `ht-cancel-${cancelAfterRooms}`;
    const before = await readyScheduler(name, 2);
    const watch = await watchCreatedRooms(name, before);
    try {
      const createsBefore = stack.sandbox!.faults.requests({ verb: 'create', resource: 'gamerooms' });
      stack.sandbox!.faults.set({ latencyMs, match: { verb: 'create', resource: 'gamerooms' } });
      const id = await enqueue(name, 'add_rooms', { amount });
      await waitFor(async () => (await stack.api.getOperation(id)).status?.status === 'in_progress', { timeoutMs: 15_000 });
      await waitFor(() => watch.added.size >= cancelAfterRooms, { timeoutMs: 30_000, message: `${cancelAfterRooms} rooms created` });
      // From here each room creation is held 3 s, far longer than the operator takes to see the
      // cancel: a worker whose request ends before then starts at most one more (held too), and none
      // after it. So the rooms made are at most the creations the server had received when the
      // cancel was sent, plus one per worker. (At 20 ms a creation, a bound taken from the rooms
      // seen by then is a race: workers start several more while the cancel travels.)
      const createMatch = { verb: 'create', resource: 'gamerooms' };
      stack.sandbox!.faults.set({ latencyMs: 3_000, match: createMatch });
      const startedAtCancel = stack.sandbox!.faults.requests(createMatch) - createsBefore;
      await stack.api.patchOperation(id, { spec: { cancelRequested: true } });
      if (held) {
        // Written with the cancel, while the requests in flight are still held: not once they end.
        const told = await waitFor(async () => {
          const o = await stack.api.getOperation(id);
          return eventsOf(o).some((e) => e.startsWith('When the cancel came: ')) ? o : undefined;
        }, { timeoutMs: 10_000, message: 'how far the creation got, written with the cancel' });
        expect(told.status?.status).toBe('in_progress');
      }
      const op = await ended(id);
      stack.sandbox!.faults.clear();
      const created = expectConsistentCanceledAddRooms(op, amount);
      expect(created).toBeLessThanOrEqual(startedAtCancel + CONCURRENCY);
      expect(created).toBeGreaterThanOrEqual(cancelAfterRooms);
      expect(created).toBeLessThan(amount);
      // A cancel that came before roomsReplicas moved has nothing to restore, and says nothing of it.
      const moved = eventsOf(op).includes(`roomsReplicas changed from 2 to ${2 + amount}`);
      if (moved || cancelAfterRooms > 0) expect(eventsOf(op)).toContain('roomsReplicas restored to 2');
      else expect(eventsOf(op).filter((e) => e.startsWith('roomsReplicas '))).toEqual([]);
      await expectRoomsBackTo(name, before, 2);
      expect(watch.added.size).toBe(created);
    } finally {
      stack.sandbox!.faults.clear();
      watch.stop();
    }
  });
  test('add_rooms canceled after it moved roomsReplicas: no version is made from the canceled count, and the count restored stays active', async () => {
    const name = 'ht-cancel-count';
    await readyScheduler(name, 2);
    // Room creation held, so the cancel comes after roomsReplicas moved and before the rooms are made.
    stack.sandbox!.faults.set({ latencyMs: 1000, match: { verb: 'create', resource: 'gamerooms' } });
    try {
      const id = await enqueue(name, 'add_rooms', { amount: 20 });
      await waitFor(async () => eventsOf(await stack.api.getOperation(id)).includes('roomsReplicas changed from 2 to 22'), { timeoutMs: 15_000, message: 'roomsReplicas moved' });
      await stack.api.patchOperation(id, { spec: { cancelRequested: true } });
      const op = await ended(id);
      expect(op.status?.status).toBe('canceled');
      expect(eventsOf(op)).toContain('roomsReplicas restored to 2');
    } finally {
      stack.sandbox!.faults.clear();
    }
    // Every spec generation versioned and every operation ended: the queue has drained.
    const versionOps = await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const ops = (await stack.api.listOperations(name)).items;
      const settled = (s.status?.versionedGeneration ?? 0) >= (s.metadata.generation ?? 1) && ops.every((o) => FINAL.includes(o.status?.status ?? ''));
      return settled ? ops.filter((o) => o.spec.definitionName === 'create_new_scheduler_version') : undefined;
    }, { timeoutMs: 30_000, message: 'every spec generation versioned and every operation ended' });
    const versions = (await stack.api.listSchedulerVersions(name)).items;
    expect(versions.map((v) => v.spec.definition.roomsReplicas)).not.toContain(22);
    const activeVersion = (await stack.api.getScheduler(name)).status?.version;
    const active = versions.find((v) => v.spec.version === activeVersion);
    expect(active?.spec.definition.roomsReplicas).toBe(2);
    // The version operation of the canceled count says why it made no version.
    expect(versionOps.flatMap(eventsOf)).toContainEqual(expect.stringMatching(/^The spec changed again \(generation \d+\) before this operation ran; no version made from its definition: the latest spec is versioned next$/));
  });

  test('create_new_scheduler_version canceled during validation: the history says the validation room and nothing else was undone, and no version came of it', async () => {
    const name = 'ht-cancel-version';
    await readyScheduler(name, 1);
    // A major change whose validation room stays silent: the cancel comes while it is awaited.
    const silent = schedulerObject(name, { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]) as { spec: never };
    // A kubectl edit of the spec alone (an update naming a resourceVersion may lose to the operator's status writes).
    await stack.api.jsonPatchScheduler(name, [{ op: 'replace', path: '/spec', value: silent.spec }]);
    const op = await waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_new_scheduler_version'
      && eventsOf(o).includes('Major version detected, starting game room validation process...')), { timeoutMs: 30_000, message: 'validation under way' });
    const validationRoom = await waitFor(async () => (await stack.api.listGameRooms(name)).items.find((r) => r.spec.validation)?.metadata.name, { timeoutMs: 30_000, message: 'the validation room' });
    await stack.api.patchOperation(op.metadata.name as string, { spec: { cancelRequested: true } });
    const done = await ended(op.metadata.name as string);
    const events = eventsOf(done);
    expect(done.status?.status).toBe('canceled');
    expect(events).toEqual(expect.arrayContaining(['Cancel requested by the user', 'Operation canceled by the user', `Deleted validation room ${validationRoom}`]));
    expect(events.findIndex((e) => e === `Deleted validation room ${validationRoom}`)).toBeGreaterThan(events.indexOf('Cancel requested by the user'));
    expect(events.some((e) => e.startsWith('Created version') || e.startsWith('Deleted version') || e.startsWith('Deleting version') || /switch active version/i.test(e))).toBe(false);
    expect(events[events.length - 1]).toBe('Operation canceled');
    expect((await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    expect((await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'switch_active_version')).toEqual([]);
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
    await waitFor(async () => !(await stack.api.listGameRooms(name)).items.some((r) => r.spec.validation && !r.metadata.deletionTimestamp), { timeoutMs: 30_000, message: 'the validation room gone' });
  });

  test('switch_active_version canceled before it started: it ends canceled without running, and the active version stays', async () => {
    const name = 'ht-cancel-switch';
    await readyScheduler(name, 1);
    // A slow add_rooms holds the queue; the switch waits behind it and is canceled there.
    stack.sandbox!.faults.set({ latencyMs: 1000, match: { verb: 'create', resource: 'gamerooms' } });
    try {
      const busy = await enqueue(name, 'add_rooms', { amount: 3 });
      const id = await enqueue(name, 'switch_active_version', { newActiveVersion: 'v1.0.0' });
      await waitFor(async () => (await stack.api.getOperation(busy)).status?.status === 'in_progress', { timeoutMs: 15_000 });
      await stack.api.patchOperation(id, { spec: { cancelRequested: true } });
      const done = await ended(id);
      expect(done.status?.status).toBe('canceled');
      expect(eventsOf(done)).toEqual(['Operation canceled by the user before it started']);
      expect(done.status?.startedAt).toBeUndefined();
      expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
      expect((await ended(busy)).status?.status).toBe('finished');
    } finally {
      stack.sandbox!.faults.clear();
    }
  });
});
