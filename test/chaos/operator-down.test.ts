/**
 * The operator scaled to 0 (the operations issue's fault scenario 5): every operator replica of
 * the stack stops (as SIGTERM does), and while none runs, room pods are deleted, GameRooms are
 * deleted and a client adds rooms; then one replica comes back. Checked on every room, pod and
 * Scheduler event: the occupied room is never deleted, and the live rooms never exceed
 * roomsReplicas + maxSurge. Checked at the end: the fleet converges to exactly roomsReplicas
 * ready-or-occupied rooms, each with its pod and no pod without its room (nothing leaked), the
 * client's add_rooms finished, and no operation is left pending, running, stuck or in error.
 * Runs on the sandbox, and on the real API server through test/real-apiserver/chaos-suite.test.ts.
 */
import { describeScheduler, managementCall, roomPing } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued } from '../e2e/management-bodies';
import { liveRooms, servingRooms, watchFleet } from './fleet-watch';

const NAME = 'operator-down';
const REPLICAS = 8;
const MAX_SURGE = 3;
const ADDED = 2;

describe('the operator is scaled to 0 while rooms go, then comes back', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      external: true, operators: 2,
      config: { healthInterval: 300, roomPingTimeout: 30_000 },
      simulation: { pingIntervalMs: 1000 },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('counts converge to roomsReplicas, nothing leaks, no operation is left stuck, the occupied room stays', async () => {
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: REPLICAS, maxSurge: MAX_SURGE }) as { spec: object }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    await waitFor(async () => servingRooms((await stack.api.listGameRooms(NAME)).items).length === REPLICAS,
      { timeoutMs: 90_000, message: `${REPLICAS} serving rooms` });
    const opsBefore = new Set((await stack.api.listOperations(NAME)).items.map((o) => o.metadata.name));

    // One room has players: the test is its game server and keeps it occupied throughout.
    const names = liveRooms((await stack.api.listGameRooms(NAME)).items).map((r) => r.metadata.name as string);
    const [occupied, ...free] = names as [string, ...string[]];
    stack.simulation!.rooms!.silence(occupied);
    expect(await roomPing(stack, NAME, occupied, 'occupied')).toBe(200);
    await waitFor(async () => (await stack.api.getGameRoom(NAME, occupied)).status?.status === 'occupied', { timeoutMs: 30_000, message: 'the room occupied' });
    let pinging = true;
    const pinger = (async () => {
      while (pinging) {
        await roomPing(stack, NAME, occupied, 'occupied').catch(() => 0);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    const watch = await watchFleet(stack, NAME, (fleet, e) => {
      if (e.kind !== 'scheduler' && e.name === occupied && (e.type === 'delete' || e.object.metadata?.deletionTimestamp)) return `the occupied room's ${e.kind} was deleted`;
      const desired = fleet.scheduler()?.spec.roomsReplicas ?? REPLICAS;
      const live = liveRooms(fleet.rooms()).length;
      if (live > desired + MAX_SURGE) return `${live} live rooms, more than roomsReplicas ${desired} + maxSurge ${MAX_SURGE}`;
      return undefined;
    });
    try {
      for (const op of stack.operators) await op.stop();
      expect(stack.operators.filter((o) => o.isLeader)).toEqual([]);

      // With no operator: 3 room pods deleted, 2 GameRooms deleted, and a client adds rooms.
      const podsGone = free.slice(0, 3);
      const roomsGone = free.slice(3, 5);
      for (const pod of podsGone) await stack.core.deleteNamespacedPod({ namespace: NAME, name: pod });
      for (const room of roomsGone) await stack.api.deleteGameRoom(NAME, room, undefined, 'Background');
      const added = await managementCall(stack, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: ADDED });
      expect(added.status).toBe(200);
      await waitFor(async () => {
        const pods = (await stack.core.listNamespacedPod({ namespace: NAME })).items.map((p) => p.metadata?.name);
        const rooms = (await stack.api.listGameRooms(NAME)).items.map((r) => r.metadata.name);
        return [...podsGone, ...roomsGone].every((n) => !pods.includes(n)) && roomsGone.every((n) => !rooms.includes(n));
      }, { timeoutMs: 60_000, message: 'the deleted pods and rooms gone' });
      // Nobody acted while no operator ran: the pod-less rooms are still there, none replaced,
      // and the client's operation waits.
      const meanwhile = liveRooms((await stack.api.listGameRooms(NAME)).items).map((r) => r.metadata.name);
      expect(meanwhile.sort()).toEqual(names.filter((n) => !roomsGone.includes(n)).sort());
      expect((await stack.api.getOperation((added.body as OperationEnqueued).operationId)).status?.status ?? 'pending').toBe('pending');

      await stack.addOperator();
      const want = REPLICAS + ADDED;
      await waitFor(async () => {
        const s = await stack.api.getScheduler(NAME);
        const rooms = liveRooms((await stack.api.listGameRooms(NAME)).items);
        const all = (await stack.api.listGameRooms(NAME)).items;
        const pods = (await stack.core.listNamespacedPod({ namespace: NAME })).items;
        const ops = (await stack.api.listOperations(NAME)).items;
        return s.spec.roomsReplicas === want && rooms.length === want && servingRooms(rooms).length === want
          && all.length === want && pods.length === want && pods.every((p) => rooms.some((r) => r.metadata.name === p.metadata?.name))
          && ops.every((o) => !['pending', 'in_progress'].includes(o.status?.status ?? 'pending'));
      }, { timeoutMs: 120_000, message: `exactly ${want} serving rooms, each with its pod, no pod left over, no operation pending or running` }).catch(async (err: unknown) => {
        const pods = (await stack.core.listNamespacedPod({ namespace: NAME })).items.map((p) => `${String(p.metadata?.name)}${p.metadata?.deletionTimestamp ? ' (deleting)' : ''}`);
        throw new Error(`${(err as Error).message}\npods: ${pods.join(', ')}\n${await describeScheduler(stack, NAME)}`);
      });

      const during = (await stack.api.listOperations(NAME)).items.filter((o) => !opsBefore.has(o.metadata.name));
      const history = (o: (typeof during)[number]) => (o.status?.executionHistory ?? []).map((h) => h.event).join(' | ');
      expect(during.filter((o) => o.status?.status !== 'finished').map((o) => `${o.spec.definitionName} ${String(o.status?.status)}: ${history(o)}`)).toEqual([]);
      expect(during.filter((o) => /stuck/.test(history(o))).map(history)).toEqual([]);
      expect(during.find((o) => o.metadata.name === (added.body as OperationEnqueued).operationId)?.status?.status).toBe('finished');
      expect((await stack.api.getGameRoom(NAME, occupied)).status?.status).toBe('occupied');
      expect(watch.events).toBeGreaterThan(0);
      expect(watch.violations).toEqual([]);
    } finally {
      pinging = false;
      await pinger;
      await watch.stop();
    }
  }, 300_000);
});
