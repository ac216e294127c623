/**
 * An API outage that drops packets is no reason to restart the operator: while every request it
 * sends goes unanswered (and times out after 30 s), a reconcile waiting on the API runs far longer
 * than ROOMKEEPER_LIVENESS_RECONCILE_TIMEOUT (2 s here), yet /healthz answers 200 throughout (that
 * wait is not counted: a restart would not help and would lose the caches), while /readyz answers
 * 503 saying the API server answers no request since when, and what to do. Once the API server
 * answers again, /readyz answers 200 again by itself. (A reconcile that waits on something else
 * that never ends still fails /healthz: test/operator/liveness.test.ts.)
 *
 * On the sandbox the operator's requests are held by its fault injection (answered 35 s late, for
 * the operator's bearer token only: unanswered within the client's 30 s); on a cluster
 * (E2E_KUBECONFIG, the real-API-server tier through test/real-apiserver/chaos-suite.test.ts) by
 * test/support/fault-proxy.ts, which only the operator goes through, holding every request open
 * and silent until the fault is cleared.
 */
import type { Scheduler } from '../../common/src/generated/resources';
import type { ReadinessState } from '../../common/src/health-answers';
import type { CheckState, FailingCheck } from '../../common/src/runtime/liveness';
import type { FaultProxy } from '../support/fault-proxy';
import { startFaultedStack, type FaultedStack } from '../support/faulted-stack';
import { schedulerObject } from '../support/scheduler-object';
import type { Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const SUBJECT_TOKEN = 'outage-subject';
const SCHEDULER = 'outage-liveness';
const RECONCILE_TIMEOUT_MS = 2000;

interface Probe { status: number; body: { status: string; checks: (CheckState | ReadinessState)[]; failing?: FailingCheck[]; reason?: string } }

describe('an API server that drops every request of the operator', () => {
  let faulted: FaultedStack | undefined;
  let stack: Stack;
  let proxy: FaultProxy | undefined;

  beforeAll(async () => {
    faulted = await startFaultedStack('operator', SUBJECT_TOKEN, {
      operators: 1, gateway: false, simulation: false, serveOps: true, config: { livenessReconcileTimeout: RECONCILE_TIMEOUT_MS },
    });
    ({ stack, proxy } = faulted);
  });
  afterAll(async () => {
    faulted?.clear();
    await faulted?.stack.api.deleteScheduler(SCHEDULER).catch(() => undefined);
    await faulted?.stop();
  });

  test('/healthz stays 200 while a reconcile waits on it far beyond the reconcile timeout; /readyz answers 503 saying so, then 200 once it answers', async () => {
    const operator = stack.operators[0]!;
    const probe = async (path: string): Promise<Probe> => {
      const res = await fetch(`${operator.opsUrl ?? ''}${path}`);
      return { status: res.status, body: await res.json() as Probe['body'] };
    };
    await waitFor(async () => operator.isLeader && (await probe('/readyz')).status === 200, { timeoutMs: 60_000, message: 'the operator leads and is ready' });
    await stack.api.createScheduler(schedulerObject(SCHEDULER, { roomsReplicas: 0 }) as unknown as Scheduler);
    await waitFor(async () => (await stack.api.getScheduler(SCHEDULER)).status?.version, { timeoutMs: 30_000, message: 'the operator reconciled the scheduler' });

    if (proxy) proxy.set([{ fault: { kind: 'unanswered' } }]);
    else stack.sandbox!.faults.set({ latencyMs: 35_000, match: { token: SUBJECT_TOKEN } });
    // A change the operator must write about, seen through its watch (open before the outage).
    await stack.api.patchScheduler(SCHEDULER, { spec: { roomsReplicas: 1 } });

    // Every /healthz answer is 200 until a reconcile has waited on the API longer than the
    // reconcile timeout and /readyz says the API server does not answer.
    const answers: number[] = [];
    const unhealthy: Probe['body'][] = [];
    let sawLongWait = false;
    const notReady = await waitFor(async () => {
      const health = await probe('/healthz');
      answers.push(health.status);
      if (health.status !== 200) {
        unhealthy.push(health.body);
        return { status: health.status, body: health.body };
      }
      const reconciles = health.body.checks.find((c) => c.check === 'reconciles') as CheckState | undefined;
      const waited = /, ([\d.]+) s of it waiting on the Kubernetes API/.exec(reconciles?.sees ?? '');
      if (waited && Number(waited[1]) * 1000 > RECONCILE_TIMEOUT_MS) sawLongWait = true;
      const ready = await probe('/readyz');
      return sawLongWait && ready.status === 503 && ready.body.checks.some((c) => c.check === 'api server' && 'ready' in c && !c.ready) ? ready : undefined;
    }, { timeoutMs: 90_000, intervalMs: 200, message: 'a reconcile waited on the API beyond the reconcile timeout, and /readyz 503 said the API server does not answer' });
    expect(unhealthy).toEqual([]);
    expect(answers.filter((a) => a !== 200)).toEqual([]);
    expect(notReady.body.status).toBe('not ready');
    expect(notReady.body.reason).toMatch(/^the Kubernetes API server at \S+ has answered no request since \S+ \(.*\): check that the cluster runs and that the kubeconfig .* points at it, and that this pod reaches it .*a restart would not help \(\/healthz stays 200\)/);

    faulted?.clear();
    await waitFor(async () => {
      const health = await probe('/healthz');
      answers.push(health.status);
      return (await probe('/readyz')).status === 200;
    }, { timeoutMs: 90_000, intervalMs: 200, message: '/readyz answers 200 once the API server answers again' });
    expect(answers.filter((a) => a !== 200)).toEqual([]);
  }, 240_000);
});
