import type { Operation, Scheduler } from '../../../../common/src/generated/resources';
import { silentLogger } from '../../../../common/src/logger';
import type { OperatorDeps } from '../../deps';
import { ExecutionContext, OperationCanceled } from '../execution';
import { waitFor } from '../../../../test/support/wait';
import { addRoomsDefinition, addRoomsOverLimit, createdRoomsKept, creationStoppedNote, removalShortNote, removeRoomsDefinition } from './rooms';
import type { GameRoom } from '../../../../common/src/generated/resources';

/**
 * add_rooms as the user asks for it changes roomsReplicas, and ends only once the scheduler's
 * status has observed that change (so the status never reports the old generation as in sync).
 */
function setup(config: Record<string, unknown> = {}, fleet: { rooms?: GameRoom[]; deleteGameRoom?: (name: string) => Promise<void>; getGameRoom?: (name: string) => Promise<GameRoom> } = {}) {
  let scheduler: Scheduler = {
    apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
    metadata: { name: 's', uid: 'u', generation: 4, resourceVersion: '1' },
    spec: { game: 'g', roomsReplicas: 3 } as Scheduler['spec'],
    status: { version: 'v1.0.0', observedGeneration: 4, state: 'in-sync' },
  };
  const cached = { current: scheduler };
  const specPatches: unknown[] = [];
  /** What each spec change says of its maker (the annotation SPEC_CHANGE_SOURCE_ANNOTATION). */
  const sources: string[] = [];
  /** The paths each spec change is conditional on (its JSON Patch `test` operations). */
  const conditions: string[][] = [];
  /**
   * Answers the next spec change with a reset connection once the API server has applied it, and
   * the `unavailableAfter` spec changes after that with 503 (applying none of them).
   */
  const lose = { nextAnswer: false, unavailableAfter: 0, unavailable: 0 };
  const api = {
    getScheduler: () => Promise.resolve(scheduler),
    getSchedulerVersion: () => Promise.resolve({ spec: { version: 'v1.0.0', definition: scheduler.spec }, status: { active: true } }),
    patchScheduler: (_n: string, patch: { spec: { roomsReplicas: number } }) => {
      specPatches.push(patch.spec);
      scheduler = { ...scheduler, metadata: { ...scheduler.metadata, generation: (scheduler.metadata.generation ?? 0) + 1 }, spec: { ...scheduler.spec, ...patch.spec } };
      return Promise.resolve(scheduler);
    },
    jsonPatchScheduler: async (n: string, ops: { op: string; path: string; value?: unknown }[]): Promise<Scheduler> => {
      if (lose.unavailable > 0) {
        lose.unavailable--;
        throw Object.assign(new Error('the server is currently unable to handle the request'), { code: 503 });
      }
      conditions.push(ops.filter((o) => o.op === 'test').map((o) => o.path));
      // Its `test` operations judged as the API server judges them (422 when one fails).
      const held: Record<string, unknown> = { '/metadata/generation': scheduler.metadata.generation, '/spec/roomsReplicas': scheduler.spec.roomsReplicas };
      const failed = ops.find((o) => o.op === 'test' && o.path in held && held[o.path] !== o.value);
      if (failed) throw Object.assign(new Error(`testing value ${failed.path} failed`), { code: 422 });
      const annotation = ops.find((o) => o.op !== 'test' && o.path.startsWith('/metadata/annotations'))?.value;
      const source = typeof annotation === 'string' ? annotation : (annotation as Record<string, string> | undefined)?.['roomkeeper.io/spec-change-source'] ?? '';
      sources.push(source);
      const written = await api.patchScheduler(n, { spec: { roomsReplicas: ops.find((o) => o.path === '/spec/roomsReplicas' && o.op !== 'test')?.value as number } });
      scheduler = { ...written, metadata: { ...written.metadata, annotations: { ...written.metadata.annotations, 'roomkeeper.io/spec-change-source': source } } };
      if (lose.nextAnswer) {
        lose.nextAnswer = false;
        lose.unavailable = lose.unavailableAfter;
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      }
      return scheduler;
    },
    patchOperationStatus: (_n: string, body: { status: object }) => Promise.resolve({ ...op, status: body.status }),
    deleteGameRoom: (_ns: string, name: string) => fleet.deleteGameRoom?.(name) ?? Promise.resolve(),
    getGameRoom: (_ns: string, name: string) => fleet.getGameRoom?.(name) ?? Promise.reject(Object.assign(new Error('not found'), { code: 404 })),
  };
  /** A change of roomsReplicas by someone else (a user's PATCH, kubectl scale). */
  const userSets = (roomsReplicas: number): void => {
    scheduler = { ...scheduler, metadata: { ...scheduler.metadata, generation: (scheduler.metadata.generation ?? 0) + 1 }, spec: { ...scheduler.spec, roomsReplicas } };
  };
  const deps = {
    api,
    core: { deleteNamespacedPod: () => Promise.resolve() },
    caches: {
      schedulers: { get: () => cached.current, list: () => [cached.current] }, operations: { get: () => undefined },
      rooms: { list: () => fleet.rooms ?? [], get: (name: string) => fleet.rooms?.find((r) => r.metadata.name === name) },
      pods: { list: () => [], get: () => undefined }, versions: { list: () => [], get: () => undefined }, digests: { list: () => [] }, nodes: { get: () => undefined },
    },
    config: { addRoomsLimit: 1000, maxRoomsPerScheduler: 10_000, ...config },
    logger: silentLogger(),
    now: Date.now,
  } as unknown as OperatorDeps;
  const op = {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'op-1' },
    spec: { schedulerName: 's', definitionName: 'add_rooms', input: { amount: 2 }, priority: false, enqueuedAt: new Date().toISOString(), source: 'api', cancelRequested: false },
  } as Operation;
  const ctx = new ExecutionContext(op, deps, silentLogger(), 60_000, () => undefined);
  return { ctx, cached, specPatches, sources, conditions, userSets, lose, latest: () => scheduler };
}

