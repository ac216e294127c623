/**
 * The scheduler controller alone on the sandbox API server, with the operator's real caches and
 * clients (test/support/controller-harness.ts): it converges, and a reconcile of objects it
 * already converged makes no write at all (every write counts at 10,000 rooms).
 */
import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { createSchedulerOperationId } from '../../../common/src/operations/operation-id';
import { OperationDefinition, OperationSourceName } from '../../../common/src/resources/operation-names';
import { SCHEDULER_FINALIZER, specChangeSourcePatch, VERSION_PROTECTION_FINALIZER } from '../../../common/src/resources/labels';
import { startControllerHarness, type ControllerHarness } from '../../../test/support/controller-harness';
import { schedulerObject } from '../../../test/support/scheduler-object';
import { waitFor } from '../../../test/support/wait';
import { SchedulerController } from './scheduler-controller';

describe('SchedulerController on the sandbox', () => {
  let h: ControllerHarness;
  let controller: SchedulerController;

  beforeAll(async () => {
    h = await startControllerHarness();
    controller = new SchedulerController(h.deps, { operationsOf: (s) => h.runner.operationsOf(s), track: (op) => h.runner.track(op) });
  });

  afterAll(async () => {
    await h.stop();
  });

  test('a new Scheduler gets its finalizer, one create_scheduler operation and a creating status; once more: no write', async () => {
    await h.api.createScheduler(schedulerObject('fresh', { roomsReplicas: 0 }) as never);
    const passes = await h.converge(() => controller.reconcile('fresh'));
    expect(passes.slice(0, -1).every((n) => n > 0)).toBe(true);

    const s = await h.api.getScheduler('fresh');
    expect(s.metadata.finalizers).toEqual([SCHEDULER_FINALIZER]);
    expect(s.status?.state).toBe('creating');
    const ops = (await h.api.listOperations('fresh')).items;
    expect(ops.map((op) => [op.metadata.name, op.spec.definitionName, op.spec.source])).toEqual([
      [createSchedulerOperationId(s.metadata.uid as string, 1), OperationDefinition.CreateScheduler, OperationSourceName.Kubectl],
    ]);
    expect(s.status?.lastOperation).toMatchObject({ definitionName: OperationDefinition.CreateScheduler, status: 'pending' });

    expect(await h.writesOf(() => controller.reconcile('fresh'))).toBe(0);
  });

  test('a delete_scheduler written with kubectl released the finalizer: not added back while it runs; the Scheduler deleted before the cache shows it: no error', async () => {
    await h.createdScheduler('released', { roomsReplicas: 0 });
    await h.converge(() => controller.reconcile('released'));
    // What the running delete_scheduler does last: the finalizer released, then the Scheduler deleted.
    await h.api.patchScheduler('released', { metadata: { finalizers: [] } });
    await waitFor(() => (h.informers.schedulers.get('released')?.metadata.finalizers ?? []).length === 0, { message: 'the finalizer gone from the cache' });
    const running = { ...buildOperation({ id: 'released-del', schedulerName: 'released', definitionName: OperationDefinition.DeleteScheduler, input: {}, source: OperationSourceName.Kubectl }), status: { status: 'in_progress' } } as Operation;
    const deleting = new SchedulerController(h.deps, { operationsOf: (s) => [...h.runner.operationsOf(s), running] });
    expect(await h.writesOf(() => deleting.reconcile('released'))).toBe(0);
    expect((await h.api.getScheduler('released')).metadata.finalizers ?? []).toEqual([]);

    // Deleted on the server while this cache still shows it without the finalizer (no operation seen).
    const seen = h.informers.schedulers.get('released') as Scheduler;
    await h.api.deleteScheduler('released');
    const stale = new SchedulerController({ ...h.deps, caches: { ...h.deps.caches, schedulers: { ...h.deps.caches.schedulers, get: (name: string) => (name === 'released' ? seen : undefined) } } },
      { operationsOf: (s) => h.runner.operationsOf(s) });
    await expect(stale.reconcile('released')).resolves.toEqual({});
  });

  test('a Scheduler not created yet whose spec the API changed (a PATCH after a failed creation): its create_scheduler is the API\'s', async () => {
    await h.api.createScheduler(schedulerObject('repatched', { roomsReplicas: 0 }) as never);
    // The gateway's spec write: the next generation, said to be the API's in the same patch.
    const read = await h.api.getScheduler('repatched');
    await h.api.jsonPatchScheduler('repatched', [{ op: 'replace', path: '/spec/roomsReplicas', value: 1 }, ...specChangeSourcePatch(read, 'api', 'op-of-the-patch')]);
    await h.converge(() => controller.reconcile('repatched'));

    const s = await h.api.getScheduler('repatched');
    expect(s.metadata.generation).toBe(2);
    const ops = (await h.api.listOperations('repatched')).items;
    expect(ops.map((op) => [op.metadata.name, op.spec.definitionName, op.spec.source])).toEqual([
      [createSchedulerOperationId(s.metadata.uid as string, 2), OperationDefinition.CreateScheduler, OperationSourceName.Api],
    ]);
  });

  test('a created Scheduler with a room: its version protected, its status in-sync with the room counted; once more: no write', async () => {
    const created = await h.createdScheduler('made', { roomsReplicas: 1 });
    await h.readyRoom(created);
    await h.converge(() => controller.reconcile('made'));

    const s = await h.api.getScheduler('made');
    expect(s.status).toMatchObject({ state: 'in-sync', version: 'v1.0.0', observedGeneration: 1 });
    expect(s.status?.rooms).toMatchObject({ current: 1, pending: 1 }); // the room controller has not written its status
    expect(s.status?.roomsByVersion).toEqual({ 'v1.0.0': 1 });
    const v = await h.api.getSchedulerVersion('made-v1.0.0');
    expect(v.metadata.finalizers).toContain(VERSION_PROTECTION_FINALIZER);

    expect(await h.writesOf(() => controller.reconcile('made'))).toBe(0);
  });

  test('status.version patched to a version no SchedulerVersion holds: set back by a controller that just started, nothing rebuilt; once more: no write', async () => {
    const created = await h.createdScheduler('status-edited', { roomsReplicas: 1 });
    await h.readyRoom(created);
    await h.converge(() => controller.reconcile('status-edited'));
    await h.api.patchSchedulerStatus('status-edited', { status: { version: 'v99.0.0' } });
    await waitFor(() => h.deps.caches.schedulers.get('status-edited')?.status?.version === 'v99.0.0', { timeoutMs: 10_000, message: 'the cache shows status.version v99.0.0' });

    // A replica that starts now knows nothing of the edit but what the objects say.
    const restarted = new SchedulerController(h.deps, { operationsOf: (s) => h.runner.operationsOf(s), track: (op) => h.runner.track(op) });
    await h.converge(() => restarted.reconcile('status-edited'));

    expect((await h.api.getScheduler('status-edited')).status?.version).toBe('v1.0.0');
    expect((await h.api.listSchedulerVersions('status-edited')).items.map((v) => [v.spec.version, v.metadata.finalizers])).toEqual([['v1.0.0', [VERSION_PROTECTION_FINALIZER]]]);
    expect(await h.writesOf(() => restarted.reconcile('status-edited'))).toBe(0);
  });

  test('roomsReplicas moved while a remove_rooms runs (the health check decides nothing then): DESIRED and Ready follow it at once; once more: no write', async () => {
    const created = await h.createdScheduler('shrunk', { roomsReplicas: 4 });
    for (let i = 0; i < 2; i++) await h.api.patchGameRoomStatus('shrunk', await h.readyRoom(created), { status: { status: 'ready' } });
    await h.api.patchSchedulerStatus('shrunk', { status: { autoscaling: { desired: 4 } } }); // the health check's decision
    await waitFor(() => h.informers.schedulers.get('shrunk')?.status?.autoscaling?.desired === 4, { message: 'the cache shows the decision 4' });
    await h.converge(() => controller.reconcile('shrunk'));
    expect((await h.api.getScheduler('shrunk')).status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'RoomsNotReady' });

    // What a running remove_rooms of 2 does first: roomsReplicas moved, said to be its change.
    const removing = { ...buildOperation({ id: 'shrunk-remove', schedulerName: 'shrunk', definitionName: OperationDefinition.RemoveRooms, input: { amount: 2 }, source: OperationSourceName.Api }), status: { status: 'in_progress' } } as Operation;
    const during = new SchedulerController(h.deps, { operationsOf: (s) => [...h.runner.operationsOf(s), removing] });
    const read = await h.api.getScheduler('shrunk');
    await h.api.jsonPatchScheduler('shrunk', [{ op: 'replace', path: '/spec/roomsReplicas', value: 2 }, ...specChangeSourcePatch(read, 'api', 'shrunk-remove')]);
    await h.converge(() => during.reconcile('shrunk'));

    const ready = async () => {
      const s = await h.api.getScheduler('shrunk');
      expect(s.status?.rooms).toMatchObject({ desired: 2, ready: 2 });
      return s.status?.conditions?.find((c) => c.type === 'Ready');
    };
    // The count moved a generation: its (count-only) version operation is queued.
    expect(await ready()).toMatchObject({ status: 'False', reason: 'PendingChanges', message: '2 of 2 rooms ready, allocated, active or occupied; state pending-changes' });
    const versioning = (await h.api.listOperations('shrunk')).items.find((op) => op.spec.definitionName === OperationDefinition.CreateNewSchedulerVersion);
    await h.api.patchOperationStatus(versioning?.metadata.name as string, { status: { status: 'finished', finishedAt: new Date().toISOString() } });
    await h.converge(() => during.reconcile('shrunk'));
    expect(await ready()).toMatchObject({ status: 'True', reason: 'InSync', message: '2 of 2 rooms ready, allocated, active or occupied; state in-sync' });
    expect(await h.writesOf(() => during.reconcile('shrunk'))).toBe(0);
  });

  test('a spec edit enqueues one version operation and marks the generation versioned; once more: no write', async () => {
    await h.createdScheduler('edited', { roomsReplicas: 0 });
    await h.converge(() => controller.reconcile('edited'));
    await h.api.patchScheduler('edited', { spec: { roomsReplicas: 1 } });
    await h.converge(() => controller.reconcile('edited'));

    const s = await h.api.getScheduler('edited');
    expect(s.metadata.generation).toBe(2);
    expect(s.status).toMatchObject({ state: 'pending-changes', versionedGeneration: 2, observedGeneration: 2 });
    const ops = (await h.api.listOperations('edited')).items;
    expect(ops.map((op) => op.spec.definitionName)).toEqual([OperationDefinition.CreateNewSchedulerVersion]);

    expect(await h.writesOf(() => controller.reconcile('edited'))).toBe(0);
  });
});
