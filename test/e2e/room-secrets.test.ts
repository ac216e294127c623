/**
 * Rooms whose environment reads a Secret (`valueFrom.secretKeyRef`) that is not in the scheduler's
 * namespace yet: as on a cluster, the kubelet creates no container and the rooms wait
 * `CreateContainerConfigError`. The scheduler says so and tells to create the Secret in the rooms'
 * namespace (not to fix the game server); once it is there, the waiting rooms start and the
 * scheduler serves its rooms with none left in error. Runs on the sandbox, or on a real cluster
 * when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import type { Condition } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'secrets-e2e';
const ROOMS = 2;
const MISSING = 'CreateContainerConfigError: secret "game-secrets" not found';

describe('rooms that read a Secret', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('wait for the Secret with the kubelet\'s reason, the scheduler says to create it in the rooms\' namespace, and the rooms start once it is there', async () => {
    const definition = schedulerObject(NAME, { roomsReplicas: ROOMS }) as { spec: { spec: { containers: Record<string, unknown>[] } } };
    const container = definition.spec.spec.containers[0];
    if (!container) throw new Error('fixture: a container');
    container.environment = [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'game-secrets', key: 'api-key' } } }];
    expect((await managementCall(stack, 'POST', '/schedulers', { name: NAME, ...definition.spec })).status).toBe(200);

    const rooms = async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp);
    const waiting = await waitFor(async () => {
      const all = await rooms();
      return all.length >= ROOMS && all.every((r) => r.status?.status === 'error') ? all : undefined;
    }, { timeoutMs: 60_000, message: `${NAME}'s rooms in error, waiting for the Secret` });
    expect(waiting.map((r) => r.status?.reason)).toEqual(waiting.map(() => MISSING));

    const held = await waitFor(async () => {
      const c = (await stack.api.getScheduler(NAME)).status?.conditions?.find((x: Condition) => x.type === 'HealingHeld');
      return c?.status === 'True' ? c : undefined;
    }, { timeoutMs: 30_000, message: 'HealingHeld says the rooms fail' });
    expect(held.reason).toBe('RoomsFailing');
    expect(held.message).toContain(MISSING);
    expect(held.message).toContain(`Create what the rooms' environment reads in their namespace ${NAME} (kubectl -n ${NAME} create secret generic`);
    expect(held.message).not.toContain('Fix the game server');

    await stack.core.createNamespacedSecret({ namespace: NAME, body: { metadata: { name: 'game-secrets' }, stringData: { 'api-key': 'k-123' } } });
    const served = await waitFor(async () => {
      const scheduler = await stack.api.getScheduler(NAME);
      const all = await rooms();
      const ready = all.filter((r) => r.status?.status === 'ready');
      const inError = all.filter((r) => r.status?.status === 'error');
      const readyCondition = scheduler.status?.conditions?.find((x: Condition) => x.type === 'Ready');
      return readyCondition?.status === 'True' && ready.length === ROOMS && inError.length === 0 ? scheduler : undefined;
    }, { timeoutMs: 120_000, message: `${NAME} Ready with ${ROOMS} ready rooms and none left in error` });
    expect(served.status?.conditions?.find((x: Condition) => x.type === 'HealingHeld')?.status).toBe('False');
  }, 240_000);
});