describe('add_rooms and the replicas it changes', () => {
  it('canceled while the change is not yet observed: the rollback still restores roomsReplicas', async () => {
    const t = setup();
    const running = addRoomsDefinition.execute(t.ctx);
    // The status never observes generation 5 here; the user cancels meanwhile.
    await waitFor(() => t.specPatches.length === 1, { message: 'roomsReplicas changed' });
    t.ctx.cancel();
    await expect(running).rejects.toBeInstanceOf(OperationCanceled);
    expect(t.ctx.state.replicasBefore).toBe(3);
    // The restore is observed at once.
    t.cached.current = { ...t.latest(), metadata: { ...t.latest().metadata, generation: 6 }, status: { ...t.latest().status, observedGeneration: 6 } };
    await addRoomsDefinition.rollback?.(t.ctx);
    expect(t.specPatches).toEqual([{ roomsReplicas: 5 }, { roomsReplicas: 3 }]);
    // Each names the generation it makes and this operation: its version operation is the API's, not kubectl's.
    expect(t.sources).toEqual(['5 api op-1', '6 api op-1']);
    // The scheduler had no annotations: the map written whole is conditional on there still being
    // none (not on the resourceVersion, which status writes move), so an annotation added meanwhile
    // by someone else fails the patch instead of being replaced.
    // The restore is conditional on the count this operation set, as the change was on the count before.
    // (The first change put the annotation there: the second replaces it.)
    expect(t.conditions).toEqual([['/spec/roomsReplicas', '/metadata/generation', '/metadata/annotations'], ['/spec/roomsReplicas', '/metadata/generation']]);
    await t.ctx.finish('canceled');
  });

  it('canceled after a user changed the count: the rollback leaves the user\'s count, keeps the rooms it wants, and says how to undo the operation', async () => {
    const deleted: string[] = [];
    const fleet = ['a', 'b', 'c', 'made-1', 'made-2'].map((name) => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'ready' } }) as unknown as GameRoom);
    const t = setup({}, { rooms: fleet, deleteGameRoom: (name) => { deleted.push(name); return Promise.resolve(); } });
    const running = addRoomsDefinition.execute(t.ctx);
    await waitFor(() => t.specPatches.length === 1, { message: 'roomsReplicas changed' });
    t.userSets(9);
    t.ctx.cancel();
    await expect(running).rejects.toBeInstanceOf(OperationCanceled);
    t.ctx.state.createdRooms = ['made-1', 'made-2'];
    await addRoomsDefinition.rollback?.(t.ctx);
    expect(t.specPatches).toEqual([{ roomsReplicas: 5 }]);
    expect(t.latest().spec.roomsReplicas).toBe(9);
    // 5 rooms for the 9 wanted now: the rooms it made stay.
    expect(deleted).toEqual([]);
    expect(t.ctx.recorded.map((h) => h.event)).toContain('Kept 2 of the rooms created by this operation: the scheduler wants 9 rooms');
    expect(t.ctx.recorded.map((h) => h.event)).toContain('roomsReplicas was not set back to 3: it is 9 now, not the 5 this operation made it, so it changed since; to undo this operation, PATCH /schedulers/s with {"roomsReplicas": 3}, or kubectl scale rks/s --replicas=3');
    await t.ctx.finish('canceled');
  });
});

