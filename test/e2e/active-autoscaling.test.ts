/**
 * The room count is decided by the active version's autoscaling, not the Scheduler spec's: a
 * refused version change stays in the spec (kubectl shows it) while the active version runs, and
 * its autoscaling takes no effect. The health check's decision (kubectl's Desired,
 * status.autoscaling.lastDecision) reads the active version's.
 * Runs on the sandbox, or on a real cluster (test/real-apiserver/e2e-suite.test.ts).
 */
import type { GameRoom } from '../../common/src/generated/resources';
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
  });
});
