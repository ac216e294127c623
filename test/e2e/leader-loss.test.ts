/**
 * The leader dies (a crash: no status written, no Lease released) in the middle of the work, and
 * the standby finishes it, as the operations issue's fault scenarios 1, 2 and 4 describe:
 *  1. during a major switch's rollout of 20 rooms with maxSurge 5: the rollout completes; an
 *     informer checks on every room event that the fleet never exceeds desired + maxSurge live
 *     rooms, never has fewer than the desired ready-or-occupied rooms, and never loses an
 *     occupied room;
 *  2. after some of the creates of an add_rooms: the fleet ends at exactly the desired count
 *     (add-rooms raises roomsReplicas by its amount);
 *  4. during delete_scheduler: the stuck deletion gets another attempt and the scheduler goes;
 *  5. during create_new_scheduler_version: the stuck version change gets another attempt, which
 *     makes the version Maestro would number, and the validation room left behind is removed.
 * Runs on the sandbox, and on the real API server through the real-apiserver tier.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import { describeScheduler, managementCall, roomPing } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued, SchedulerAnswer } from './management-bodies';

function createBody(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, ...(schedulerObject(name, overrides) as { spec: Record<string, unknown> }).spec };
}

const live = (rooms: readonly GameRoom[]) => rooms.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
const serving = (rooms: readonly GameRoom[]) => live(rooms).filter((r) => r.status?.status === 'ready' || r.status?.status === 'occupied');

async function ping(stack: Stack, scheduler: string, room: string, status: string): Promise<void> {
  expect(await roomPing(stack, scheduler, room, status)).toBe(200);
}

/** Crashes the leader; resolves once the standby leads, and starts a new standby for what comes next. */
async function killLeader(stack: Stack): Promise<void> {
  const leader = await waitFor(() => stack.operators.find((o) => o.isLeader), { timeoutMs: 15_000, message: 'a leader to kill' });
  await leader.crash();
  await waitFor(() => stack.operators.some((o) => o !== leader && o.isLeader), { timeoutMs: 15_000, message: 'the standby leads within 15 s' });
  await stack.addOperator();
}

