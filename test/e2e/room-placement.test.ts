/**
 * A scheduler's rooms run where its `nodeSelector` says and with its `priorityClassName`'s
 * priority (fields of the room template beyond Maestro's). A PriorityClass the cluster does not
 * have is refused by the API server where the rooms' pods are made: a change's validation room
 * (the operation fails and says why; the active version keeps serving), or a new scheduler's rooms
 * (its creation is tried again, and succeeds once the PriorityClass exists). Malformed values are
 * refused with the field named. Its `imagePullSecrets` go into the room pods as given (a Secret
 * that is missing does not stop the pods: the kubelet pulls without it), and a change to them
 * made by a PATCH reaches the rooms of the new version. Runs on the sandbox, or on a real cluster
 * when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import { SchedulingV1Api } from '@kubernetes/client-node';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued, SchedulerAnswer } from './management-bodies';

const NAME = 'placement-e2e';
const LATE = 'placement-late-e2e';
const ROOMS = 3;
const NODE = 'roomkeeper-sim-node-1';
const PRIORITY_CLASS = 'placement-e2e-rooms';
const LATE_CLASS = 'placement-e2e-late';
const HOSTNAME = 'kubernetes.io/hostname';
const PULL = 'placement-pull-e2e';
const PULL_SECRET = 'registry-creds';
const MIRROR_SECRET = 'mirror-creds';

function definition(name: string, roomSpec: Record<string, unknown>): Record<string, unknown> {
  const d = schedulerObject(name, { roomsReplicas: ROOMS }) as { spec: { spec: Record<string, unknown> } };
  Object.assign(d.spec.spec, roomSpec);
  return { name, ...d.spec };
}

describe('room placement and priority', () => {
  let stack: Stack;
  let scheduling: SchedulingV1Api;
  beforeAll(async () => {
    stack = await startStack({ external: true });
    scheduling = stack.kc.makeApiClient(SchedulingV1Api);
    await scheduling.createPriorityClass({ body: { metadata: { name: PRIORITY_CLASS }, value: 100_000, description: 'Roomkeeper e2e: game rooms' } });
  });
  afterAll(async () => {
    for (const name of [PRIORITY_CLASS, LATE_CLASS]) await scheduling.deletePriorityClass({ name }).catch(() => undefined);
    await stack.stop();
  });

  const runningPods = async (namespace: string) => (await stack.core.listNamespacedPod({ namespace })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);

  test('rooms run on the nodes nodeSelector names, with the PriorityClass\'s priority; a change to a PriorityClass the cluster lacks fails and says why, and the rooms keep serving', async () => {
    const roomSpec = { nodeSelector: { [HOSTNAME]: NODE }, priorityClassName: PRIORITY_CLASS };
    expect((await managementCall(stack, 'POST', '/schedulers', definition(NAME, roomSpec))).status).toBe(200);
    const pods = await waitFor(async () => {
      const running = await runningPods(NAME);
      return running.length === ROOMS ? running : undefined;
    }, { timeoutMs: 60_000, message: `${ROOMS} rooms of ${NAME} running` });
    for (const pod of pods) {
      expect(pod.spec).toMatchObject({ nodeName: NODE, nodeSelector: { [HOSTNAME]: NODE }, priorityClassName: PRIORITY_CLASS, priority: 100_000 });
    }
    await waitFor(async () => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True', { timeoutMs: 60_000, message: `${NAME} Ready` });

    // The management API shows both, and what it shows, sent back, is no change (Maestro's round trip).
    const shown = (await managementCall(stack, 'GET', `/schedulers/${NAME}`)).body as SchedulerAnswer;
    expect(shown.scheduler.spec).toMatchObject(roomSpec);
    const { spec, ...rest } = shown.scheduler as unknown as { spec: Record<string, unknown> } & Record<string, unknown>;
    const again = await managementCall(stack, 'POST', `/schedulers/${NAME}`, { ...rest, spec });
    expect(again.status).toBe(409);

    const changed = await managementCall(stack, 'POST', `/schedulers/${NAME}`, definition(NAME, { ...roomSpec, priorityClassName: 'absent-class' }));
    expect(changed.status).toBe(200);
    const opId = (changed.body as OperationEnqueued).operationId;
    const failed = await waitFor(async () => {
      const op = await stack.api.getOperation(opId);
      return op.status?.status === 'error' ? op : undefined;
    }, { timeoutMs: 60_000, message: 'the change to a missing PriorityClass failed' });
    expect(failed.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/the validation room could not be created: 403 pods "placement-e2e-[a-z0-9]{5}" is forbidden: no PriorityClass with name absent-class was found/);
    // Ready is False while the change is in flight, and True again once the controller has seen it
    // end (its next status write, not the instant the operation's own status says error).
    const scheduler = await waitFor(async () => {
      const s = await stack.api.getScheduler(NAME);
      return s.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? s : undefined;
    }, { timeoutMs: 30_000, message: `${NAME} Ready again after the failed change` });
    expect(scheduler.status?.version).toBe('v1.0.0');
    expect(await runningPods(NAME)).toHaveLength(ROOMS);
  }, 180_000);

  test('a new scheduler whose PriorityClass is missing is created by the operator\'s next attempt once the PriorityClass exists', async () => {
    expect((await managementCall(stack, 'POST', '/schedulers', definition(LATE, { priorityClassName: LATE_CLASS }))).status).toBe(200);
    const degraded = await waitFor(async () => {
      const c = (await stack.api.getScheduler(LATE)).status?.conditions?.find((x) => x.type === 'Degraded');
      return c?.status === 'True' ? c : undefined;
    }, { timeoutMs: 60_000, message: `${LATE}'s Degraded tells the refused creation` });
    expect(degraded.message).toContain(`no PriorityClass with name ${LATE_CLASS} was found`);
    expect(degraded.message).toContain('a PriorityClass it does not have');

    await scheduling.createPriorityClass({ body: { metadata: { name: LATE_CLASS }, value: 1000 } });
    await waitFor(async () => {
      const s = await stack.api.getScheduler(LATE);
      return s.status?.version === 'v1.0.0' && (await runningPods(LATE)).length === ROOMS ? s : undefined;
    }, { timeoutMs: 120_000, message: `${LATE} created with ${ROOMS} rooms once its PriorityClass exists` });
    expect((await runningPods(LATE)).every((p) => p.spec?.priority === 1000)).toBe(true);
  }, 180_000);

  test('room pods carry the imagePullSecrets the scheduler names, GET shows them, and a PATCH that changes them reaches the new version\'s rooms', async () => {
    const pullSecrets = [{ name: PULL_SECRET }];
    expect((await managementCall(stack, 'POST', '/schedulers', definition(PULL, { imagePullSecrets: pullSecrets }))).status).toBe(200);
    // The Secret does not exist: the kubelet pulls without it, and the rooms still run.
    const pods = await waitFor(async () => {
      const running = await runningPods(PULL);
      return running.length === ROOMS ? running : undefined;
    }, { timeoutMs: 60_000, message: `${ROOMS} rooms of ${PULL} running` });
    for (const pod of pods) expect(pod.spec?.imagePullSecrets).toEqual(pullSecrets);
    await waitFor(async () => (await stack.api.getScheduler(PULL)).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True', { timeoutMs: 60_000, message: `${PULL} Ready` });

    // The management API shows them, and what it shows, sent back, is no change.
    const shown = (await managementCall(stack, 'GET', `/schedulers/${PULL}`)).body as SchedulerAnswer;
    expect((shown.scheduler.spec as unknown as Record<string, unknown>).imagePullSecrets).toEqual(pullSecrets);
    const { spec, ...rest } = shown.scheduler as unknown as { spec: Record<string, unknown> } & Record<string, unknown>;
    expect((await managementCall(stack, 'POST', `/schedulers/${PULL}`, { ...rest, spec })).status).toBe(409);

    const both = [{ name: PULL_SECRET }, { name: MIRROR_SECRET }];
    const patched = await managementCall(stack, 'PATCH', `/schedulers/${PULL}`, { spec: { imagePullSecrets: both } });
    expect(patched.status).toBe(200);
    const opId = (patched.body as OperationEnqueued).operationId;
    const done = await waitFor(async () => {
      const op = await stack.api.getOperation(opId);
      return ['finished', 'error'].includes(op.status?.status ?? '') ? op : undefined;
    }, { timeoutMs: 120_000, message: 'the PATCH of imagePullSecrets done' });
    expect(done.status?.status).toBe('finished');
    expect(done.status?.executionHistory?.map((h) => h.event)).toContain('Major change detected (spec): new version v2.0.0');
    // Its switch of the active version is an operation of its own.
    await waitFor(async () => (await stack.api.getScheduler(PULL)).status?.version === 'v2.0.0', { timeoutMs: 60_000, message: `${PULL} switched to v2.0.0` });
    const rolled = await waitFor(async () => {
      const running = await runningPods(PULL);
      return running.length === ROOMS && running.every((p) => p.metadata?.labels?.['roomkeeper.io/version'] === 'v2.0.0') ? running : undefined;
    }, { timeoutMs: 120_000, message: `${ROOMS} rooms of ${PULL} v2.0.0 running` });
    for (const pod of rolled) expect(pod.spec?.imagePullSecrets).toEqual(both);
  }, 300_000);

  test('by kubectl (past the gateway), an imagePullSecrets name that is not a DNS subdomain, or a name given twice, is refused naming the field', async () => {
    const cases: [string, { name: string }[], { reason: string; field: string }][] = [
      ['placement-pull-bad-direct', [{ name: 'Bad_Name' }], { reason: 'FieldValueInvalid', field: 'spec.spec.imagePullSecrets[0].name' }],
      ['placement-pull-twice-direct', [{ name: PULL_SECRET }, { name: PULL_SECRET }], { reason: 'FieldValueDuplicate', field: 'spec.spec.imagePullSecrets[1]' }],
    ];
    for (const [name, pullSecrets, cause] of cases) {
      const object = schedulerObject(name, {}) as { spec: { spec: Record<string, unknown> } };
      object.spec.spec.imagePullSecrets = pullSecrets;
      const refused = await stack.api.createScheduler(object as never).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
      expect(refused?.code).toBe(422);
      const status = (typeof refused?.body === 'string' ? JSON.parse(refused.body) : refused?.body) as { details?: { causes?: unknown[] } };
      expect(status.details?.causes).toContainEqual(expect.objectContaining(cause));
      await expect(stack.api.getScheduler(name)).rejects.toBeTruthy();
    }
  });

  test.each([
    ['an imagePullSecrets name that is not a DNS subdomain', { imagePullSecrets: [{ name: 'Bad_Name' }] }, 'spec.imagePullSecrets[0].name', /must be a DNS subdomain/],
    ['an imagePullSecrets entry without a name', { imagePullSecrets: [{}] }, 'spec.imagePullSecrets[0].name', /Required value/],
    ['two imagePullSecrets of one name', { imagePullSecrets: [{ name: PULL_SECRET }, { name: PULL_SECRET }] }, 'spec.imagePullSecrets[1]', /Duplicate value/],
    ['a nodeSelector key that is not a qualified name', { nodeSelector: { 'bad key!': 'x' } }, 'spec.nodeSelector', /nodeSelector keys must be qualified names/],
    ['a nodeSelector value that is not a label value', { nodeSelector: { pool: 'bad value!' } }, 'spec.nodeSelector[pool]', /must be a label value/],
    ['a priorityClassName that is not a DNS subdomain', { priorityClassName: 'Upper_Case' }, 'spec.priorityClassName', /must be empty or a DNS subdomain/],
  ])('refuses %s with 400 naming the field, and creates nothing', async (_what, roomSpec, field, message) => {
    const name = 'placement-bad-e2e';
    const answer = await managementCall(stack, 'POST', '/schedulers', definition(name, roomSpec));
    expect(answer.status).toBe(400);
    const details = (answer.body as { details: { field: string; message: string }[] }).details;
    expect(details).toEqual([expect.objectContaining({ field })]);
    expect(details[0]?.message).toMatch(message);
    expect((await managementCall(stack, 'GET', `/schedulers/${name}`)).status).toBe(404);
  });
});
