/**
 * The room count is decided by the active version's autoscaling, not the Scheduler spec's: a
 * refused version change stays in the spec (kubectl shows it) while the active version runs, and
 * its autoscaling takes no effect. The health check's decision (kubectl's Desired,
 * status.autoscaling.lastDecision), GET /schedulers/info and add-rooms read the active version's;
 * a change made after the refusal builds on the active version, so the refused autoscaling does
 * not come back with it.
 * Runs on the sandbox, or on a real cluster (test/real-apiserver/e2e-suite.test.ts).
 */
import type { GameRoom, Operation } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { refuseChange } from '../support/refused-change';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

function live(rooms: GameRoom[]): GameRoom[] {
  return rooms.filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp);
}

describe('autoscaling of the active version', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** POST add-rooms, then its operation once it has ended. */
  async function addRooms(name: string, amount: number): Promise<Operation> {
    const added = await managementCall(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount });
    expect(added.status).toBe(200);
    const addId = (added.body as { operationId: string }).operationId;
    return waitFor(async () => {
      const op = await stack.api.getOperation(addId);
      return ['finished', 'error'].includes(op.status?.status ?? '') ? op : undefined;
    }, { timeoutMs: 60_000, message: 'the add_rooms ended' });
  }

  test('a refused change that enables autoscaling (min 3) leaves the fleet at the active version\'s roomsReplicas 1, and the decision says so', async () => {
    const name = 'as-refused';
    const spec = (schedulerObject(name, { roomsReplicas: 1 }) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    await waitFor(async () => live((await stack.api.listGameRooms(name)).items).filter((r) => r.status?.status === 'ready').length === 1,
      { timeoutMs: 60_000, message: 'a ready room' });

    // A change whose validation room never starts, enabling autoscaling: refused, so v1.0.0 stays active.
    const autoscaling = { enabled: true, min: 3, max: 5, policy: { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 2 } } } };
    const scheduler = await refuseChange(stack, name, { roomsReplicas: 1, autoscaling });
    expect(scheduler.status?.version).toBe('v1.0.0');
    expect(scheduler.spec.autoscaling).toMatchObject({ enabled: true, min: 3 });

    // Many health checks later (the room's pings measure the wait): still the one room of v1.0.0.
    const pings = stack.simulation!.rooms!.stats().pingsSent;
    await waitFor(() => stack.simulation!.rooms!.stats().pingsSent > pings + 20, { timeoutMs: 60_000, message: '20 more pings' });
    expect(live((await stack.api.listGameRooms(name)).items)).toHaveLength(1);
    const status = (await stack.api.getScheduler(name)).status;
    expect(status?.rooms?.desired).toBe(1);
    expect(status?.autoscaling?.lastDecision).toBe('roomsReplicas is 1');
    // GET /schedulers/info shows the autoscaling in force: v1.0.0 has none.
    const info = await managementCall(stack, 'GET', '/schedulers/info?game=test-game');
    const mine = (info.body as { schedulers: { name: string; roomsReplicas: number; autoscaling?: unknown }[] }).schedulers.find((s) => s.name === name);
    expect(mine).toMatchObject({ roomsReplicas: 1 });
    expect(mine?.autoscaling).toBeUndefined();

    // An add-rooms moves the count in force (autoscaling does not decide it), and the version it
    // makes builds on v1.0.0: the refused autoscaling does not come back with it.
    const add = await addRooms(name, 1);
    expect(add.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining(['roomsReplicas changed from 1 to 2']));
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.1.0', { timeoutMs: 60_000, message: 'v1.1.0 active' });
    expect((await stack.api.listSchedulerVersions(name)).items.find((v) => v.spec.version === 'v1.1.0')?.spec.definition.autoscaling).toBeUndefined();
    const after = stack.simulation!.rooms!.stats().pingsSent;
    await waitFor(() => stack.simulation!.rooms!.stats().pingsSent > after + 40, { timeoutMs: 60_000, message: '40 more pings' });
    expect(live((await stack.api.listGameRooms(name)).items)).toHaveLength(2);
    expect((await stack.api.getScheduler(name)).status?.autoscaling?.lastDecision).toBe('roomsReplicas is 2');
  });

  test('an add-rooms on an autoscaled scheduler adds rooms only up to autoscaling.max, and says so; the fleet never stays above max', async () => {
    const name = 'as-max';
    const autoscaling = { enabled: true, min: 2, max: 3, policy: { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 1 } } } };
    const spec = (schedulerObject(name, { roomsReplicas: 2, autoscaling }) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    await waitFor(async () => live((await stack.api.listGameRooms(name)).items).filter((r) => r.status?.status === 'ready').length === 2,
      { timeoutMs: 60_000, message: '2 ready rooms (the min)' });
    const add = await addRooms(name, 4);
    expect(add.status?.status).toBe('finished');
    const lines = add.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(lines).toContain('Autoscaling is enabled: it decides the number of rooms from now on');
    expect(lines).toContainEqual(expect.stringMatching(/^Adding [01] rooms? of the 4 asked: autoscaling's max is 3 and the scheduler has [23] rooms, and rooms above max would be removed at once; to have more, raise autoscaling\.max$/));
    // However many pings later, never more than max live rooms.
    const pings = stack.simulation!.rooms!.stats().pingsSent;
    let most = 0;
    await waitFor(async () => {
      most = Math.max(most, live((await stack.api.listGameRooms(name)).items).length);
      return stack.simulation!.rooms!.stats().pingsSent > pings + 20;
    }, { timeoutMs: 60_000, message: '20 more pings' });
    expect(most).toBeLessThanOrEqual(3);
  });
});
