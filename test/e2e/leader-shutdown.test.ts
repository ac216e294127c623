/**
 * The leader is stopped gracefully (SIGTERM: a helm upgrade, a rolling restart, a node drain) in
 * the middle of an add_rooms, or of a remove_rooms by amount, and the standby takes over. Unlike a
 * crash (leader-loss.test.ts), the stopping leader hands the operation over: it ends `finished`
 * with the rooms done so far, its history says the operator stopped and what it did, nothing is
 * marked stuck or in error, and the health check under the new leader adds (removes) the rest, so
 * the scheduler has exactly the rooms asked for. The stop hands over at once (no drain): the path
 * an operation still running at the end of half the shutdown budget takes.
 * Runs on the sandbox, and on the real API server through the real-apiserver tier.
 */
import { describeScheduler, managementCall } from '../support/http';
import { live, serving } from '../support/outage-checks';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued } from './management-bodies';

function createBody(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, ...(schedulerObject(name, overrides) as { spec: Record<string, unknown> }).spec };
}

/** Stops the leader as SIGTERM does, handing over at once; resolves once the standby leads, and starts a new standby. */
async function stopLeader(stack: Stack): Promise<void> {
  const leader = await waitFor(() => stack.operators.find((o) => o.isLeader), { message: 'the leader' });
  await leader.stop('SIGTERM', { drainMs: 0 });
  expect(leader.isLeader).toBe(false);
  await waitFor(() => stack.operators.some((o) => o !== leader && o.isLeader), { timeoutMs: 15_000, message: 'the standby leads' });
  await stack.addOperator();
}

/** No operation of the scheduler in error or stuck, and the scheduler not Degraded. */
async function expectNothingFailed(stack: Stack, name: string): Promise<void> {
  const ops = (await stack.api.listOperations(name)).items;
  expect(ops.filter((o) => o.status?.status === 'error').map((o) => o.status?.executionHistory?.at(-2)?.event)).toEqual([]);
  expect(ops.filter((o) => o.status?.conditions?.some((c) => c.type === 'Stuck' && c.status === 'True'))).toEqual([]);
  const degraded = (await stack.api.getScheduler(name)).status?.conditions?.find((c) => c.type === 'Degraded');
  expect(degraded?.status === 'True' ? degraded.message : 'not degraded').toBe('not degraded');
}

describe('the leader is stopped (SIGTERM) mid-operation; the standby takes over', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      external: true, operators: 2,
      // One room created at a time, so the stop lands mid-way.
      config: { healthInterval: 300, roomPingTimeout: 120_000, addRoomsConcurrency: 1 },
      simulation: { pingIntervalMs: 500, startDelayMs: 100 },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('mid add_rooms: it ends finished with what it did said in its history; exactly the rooms asked for, no error, nothing stuck', async () => {
    const name = 'stop-add';
    expect((await managementCall(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 2 }))).status).toBe(200);
    await waitFor(async () => serving((await stack.api.listGameRooms(name)).items).length === 2, { timeoutMs: 60_000, message: '2 serving rooms' });
    const added = await managementCall(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount: 30 });
    expect(added.status).toBe(200);
    const id = (added.body as OperationEnqueued).operationId;
    await waitFor(async () => live((await stack.api.listGameRooms(name)).items).length >= 7, { timeoutMs: 60_000, intervalMs: 20, message: 'some rooms of add_rooms created' });

    await stopLeader(stack);

    const op = await stack.api.getOperation(id);
    const history = op.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(op.status?.status).toBe('finished');
    expect(op.status?.lease).toBeUndefined();
    expect(op.status?.conditions?.find((c) => c.type === 'Stuck')).toBeUndefined();
    expect(history.at(-2)).toMatch(/^The operator stopped \(SIGTERM\) during this operation, after ".*"; what it did stays: roomsReplicas is 32, \d+ of the 30 rooms asked for were created; the health check adds the other \d+$/);
    expect(history.at(-1)).toBe('Operation finished');

    // The new leader's health check makes the rest: exactly 2 + 30, and roomsReplicas moved once.
    await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const rooms = (await stack.api.listGameRooms(name)).items.filter((r) => !r.spec.validation);
      return s.spec.roomsReplicas === 32 && s.status?.rooms?.desired === 32 && rooms.length === 32 && serving(rooms).length === 32;
    }, { timeoutMs: 120_000, message: 'exactly 32 rooms (2 + 30 added), all serving' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`);
    });
    await expectNothingFailed(stack, name);
  }, 300_000);

  test('mid remove_rooms by amount: it ends finished, roomsReplicas down by the whole amount, and exactly the rooms left that were asked for', async () => {
    const name = 'stop-remove';
    expect((await managementCall(stack, 'POST', '/schedulers', createBody(name, { roomsReplicas: 40 }))).status).toBe(200);
    await waitFor(async () => serving((await stack.api.listGameRooms(name)).items).length === 40, { timeoutMs: 120_000, message: '40 serving rooms' });
    const removed = await managementCall(stack, 'POST', `/schedulers/${name}/remove-rooms`, { amount: 35 });
    expect(removed.status).toBe(200);
    const id = (removed.body as OperationEnqueued).operationId;
    await waitFor(async () => live((await stack.api.listGameRooms(name)).items).length <= 37, { timeoutMs: 60_000, intervalMs: 20, message: 'some rooms of remove_rooms removed' });
    await stopLeader(stack);

    const op = await stack.api.getOperation(id);
    const history = op.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(op.status?.status).toBe('finished');
    expect(history.at(-2)).toMatch(/^The operator stopped \(SIGTERM\) during this operation, after ".*"; what it did stays: roomsReplicas went down by 35, \d+ (?:rooms were|room was) removed(; the health check removes the other \d+)?$/);
    await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      const rooms = live((await stack.api.listGameRooms(name)).items);
      return s.spec.roomsReplicas === 5 && rooms.length === 5 && serving(rooms).length === 5;
    }, { timeoutMs: 120_000, message: 'exactly 5 rooms (40 - 35 removed), all serving' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`);
    });
    await expectNothingFailed(stack, name);
  }, 300_000);
});
