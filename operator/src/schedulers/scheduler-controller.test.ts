import type { GameRoom, Operation, Scheduler, SchedulerVersion } from '../../../common/src/generated/resources';
import { silentLogger } from '../../../common/src/logger';
import { createSchedulerOperationId, newVersionOperationId } from '../../../common/src/operations/operation-id';
import { CREATED_THROUGH_API_ANNOTATIONS, SCHEDULER_FINALIZER, VERSION_PROTECTION_FINALIZER } from '../../../common/src/resources/labels';
import type { OperatorDeps } from '../deps';
import { SchedulerController } from './scheduler-controller';

/** A scheduler whose spec moved to generation 3 while versions exist up to generation 2. */
function scheduler(): Scheduler {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
    metadata: { name: 's', uid: 'uid-1', generation: 3, resourceVersion: '10', finalizers: [SCHEDULER_FINALIZER] },
    spec: { game: 'g', roomsReplicas: 1 } as Scheduler['spec'],
    status: { version: 'v1.1.0', versionedGeneration: 2, observedGeneration: 2, state: 'in-sync' },
  };
}

function setup(createOutcome: 'ok' | 'conflict') {
  const s = scheduler();
  const statusPatches: { status: Record<string, unknown> }[] = [];
  const created: Operation[] = [];
  const cachedOps: Operation[] = [];
  const api = {
    createOperation: (op: Operation) => {
      if (createOutcome === 'conflict') return Promise.reject(Object.assign(new Error('exists'), { code: 409 }));
      const stored = { ...op, metadata: { ...op.metadata, resourceVersion: '11' } };
      created.push(stored);
      return Promise.resolve(stored);
    },
    patchSchedulerStatus: (_name: string, patch: { status: Record<string, unknown> }) => {
      statusPatches.push(patch);
      return Promise.resolve(s);
    },
  };
  const tracked: Operation[] = [];
  const deps = {
    api,
    caches: {
      schedulers: { get: () => s, list: () => [s] },
      rooms: { list: () => [], get: () => undefined },
      versions: { list: () => [], get: () => undefined },
      namespaces: { list: () => [], get: () => ({ metadata: { name: 's' } }) },
    },
    logger: silentLogger(),
    config: { autoscaleDebounce: 1000 },
    now: () => Date.parse('2026-01-01T00:00:00Z'),
  } as unknown as OperatorDeps;
  const controller = new SchedulerController(deps, { operationsOf: () => [...cachedOps, ...tracked], track: (op) => tracked.push(op) });
  return { s, controller, statusPatches, created, cachedOps, tracked };
}

describe('SchedulerController: a scheduler not created yet', () => {
  it.each([
    ['created through the HTTP API (its annotation)', { ...CREATED_THROUGH_API_ANNOTATIONS }, 'api'],
    ['created with kubectl (no annotation)', undefined, 'kubectl'],
  ])('whose create_scheduler is gone (deleted with kubectl before it ran) gets it again, of the source that created it: %s', async (_case, annotations, source) => {
    const t = setup('ok');
    Object.assign(t.s, { metadata: { ...t.s.metadata, generation: 1, annotations }, status: {} });
    await t.controller.reconcile('s');
    expect(t.created.map((o) => [o.metadata.name, o.spec.definitionName, o.spec.source])).toEqual([[createSchedulerOperationId('uid-1', 1), 'create_scheduler', source]]);
  });
});

