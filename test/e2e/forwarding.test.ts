/**
 * Forwarders end to end: a scheduler with a gRPC forwarder (a real receiver loading the same
 * .proto), simulated rooms pinging the gateway, and a room removed by scale-down that reaches the
 * receiver as a `terminated` status, as does a room whose pod is deleted (once). Validation rooms
 * are never forwarded.
 */
import { startForwardReceiver, type ForwarderRequests, type ForwarderRpc, type ForwardReceiver, type PartialMessage } from '../../common/src/forwarding';
import { roomToken } from '../../common/src/rooms/room-token';
import { roomPing } from '../support/http';
import { refuseChange } from '../support/refused-change';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued, SchedulerAnswer } from './management-bodies';

async function call(stack: Stack, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${stack.managementUrl!}${path}`, {
    method, headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const statusName = (v: unknown): string => (typeof v === 'number' ? ['ready', 'occupied', 'terminating', 'terminated'][v] ?? String(v) : String(v));

describe('forwarding', () => {
  let stack: Stack;
  let receiver: ForwardReceiver;
  beforeAll(async () => {
    receiver = await startForwardReceiver();
    stack = await startStack({ external: true, config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.stop();
  });
  /** The requests the receiver decoded, every field read as possibly absent: protobufjs gives a message field the sender left out as null. */
  const requestsOf = <R extends ForwarderRpc>(rpc: R) => receiver.requestsOf(rpc) as PartialMessage<ForwarderRequests[R]>[];

  test('pings, room events and a scale-down\'s terminated status reach the receiver with the forwarder metadata', async () => {
    const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000, metadata: { roomType: 'arena', region: 'eu' } } }];
    const spec = (schedulerObject('fwd-game', { roomsReplicas: 2, forwarders }) as { spec: Record<string, unknown> }).spec;
    expect((await call(stack, 'POST', '/schedulers', { name: 'fwd-game', ...spec })).status).toBe(200);
    const rooms = await waitFor(async () => {
      const live = (await stack.api.listGameRooms('fwd-game')).items.filter((r) => r.status?.status === 'ready');
      return live.length === 2 ? live : undefined;
    }, { timeoutMs: 30_000 });
    const roomIds = rooms.map((r) => r.metadata.name as string);

    // The very first ping may beat the room's address into its status; later ones carry it.
    const resync = await waitFor(() => requestsOf('SendRoomResync').find((r) => roomIds.includes(r.room?.roomId ?? '') && r.room?.host), { timeoutMs: 10_000 });
    expect(resync.room).toMatchObject({ game: 'test-game', roomType: 'arena' });
    expect(resync.room?.metadata?.region).toBe('eu');
    expect(statusName(resync.statusType)).toBe('ready');
    const room = rooms.find((r) => r.metadata.name === resync.room?.roomId)!;
    expect(resync.room?.host).toBe(room.status?.host);
    expect(resync.room?.port).toBe(room.status?.ports?.[0]?.port);

    const report = async (kind: 'roomevent' | 'playerevent', body: unknown): Promise<unknown> => (await fetch(`${stack.roomsUrl}/scheduler/fwd-game/rooms/${roomIds[0]!}/${kind}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(stack.config.roomTokenSecret, 'fwd-game', roomIds[0]!)}` },
      body: JSON.stringify(body),
    })).json();
    expect(await report('roomevent', { event: 'matchStarted', timestamp: Date.now(), metadata: { mode: 'ranked' } })).toMatchObject({ success: true });
    const roomEvent = await waitFor(() => requestsOf('SendRoomEvent').find((r) => r.room?.roomId === roomIds[0]));
    expect(roomEvent.eventType).toBe('matchStarted');
    // A player event carries all of the forwarder metadata (the spec); the event's fields win.
    expect(await report('playerevent', { event: 'playerJoin', timestamp: Date.now(), metadata: { playerId: 'p-1', roomType: 'duel' } })).toMatchObject({ success: true });
    const playerEvent = await waitFor(() => requestsOf('SendPlayerEvent').find((r) => r.room?.roomId === roomIds[0]));
    expect(playerEvent.metadata).toEqual({ roomType: 'duel', region: 'eu', playerId: 'p-1', eventType: 'playerJoin' });

    // Scale down to 1: the removed room's terminated status reaches the receiver.
    expect((await call(stack, 'PATCH', '/schedulers/fwd-game', { roomsReplicas: 1 })).status).toBe(200);
    const terminated = await waitFor(() => requestsOf('SendRoomStatus').find((r) => statusName(r.statusType) === 'terminated' && roomIds.includes(r.room?.roomId ?? '')), { timeoutMs: 30_000, message: 'terminated status forwarded' });
    const removal = (await stack.api.listOperations('fwd-game')).items.find((o) => o.spec.definitionName === 'remove_rooms');
    expect(removal?.spec.input?.reason).toBe('scale_down');
    expect(terminated.room?.game).toBe('test-game');
  });

  test('a validation room\'s pings are never forwarded', async () => {
    // Collect the validation rooms' ids while the new version is validated.
    const validationRooms = new Set<string>();
    // boolean, not `true`: the finally clears it while the loop runs.
    let watching = true as boolean;
    const watcher = (async () => {
      while (watching) {
        for (const r of (await stack.api.listGameRooms('fwd-game')).items) if (r.spec.validation) validationRooms.add(r.metadata.name as string);
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    // Stopped however the test ends: a loop left running would list against a stopped stack and
    // fail whichever suite this worker runs next.
    try {
      await validateNewVersion();
    } finally {
      watching = false;
      await watcher;
    }
    expect(validationRooms.size).toBeGreaterThan(0);
    const forwardedIds = receiver.received.map((r) => (r.request as { room?: { roomId?: string } }).room?.roomId);
    for (const id of validationRooms) expect(forwardedIds).not.toContain(id);
  });

  /** A new major version of fwd-game, validated and switched to. */
  async function validateNewVersion(): Promise<void> {
    // A version operation still queued would refuse the new version (400, as Maestro). The status
    // speaks for the spec only once the operator has observed its generation.
    await waitFor(async () => {
      const s = await stack.api.getScheduler('fwd-game');
      return s.status?.state === 'in-sync' && s.status.observedGeneration === s.metadata.generation;
    }, { timeoutMs: 20_000, message: 'fwd-game in sync with its latest spec' });
    const current = (await call(stack, 'GET', '/schedulers/fwd-game')).body as SchedulerAnswer;
    const next = { ...current.scheduler, spec: { ...current.scheduler.spec } };
    next.spec.containers = next.spec.containers.map((c) => ({ ...c, image: 'example.com/game:9.9.9' }));
    delete next.spec.version;
    const res = await call(stack, 'POST', '/schedulers/fwd-game', next);
    expect(res).toMatchObject({ status: 200 });
    const op = await waitFor(async () => {
      const o = await stack.api.getOperation((res.body as OperationEnqueued).operationId);
      return o.status?.status === 'finished' ? o : undefined;
    }, { timeoutMs: 30_000 });
    expect(op.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/Game room validation success/);
  }

  test('an allocation and the end of its TTL reach the receiver as status changes (occupied, then ready)', async () => {
    const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
    const spec = (schedulerObject('fwd-alloc', { roomsReplicas: 1, forwarders }) as { spec: Record<string, unknown> }).spec;
    expect((await call(stack, 'POST', '/schedulers', { name: 'fwd-alloc', ...spec })).status).toBe(200);
    const answer = await waitFor(async () => {
      const res = await call(stack, 'POST', '/scheduler/fwd-alloc/rooms/allocate', { ttlSeconds: 1 });
      return res.status === 200 ? res.body as { roomId: string; allocationId: string } : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200, message: 'a room allocated' });
    const statusesOf = (status: string) => requestsOf('SendRoomStatus')
      .filter((r) => r.room?.roomId === answer.roomId && statusName(r.statusType) === status && r.room.metadata?.allocationId === answer.allocationId);
    const taken = await waitFor(() => statusesOf('occupied')[0], { timeoutMs: 20_000, message: 'the allocation forwarded as occupied' });
    expect(taken.room?.metadata).toMatchObject({ roomStatus: 'allocated', eventType: 'status' });
    const freed = await waitFor(() => statusesOf('ready')[0], { timeoutMs: 20_000, message: 'the end of the TTL forwarded as ready' });
    expect(freed.room?.metadata).toMatchObject({ roomStatus: 'ready', allocationEnded: 'expired' });
    // Each change is told once.
    expect(statusesOf('occupied')).toHaveLength(1);
    expect(statusesOf('ready')).toHaveLength(1);
  });

  test('a multi-match room\'s status changes made by runningMatches alone reach the receiver at once, with the room status and its running matches', async () => {
    const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
    // The room never pings by itself: the test's pings are the game server's.
    const spec = (schedulerObject('fwd-multi', { roomsReplicas: 1, forwarders, matchAllocation: { maxMatches: 3 } }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]) as { spec: Record<string, unknown> }).spec;
    expect((await call(stack, 'POST', '/schedulers', { name: 'fwd-multi', ...spec })).status).toBe(200);
    const room = await waitFor(async () => (await stack.api.listGameRooms('fwd-multi')).items.find((r) => r.status?.instanceStatus === 'ready')?.metadata.name, { timeoutMs: 30_000, message: 'a room of fwd-multi running' });
    const resyncs = () => requestsOf('SendRoomResync').filter((r) => r.room?.roomId === room);
    // [ping status, runningMatches, the room status they make with maxMatches 3]. Each change is
    // within the 30 s resync interval of the last: only a change of the room status sends it.
    const steps: [string, number, string][] = [['ready', 0, 'ready'], ['ready', 1, 'active'], ['occupied', 3, 'occupied'], ['occupied', 1, 'active'], ['ready', 3, 'occupied']];
    for (const [status, matches, roomStatus] of steps) {
      const told = await waitFor(async () => {
        // Pinged again until told: the gateway's cache may not show the room running yet (a
        // `pending` room status). An unchanged ping within the interval is never forwarded.
        expect(await roomPing(stack, 'fwd-multi', room, status, matches)).toBe(200);
        return resyncs().find((r) => r.room?.metadata?.roomStatus === roomStatus && r.room.metadata.runningMatches === String(matches) && r.room.metadata.pingType === status);
      }, { timeoutMs: 10_000, intervalMs: 200, message: `a ${status} ping with ${matches} running matches forwarded as room status ${roomStatus}` });
      // statusType is the ping's, as Maestro sends it; the room status is in the metadata.
      expect(statusName(told.statusType)).toBe(status);
    }
  });

  test('after a version change that was refused, the operator forwards an allocation to the active version\'s forwarders, as the gateway does, not to the refused definition\'s', async () => {
    const refused = await startForwardReceiver();
    try {
      const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
      const spec = (schedulerObject('fwd-refused', { roomsReplicas: 1, forwarders }) as { spec: Record<string, unknown> }).spec;
      expect((await call(stack, 'POST', '/schedulers', { name: 'fwd-refused', ...spec })).status).toBe(200);
      await waitFor(async () => (await stack.api.listGameRooms('fwd-refused')).items.some((r) => r.status?.status === 'ready'), { timeoutMs: 30_000, message: 'a room ready' });
      // A major change whose validation room never starts, with another forwarder: refused, so v1.0.0 stays active.
      const brokenForwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: refused.address, options: { timeout: 1000 } }];
      expect((await refuseChange(stack, 'fwd-refused', { roomsReplicas: 1, forwarders: brokenForwarders })).status?.version).toBe('v1.0.0');

      const answer = await waitFor(async () => {
        const res = await call(stack, 'POST', '/scheduler/fwd-refused/rooms/allocate', {});
        return res.status === 200 ? res.body as { roomId: string; allocationId: string } : undefined;
      }, { timeoutMs: 30_000, intervalMs: 200, message: 'a room allocated' });
      const allocated = (r: PartialMessage<ForwarderRequests['SendRoomStatus']>): boolean => r.room?.roomId === answer.roomId && r.room.metadata?.allocationId === answer.allocationId;
      await waitFor(() => requestsOf('SendRoomStatus').find(allocated), { timeoutMs: 20_000, message: 'the allocation forwarded to the active version\'s forwarder' });
      // The gateway's pings of the room go to the active version's forwarder too.
      await waitFor(() => requestsOf('SendRoomResync').find((r) => r.room?.roomId === answer.roomId), { timeoutMs: 20_000, message: 'a ping of the room forwarded' });
      expect(refused.received.filter((c) => JSON.stringify(c.request).includes(answer.roomId))).toEqual([]);
    } finally {
      await refused.stop();
    }
  });

  test('a room whose pod is deleted reaches the receiver as terminated once, and its scheduler\'s status records it lost', async () => {
    const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
    const spec = (schedulerObject('fwd-lost', { roomsReplicas: 1, forwarders }) as { spec: Record<string, unknown> }).spec;
    expect((await call(stack, 'POST', '/schedulers', { name: 'fwd-lost', ...spec })).status).toBe(200);
    const victim = await waitFor(async () => (await stack.api.listGameRooms('fwd-lost')).items.find((r) => r.status?.status === 'ready')?.metadata.name, { timeoutMs: 30_000, message: 'a room ready' });
    await stack.core.deleteNamespacedPod({ name: victim, namespace: 'fwd-lost', gracePeriodSeconds: 0 });
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('fwd-lost')).items;
      return !rooms.some((r) => r.metadata.name === victim) && rooms.some((r) => r.status?.status === 'ready');
    }, { timeoutMs: 30_000, message: 'the lost room deleted and replaced' });
    const told = requestsOf('SendRoomStatus').filter((r) => r.room?.roomId === victim && statusName(r.statusType) === 'terminated');
    expect(told).toHaveLength(1);
    expect((await stack.api.getScheduler('fwd-lost')).status?.lostRooms).toEqual([{ name: victim, reason: 'its pod was deleted', lostAt: expect.any(String) as string }]);
  });

  test('a room that pings terminated reaches the receiver as a terminated resync, and as terminated status once, at its removal (as Maestro)', async () => {
    const forwarders = [{ name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 1000 } }];
    const spec = (schedulerObject('fwd-ends', { roomsReplicas: 1, forwarders }) as { spec: Record<string, unknown> }).spec;
    expect((await call(stack, 'POST', '/schedulers', { name: 'fwd-ends', ...spec })).status).toBe(200);
    const ended = await waitFor(async () => (await stack.api.listGameRooms('fwd-ends')).items.find((r) => r.status?.status === 'ready')?.metadata.name, { timeoutMs: 30_000, message: 'a room ready' });
    expect(await roomPing(stack, 'fwd-ends', ended, 'terminating')).toBe(200);
    expect(await roomPing(stack, 'fwd-ends', ended, 'terminated')).toBe(200);
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('fwd-ends')).items;
      return !rooms.some((r) => r.metadata.name === ended) && rooms.some((r) => r.status?.status === 'ready');
    }, { timeoutMs: 30_000, message: 'the terminated room removed and replaced' });
    const statuses = () => requestsOf('SendRoomStatus').filter((r) => r.room?.roomId === ended && statusName(r.statusType) === 'terminated');
    await waitFor(() => statuses().length > 0, { timeoutMs: 10_000, message: 'the removal forwarded as terminated status' });
    expect(statuses()).toHaveLength(1);
    expect(requestsOf('SendRoomResync').filter((r) => r.room?.roomId === ended && statusName(r.statusType) === 'terminated')).toHaveLength(1);
  });
});
