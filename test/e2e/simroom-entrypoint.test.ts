/**
 * The simulated room image's entry point (Dockerfile.simroom; built on @roomkeeper/sdk) as a real
 * process against the sandbox stack: it gets the environment the operator put on its room pod,
 * and the room becomes ready from its pings; scaled down, it gets SIGTERM (the kubelet's part,
 * played by the test), reports terminating and terminated, and exits 0. The sandbox's own
 * simulated room of that pod stays silent (`ROOMKEEPER_SIM_ROOM=never-ping`), so every ping comes
 * from the process; the process itself is given the pod's environment without that variable, so
 * it plays the default script (ready).
 */
import { isNotFound } from '../../common/src/kube/clients';
import { managementCall } from '../support/http';
import { podEnv, silentRoomPod, startStackForRoomClients } from '../support/room-pod';
import type { Stack } from '../support/stack';
import { runStandaloneRoom, type StandaloneRoomProcess } from '../support/standalone-room';
import { waitFor } from '../support/wait';

const NAME = 'simroom-image';

describe('the simulated room image\'s entry point', () => {
  let stack: Stack;
  let proc: StandaloneRoomProcess | undefined;
  beforeAll(async () => {
    stack = await startStackForRoomClients();
  });
  afterAll(async () => {
    proc?.child.kill('SIGKILL');
    await stack.stop();
  });

  test('run with its pod\'s environment, makes its room ready; on SIGTERM after a scale-down it reports terminating and terminated and exits 0', async () => {
    const pod = await silentRoomPod(stack, NAME);
    const podName = pod.metadata?.name as string;
    const env = podEnv(pod);
    expect(env).toMatchObject({ ROOMKEEPER_SCHEDULER_NAME: NAME, ROOMKEEPER_ROOM_ID: podName, ROOMKEEPER_ROOMS_API_URL: stack.roomsUrl });
    expect(env.ROOMKEEPER_ROOM_TOKEN).toBeTruthy();
    const { ROOMKEEPER_SIM_ROOM: _silent, ...roomEnv } = env;
    const room = runStandaloneRoom({ ...roomEnv, ROOMKEEPER_PING_INTERVAL: '300' });
    proc = room;

    await waitFor(async () => (await stack.api.getGameRoom(NAME, podName)).status?.status === 'ready', { timeoutMs: 30_000, message: `the room is ready from the process's pings (output: ${room.output()})` });
    expect(room.output()).toContain('"message":"game room started"');

    const removed = await managementCall(stack, 'POST', `/schedulers/${NAME}/remove-rooms`, { amount: 1 });
    expect(removed.status).toBe(200);
    await waitFor(async () => (await stack.core.readNamespacedPod({ name: podName, namespace: NAME })).metadata?.deletionTimestamp, { timeoutMs: 30_000, message: 'the pod is being deleted' });
    room.child.kill('SIGTERM');
    expect(await room.exited).toBe(0);
    expect(room.output()).toContain('"terminatedAcknowledged":true');
    // The GameRoom saw the goodbye (or is already gone with its pod).
    await waitFor(async () => {
      try {
        return (await stack.api.getGameRoom(NAME, podName)).status?.pingStatus === 'terminated';
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    }, { timeoutMs: 30_000, message: 'the GameRoom shows the terminated ping or is gone' });
  });
});