describe('SchedulerController: a spec change', () => {
  it('enqueues the version operation, counts it at once, and reports pending-changes for the new generation', async () => {
    const t = setup('ok');
    await t.controller.reconcile('s');
    expect(t.created.map((o) => o.metadata.name)).toEqual([newVersionOperationId('uid-1', 3)]);
    expect(t.tracked).toHaveLength(1);
    expect(t.statusPatches[0]?.status).toEqual({ versionedGeneration: 3 });
    expect(t.statusPatches[1]?.status).toMatchObject({ state: 'pending-changes', observedGeneration: 3 });
  });

  it('whose operation the gateway enqueued first is marked versioned only once that operation is seen', async () => {
    const t = setup('conflict');
    expect(await t.controller.reconcile('s')).toEqual({ requeueAfterMs: 100 });
    expect(t.statusPatches.some((p) => 'versionedGeneration' in p.status)).toBe(false);
    expect(t.statusPatches[0]?.status).toMatchObject({ state: 'pending-changes', observedGeneration: 3 });

    // The cache catches up with the gateway's operation.
    t.cachedOps.push({
      apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: newVersionOperationId('uid-1', 3), resourceVersion: '12' },
      spec: { schedulerName: 's', definitionName: 'create_new_scheduler_version', input: {}, priority: false, enqueuedAt: '2026-01-01T00:00:00Z', source: 'api', cancelRequested: false },
    });
    await t.controller.reconcile('s');
    expect(t.statusPatches.filter((p) => 'versionedGeneration' in p.status).map((p) => p.status)).toEqual([{ versionedGeneration: 3 }]);
  });
});

