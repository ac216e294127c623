/**
 * Rooms whose environment reads a Secret (`valueFrom.secretKeyRef`) that is not in the scheduler's
 * namespace yet: as on a cluster, the kubelet creates no container and the rooms wait
 * `CreateContainerConfigError`. The scheduler says so and tells to create the Secret in the rooms'
 * namespace (not to fix the game server); once it is there, the waiting rooms start and the
 * scheduler serves its rooms with none left in error. Runs on the sandbox, or on a real cluster
 * when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import type { Condition, Operation } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'secrets-e2e';
const ROOMS = 2;
const MISSING = 'CreateContainerConfigError: secret "game-secrets" not found';

/** The definition of a one-room scheduler whose container has the environment `env`. */
function oneRoomDefinition(name: string, env: Record<string, unknown>[] = []): Record<string, unknown> {
  const d = schedulerObject(name, { roomsReplicas: 1 }) as { spec: { spec: { containers: Record<string, unknown>[] } } };
  const container = d.spec.spec.containers[0];
  if (!container) throw new Error('fixture: a container');
  container.environment = env;
  return { name, ...d.spec };
}

/** Creates a one-room scheduler that reads no Secret, and waits for its room to be ready. */
async function createServing(stack: Stack, name: string): Promise<void> {
  expect((await managementCall(stack, 'POST', '/schedulers', oneRoomDefinition(name))).status).toBe(200);
  await waitFor(async () => (await stack.api.listGameRooms(name)).items.some((r) => r.status?.status === 'ready'), { timeoutMs: 60_000, message: `a ready room of ${name}` });
}

/** Sends a major change whose container reads key api-key of Secret `secret`; the id of its operation. */
async function sendSecretChange(stack: Stack, name: string, secret: string): Promise<string> {
  const changed = await managementCall(stack, 'POST', `/schedulers/${name}`, oneRoomDefinition(name, [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: secret, key: 'api-key' } } }]));
  expect(changed.status).toBe(200);
  return (changed.body as { operationId: string }).operationId;
}

/** The operation once it has ended, finished or in error. */
async function endOf(stack: Stack, id: string, timeoutMs: number): Promise<Operation> {
  return waitFor(async () => {
    const o = await stack.api.getOperation(id);
    return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
  }, { timeoutMs, message: `operation ${id} ended` });
}

describe('rooms that read a Secret', () => {
  let stack: Stack;
  beforeAll(async () => {
    // A kubelet tries to create a container whose Secret is missing again every 10 s or so: the
    // validation of a change waits longer than that for a Secret created after it was sent.
    stack = await startStack({ external: true, config: { validationTimeout: 60_000 } });
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

  test('a change whose rooms read a Secret created after it was sent waits for it in its validation, says so, and applies once it is there', async () => {
    const name = 'secrets-late-e2e';
    await createServing(stack, name);

    // A major change (a new environment variable) that reads a Secret the namespace does not have yet.
    const opId = await sendSecretChange(stack, name, 'late-secrets');
    const history = async () => ((await stack.api.getOperation(opId)).status?.executionHistory ?? []).map((h) => h.event);
    const waiting = await waitFor(async () => (await history()).find((e) => e.startsWith('Validation room ')), { timeoutMs: 60_000, message: 'the validation says it waits for the Secret' });
    expect(waiting).toMatch(new RegExp(`^Validation room ${name}-\\w+ \\(attempt 1 of \\d+\\) waits for what its environment reads: CreateContainerConfigError: secret "late-secrets" not found; `
      + `the kubelet starts its container once that exists in namespace ${name} \\(kubectl -n ${name} create secret generic <name> --from-literal=<key>=<value>\\); it waits until \\S+, or cancel this operation$`));

    await stack.core.createNamespacedSecret({ namespace: name, body: { metadata: { name: 'late-secrets' }, stringData: { 'api-key': 'k-456' } } });
    const op = await endOf(stack, opId, 120_000);
    const events = (op.status?.executionHistory ?? []).map((h) => h.event);
    expect(op.status?.status).toBe('finished');
    expect(events).toContain('1º Attempt: Game room validation success!');
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v2.0.0', { timeoutMs: 30_000, message: `${name} on v2.0.0` });
  }, 240_000);
});

describe('a change whose rooms read a Secret that never comes', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { validationTimeout: 3_000, validationAttempts: 3 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('fails after one validation attempt (another would wait for the same Secret), naming it and what to do; the active version keeps serving', async () => {
    const name = 'secrets-never-e2e';
    await createServing(stack, name);
    const opId = await sendSecretChange(stack, name, 'never-secrets');
    const op = await endOf(stack, opId, 60_000);
    const events = (op.status?.executionHistory ?? []).map((h) => h.event);
    expect(op.status?.status).toBe('error');
    expect(events).toContain(`1º Attempt: the validation room's container was never created within 3s: CreateContainerConfigError: secret "never-secrets" not found; create it in namespace ${name}, then send the change again`);
    expect(events).toContain('No further attempt: each would wait for the same missing Secret or ConfigMap');
    expect(events.some((e) => e.startsWith('2º Attempt'))).toBe(false);
    const scheduler = await stack.api.getScheduler(name);
    expect(scheduler.status?.version).toBe('v1.0.0');
    const degraded = await waitFor(async () => (await stack.api.getScheduler(name)).status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True'), { timeoutMs: 30_000, message: 'Degraded says why' });
    expect(degraded.message).toContain(`create it in the rooms' namespace ${name} (kubectl -n ${name} create secret generic <name> --from-literal=<key>=<value>)`);
  }, 120_000);
});