describe('the leader dies mid-work; the standby finishes it', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      external: true, operators: 2,
      // Rooms ping rarely and expire late (the test pings one room by hand); pods of a deleted
      // scheduler stay terminating until force-deleted after the deletion timeout.
      config: { healthInterval: 300, roomPingTimeout: 120_000, roomDeletionTimeout: 10_000, addRoomsConcurrency: 1 },
      simulation: { pingIntervalMs: 500, startDelayMs: 100 },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('1. during a major rollout of 20 rooms (maxSurge 5): the rollout completes within its bounds, and no occupied room goes', async () => {
    const name = 'loss-rollout';
    expect((await managementCall(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 20, maxSurge: 5 }))).status).toBe(200);
    await waitFor(async () => serving((await stack.api.listGameRooms(name)).items).length === 20, { timeoutMs: 90_000, message: '20 serving rooms' });
    const occupied = live((await stack.api.listGameRooms(name)).items)[0]!.metadata.name as string;
    stack.simulation!.rooms!.silence(occupied);
    await ping(stack, name, occupied, 'occupied');
    await waitFor(async () => (await stack.api.getGameRoom(name, occupied)).status?.status === 'occupied');

    const violations: string[] = [];
    let armed = false;
    let released = false; // once its players have left, the occupied room is replaced as any other
    const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(stack.kc, `/apis/roomkeeper.io/v1/namespaces/${name}/gamerooms`,
      () => stack.api.listGameRooms(name));
    const check = (event: string, room?: GameRoom) => {
      if (!armed) return;
      const rooms = informer.list(name) as GameRoom[];
      if (live(rooms).length > 25) violations.push(`${live(rooms).length} live rooms (more than desired 20 + maxSurge 5)`);
      if (serving(rooms).length < 20) violations.push(`${serving(rooms).length} ready-or-occupied rooms (fewer than 20)`);
      if (!released && room?.metadata.name === occupied && (event === 'delete' || room.metadata.deletionTimestamp)) violations.push('the occupied room was deleted');
    };
    informer.on('add', (r) => check('add', r));
    informer.on('update', (r) => check('update', r));
    informer.on('delete', (r) => check('delete', r));
    await informer.start();
    armed = true;
    try {
      const current = ((await managementCall(stack, 'GET', `/schedulers/${name}`)).body as SchedulerAnswer).scheduler;
      const { name: _n, state: _s, createdAt: _c, ...rest } = current;
      const next = { ...rest, spec: { ...current.spec, version: undefined, containers: current.spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' })) } };
      expect((await managementCall(stack, 'POST', `/schedulers/${name}`, next)).status).toBe(200);
      // The leader dies once the rollout has begun: some rooms are on v2.0.0, most are not.
      await waitFor(async () => {
        const rooms = live((await stack.api.listGameRooms(name)).items);
        return rooms.some((r) => r.spec.version === 'v2.0.0') && rooms.filter((r) => r.spec.version === 'v1.0.0').length >= 10;
      }, { timeoutMs: 60_000, intervalMs: 50, message: 'the rollout under way' });
      await killLeader(stack);
      await waitFor(async () => {
        const rooms = live((await stack.api.listGameRooms(name)).items);
        const old = rooms.filter((r) => r.spec.version === 'v1.0.0');
        return old.length === 1 && old[0]!.metadata.name === occupied && serving(rooms).filter((r) => r.spec.version === 'v2.0.0').length === 20;
      }, { timeoutMs: 120_000, message: 'every free room on v2.0.0; the occupied one kept' }).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`);
      });
      released = true;
      await ping(stack, name, occupied, 'ready');
      await waitFor(async () => {
        const st = (await stack.api.getScheduler(name)).status;
        return st?.rooms?.current === 20 && st.rooms.updated === 20 && st.conditions?.find((c) => c.type === 'Progressing')?.reason === 'RolloutComplete';
      }, { timeoutMs: 90_000, message: 'the rollout complete with 20 rooms' });
      expect(violations).toEqual([]);
    } finally {
      await informer.stop();
    }
  }, 420_000);

  test('2. after some creates of add_rooms: the fleet ends at exactly the desired count', async () => {
    const name = 'loss-add';
    expect((await managementCall(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 3 }))).status).toBe(200);
    await waitFor(async () => serving((await stack.api.listGameRooms(name)).items).length === 3, { timeoutMs: 60_000, message: '3 serving rooms' });
    const added = await managementCall(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount: 10 });
    expect(added.status).toBe(200);
    await waitFor(async () => live((await stack.api.listGameRooms(name)).items).length >= 5, { timeoutMs: 60_000, intervalMs: 20, message: 'some rooms of add_rooms created' });
    await killLeader(stack);
    const op = await waitFor(async () => {
      const o = await stack.api.getOperation((added.body as OperationEnqueued).operationId);
      return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 60_000, message: 'add_rooms ended (finished, or marked stuck)' });
    expect(op.status?.executionHistory?.map((h) => h.event).join('\n') ?? '').toMatch(/Starting operation/);
    // A user's add-rooms raises roomsReplicas by its amount (so the health check keeps the rooms):
    // 13 desired, whether the stuck operation got that far or the health check finished its work.
    await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const rooms = (await stack.api.listGameRooms(name)).items.filter((r) => !r.spec.validation);
      return s.spec.roomsReplicas === 13 && s.status?.rooms?.desired === 13 && rooms.length === 13 && serving(rooms).length === 13;
    }, { timeoutMs: 120_000, message: 'exactly 13 rooms (3 + 10 added), all serving' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`);
    });
  }, 300_000);

  test('5. during create_new_scheduler_version: another attempt makes the version with Maestro\'s number, and the validation room left behind goes', async () => {
    const name = 'loss-version';
    expect((await managementCall(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 2 }))).status).toBe(200);
    await waitFor(async () => serving((await stack.api.listGameRooms(name)).items).length === 2, { timeoutMs: 60_000, message: '2 serving rooms' });
    // A major change whose rooms stay silent for 4 s: the leader dies while the validation room waits.
    const current = ((await managementCall(stack, 'GET', `/schedulers/${name}`)).body as SchedulerAnswer).scheduler;
    const { name: _n, state: _s, createdAt: _c, ...rest } = current;
    const env = [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'start-after:4' }];
    const next = { ...rest, spec: { ...current.spec, version: undefined, containers: current.spec.containers.map((c) => ({ ...c, environment: env })) } };
    const posted = await managementCall(stack, 'POST', `/schedulers/${name}`, next);
    expect(posted.status).toBe(200);
    const postedId = (posted.body as OperationEnqueued).operationId;
    const validationRoom = await waitFor(async () => (await stack.api.listGameRooms(name)).items.find((r) => r.spec.validation)?.metadata.name,
      { timeoutMs: 30_000, intervalMs: 50, message: 'the validation room of the first attempt' });
    await killLeader(stack);
    await waitFor(async () => ((await managementCall(stack, 'GET', `/schedulers/${name}`)).body as Partial<SchedulerAnswer> | undefined)?.scheduler?.spec.version === 'v2.0.0',
      { timeoutMs: 120_000, message: 'GET shows v2.0.0 active' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`);
    });
    const attempts = (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'create_new_scheduler_version')
      .sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt));
    expect(attempts.map((o) => [o.status?.status, o.status?.conditions?.find((c) => c.type === 'Stuck')?.status ?? 'none'])).toEqual([['error', 'True'], ['finished', 'none']]);
    expect(attempts[0]!.metadata.name).toBe(postedId);
    expect(attempts[1]!.status?.executionHistory?.map((h) => h.event)[1]).toMatch(new RegExp(`^Attempt 2: attempt 1 \\(${postedId}\\) got stuck`));
    const versions = (await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version).sort();
    expect(versions).toEqual(['v1.0.0', 'v2.0.0']);
    // The first attempt's validation room is removed by the health check; no room is left over.
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms(name)).items;
      return !rooms.some((r) => r.metadata.name === validationRoom) && !rooms.some((r) => r.spec.validation) && serving(rooms).filter((r) => r.spec.version === 'v2.0.0').length === 2;
    }, { timeoutMs: 120_000, message: 'no validation room left, 2 rooms on v2.0.0' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`);
    });
    const removal = (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'remove_rooms' && JSON.stringify(o.spec.input).includes(validationRoom));
    expect(removal?.spec.input?.details).toEqual([`${validationRoom}: a validation room no operation uses: the operation that made it stopped mid-way`]);
  }, 300_000);

});

