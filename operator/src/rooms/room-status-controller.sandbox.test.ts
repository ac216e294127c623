/**
 * The room status controller alone on the sandbox API server, with the operator's real caches
 * and clients (test/support/controller-harness.ts): a room's status converges to what its pod
 * and ping say, a room whose pod is gone is deleted once, and a reconcile of a converged room
 * makes no write at all.
 */
import { startControllerHarness, ROOM_HOST, type ControllerHarness } from '../../../test/support/controller-harness';
import { waitFor } from '../../../test/support/wait';
import { RoomStatusController } from './room-status-controller';

describe('RoomStatusController on the sandbox', () => {
  let h: ControllerHarness;
  let controller: RoomStatusController;
  const lost: string[] = [];

  beforeAll(async () => {
    h = await startControllerHarness();
    controller = new RoomStatusController(h.deps, (scheduler, room, why) => lost.push(`${scheduler}/${room}: ${why}`));
  });

  afterAll(async () => {
    await h.stop();
  });

  test('a started room reads ready with its host and ports; once more: no write', async () => {
    const s = await h.createdScheduler('rs', { roomsReplicas: 0 });
    const room = await h.readyRoom(s);
    const passes = await h.converge(() => controller.reconcile(`rs/${room}`));
    expect(passes[0]).toBeGreaterThan(0);

    const written = await h.api.getGameRoom('rs', room);
    const pod = await h.core.readNamespacedPod({ name: room, namespace: 'rs' });
    const hostPort = pod.spec?.containers[0]?.ports?.[0]?.hostPort;
    expect(hostPort).toBeGreaterThanOrEqual(20000);
    expect(written.status).toMatchObject({
      status: 'ready', instanceStatus: 'ready', pingStatus: 'ready', host: ROOM_HOST,
      ports: [{ name: 'game', protocol: 'UDP', port: hostPort, containerPort: 7777 }],
    });
    expect(written.status?.reason).toBeUndefined();

    expect(await h.writesOf(() => controller.reconcile(`rs/${room}`))).toBe(0);
  });

  test('a room whose pod was deleted is deleted once and told lost; once more: no write', async () => {
    const s = await h.createdScheduler('rl', { roomsReplicas: 0 });
    const room = await h.readyRoom(s);
    await h.converge(() => controller.reconcile(`rl/${room}`));
    await h.core.deleteNamespacedPod({ name: room, namespace: 'rl', gracePeriodSeconds: 0 });
    await waitFor(async () => (await h.core.listNamespacedPod({ namespace: 'rl' })).items.length === 0, { message: 'the pod gone' });

    await h.converge(() => controller.reconcile(`rl/${room}`));
    await waitFor(async () => !(await h.api.listGameRooms('rl')).items.some((r) => r.metadata.name === room), { message: 'the room deleted' });
    expect(lost).toEqual([`rl/${room}: its pod was deleted`]);

    expect(await h.writesOf(() => controller.reconcile(`rl/${room}`))).toBe(0);
    expect(lost).toHaveLength(1);
  });
});