describe('createdRoomsKept: what an add_rooms rollback keeps of the rooms it made', () => {
  it.each([
    ['no desired count known: none', { created: 2, live: 5, desired: undefined }, 0],
    ['a user\'s add, count restored: the rooms above it go', { created: 2, live: 5, desired: 3 }, 0],
    ['rooms went missing meanwhile: those the count wants stay', { created: 2, live: 4, desired: 3 }, 1],
    // 6 desired, surge 2: the rollout made 1 of 2, refused by a quota (6 old + 1 new live).
    ['rollout refused part-way: the new room stays', { created: 1, live: 7, desired: 6, rollout: { upper: 8, newLive: 1 } }, 1],
    ['rollout, outside it the same count keeps none', { created: 1, live: 7, desired: 6 }, 0],
    ['rollout above its bound (9 live, 8 at most): only what fits stays', { created: 2, live: 9, desired: 6, rollout: { upper: 8, newLive: 3 } }, 1],
    ['rollout with more new rooms than desired: the surplus goes', { created: 2, live: 7, desired: 6, rollout: { upper: 8, newLive: 7 } }, 1],
    ['rollout: a created room already gone counts as not live', { created: 2, live: 8, desired: 6, rollout: { upper: 8, newLive: 2 } }, 2],
  ])('%s', (_case, a, kept) => {
    expect(createdRoomsKept(a)).toBe(kept);
  });
});