// Its own stack, started once the other is stopped (on a real cluster both would share the
// leader Lease): pods that take their whole grace period (the simulated kubelet holds deleted
// pods up to 10 minutes), so the deletion waits for them until it force-deletes them.
describe('the leader dies mid-deletion', () => {
  test('4. during delete_scheduler: another attempt completes the deletion, and the history says why', async () => {
    const stack = await startStack({
      external: true, operators: 2,
      config: { healthInterval: 300, roomDeletionTimeout: 10_000 },
      simulation: { pingIntervalMs: 500, deletionCapMs: 600_000 },
    });
    try {
      await deleteWithLeaderLoss(stack);
    } finally {
      await stack.stop();
    }
  }, 300_000);
});

async function deleteWithLeaderLoss(stack: Stack): Promise<void> {
  {
    const name = 'loss-delete';
    const body = createBody(name, { roomsReplicas: 3 }) as { spec: Record<string, unknown> };
    // A grace period longer than the deletion timeout (10 s): the deletion force-deletes the pods
    // after 10 s; kube-controller-manager's namespace controller looks again after the grace.
    expect((await managementCall(stack, 'POST', '/schedulers', { ...body, spec: { ...body.spec, terminationGracePeriod: '30s' } })).status).toBe(200);
    await waitFor(async () => serving((await stack.api.listGameRooms(name)).items).length === 3, { timeoutMs: 60_000, message: '3 serving rooms' });
    const deleted = await managementCall(stack, 'DELETE', `/schedulers/${name}`);
    expect(deleted.status).toBe(200);
    const deletedId = (deleted.body as OperationEnqueued).operationId;
    await waitFor(async () => (await stack.api.getOperation(deletedId)).status?.executionHistory?.some((h) => h.event.startsWith('Waiting for room pods to be deleted')),
      { timeoutMs: 30_000, message: 'the deletion waiting for its rooms' });
    // The deletion set its room pods terminating itself: kube-controller-manager's namespace
    // controller takes a deleted namespace up only 5 s later.
    const notTerminating = (await stack.core.listNamespacedPod({ namespace: name })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(notTerminating.map((p) => p.metadata?.name)).toEqual([]);
    await killLeader(stack);
    await waitFor(async () => !(await stack.api.listSchedulers()).items.some((s) => s.metadata.name === name), { timeoutMs: 120_000, message: 'the scheduler deleted' });
    // The attempt writes its end after the Scheduler is gone (on a loaded API server, seconds later).
    const deletionAttempts = async () => (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'delete_scheduler')
      .sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt));
    let attempts: Awaited<ReturnType<typeof deletionAttempts>> = [];
    await waitFor(async () => (attempts = await deletionAttempts()).map((o) => o.status?.status).join() === 'error,finished', { timeoutMs: 30_000 }).catch(() => {
      throw new Error(`expected a stuck attempt and a finished one, got:\n${attempts.map((o) => `${o.metadata.name!} ${String(o.status?.status)}: ${(o.status?.executionHistory ?? []).map((h) => `${h.createdAt} ${h.event}`).join(' | ')}`).join('\n')}`);
    });
    expect(attempts[0]!.status?.conditions?.find((c) => c.type === 'Stuck')?.status).toBe('True');
    const second = attempts[1]!.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(second[1]).toMatch(new RegExp(`^Attempt 2: attempt 1 \\(${deletedId}\\) got stuck \\(its lease was not renewed in time: its operator stopped, or could not reach the API server\\); its last entry: `));
    expect(second.at(-2)).toBe(`Scheduler ${name} deleted`);
    await waitFor(async () => (await stack.core.listNamespace()).items.every((n) => n.metadata?.name !== name), { timeoutMs: 60_000, message: 'the namespace gone' })
      .catch(async (err: unknown) => {
        const ns = (await stack.core.listNamespace()).items.find((n) => n.metadata?.name === name);
        const pods = (await stack.core.listNamespacedPod({ namespace: name })).items.map((p) => `${String(p.metadata?.name)} deleting since ${String(p.metadata?.deletionTimestamp)} finalizers ${JSON.stringify(p.metadata?.finalizers ?? [])}`);
        const rooms = (await stack.api.listGameRooms(name)).items.map((r) => `${r.metadata.name!} finalizers ${JSON.stringify(r.metadata.finalizers ?? [])}`);
        throw new Error(`${(err as Error).message}\nnamespace: ${JSON.stringify(ns?.status)}\npods: ${pods.join('; ')}\nrooms: ${rooms.join('; ')}\nlast attempt: ${String(attempts.at(-1)?.status?.executionHistory?.map((h) => h.event).join(' | '))}`);
      });
  }
}
