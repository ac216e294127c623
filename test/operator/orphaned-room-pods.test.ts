/**
 * A GameRoom deleted with its pod orphaned (propagationPolicy Orphan, as `kubectl delete gameroom
 * --cascade=orphan` sends it) through client-node, with the operator, the simulated kubelet and
 * rooms on the sandbox: the garbage collector takes the pod's ownerReference away and the GameRoom
 * goes; the operator deletes the pod that ran on without it, tells it in a Warning Event on the
 * Scheduler naming the pod, and the scheduler gets its room back. No other pod is deleted.
 */
import * as k8s from '@kubernetes/client-node';
import { PLURALS, ROOMKEEPER_API } from '../../common/src/resources/api-group';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'orphans';
const DESIRED = 2;

describe('a GameRoom deleted with its pod orphaned', () => {
  let stack: Stack;

  /** The scheduler's live rooms, all ready, each with its live pod, and nothing else; undefined otherwise. */
  const whole = async (): Promise<{ rooms: string[]; pods: k8s.V1Pod[] } | undefined> => {
    const rooms = (await stack.api.listGameRooms(NAME)).items;
    const pods = (await stack.core.listNamespacedPod({ namespace: NAME })).items;
    if (rooms.length !== DESIRED || pods.length !== DESIRED) return undefined;
    if (!rooms.every((r) => !r.metadata.deletionTimestamp && r.status?.status === 'ready')) return undefined;
    const names = rooms.map((r) => r.metadata.name as string).sort();
    const owned = pods.every((p) => !p.metadata?.deletionTimestamp && p.metadata?.ownerReferences?.some((o) => o.kind === 'GameRoom' && names.includes(o.name)));
    return owned ? { rooms: names, pods } : undefined;
  };

  beforeAll(async () => {
    stack = await startStack();
    await stack.api.createScheduler(schedulerObject(NAME, { roomsReplicas: DESIRED }) as never);
    await waitFor(whole, { timeoutMs: 60_000, intervalMs: 100, message: `${NAME} with ${DESIRED} ready rooms` });
  }, 90_000);

  afterAll(async () => {
    await (stack as Stack | undefined)?.stop();
  });

  test('the operator deletes the orphaned pod, tells it, and the scheduler gets its room back; no other pod is deleted', async () => {
    const before = await waitFor(whole, { timeoutMs: 30_000, message: 'the fleet whole' });
    const [orphan, kept] = before.pods;
    const orphanName = orphan?.metadata?.name as string;
    const orphanUid = orphan?.metadata?.uid as string;
    const keptUid = kept?.metadata?.uid as string;

    const custom = stack.kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.deleteNamespacedCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.GameRoom, namespace: NAME, name: orphanName, propagationPolicy: 'Orphan' });
    await waitFor(async () => !(await stack.api.listGameRooms(NAME)).items.some((r) => r.metadata.name === orphanName), { timeoutMs: 30_000, message: 'the GameRoom gone' });

    // Gone, and by the operator's deletion: the garbage collector only took its ownerReference away.
    await waitFor(async () => !(await stack.core.listNamespacedPod({ namespace: NAME })).items.some((p) => p.metadata?.uid === orphanUid),
      { timeoutMs: 60_000, intervalMs: 100, message: `the orphaned pod ${orphanName} deleted` });
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const told = await waitFor(async () => {
      const found = (await events.listNamespacedEvent({ namespace: 'default' })).items
        .filter((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === NAME && e.reason === 'OrphanedRoomPodsDeleted');
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100, message: 'the OrphanedRoomPodsDeleted Event' });
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ type: 'Warning', action: 'DeletePod', reportingController: 'roomkeeper.io/operator' });
    expect(told[0]?.note).toBe(`Deleted room pod ${orphanName}, which ran without its GameRoom: its GameRoom was deleted with its pod orphaned (kubectl delete gameroom --cascade=orphan, or a client's propagationPolicy Orphan), so nothing else would delete it. Roomkeeper deleted it (with its grace period), so its host ports and its place on its node are free.`);

    // The room replaced, the other pod untouched, and nothing else deleted by the operator.
    const after = await waitFor(whole, { timeoutMs: 60_000, intervalMs: 100, message: `${NAME} back to ${DESIRED} ready rooms` });
    expect(after.rooms).not.toContain(orphanName);
    expect(after.pods.map((p) => p.metadata?.uid)).toContain(keptUid);
    const deleted = stack.operators.reduce((n, o) => n + o.metrics.sum('roomkeeper_orphaned_room_pods_total', { result: 'deleted' }), 0);
    expect(deleted).toBe(1);
  }, 180_000);
});