describe('a rolling update\'s add_rooms refused part-way (a ResourceQuota)', () => {
  const room = (name: string, version: string): GameRoom => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', creationTimestamp: new Date() as unknown as string }, spec: { scheduler: 's', version }, status: { status: 'ready' },
  } as unknown as GameRoom);

  function rollout(news: string[]) {
    const deleted: string[] = [];
    const fleet = [...['o1', 'o2', 'o3', 'o4', 'o5', 'o6'].map((n) => room(n, 'v1.0.0')), ...news.map((n) => room(n, 'v2.0.0'))];
    const t = setup({ roomInitTimeout: 60_000, roomPingTimeout: 60_000, roomDeletionTimeout: 60_000 }, { rooms: fleet, deleteGameRoom: (name) => { deleted.push(name); return Promise.resolve(); } });
    t.cached.current = { ...t.latest(), spec: { ...t.latest().spec, roomsReplicas: 6, maxSurge: '25%' }, status: { ...t.latest().status, version: 'v2.0.0' } };
    // The health check's own add_rooms: no roomsReplicas moved.
    t.ctx.op.spec.priority = true;
    t.ctx.op.spec.source = 'operator';
    t.ctx.state.createCount = 2;
    t.ctx.state.creationFailure = 'pods "n2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=7, limited: pods=7';
    return { t, deleted };
  }

  it('keeps the room it made (within desired + surge) and says how many, why, and the refusal', async () => {
    const { t, deleted } = rollout(['n1']);
    t.ctx.state.createdRooms = ['n1'];
    await addRoomsDefinition.rollback?.(t.ctx);
    expect(deleted).toEqual([]);
    expect(t.ctx.recorded.map((h) => h.event)).toEqual([
      'Kept 1 of the rooms created by this operation: the rolling update to v2.0.0 wants it: the scheduler has 7 rooms of the 8 the rollout allows (6 desired + surge 2), 1 of the 6 desired on v2.0.0\'s major; '
      + 'the health check removes older rooms for it, then adds the next batch; the other 1 could not be created (pods "n2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=7, limited: pods=7)',
    ]);
    await t.ctx.finish('error');
  });

  it('never keeps more than the bound: above desired + surge the newest it made are deleted', async () => {
    // Another new room appeared meanwhile: 6 old + 3 new = 9 live, 8 at most.
    const { t, deleted } = rollout(['n0', 'n1', 'n2']);
    t.ctx.state.createdRooms = ['n1', 'n2'];
    t.ctx.state.creationFailure = undefined;
    await addRoomsDefinition.rollback?.(t.ctx);
    expect(deleted).toEqual(['n2']);
    expect(t.ctx.recorded.map((h) => h.event)).toEqual([
      'Deleted the 1 room created by this operation',
      'Kept 1 of the rooms created by this operation: the rolling update to v2.0.0 wants it: the scheduler has 8 rooms of the 8 the rollout allows (6 desired + surge 2), 2 of the 6 desired on v2.0.0\'s major; the health check removes older rooms for it, then adds the next batch',
    ]);
    await t.ctx.finish('error');
  });
});

describe('remove_rooms by amount, and the rooms it keeps because they changed', () => {
  const room = (name: string): GameRoom => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
    metadata: { name, namespace: 's', resourceVersion: '7', creationTimestamp: new Date() as unknown as string },
    spec: { scheduler: 's', version: 'v1.0.0' },
    status: { status: 'ready' },
  } as unknown as GameRoom);
  const changedOnDeletion = Object.assign(new Error('Conflict'), { code: 409 });

  function removal(onChanged: () => void) {
    const t = setup({ removeRoomsLimit: 1000, addRoomsConcurrency: 1, roomPingTimeout: 60_000 }, {
      rooms: [room('r1'), room('r2')],
      // r1 got a player between its choice and its deletion: the deletion's precondition fails.
      deleteGameRoom: (name) => {
        if (name !== 'r1') return Promise.resolve();
        onChanged();
        return Promise.reject(changedOnDeletion);
      },
      // Read again, it shows the player: kept.
      getGameRoom: (name) => Promise.resolve({ ...room(name), metadata: { ...room(name).metadata, resourceVersion: '8' }, status: { status: 'occupied' } } as unknown as GameRoom),
    });
    // Every spec change is observed at once.
    t.cached.current = { ...t.latest(), status: { ...t.latest().status, observedGeneration: 1_000 } };
    t.ctx.op.spec.definitionName = 'remove_rooms';
    t.ctx.op.spec.input = { amount: 2 };
    return t;
  }

  it('adds the kept room back to the count it set', async () => {
    const t = removal(() => undefined);
    await removeRoomsDefinition.execute(t.ctx);
    expect(t.specPatches).toEqual([{ roomsReplicas: 1 }, { roomsReplicas: 2 }]);
    // A rollback would still set back the count from before the removal.
    expect(t.ctx.state).toMatchObject({ replicasBefore: 3, replicasSet: 2 });
    await t.ctx.finish('finished');
  });

  it('leaves a count a user set between its two writes (a scale-down to 0 is not raised again), and says so', async () => {
    const t = removal(() => t.userSets(0));
    await removeRoomsDefinition.execute(t.ctx);
    expect(t.specPatches).toEqual([{ roomsReplicas: 1 }]);
    expect(t.latest().spec.roomsReplicas).toBe(0);
    expect(t.ctx.recorded.map((h) => h.event)).toContain('roomsReplicas is 0 now, not the 1 this removal set, so it changed meanwhile: it is left so, and the 1 room kept is not added back to it');
    await t.ctx.finish('finished');
  });

  it('leaves a count a user set to 0 before it ran: nothing taken from it, nothing given back (CI saw 0 raised to 2)', async () => {
    const t = removal(() => undefined);
    t.userSets(0);
    await removeRoomsDefinition.execute(t.ctx);
    expect(t.specPatches).toEqual([]);
    expect(t.latest().spec.roomsReplicas).toBe(0);
    expect(t.ctx.recorded.map((h) => h.event)).toContain('roomsReplicas is already 0: this removal does not lower it');
    expect(t.ctx.recorded.map((h) => h.event).filter((e) => e.startsWith('roomsReplicas changed'))).toEqual([]);
    await t.ctx.finish('finished');
  });
});

