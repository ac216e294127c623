/**
 * A whole fleet falls silent while no other room of the cluster is heard (the pings' path more
 * likely broke than every game server at once): the expiry brake keeps the rooms, and the
 * Scheduler says so in its HealingHeld condition while it lasts, not only in one Event. Pings heard
 * again end the hold, and the condition says nothing is held.
 */
import { roomPing } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'all-silent';
const PING_TIMEOUT_MS = 6000;
const ROOMS = 8;

describe('a wide silence held from expiry', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ config: { roomPingTimeout: PING_TIMEOUT_MS, healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const healingHeld = async () => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === 'HealingHeld');

  test('is told in the HealingHeld condition while it lasts, and no room is removed; pings heard again end it', async () => {
    await stack.api.createScheduler(schedulerObject(NAME, { roomsReplicas: ROOMS }) as never);
    const live = async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === ROOMS, { timeoutMs: 60_000, message: `${ROOMS} ready rooms` });
    const rooms = (await live()).map((r) => r.metadata.name as string);
    for (const room of rooms) stack.simulation!.rooms!.silence(room);

    // The rooms cross their ping timeout one by one; the condition follows the count.
    const held = await waitFor(async () => {
      const c = await healingHeld();
      return c?.reason === 'ExpiryHeld' && c.message.includes(`: ${ROOMS} rooms would expire now`) ? c : undefined;
    }, { timeoutMs: PING_TIMEOUT_MS + 30_000, message: 'HealingHeld says the expiry of every room is held' });
    expect(held.status).toBe('True');
    expect(held.message).toMatch(new RegExp(`^room expiry held \\(RoomExpiryHeld\\): ${ROOMS} rooms would expire now, and ${ROOMS} of ${ROOMS} have been silent for more than half their timeout .*; meanwhile these rooms stay counted ready, and those not marked silent before \\(status\\.silentSince\\) may be allocated$`));
    expect((await live()).map((r) => r.metadata.name as string).sort()).toEqual([...rooms].sort());

    // Every room pings again (as the test's own game server): nothing is held any more.
    for (const room of rooms) expect(await roomPing(stack, NAME, room, 'ready')).toBe(200);
    const released = await waitFor(async () => {
      const c = await healingHeld();
      return c?.reason === 'NotHeld' ? c : undefined;
    }, { timeoutMs: 30_000, message: 'HealingHeld says nothing is held' });
    expect(released.status).toBe('False');
    expect(released.message).toContain('no room expiry is held');
  });
});
