/**
 * Restoring Roomkeeper's objects from a backup (the README's "Backup and restore"): SchedulerVersions
 * written back without their ownerReferences, then their Scheduler. The scheduler comes back on
 * the version whose definition is its spec, under that version's number; a version no Scheduler
 * owns that holds v1.0.0 with another definition does not stop the creation. An Operation written
 * back from the backup (the API server drops its status, so it looks pending) is never run on the
 * scheduler of its name created since: a restored delete_scheduler deleted a live scheduler
 * before. Runs on the sandbox, or on a real cluster when E2E_KUBECONFIG is set (the real
 * kube-apiserver tier runs it).
 */
import type { Scheduler, SchedulerSpec, SchedulerVersion } from '../../common/src/generated/resources';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { SCHEDULER_LABEL } from '../../common/src/resources/labels';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const KEPT = 'restore-kept-e2e';
const TAKEN = 'restore-taken-e2e';

function specOf(name: string, image: string, roomsReplicas: number): SchedulerSpec {
  const s = schedulerObject(name, { roomsReplicas }) as unknown as Scheduler;
  s.spec.spec.containers[0] = { ...s.spec.spec.containers[0], image } as never;
  return s.spec;
}

/** A SchedulerVersion as a backup holds it once its ownerReferences, uid, resourceVersion and status are left out. */
function restoredVersion(scheduler: string, version: string, definition: SchedulerSpec): SchedulerVersion {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion',
    metadata: { name: `${scheduler}-${version}`, labels: { [SCHEDULER_LABEL]: scheduler } },
    spec: { scheduler, version, kind: version === 'v1.0.0' ? 'initial' : 'major', definition },
  };
}

describe('restoring schedulers from a backup', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const inSync = (name: string) => waitFor(async () => {
    const s = await stack.api.getScheduler(name);
    return s.status?.state === 'in-sync' && s.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? s : undefined;
  }, { timeoutMs: 90_000, message: `${name} in sync and Ready` });

  test('a scheduler restored with its versions comes back on the version of its spec, under its number, and a restored operation is not run on it', async () => {
    const current = specOf(KEPT, 'example.com/game:3.0.0', 2);
    await stack.api.createSchedulerVersion(restoredVersion(KEPT, 'v1.0.0', specOf(KEPT, 'example.com/game:1.0.0', 2)));
    await stack.api.createSchedulerVersion(restoredVersion(KEPT, 'v3.0.0', current));
    await stack.api.createScheduler({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: KEPT }, spec: current } as never);

    const s = await inSync(KEPT);
    expect(s.status?.version).toBe('v3.0.0');
    const rooms = await waitFor(async () => {
      const items = (await stack.api.listGameRooms(KEPT)).items.filter((r) => !r.metadata.deletionTimestamp);
      return items.length === 2 ? items : undefined;
    }, { timeoutMs: 60_000, message: `2 rooms of ${KEPT}` });
    expect(rooms.map((r) => r.spec.version)).toEqual(['v3.0.0', 'v3.0.0']);
    // The version of the spec is the Scheduler's now; the other restored one is left as it was.
    const v3 = await stack.api.getSchedulerVersion(`${KEPT}-v3.0.0`);
    expect(v3.metadata.ownerReferences?.map((o) => [o.kind, o.uid])).toEqual([['Scheduler', s.metadata.uid]]);
    expect(v3.status?.active).toBe(true);
    expect((await stack.api.getSchedulerVersion(`${KEPT}-v1.0.0`)).metadata.ownerReferences).toBeUndefined();
    const create = (await stack.api.listOperations(KEPT)).items.find((o) => o.spec.definitionName === 'create_scheduler');
    expect(create?.status?.executionHistory?.map((h) => h.event)).toContain('Version v3.0.0 was here, owned by no Scheduler (restored from a backup, or written by hand), with the scheduler\'s spec as its definition: it is the scheduler\'s first active version, under its number');

    // The backup's delete_scheduler of an earlier scheduler of this name, written back.
    const enqueuedAt = Date.now() - 3_600_000;
    const id = newOperationId();
    await stack.api.createOperation(buildOperation({ id, schedulerName: KEPT, definitionName: 'delete_scheduler', source: 'api', enqueuedAt }));
    const evicted = await waitFor(async () => {
      const op = await stack.api.getOperation(id);
      return op.status?.status === 'evicted' ? op : undefined;
    }, { timeoutMs: 60_000, message: 'the restored delete_scheduler evicted' });
    expect(evicted.status?.executionHistory?.map((h) => h.event)).toEqual([
      expect.stringMatching(new RegExp(`^Not run, evicted: enqueued at ${new Date(enqueuedAt).toISOString().replace(/\./g, '\\.')}, before scheduler ${KEPT} was created \\(at \\S+\\), so it was asked of an earlier scheduler of that name and written back later`)),
    ]);
    expect(evicted.status?.conditions?.find((c) => c.type === 'Invalid')).toMatchObject({ status: 'True', reason: 'EnqueuedBeforeScheduler' });
    const after = await inSync(KEPT);
    expect(after.metadata.deletionTimestamp).toBeUndefined();
    expect((await stack.api.listGameRooms(KEPT)).items.filter((r) => !r.metadata.deletionTimestamp)).toHaveLength(2);
  });

  test('a version no Scheduler owns that holds v1.0.0 with another definition does not stop a creation: the first version takes the next major', async () => {
    await stack.api.createSchedulerVersion(restoredVersion(TAKEN, 'v1.0.0', specOf(TAKEN, 'example.com/game:0.9.0', 1)));
    await stack.api.createScheduler(schedulerObject(TAKEN, { roomsReplicas: 1 }) as never);
    const s = await inSync(TAKEN);
    expect(s.status?.version).toBe('v2.0.0');
    const create = (await stack.api.listOperations(TAKEN)).items.find((o) => o.spec.definitionName === 'create_scheduler');
    expect(create?.status?.executionHistory?.map((h) => h.event)).toContain('Created version v2.0.0 (v1.0.0 is taken by a SchedulerVersion no Scheduler owns, whose definition is not the spec: restored from a backup, or written by hand; it is left as it is)');
    const v1 = await stack.api.getSchedulerVersion(`${TAKEN}-v1.0.0`);
    expect([v1.metadata.ownerReferences, v1.status?.active ?? false]).toEqual([undefined, false]);
  });
});