describe('remove_rooms by amount, and a room that changed without being taken', () => {
  it('deletes a room that changed since it was chosen (a start-up step: pending to unready) but is still free, at the version read again; the count asked is met', async () => {
    const room = (name: string, status: string, rv: string): GameRoom => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name, namespace: 's', resourceVersion: rv, creationTimestamp: new Date() as unknown as string },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status },
    } as unknown as GameRoom);
    const deleted: string[] = [];
    const t = setup({ removeRoomsLimit: 1000, addRoomsConcurrency: 1, roomPingTimeout: 60_000 }, {
      rooms: [room('r1', 'pending', '7'), room('r2', 'pending', '7')],
      deleteGameRoom: (name) => {
        if (name === 'r1' && !deleted.includes('r1-refused')) {
          deleted.push('r1-refused');
          return Promise.reject(Object.assign(new Error('Conflict'), { code: 409 }));
        }
        deleted.push(name);
        return Promise.resolve();
      },
      getGameRoom: (name) => Promise.resolve(room(name, 'unready', '8')),
    });
    t.cached.current = { ...t.latest(), status: { ...t.latest().status, observedGeneration: 1_000 } };
    t.ctx.op.spec.definitionName = 'remove_rooms';
    t.ctx.op.spec.input = { amount: 2 };
    await removeRoomsDefinition.execute(t.ctx);
    expect(deleted).toEqual(expect.arrayContaining(['r1-refused', 'r1', 'r2']));
    expect(t.specPatches).toEqual([{ roomsReplicas: 1 }]);
    expect(t.ctx.recorded.map((h) => h.event).join('\n')).not.toMatch(/kept/);
    await t.ctx.finish('finished');
  });
});

describe('remove_rooms by amount abandoned mid-way (leadership lost)', () => {
  it('hands over the rooms it removed before the stop: the count moved, and so many rooms went', async () => {
    const rooms = ['r1', 'r2', 'r3', 'r4'].map((name) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name, namespace: 's', resourceVersion: '7', creationTimestamp: new Date() as unknown as string },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'ready' },
    } as unknown as GameRoom));
    let deleted = 0;
    const t = setup({ removeRoomsLimit: 1000, addRoomsConcurrency: 1, roomPingTimeout: 60_000 }, {
      rooms,
      // Leadership goes after the second deletion: the next checkpoint throws inside the loop.
      deleteGameRoom: () => {
        deleted++;
        if (deleted === 2) t.ctx.abandon('this replica stopped leading');
        return Promise.resolve();
      },
    });
    t.cached.current = { ...t.latest(), status: { ...t.latest().status, observedGeneration: 1_000 } };
    t.ctx.op.spec.definitionName = 'remove_rooms';
    t.ctx.op.spec.input = { amount: 3 };
    t.latest().spec.roomsReplicas = 4;
    await expect(removeRoomsDefinition.execute(t.ctx)).rejects.toThrow();
    expect(deleted).toBe(2);
    expect(removeRoomsDefinition.handOver?.(t.ctx)).toEqual({ outcome: 'finished', account: 'roomsReplicas went down by 3, 2 rooms were removed; the health check removes the other 1' });
  });
});

