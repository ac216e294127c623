/**
 * The operator's /healthz on the sandbox: a reconcile that never ends (a test hook holds the
 * health reconcile of one scheduler) makes it answer 503 with a JSON body naming the check, the
 * reconcile and since when, logged once; once the reconcile ends it answers 200 again.
 */
import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '../../common/src/config';
import type { FailingCheck } from '../../common/src/runtime/liveness';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { captureLogs } from '../support/log-capture';
import { CRD_DIR, schedulerObject, TEST_CONFIG } from '../support/stack';
import { waitFor } from '../support/wait';

describe('operator liveness (sandbox)', () => {
  let sandbox: Sandbox;
  let operator: RunningOperator | undefined;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    sandbox = await startSandbox({ crdDirs: [CRD_DIR] });
  });
  afterAll(async () => {
    release();
    await operator?.stop('test end', { drainMs: 0 });
    await sandbox.stop();
  });

  test('a reconcile that never ends makes /healthz answer 503 naming it, logged once; 200 again once it ends', async () => {
    const held = new Promise<void>((resolve) => { release = resolve; });
    let entered = false;
    const logs = captureLogs('info', 'operator');
    const config = loadConfig({}, { ...TEST_CONFIG, identity: 'liveness-1', livenessReconcileTimeout: 2000, roomsApiUrl: 'http://127.0.0.1:1' });
    operator = await startOperator({
      kubeConfig: sandbox.kubeConfig(), config, logger: logs.logger,
      beforeReconcile: async (queue, key) => {
        if (queue !== 'health' || key !== 'liveness-stuck') return;
        entered = true;
        await held;
      },
    });
    const healthz = async () => {
      const res = await fetch(`${operator?.opsUrl ?? ''}/healthz`);
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };
    await waitFor(() => operator?.isLeader, { timeoutMs: 15_000, message: 'the operator leads' });
    expect((await healthz()).status).toBe(200);

    const api = sandbox.kubeConfig().makeApiClient(k8s.CustomObjectsApi);
    await api.createClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', body: schedulerObject('liveness-stuck', { roomsReplicas: 0 }) });
    await waitFor(() => entered, { timeoutMs: 15_000, message: 'the health reconcile of liveness-stuck started' });

    const failing = await waitFor(async () => {
      const answer = await healthz();
      if (answer.status !== 503) return undefined;
      expect(answer.type).toBe('application/json');
      const body = JSON.parse(answer.body) as { status: string; failing: FailingCheck[] };
      expect(body.status).toBe('unhealthy');
      return body.failing.find((f) => f.check === 'reconciles' && f.what.startsWith('the health reconcile of liveness-stuck has run since '));
    }, { timeoutMs: 15_000, message: '/healthz answers 503 naming the stuck reconcile' });
    expect(failing.meaning).toContain('ROOMKEEPER_LIVENESS_RECONCILE_TIMEOUT');
    expect(Number.isNaN(Date.parse(failing.failingSince))).toBe(false);
    await healthz();
    const warned = () => logs.lines.filter((l) => l.level === 'warn' && String(l.message).startsWith('liveness check reconciles fails: the health reconcile of liveness-stuck'));
    expect(warned()).toHaveLength(1);

    release();
    await waitFor(async () => (await healthz()).status === 200, { timeoutMs: 15_000, message: '/healthz answers 200 once the reconcile ended' });
    expect(logs.lines.some((l) => l.level === 'info' && l.message === 'liveness check reconciles passes again: /healthz answers 200')).toBe(true);
    expect(warned()).toHaveLength(1);
  }, 60_000);
});
