/**
 * A scheduler whose rooms all fail before their game server pings (here a game server that exits
 * with code 1 as it starts) gets its rooms one at a time, not a replacement for every failed room
 * at every health check: the HealingHeld condition and a RoomsFailing Warning say why and what to
 * do, and a fixed game server, applied as a new major version, ends it. Runs on the sandbox, or on
 * a real cluster when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import * as k8s from '@kubernetes/client-node';
import type { Condition } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { healthAdds, twoProbes } from '../support/probes';
import { waitFor } from '../support/wait';
import type { OperationEnqueued } from './management-bodies';

const NAME = 'failing-rooms-e2e';
const ROOMS = 4;

describe('rooms that fail before they ping', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('are made one at a time, said in HealingHeld and a RoomsFailing Event, until a fixed version ends it', async () => {
    const definition = (env: { name: string; value: string }[] = []) => ({ name: NAME, ...(schedulerObject(NAME, { roomsReplicas: ROOMS }, env) as { spec: Record<string, unknown> }).spec });
    expect((await managementCall(stack, 'POST', '/schedulers', definition([{ name: 'ROOMKEEPER_SIM_POD', value: 'crash-loop' }]))).status).toBe(200);
    const healingHeld = async (): Promise<Condition | undefined> => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === 'HealingHeld');

    const held = await waitFor(async () => {
      const c = await healingHeld();
      return c?.status === 'True' ? c : undefined;
    }, { timeoutMs: 60_000, message: 'HealingHeld True' });
    expect(held.reason).toBe('RoomsFailing');
    expect(held.message).toMatch(new RegExp(`^rooms of v1\\.0\\.0 fail before their game server pings: \\d+ in error and none has pinged \\(newest ${NAME}-\\w+: pod phase Failed: container .* terminated: Error \\(exit code 1\\)\\); `
      + `the health check makes one room at a time, .* Fix the game server in a new version of the scheduler \\(POST /schedulers/${NAME} with the fixed definition, PATCH /schedulers/${NAME}, or kubectl edit scheduler ${NAME}\\)`));

    // The health check goes on with probes of one room each: two of them, after the hold began.
    const probes = await twoProbes(stack, NAME, 'v1.0.0', 60_000);
    expect(probes.map((o) => o.spec.input?.amount)).toEqual(probes.map(() => 1));
    // Every add_rooms of the health check made the missing rooms, then one at a time: never another batch.
    const amounts = (await healthAdds(stack, NAME)).map((o) => o.spec.input?.amount as number);
    expect(amounts.filter((a) => a > 1).length).toBeLessThanOrEqual(1);
    // Rooms in error are kept (the newest five), never piled up.
    const rooms = (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp);
    expect(rooms.filter((r) => r.status?.status === 'error').length).toBeLessThanOrEqual(5 + 1);

    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const event = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.reason === 'RoomsFailing' && e.regarding?.name === NAME), { timeoutMs: 30_000, intervalMs: 200, message: 'a RoomsFailing Event' });
    expect(event.type).toBe('Warning');
    expect(event.note).toMatch(/^rooms of v1\.0\.0 fail before their game server pings/);

    // The fix: a game server that starts, as a new major version (validated, then rolled out).
    const fixed = await managementCall(stack, 'POST', `/schedulers/${NAME}`, definition());
    expect(fixed.status).toBe(200);
    const opId = (fixed.body as OperationEnqueued).operationId;
    await waitFor(async () => (await stack.api.getOperation(opId)).status?.status === 'finished', { timeoutMs: 90_000, message: 'the fixed version validated and switched' });
    await waitFor(async () => {
      const ready = (await stack.api.listGameRooms(NAME)).items.filter((r) => r.status?.status === 'ready' && r.spec.version === 'v2.0.0' && !r.spec.validation);
      return ready.length === ROOMS;
    }, { timeoutMs: 90_000, message: `${ROOMS} rooms of v2.0.0 ready` });
    const after = await waitFor(async () => {
      const c = await healingHeld();
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: 30_000, message: 'HealingHeld False' });
    expect(after.reason).toBe('NotHeld');
  });
});