describe('SchedulerController: room counts', () => {
  const room = (name: string, status: 'pending' | 'ready'): GameRoom => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's' },
    spec: { scheduler: 's', version: 'v1.1.0' }, status: { status },
  });

  /** An in-sync scheduler whose status writes land in the cache, as the update event brings them. */
  function fleet() {
    const s: Scheduler = { ...scheduler(), metadata: { ...scheduler().metadata, generation: 2 } };
    const rooms: GameRoom[] = [room('a', 'pending'), room('b', 'pending')];
    const active = {
      apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 's-v1.1.0', finalizers: [VERSION_PROTECTION_FINALIZER] },
      spec: { scheduler: 's', version: 'v1.1.0', kind: 'initial' },
    } as unknown as SchedulerVersion;
    const ops: Operation[] = [];
    const writes: Record<string, unknown>[] = [];
    const patches: unknown[] = [];
    const events: { reason: string; note: string }[] = [];
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const deps = {
      api: {
        patchSchedulerStatus: (_name: string, patch: { status: Record<string, unknown> }) => {
          patches.push(patch);
          writes.push(patch.status);
          // A merge patch: keys of status.rooms left out of the patch keep their values.
          s.status = { ...s.status, ...patch.status, rooms: { ...s.status?.rooms, ...(patch.status.rooms as object | undefined) } };
          return Promise.resolve(s);
        },
      },
      caches: {
        schedulers: { get: () => s, list: () => [s] },
        rooms: { list: () => rooms, get: () => undefined },
        pods: { list: () => [], get: () => undefined },
        nodes: { list: () => [], get: () => undefined },
        digests: { list: () => [], get: () => undefined },
        versions: { list: () => [active], get: () => active },
        namespaces: { list: () => [], get: () => ({ metadata: { name: 's' } }) },
      },
      events: { record: (e: { reason: string; note: string }) => events.push({ reason: e.reason, note: e.note }) },
      logger: silentLogger(),
      config: { autoscaleDebounce: 1000, maxRoomsPerScheduler: 100, healthInterval: 10_000, roomInitTimeout: 120_000, roomPingTimeout: 240_000, roomDeletionTimeout: 120_000 },
      now: () => clock,
    } as unknown as OperatorDeps;
    const controller = new SchedulerController(deps, { operationsOf: () => ops });
    return { s, controller, rooms, ops, writes, patches, events, active, advance: (ms: number) => { clock += ms; } };
  }

  it('are written at most once a debounce while rooms change; the wake-up writes the latest', async () => {
    const f = fleet();
    expect(await f.controller.reconcile('s')).toEqual({});
    expect(f.writes).toHaveLength(1);

    f.rooms[0] = room('a', 'ready');
    f.advance(300);
    expect(await f.controller.reconcile('s')).toEqual({ requeueAfterMs: 700 });
    f.rooms[1] = room('b', 'ready');
    f.advance(200);
    expect(await f.controller.reconcile('s')).toEqual({ requeueAfterMs: 500 });
    expect(f.writes).toHaveLength(1);

    f.advance(500);
    expect(await f.controller.reconcile('s')).toEqual({});
    expect(f.writes).toHaveLength(2);
    expect(f.writes[1]).toMatchObject({ rooms: { ready: 2, pending: 0, current: 2 } });
  });

  it('do not hold back a change of state or condition: a failed operation is written at once', async () => {
    const f = fleet();
    await f.controller.reconcile('s');
    f.rooms[0] = room('a', 'ready');
    f.ops.push({
      apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'op-1' },
      spec: { schedulerName: 's', definitionName: 'add_rooms', input: {}, priority: false, enqueuedAt: '2026-01-01T00:00:00Z', source: 'api', cancelRequested: false },
      status: { status: 'error', finishedAt: '2026-01-01T00:00:00Z' },
    });
    f.advance(100);
    expect(await f.controller.reconcile('s')).toEqual({});
    expect(f.writes).toHaveLength(2);
    // The failure is told by Degraded; the room serves on the active version, so the state stays in-sync.
    expect(f.writes[1]).toMatchObject({ state: 'in-sync', rooms: { ready: 1 }, conditions: expect.arrayContaining([expect.objectContaining({ type: 'Degraded', status: 'True', reason: 'OperationFailed' })]) as unknown });
  });

  it('write the desired count in force from the health check\'s decision (status.autoscaling) once, on the resourceVersion read; once more: no write', async () => {
    const f = fleet();
    f.s.spec = { ...f.s.spec, roomsReplicas: 2 };
    f.s.status = { ...f.s.status, autoscaling: { desired: 2 } };
    await f.controller.reconcile('s');
    expect(f.writes).toHaveLength(1);
    expect(f.patches[0]).toMatchObject({ metadata: { resourceVersion: expect.any(String) as unknown }, status: { rooms: { desired: 2 } } });
    expect(f.s.status.rooms).toMatchObject({ desired: 2, current: 2, pending: 2 });
    expect(f.s.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/^0 of 2 rooms ready/);
    await f.controller.reconcile('s');
    expect(f.writes).toHaveLength(1);
  });

  it('take an autoscaler\'s decision as the count in force, whatever roomsReplicas says', async () => {
    const f = fleet();
    f.active.spec.definition = { ...f.s.spec, autoscaling: { enabled: true, min: 1, max: 9, policy: { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 2 } } } } } as never;
    f.s.spec = { ...f.s.spec, roomsReplicas: 7 };
    f.s.status = { ...f.s.status, autoscaling: { desired: 2 } };
    await f.controller.reconcile('s');
    expect(f.s.status.rooms).toMatchObject({ desired: 2 });
  });

  it('write a roomsReplicas moved while an add_rooms runs (the health check decides nothing then) at once, on the resourceVersion read', async () => {
    const f = fleet();
    f.s.spec = { ...f.s.spec, roomsReplicas: 2 };
    f.s.status = { ...f.s.status, autoscaling: { desired: 2 } };
    await f.controller.reconcile('s');
    f.ops.push({
      apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'op-add' },
      spec: { schedulerName: 's', definitionName: 'add_rooms', input: { amount: 3 }, priority: false, enqueuedAt: '2026-01-01T00:00:00Z', source: 'api', cancelRequested: false },
      status: { status: 'in_progress', startedAt: '2026-01-01T00:00:00Z' },
    });
    f.s.spec = { ...f.s.spec, roomsReplicas: 5 };
    f.advance(10); // within the debounce of room counts: a new desired count is no room count
    expect(await f.controller.reconcile('s')).toEqual({});
    expect(f.patches[1]).toMatchObject({ metadata: { resourceVersion: expect.any(String) as unknown }, status: { rooms: { desired: 5 } } });
    expect(f.s.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/^0 of 5 rooms ready/);
    // Once more: nothing moved, nothing written.
    await f.controller.reconcile('s');
    expect(f.writes).toHaveLength(2);
  });
});
