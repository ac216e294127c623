/**
 * A scheduler whose game servers never ping (a build without the SDK's pings, a wrong rooms API
 * URL, a room token the gateway refuses) used to lose its whole fleet at every initialization
 * timeout and get it made again, round after round. Rooms that reach the initialization timeout
 * without a recorded ping now count as failed: the newest is kept, the rest made one at a time,
 * said in HealingHeld and a RoomsFailing Event, until a version whose rooms ping ends it. Runs on
 * the sandbox, or on a real cluster when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import * as k8s from '@kubernetes/client-node';
import type { Condition, GameRoom } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { healthAdds, twoProbes } from '../support/probes';
import { waitFor } from '../support/wait';
import type { OperationEnqueued } from './management-bodies';

const NAME = 'silent-rooms-e2e';
const ROOMS = 7;
const KEPT = 1;

describe('rooms whose game servers never ping', () => {
  let stack: Stack;
  beforeAll(async () => {
    // A ping timeout short enough that the expiry brake sees pings flowing (another scheduler's rooms) within the test.
    stack = await startStack({ external: true, config: { healthInterval: 300, roomInitTimeout: 4_000, roomPingTimeout: 10_000 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('are not replaced fleet after fleet: the newest is kept, one room at a time is tried, until a version whose rooms ping', async () => {
    const definition = (env: { name: string; value: string }[] = [], name = NAME, rooms = ROOMS) => ({ name, ...(schedulerObject(name, { roomsReplicas: rooms }, env) as { spec: Record<string, unknown> }).spec });
    // Another scheduler's rooms ping: a silence of one scheduler alone is no sign that pings do not reach the operator (the expiry brake).
    expect((await managementCall(stack, 'POST', '/schedulers', definition([], `${NAME}-heard`, 2))).status).toBe(200);
    expect((await managementCall(stack, 'POST', '/schedulers', definition([{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]))).status).toBe(200);
    const healingHeld = async (): Promise<Condition | undefined> => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === 'HealingHeld');
    const live = async (): Promise<GameRoom[]> => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);

    const held = await waitFor(async () => {
      const c = await healingHeld();
      return c?.status === 'True' && c.reason === 'RoomsFailing' ? c : undefined;
    }, { timeoutMs: 90_000, message: 'HealingHeld True (RoomsFailing)' });
    expect(held.message).toMatch(new RegExp(`^rooms of v1\\.0\\.0 fail before their game server pings: \\d+ still unready or pending at the initialization timeout with no ping recorded and none has pinged `
      + `\\(newest ${NAME}-\\w+: unready \\d+s after its pod started \\(initialization timeout 4s\\); no ping of its game server was recorded: make it ping the rooms API`));

    // Probes of one room each follow, and the fleet of silent rooms never grows past the kept one and a probe.
    const probes = await twoProbes(stack, NAME, 'v1.0.0', 90_000);
    expect(probes.map((o) => o.spec.input?.amount)).toEqual(probes.map(() => 1));
    // Only probes: the silent rooms were never replaced as a batch.
    const adds = await healthAdds(stack, NAME);
    expect(adds.map((o) => o.spec.input?.amount)).toEqual(adds.map(() => 1));
    expect((await live()).length).toBeLessThanOrEqual(KEPT + 1);
    const removals = (await stack.api.listOperations(NAME)).items.filter((o) => o.spec.definitionName === 'remove_rooms' && o.spec.source === 'operator');
    const removed = removals.flatMap((o) => o.spec.input?.roomsIds ?? []);
    // The rooms but the newest were expired, each once.
    expect(new Set(removed).size).toBe(removed.length);

    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const event = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.reason === 'RoomsFailing' && e.regarding?.name === NAME), { timeoutMs: 30_000, intervalMs: 200, message: 'a RoomsFailing Event' });
    expect(event.type).toBe('Warning');
    expect(event.note).toMatch(/still unready or pending at the initialization timeout with no ping recorded/);

    // The fix: game servers that ping, as a new major version (validated, then rolled out).
    const fixed = await managementCall(stack, 'POST', `/schedulers/${NAME}`, definition());
    expect(fixed.status).toBe(200);
    const opId = (fixed.body as OperationEnqueued).operationId;
    await waitFor(async () => (await stack.api.getOperation(opId)).status?.status === 'finished', { timeoutMs: 90_000, message: 'the fixed version validated and switched' });
    await waitFor(async () => {
      const rooms = await live();
      return rooms.length === ROOMS && rooms.every((r) => r.status?.status === 'ready' && r.spec.version === 'v2.0.0');
    }, { timeoutMs: 90_000, message: `${ROOMS} rooms of v2.0.0 ready, and no silent room of v1.0.0 left` });
    const after = await waitFor(async () => {
      const c = await healingHeld();
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: 30_000, message: 'HealingHeld False' });
    expect(after.reason).toBe('NotHeld');
  });
});
