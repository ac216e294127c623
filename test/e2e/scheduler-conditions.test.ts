/**
 * A Scheduler's conditions tell the truth to `kubectl wait`: after a major change whose
 * validation room failed, the rooms still serve on the active version, so the Scheduler is Ready
 * (the real `kubectl wait --for=condition=Ready` returns), its state is Maestro's `in-sync`, and
 * Degraded says which operation failed, why and what to do. Runs on the sandbox, or on a real
 * cluster when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Condition } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';
import type { OperationEnqueued, SchedulerAnswer } from './management-bodies';

const run = promisify(execFile);

const NAME = 'conditions-e2e';
const ROOMS = 2;

describe("a Scheduler's conditions", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('after a failed major change the Scheduler is Ready (kubectl wait returns), in-sync, and Degraded says what failed and what to do', async () => {
    const definition = (env: { name: string; value: string }[] = []) => ({ name: NAME, ...(schedulerObject(NAME, { roomsReplicas: ROOMS }, env) as { spec: Record<string, unknown> }).spec });
    expect((await managementCall(stack, 'POST', '/schedulers', definition())).status).toBe(200);
    const conditionsOf = async (): Promise<Record<string, Condition>> =>
      Object.fromEntries(((await stack.api.getScheduler(NAME)).status?.conditions ?? []).map((c) => [c.type, c]));
    await waitFor(async () => (await conditionsOf()).Ready?.status === 'True', { timeoutMs: 60_000, message: `${NAME} Ready with ${ROOMS} rooms` });

    // A major change whose validation room never starts (its image cannot be pulled): refused.
    const posted = await managementCall(stack, 'POST', `/schedulers/${NAME}`, definition([{ name: 'ROOMKEEPER_SIM_POD', value: 'image-pull-failure' }]));
    expect(posted.status).toBe(200);
    const opId = (posted.body as OperationEnqueued).operationId;
    const failed = await waitFor(async () => {
      const op = await stack.api.getOperation(opId);
      return op.status?.status === 'error' ? op : undefined;
    }, { timeoutMs: 60_000, message: 'the major change failed its validation' });
    expect(failed.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/All validation attempts have failed/);

    const conditions = await waitFor(async () => {
      const c = await conditionsOf();
      return c.Degraded?.status === 'True' ? c : undefined;
    }, { timeoutMs: 30_000, message: 'Degraded tells the failed change' });
    expect(conditions.Degraded).toMatchObject({ reason: 'OperationFailed' });
    expect(conditions.Degraded?.message).toMatch(new RegExp(`^operation ${opId} \\(create_new_scheduler_version\\) failed: .*validation.*; the change was not applied and the active version v1\\.0\\.0 still serves `
      + `\\(kubectl get rkop ${opId} -o yaml shows its history\\): fix the spec and apply it again, or set it back to that version's$`));
    expect(conditions.PendingChanges).toMatchObject({ status: 'False', reason: 'SpecChangeFailed' });

    // What a platform team runs: the real kubectl waits for Ready, and it returns.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-conditions-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      stack.writeKubeconfig(kubeconfig);
      const { stdout } = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'wait', `rks/${NAME}`, '--for=condition=Ready', '--timeout=60s'], { timeout: 90_000 });
      expect(stdout).toMatch(new RegExp(`scheduler.roomkeeper.io/${NAME} condition met`));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const scheduler = await stack.api.getScheduler(NAME);
    expect(scheduler.status).toMatchObject({ state: 'in-sync', version: 'v1.0.0' });
    expect(scheduler.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'InSync' });
    const rooms = (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp);
    expect(rooms.filter((r) => r.status?.status === 'ready' && r.spec.version === 'v1.0.0')).toHaveLength(ROOMS);
    // A Maestro client sees the state Maestro shows after a new version's rollback.
    const answer = await managementCall(stack, 'GET', `/schedulers/${NAME}`);
    expect((answer.body as SchedulerAnswer).scheduler.state).toBe('in-sync');
  });
});
