/**
 * A change sent before the operator has run the scheduler's creation (a Maestro client creates,
 * sees v1.0.0 at once in GET, and changes it) gets a version of its own, as Maestro numbers it:
 * v1.0.0 is the definition the scheduler was created with, and the change makes v1.1.0 (minor) or
 * v2.0.0 (major). The creation had versioned the spec as it found it, change included, and the
 * change's operation found nothing to do: a client waiting for v1.1.0 waited for good (seen once
 * in CI on the real API server, where the operator ran the creation after the change landed).
 * Here the operator starts only after both requests. Runs on the sandbox, or on a real cluster
 * when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { SchedulerAnswer, VersionsAnswer } from './management-bodies';

const NAME = 'change-before-creation';

describe('a change sent before the creation ran', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, operators: 0, config: { healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('makes v1.1.0 after v1.0.0, which keeps the definition the scheduler was created with', async () => {
    const create = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 1, maxSurge: '1' }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', create)).status).toBe(200);
    const { name: _name, ...definition } = create;
    const changed = await managementCall(stack, 'POST', `/schedulers/${NAME}`, { ...definition, maxSurge: '3' });
    expect(changed.status).toBe(200);

    await stack.addOperator();
    const shown = await waitFor(async () => {
      const answer = (await managementCall(stack, 'GET', `/schedulers/${NAME}`)).body as Partial<SchedulerAnswer> | undefined;
      return answer?.scheduler?.spec.version === 'v1.1.0' ? answer.scheduler : undefined;
    }, { timeoutMs: 60_000, message: `GET /schedulers/${NAME} shows v1.1.0` }).catch(async (err: unknown) => {
      const ops = (await stack.api.listOperations(NAME)).items.map((o) => `${o.spec.definitionName} ${o.status?.status ?? 'pending'}: ${(o.status?.executionHistory ?? []).map((h) => h.event).join(' | ')}`);
      throw new Error(`${(err as Error).message}\n${ops.join('\n')}`, { cause: err });
    });
    expect(shown.maxSurge).toBe('3');
    const first = (await managementCall(stack, 'GET', `/schedulers/${NAME}?version=v1.0.0`)).body as SchedulerAnswer;
    expect(first.scheduler.maxSurge).toBe('1');
    const listed = (await managementCall(stack, 'GET', `/schedulers/${NAME}/versions`)).body as VersionsAnswer;
    expect(listed.versions.map((v) => [v.version, v.isActive]).sort()).toEqual([['v1.0.0', false], ['v1.1.0', true]]);
  }, 120_000);
});
