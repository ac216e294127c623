/**
 * A game room built on @roomkeeper/sdk, end to end: gateway -> API server -> operator, with the
 * SDK room in this process reading its configuration from the env the operator put on its pod
 * (names, rooms API URL, per-room token). The test plays the kubelet's part for the one thing the
 * sandbox cannot do to an in-process room: it sends SIGTERM (through the SDK's injectable signal
 * source) when the pod gets its deletionTimestamp. The simulated room of that pod stays silent
 * (`ROOMKEEPER_SIM_ROOM=never-ping`), so every ping comes from the SDK.
 */
import { EventEmitter } from 'node:events';
import { readRoomConfig, RoomClient, type Allocation, type ShutdownResult } from '../../sdk/src/index';
import { managementCall } from '../support/http';
import { podEnv, silentRoomPod, startStackForRoomClients } from '../support/room-pod';
import type { Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'sdk-room';

describe('a game room on the SDK', () => {
  let stack: Stack;
  let room: RoomClient | undefined;
  beforeAll(async () => {
    stack = await startStackForRoomClients();
  });
  afterAll(async () => {
    room?.close();
    await stack.stop();
  });

  test('becomes ready from the pod env, hears of its allocation from a ping answer, and on scale-down reports terminating (and terminated) before it exits', async () => {
    const pod = await silentRoomPod(stack, NAME);
    const podName = pod.metadata?.name as string;

    const config = readRoomConfig(podEnv(pod));
    expect(config).toMatchObject({ schedulerName: NAME, roomId: podName, roomsApiUrl: stack.roomsUrl });
    expect(config.token).toBeTruthy();
    const signals = new EventEmitter();
    const client = new RoomClient({ config, pingIntervalMs: 300 });
    room = client;
    const shutdowns: ShutdownResult[] = [];
    client.on('shutdown', (r) => shutdowns.push(r));
    let drained = false;
    client.installSignalHandlers({ source: signals, drainBudgetMs: 2000, drain: () => { drained = true; } });

    await client.ready();
    await waitFor(async () => (await stack.api.getGameRoom(NAME, podName)).status?.status === 'ready', { timeoutMs: 30_000, message: 'the SDK room is ready' });

    // A matchmaker allocates the room; the room hears of it from the answer to a following ping.
    const allocations: Allocation[] = [];
    client.on('allocated', (a) => allocations.push(a));
    const allocated = await managementCall(stack, 'POST', `/scheduler/${NAME}/rooms/allocate`, { allocationId: 'match-1', metadata: { mode: 'duel' } });
    expect(allocated.status).toBe(200);
    expect(allocated.body).toMatchObject({ success: true, roomId: podName, allocationId: 'match-1' });
    await waitFor(() => allocations.length > 0, { timeoutMs: 10_000, message: 'the SDK room hears of its allocation' });
    expect(allocations).toEqual([expect.objectContaining({ id: 'match-1', metadata: { mode: 'duel' } })]);

    // The match is played (occupied ends the allocation) and over (ready again).
    await client.occupied();
    await waitFor(async () => (await stack.api.getGameRoom(NAME, podName)).status?.allocation?.endedAt, { timeoutMs: 30_000, message: 'the operator ended the allocation' });
    await client.ready();
    await waitFor(async () => (await stack.api.getGameRoom(NAME, podName)).status?.status === 'ready', { timeoutMs: 30_000, message: 'the SDK room is ready again' });

    const removed = await managementCall(stack, 'POST', `/schedulers/${NAME}/remove-rooms`, { amount: 1 });
    expect(removed.status).toBe(200);
    // The kubelet's part: SIGTERM once the pod is being deleted.
    await waitFor(async () => (await stack.core.readNamespacedPod({ name: podName, namespace: NAME })).metadata?.deletionTimestamp, { timeoutMs: 30_000, message: 'the pod is being deleted' });
    signals.emit('SIGTERM');

    // terminating reaches the GameRoom while the room still runs.
    await waitFor(async () => {
      const gr = await stack.api.getGameRoom(NAME, podName).catch(() => undefined);
      return gr?.status?.pingStatus === 'terminating' || gr?.status?.pingStatus === 'terminated';
    }, { timeoutMs: 10_000, message: 'the GameRoom shows the terminating ping' });
    await waitFor(() => shutdowns.length === 1, { timeoutMs: 10_000, message: 'the shutdown sequence finished' });
    expect(shutdowns[0]).toEqual({ signal: 'SIGTERM', drain: 'completed', terminatedAcknowledged: true });
    expect(drained).toBe(true);
    // The game server exits now (here: closes its client); the pod goes away.
    client.close();
    await waitFor(async () => !(await stack.core.listNamespacedPod({ namespace: NAME })).items.some((p) => p.metadata?.name === podName), { timeoutMs: 30_000, message: 'the pod is gone' });
  });
});
