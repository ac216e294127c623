/**
 * Multi-match rooms run with the active version's `matchAllocation.maxMatches`, not the
 * Scheduler spec's: a refused version change stays in the spec (kubectl shows it) while the active
 * version runs. The room status (operator and gateway's pings), the allocate API, the Scheduler
 * status (kubectl's Matches and Slots), GET /schedulers and GET /schedulers/info all read the active version's.
 * Runs on the sandbox, or on a real cluster (test/real-apiserver/e2e-suite.test.ts).
 */
import type { GameRoom } from '../../common/src/generated/resources';
import { managementCall, roomPing } from '../support/http';
import { refuseChange } from '../support/refused-change';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

interface SchedulerInfo { name: string; roomsReady: number; roomsActive: number; roomsOccupied: number; runningMatches: number; matchSlots: number; matchAllocation: { maxMatches: number } }

async function infoOf(stack: Stack, scheduler: string): Promise<SchedulerInfo | undefined> {
  const res = await managementCall(stack, 'GET', '/schedulers/info?game=test-game');
  return (res.body as { schedulers?: SchedulerInfo[] }).schedulers?.find((s) => s.name === scheduler);
}

async function fleetRoom(stack: Stack, scheduler: string): Promise<GameRoom | undefined> {
  return (await stack.api.listGameRooms(scheduler)).items.find((r) => !r.spec.validation && !r.metadata.deletionTimestamp);
}

describe('maxMatches of the active version', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('a refused change that sets maxMatches 3 leaves rooms, pings, allocation, the Scheduler status and /schedulers/info single-match, as the active version runs', async () => {
    const name = 'mm-refused';
    // The rooms never ping by themselves: this test is their game server.
    const neverPing = { name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' };
    const spec = (schedulerObject(name, { roomsReplicas: 1 }, [neverPing]) as { spec: Record<string, unknown> }).spec;
    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...spec })).status).toBe(200);
    const room = await waitFor(async () => {
      const r = await fleetRoom(stack, name);
      if (r?.status?.instanceStatus === 'ready' && r.status.pingStatus !== 'ready') await roomPing(stack, name, r.metadata.name as string, 'ready', 0);
      return r?.status?.status === 'ready' ? r.metadata.name : undefined;
    }, { timeoutMs: 60_000, message: 'a ready room' });

    // A change whose validation room never starts, with maxMatches 3: refused, so v1.0.0 stays active.
    const scheduler = await refuseChange(stack, name, { roomsReplicas: 1, matchAllocation: { maxMatches: 3 } }, [neverPing]);
    expect(scheduler.status?.version).toBe('v1.0.0');
    expect(scheduler.spec.matchAllocation).toEqual({ maxMatches: 3 });
    // GET /schedulers lists v1.0.0's fields beside its version: its matchAllocation is the default, 1 match a room.
    const listed = await waitFor(async () => ((await managementCall(stack, 'GET', `/schedulers?name=${name}`)).body as { schedulers: Record<string, unknown>[] }).schedulers[0],
      { timeoutMs: 30_000, message: 'the scheduler listed' });
    expect(listed).toMatchObject({ version: 'v1.0.0', roomsReplicas: 1 });
    expect(listed.matchAllocation).toEqual({ maxMatches: 1 });

    // kubectl's Slots: one serving room of one slot, not three.
    await roomPing(stack, name, room, 'ready', 0);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.rooms?.matchSlots === 1, { timeoutMs: 30_000, message: 'the Scheduler status counts 1 match slot' });
    await waitFor(async () => (await infoOf(stack, name))?.roomsReady === 1, { timeoutMs: 30_000, message: 'the gateway sees the ready room' });
    expect(await infoOf(stack, name)).toMatchObject({ matchAllocation: { maxMatches: 1 }, matchSlots: 1, runningMatches: 0 });

    const first = await managementCall(stack, 'POST', `/scheduler/${name}/rooms/allocate`, { strategy: 'packed' });
    expect(first.status).toBe(200);
    expect((first.body as { roomId: string }).roomId).toBe(room);
    // The game server starts its match: a single-match room running one match is occupied, not active.
    expect(await roomPing(stack, name, room, 'occupied', 1)).toBe(200);
    await waitFor(async () => {
      const r = await fleetRoom(stack, name);
      return r?.status?.status === 'occupied' && r.status.allocation?.endedAt !== undefined;
    }, { timeoutMs: 30_000, message: `room ${room} occupied with its allocation ended` });
    await waitFor(async () => (await infoOf(stack, name))?.roomsOccupied === 1 && (await stack.api.getScheduler(name)).status?.rooms?.occupied === 1,
      { timeoutMs: 30_000, message: 'the gateway and the Scheduler status count the room occupied' });
    const status = await stack.api.getScheduler(name);
    expect(status.status?.rooms).toMatchObject({ occupied: 1, active: 0, matches: 1, matchSlots: 1 });
    expect(await infoOf(stack, name)).toMatchObject({ roomsActive: 0, roomsOccupied: 1, matchAllocation: { maxMatches: 1 }, runningMatches: 1, matchSlots: 1 });
    // No second slot to offer: the room has one, and it runs a match.
    expect((await managementCall(stack, 'POST', `/scheduler/${name}/rooms/allocate`, { strategy: 'packed' })).status).toBe(429);
    expect((await fleetRoom(stack, name))?.status).toMatchObject({ status: 'occupied', runningMatches: 1 });
  });
});
