/**
 * A room definition whose container requests more cpu or memory than its limit: kube-apiserver
 * refuses such a Pod, and no v1.28 CRD can state the rule (no CEL quantity library), so the API
 * server admits the Scheduler (test/real-apiserver/differential.test.ts shows both). The gateway
 * refuses the definition naming the field and writes nothing; one written with kubectl gets no
 * room, its operation ends in error naming the Scheduler's field and what to do, and the fix made
 * with kubectl brings the rooms up; a later kubectl edit to such a definition fails its version
 * change the same way while the fleet goes on serving. Fixed with an HTTP PATCH instead, the
 * answer names the create_scheduler that creates it. Runs on the sandbox, or on a real cluster when
 * E2E_KUBECONFIG is set (the real tier runs it against kube-apiserver v1.28).
 */
import type { ErrorBody } from '../../api-gateway/src/errors';
import { describeScheduler, managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

interface RoomSpec { containers: { requests?: Record<string, string>; limits?: Record<string, string> }[] }

/** The test scheduler's definition with its container's requests and limits replaced. */
function definition(name: string, requests: Record<string, string>, limits: Record<string, string>): { spec: RoomSpec } & Record<string, unknown> {
  const spec = (schedulerObject(name, { roomsReplicas: 1 }) as { spec: { spec: RoomSpec } & Record<string, unknown> }).spec;
  spec.spec.containers[0] = { ...spec.spec.containers[0], requests, limits };
  return spec;
}

describe('requests above limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true });
  });
  afterAll(async () => {
    await stack.stop();
  });
  /** A wait that fails with the scheduler's rooms and operations in its message. */
  const explained = <T>(name: string, wait: Promise<T>): Promise<T> => wait.catch(async (err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await describeScheduler(stack, name)}`);
  });

  test('the gateway refuses the definition on create and on PATCH, naming the field, and writes nothing', async () => {
    const name = 'over-limit-http';
    const created = await managementCall(stack, 'POST', '/schedulers', { name, ...definition(name, { cpu: '1500m', memory: '64Mi' }, { cpu: '1', memory: '128Mi' }) });
    expect(created.status).toBe(400);
    expect((created.body as ErrorBody).details).toEqual([{
      field: 'spec.containers[0].requests.cpu',
      message: 'must be less than or equal to the cpu limit "1" (spec.containers[0].limits.cpu): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit',
    }]);
    expect((await stack.api.listSchedulers()).items.map((s) => s.metadata.name)).not.toContain(name);

    expect((await managementCall(stack, 'POST', '/schedulers', { name, ...definition(name, { cpu: '50m', memory: '64Mi' }, { cpu: '100m', memory: '128Mi' }) })).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.0.0', { timeoutMs: 60_000, message: `${name} has its first version` });
    const generation = (await stack.api.getScheduler(name)).metadata.generation;
    const patched = await managementCall(stack, 'PATCH', `/schedulers/${name}`, { spec: definition(name, { cpu: '50m', memory: '2Gi' }, { cpu: '100m', memory: '1Gi' }).spec });
    expect(patched.status).toBe(400);
    expect((patched.body as ErrorBody).details).toEqual([{
      field: 'spec.containers[0].requests.memory',
      message: 'must be less than or equal to the memory limit "1Gi" (spec.containers[0].limits.memory): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit',
    }]);
    expect((await stack.api.getScheduler(name)).metadata.generation).toBe(generation);
  });

  test('one written with kubectl gets no room: its operation ends in error naming the field, and the kubectl fix brings its rooms up; a later edit to one fails its version change and the room keeps serving', async () => {
    const name = 'over-limit-kubectl';
    await stack.api.createScheduler({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name }, spec: definition(name, { cpu: '2', memory: '64Mi' }, { cpu: '1', memory: '128Mi' }) } as never);
    const failedCreate = await explained(name, waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_scheduler' && o.status?.status === 'error'),
      { timeoutMs: 60_000, message: `create_scheduler of ${name} ended in error` }));
    const history = (failedCreate.status?.executionHistory ?? []).map((h) => h.event).join('\n');
    expect(history).toContain(`no room was created for version v1.0.0 of scheduler ${name}: spec.spec.containers[0].requests.cpu must be less than or equal to the cpu limit "1" (spec.spec.containers[0].limits.cpu): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit (kubectl edit scheduler ${name}, or PATCH /schedulers/${name})`);
    expect((await stack.api.listGameRooms(name)).items).toEqual([]);
    expect((await stack.core.listNamespacedPod({ namespace: name }).catch(() => ({ items: [] }))).items).toEqual([]);

    await stack.api.patchScheduler(name, { spec: { spec: { containers: [{ ...definition(name, { cpu: '2', memory: '64Mi' }, { cpu: '2', memory: '128Mi' }).spec.containers[0] }] } } });
    const [serving] = await explained(name, waitFor(async () => {
      const ready = (await stack.api.listGameRooms(name)).items.filter((r) => r.status?.status === 'ready');
      return ready.length === 1 ? ready : undefined;
    }, { timeoutMs: 90_000, message: `a ready room of ${name} after the fix` }));

    // A kubectl edit of a running scheduler to such a definition: its version change fails naming
    // the field, and the fleet goes on serving on the active version.
    await stack.api.patchScheduler(name, { spec: { spec: { containers: [{ ...definition(name, { cpu: '3', memory: '64Mi' }, { cpu: '2', memory: '128Mi' }).spec.containers[0] }] } } });
    const failedChange = await explained(name, waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_new_scheduler_version' && o.status?.status === 'error'),
      { timeoutMs: 60_000, message: `the version change of ${name} ended in error` }));
    expect((failedChange.status?.executionHistory ?? []).map((h) => h.event).join('\n')).toMatch(new RegExp(`no room was created for version v\\S+ of scheduler ${name}: spec\\.spec\\.containers\\[0\\]\\.requests\\.cpu must be less than or equal to the cpu limit "2"`));
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
    expect((await stack.api.listSchedulerVersions(name)).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    const rooms = (await stack.api.listGameRooms(name)).items;
    expect(rooms.map((r) => [r.metadata.name, r.status?.status])).toEqual([[serving!.metadata.name, 'ready']]);
  }, 240_000);

  test('one written with kubectl and fixed with an HTTP PATCH: the answer names the create_scheduler that creates it, and it finishes', async () => {
    const name = 'over-limit-patched';
    await stack.api.createScheduler({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name }, spec: definition(name, { cpu: '2', memory: '64Mi' }, { cpu: '1', memory: '128Mi' }) } as never);
    await explained(name, waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.spec.definitionName === 'create_scheduler' && o.status?.status === 'error'),
      { timeoutMs: 60_000, message: `create_scheduler of ${name} ended in error` }));

    const patched = await managementCall(stack, 'PATCH', `/schedulers/${name}`, { spec: definition(name, { cpu: '50m', memory: '64Mi' }, { cpu: '100m', memory: '128Mi' }).spec });
    expect(patched.status).toBe(200);
    const { operationId } = patched.body as { operationId: string };
    const op = await explained(name, waitFor(async () => {
      const o = await stack.api.getOperation(operationId);
      return o.status?.status === 'finished' || o.status?.status === 'error' ? o : undefined;
    }, { timeoutMs: 90_000, message: `operation ${operationId} answered to the PATCH has ended` }));
    expect([op.spec.definitionName, op.spec.source, op.status?.status]).toEqual(['create_scheduler', 'api', 'finished']);
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
    await explained(name, waitFor(async () => (await stack.api.listGameRooms(name)).items.some((r) => r.status?.status === 'ready'),
      { timeoutMs: 90_000, message: `a ready room of ${name} after the PATCH` }));
  }, 240_000);
});