/** A remove_rooms of 2 from a fleet of 6 ready rooms, its count 6. */
function removalOfTwoFromSix(): ReturnType<typeof setup> {
  const rooms = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((name) => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
    metadata: { name, namespace: 's', resourceVersion: '7', creationTimestamp: new Date() as unknown as string },
    spec: { scheduler: 's', version: 'v1.0.0' },
    status: { status: 'ready' },
  } as unknown as GameRoom));
  const t = setup({ removeRoomsLimit: 1000, addRoomsConcurrency: 1, roomPingTimeout: 60_000 }, { rooms });
  t.cached.current = { ...t.latest(), status: { ...t.latest().status, observedGeneration: 1_000 } };
  t.ctx.op.spec.definitionName = 'remove_rooms';
  t.ctx.op.spec.input = { amount: 2 };
  t.latest().spec.roomsReplicas = 6;
  return t;
}

describe('a move of roomsReplicas whose answer was lost (the API server applied it, the connection reset)', () => {
  it('is read back as this operation\'s, not moved again: a removal of 2 from 6 leaves 4', async () => {
    const t = removalOfTwoFromSix();
    t.lose.nextAnswer = true;
    await removeRoomsDefinition.execute(t.ctx);
    expect(t.latest().spec.roomsReplicas).toBe(4);
    expect(t.ctx.state).toMatchObject({ replicasBefore: 6, replicasSet: 4 });
    expect(t.ctx.recorded.map((h) => h.event).filter((e) => e.startsWith('roomsReplicas changed'))).toEqual(['roomsReplicas changed from 6 to 4']);
    await t.ctx.finish('finished');
  });
});

