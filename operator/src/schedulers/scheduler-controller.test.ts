import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { silentLogger } from '../../../common/src/logger';
import { newVersionOperationId } from '../../../common/src/operations/operation-id';
import { SCHEDULER_FINALIZER } from '../../../common/src/resources/labels';
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
    now: () => Date.parse('2026-01-01T00:00:00Z'),
  } as unknown as OperatorDeps;
  const controller = new SchedulerController(deps, { operationsOf: () => [...cachedOps, ...tracked], track: (op) => tracked.push(op) });
  return { s, controller, statusPatches, created, cachedOps, tracked };
}

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