describe('a move of roomsReplicas whose answer was lost, then the API server unavailable for longer than the retries', () => {
  beforeEach(() => { jest.useFakeTimers(); });
  afterEach(() => { jest.useRealTimers(); });

  it('is read back as this operation\'s once the server answers again: recorded for the rollback, not moved twice', async () => {
    const t = removalOfTwoFromSix();
    t.lose.nextAnswer = true;
    t.lose.unavailableAfter = 12; // more than one write's retries (10 tries in all)
    const running = removeRoomsDefinition.execute(t.ctx);
    await jest.advanceTimersByTimeAsync(40_000);
    await running;
    expect(t.latest().spec.roomsReplicas).toBe(4);
    expect(t.ctx.state).toMatchObject({ replicasBefore: 6, replicasSet: 4 });
    expect(t.ctx.recorded.map((h) => h.event).filter((e) => e.startsWith('roomsReplicas changed'))).toEqual(['roomsReplicas changed from 6 to 4']);
    await t.ctx.finish('finished');
  });

  it('unanswered for the whole minute: ends saying the API server did not answer, and for how long; nothing recorded as moved', async () => {
    const t = removalOfTwoFromSix();
    t.lose.unavailable = Number.POSITIVE_INFINITY;
    const running = removeRoomsDefinition.execute(t.ctx).catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(String(await running)).toMatch(/could not update roomsReplicas: the API server did not answer for 60 s \(\d+ tries; last: .*503/);
    expect(t.latest().spec.roomsReplicas).toBe(6);
    expect(t.ctx.state.replicasSet).toBeUndefined();
    await t.ctx.finish('error');
  });
});

describe('add_rooms canceled before it changed anything', () => {
  it('writes no roomsReplicas (so no version and switch of it, and none back): the cancel stops it first', async () => {
    const t = setup();
    // The cancel request reaches the execution while it reads the scheduler.
    t.ctx.cancel();
    await expect(addRoomsDefinition.execute(t.ctx)).rejects.toBeInstanceOf(OperationCanceled);
    expect(t.specPatches).toEqual([]);
    expect(t.ctx.state.replicasBefore).toBeUndefined();
    await t.ctx.finish('canceled');
  });
});

describe('add_rooms above the per-scheduler room limit, as the count is when it runs', () => {
  it('ends in error before it changes anything, saying the count, what it would have been, the limit and what to do', async () => {
    // roomsReplicas is 3 when it runs (an add-rooms queued before it moved it there); 2 more pass 4.
    const t = setup({ maxRoomsPerScheduler: 4 });
    await expect(addRoomsDefinition.execute(t.ctx)).rejects.toThrow(
      'no room added: adding 2 rooms would take roomsReplicas from 3 to 5, above 4, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); roomsReplicas stays 3: '
      + 'send add-rooms again for at most 1 more (POST /schedulers/s/add-rooms with {"amount": 1}), or raise ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER (the chart\'s limits.maxRoomsPerScheduler)');
    expect(t.specPatches).toEqual([]);
    expect(t.ctx.state.replicasBefore).toBeUndefined();
    await t.ctx.finish('error');
  });

  it('up to the limit it adds as before', async () => {
    const t = setup({ maxRoomsPerScheduler: 5 });
    const running = addRoomsDefinition.execute(t.ctx);
    await waitFor(() => t.specPatches.length === 1, { message: 'roomsReplicas changed' });
    expect(t.specPatches).toEqual([{ roomsReplicas: 5 }]);
    t.ctx.cancel();
    await expect(running).rejects.toBeInstanceOf(OperationCanceled);
    await t.ctx.finish('canceled');
  });
});

describe('addRoomsOverLimit', () => {
  const raise = 'raise ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER (the chart\'s limits.maxRoomsPerScheduler)';
  it.each([
    ['within the limit', { before: 3, amount: 3, maxRooms: 6 }, undefined],
    ['room for fewer', { before: 4, amount: 3, maxRooms: 6 },
      `no room added: adding 3 rooms would take roomsReplicas from 4 to 7, above 6, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); roomsReplicas stays 4: send add-rooms again for at most 2 more (POST /schedulers/s/add-rooms with {"amount": 2}), or ${raise}`],
    ['at the limit', { before: 6, amount: 1, maxRooms: 6 },
      `no room added: adding 1 room would take roomsReplicas from 6 to 7, above 6, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); roomsReplicas stays 6: the scheduler already has the most rooms it may have: add no more, or ${raise}`],
    ['above the limit (written with kubectl)', { before: 1000, amount: 1, maxRooms: 6 },
      `no room added: adding 1 room would take roomsReplicas from 1000 to 1001, above 6, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); roomsReplicas stays 1000: roomsReplicas is already above the limit (the operator keeps the count last decided): set it to at most 6 (PATCH /schedulers/s, or kubectl scale rks/s --replicas=<n>), or ${raise}`],
  ])('%s', (_case, a, expected) => {
    expect(addRoomsOverLimit({ scheduler: 's', ...a })).toBe(expected);
  });
});

describe('creationStoppedNote', () => {
  it('says how far creation got, and that a cancel after the last request stopped nothing', () => {
    expect(creationStoppedNote('the cancel', 7, 100, 4)).toBe('Room creation stopped by the cancel: 7/100 rooms created (the 4 requests in flight completed)');
    expect(creationStoppedNote('the cancel', 100, 100, 3)).toBe('All 100 rooms had been requested when the cancel came: 100/100 rooms created');
  });
});

describe('removalShortNote', () => {
  it('says why fewer rooms were removed than asked, each cause that applied and no other', () => {
    // 4 rooms, none held: no word of occupied rooms.
    expect(removalShortNote({ amount: 500, limit: 500, removed: 4, changed: 0, fleet: 4, chosen: 4 }))
      .toBe('Asked to remove 500 rooms; 4 could be removed: the scheduler had 4 rooms');
    expect(removalShortNote({ amount: 5, limit: 5, removed: 1, changed: 1, fleet: 6, chosen: 2 }))
      .toBe('Asked to remove 5 rooms; 1 could be removed: the scheduler had 6 rooms, 4 of them held by players or a matchmaker, which a removal by amount never takes; 1 was taken by players or a matchmaker before its deletion and was kept');
    expect(removalShortNote({ amount: 80, limit: 50, removed: 50, changed: 0, chosen: 50 }))
      .toBe('Asked to remove 80 rooms; 50 could be removed: one operation removes at most 50 (ROOMKEEPER_REMOVE_ROOMS_LIMIT): send remove-rooms again for more');
  });
});

