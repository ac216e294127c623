/**
 * Two Roomkeeper releases in one cluster, on kube-apiserver v1.28 with the real `helm` and `kubectl`.
 * 1. The chart: `helm install a` works; `helm install b` in another namespace (or another release
 *    in the same one) is refused, naming release a, its namespace and what to do, and creates
 *    nothing; `--dry-run=server` refuses it too; `helm template` cannot see the cluster and renders
 *    (the operator's own check is what covers offline renders); `helm upgrade a` still works.
 * 2. The operators, each as its release's ServiceAccount under the chart's RBAC (release a's as
 *    `helm install` made it; the plane's release `roomkeeper` as the tier prepared it): the one
 *    whose Lease is older reconciles; release a's operator holds its own Lease but stands back
 *    (/readyz 503 saying why, a warning in its log, a Warning Event on its Lease, no Event about a
 *    Scheduler the other reconciles), and reconciles by itself once the other stops. The operators
 *    run in this process: kubectl is never told to wait (a blocked event loop would stop them too).
 */
import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '../../common/src/config';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { writeTokenKubeconfig } from '../support/control-plane';
import { CHART_DIR, runHelm } from '../helm/helm-cli';
import { kubectl, realApiServer, reportNotRun } from '../support/real-apiserver';
import { schedulerObject, TEST_CONFIG } from '../support/stack';
import { captureLogs, type CapturedLogs } from '../support/log-capture';
import { waitFor } from '../support/wait';

const NS_A = 'rk-two-a';
const NS_B = 'rk-two-b';
const SCHEDULER = 'two-releases';

/** An operator's /readyz answer. */
async function readyz(op: RunningOperator): Promise<{ status: number; body: string }> {
  const res = await fetch(`${op.opsUrl ?? ''}/readyz`);
  return { status: res.status, body: await res.text() };
}

test('a second release is refused by the chart; an operator of another release that runs all the same stands back until the first stops', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('two Roomkeeper releases in one cluster')).toMatch(/NOT RUN/);
    return;
  }
  const admin = plane.adminKubeconfig;
  const helm = (args: string[]) => runHelm(args, { KUBECONFIG: admin });
  const operators: RunningOperator[] = [];
  const logsOf = new Map<string, CapturedLogs>();
  let leaseOfA: { namespace: string; name: string } | undefined;
  try {
    // 1. The chart.
    const installA = await helm(['install', 'a', CHART_DIR, '--namespace', NS_A, '--create-namespace', '--skip-crds']);
    expect(installA.stderr).toBe('');
    expect(installA.stdout).toContain('STATUS: deployed');
    const refusal = 'another Roomkeeper operator runs in this cluster: Deployment rk-two-a/a-roomkeeper-operator of release a in namespace rk-two-a. '
      + 'Roomkeeper\'s Schedulers are cluster-scoped, so two operators would both lead and both reconcile every one of them. '
      + 'Change that release instead (helm upgrade a -n rk-two-a), or uninstall it first (helm uninstall a -n rk-two-a: its Schedulers and rooms stay, and this release\'s operator takes them over)';
    for (const args of [
      ['install', 'b', CHART_DIR, '--namespace', NS_B, '--create-namespace', '--skip-crds'],
      ['install', 'b', CHART_DIR, '--namespace', NS_B, '--create-namespace', '--skip-crds', '--dry-run=server'],
      ['install', 'a2', CHART_DIR, '--namespace', NS_A, '--skip-crds'],
    ]) {
      const refused = await helm(args);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(refusal);
    }
    expect((await helm(['list', '--all-namespaces', '--all', '-q'])).stdout.split('\n').filter((r) => ['b', 'a2'].includes(r))).toEqual([]);
    expect(kubectl(admin, ['get', 'deployments', '--all-namespaces', '-l', 'roomkeeper.io/operator=true', '-o', 'name']).trim()).toBe('deployment.apps/a-roomkeeper-operator');
    expect(kubectl(admin, ['get', 'namespace', NS_B, '--ignore-not-found', '-o', 'name']).trim()).toBe('');
    // helm template does not see the cluster: no refusal there (the operator's check covers it).
    expect((await helm(['template', 'b', CHART_DIR, '--namespace', NS_B])).code).toBe(0);
    const upgradeA = await helm(['upgrade', 'a', CHART_DIR, '--namespace', NS_A]);
    expect(upgradeA.stderr).toBe('');
    expect(upgradeA.stdout).toContain('REVISION: 2');

    // 2. The operators: the plane's release first (its Lease is the older), then release a's, as
    // the ServiceAccount and with the Lease that helm install gave it.
    const deployment = JSON.parse(kubectl(admin, ['get', 'deployment', 'a-roomkeeper-operator', '-n', NS_A, '-o', 'json'])) as { spec: { template: { spec: { serviceAccountName: string; containers: { env: { name: string; value?: string }[] }[] } } } };
    const envA = Object.fromEntries(deployment.spec.template.spec.containers[0]!.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
    leaseOfA = { namespace: envA.ROOMKEEPER_LEASE_NAMESPACE ?? '', name: envA.ROOMKEEPER_LEASE_NAME ?? '' };
    expect(leaseOfA).toEqual({ namespace: NS_A, name: 'a-roomkeeper-operator' });
    const saA = deployment.spec.template.spec.serviceAccountName;
    const tokenA = kubectl(admin, ['create', 'token', saA, '-n', NS_A, '--duration=1h']).trim();
    const kubeconfigA = writeTokenKubeconfig(plane, `system:serviceaccount:${NS_A}:${saA}`, tokenA);
    const launch = async (kubeconfig: string, env: Record<string, string>, identity: string): Promise<RunningOperator> => {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(kubeconfig);
      const config = loadConfig({ ...plane.chartEnv.operator, ...env }, { ...TEST_CONFIG, identity, roomsApiUrl: 'http://127.0.0.1:1' });
      const logs = captureLogs('info', 'operator');
      logsOf.set(identity, logs);
      const op = await startOperator({ kubeConfig: kc, config, logger: logs.logger });
      operators.push(op);
      return op;
    };
    const first = await launch(plane.operatorKubeconfig, {}, 'first-release-pod');
    await waitFor(() => first.isLeader, { timeoutMs: 30_000, message: 'the plane\'s release operator leads' });
    const ofA = await launch(kubeconfigA, { ROOMKEEPER_LEASE_NAMESPACE: leaseOfA.namespace, ROOMKEEPER_LEASE_NAME: leaseOfA.name }, 'release-a-pod');

    const coordination = new k8s.KubeConfig();
    coordination.loadFromFile(admin);
    const leases = coordination.makeApiClient(k8s.CoordinationV1Api);
    const holderOfA = async () => (await leases.readNamespacedLease(leaseOfA as { namespace: string; name: string }).catch(() => undefined))?.spec?.holderIdentity;
    await waitFor(async () => (await holderOfA()) === 'release-a-pod', { timeoutMs: 30_000, message: 'release a\'s operator holds its own Lease' });
    const standing = await waitFor(async () => {
      const r = await readyz(ofA);
      return r.status === 503 ? r : undefined;
    }, { timeoutMs: 30_000, message: 'release a\'s operator not ready' });
    expect(standing.body).toContain(`another Roomkeeper operator leads in this cluster (Lease ${plane.releaseNamespace}/`);
    expect(standing.body).toContain(`held by first-release-pod, made before this operator's Lease ${NS_A}/a-roomkeeper-operator)`);
    expect(standing.body).toContain(`uninstall this release (helm list -n ${NS_A}, then helm uninstall <release> -n ${NS_A})`);
    expect(ofA.isLeader).toBe(false);
    expect((await readyz(first)).status).toBe(200);
    const event = await waitFor(() => {
      const list = JSON.parse(kubectl(admin, ['get', 'events.events.k8s.io', '-n', NS_A, '--field-selector', 'reason=AnotherOperatorLeads', '-o', 'json'])) as { items: { type: string; regarding: { kind: string; name: string }; note: string }[] };
      return list.items[0];
    }, { timeoutMs: 30_000, message: 'the Warning Event on release a\'s Lease' });
    expect(event).toMatchObject({ type: 'Warning', regarding: { kind: 'Lease', name: 'a-roomkeeper-operator' } });
    await waitFor(async () => /^roomkeeper_operator_other_operators 1$/m.test(await first.metrics.render()), { timeoutMs: 30_000, message: 'the first operator counts the other' });
    const ranOperationsOf = (identity: string) => logsOf.get(identity)?.lines.some((l) => l.scheduler === SCHEDULER && typeof l.operation === 'string') === true;
    const said = (identity: string, level: string, start: string) => logsOf.get(identity)?.lines.some((l) => l.level === level && String(l.message).startsWith(start)) === true;
    await waitFor(() => said('release-a-pod', 'warn', `another Roomkeeper operator leads in this cluster (Lease ${plane.releaseNamespace}/`), { timeoutMs: 10_000, message: 'release a\'s operator logs why it stands back' });
    await waitFor(() => said('first-release-pod', 'warn', `another Roomkeeper operator runs in this cluster (Lease ${NS_A}/a-roomkeeper-operator, held by release-a-pod); its Lease is newer`), { timeoutMs: 10_000, message: 'the first operator logs the newer one' });

    // A Scheduler made now: the first operator reconciles it (the Events about it are its own),
    // release a's does nothing with it.
    kubectl(admin, ['apply', '-f', '-'], JSON.stringify(schedulerObject(SCHEDULER, { roomsReplicas: 0 })));
    await waitFor(() => kubectl(admin, ['get', 'scheduler', SCHEDULER, '-o', 'jsonpath={.status.state}']) === 'in-sync', { timeoutMs: 60_000, message: 'the scheduler reconciled' });
    // Who ran its operations, from each operator's own log (an operation's lines carry its
    // scheduler): Events are dropped past a kind's budget, and this plane holds other tests' schedulers.
    await waitFor(() => ranOperationsOf('first-release-pod'), { timeoutMs: 30_000, message: 'the first operator\'s log shows the scheduler\'s operation' });
    expect(ranOperationsOf('release-a-pod')).toBe(false);
    expect(ofA.isLeader).toBe(false);

    // The first stops (its Lease released): release a's operator reconciles and is ready.
    await first.stop('test', { drainMs: 0 });
    operators.splice(operators.indexOf(first), 1);
    await waitFor(() => ofA.isLeader, { timeoutMs: 30_000, message: 'release a\'s operator leads once the first is gone' });
    expect((await readyz(ofA)).status).toBe(200);
    // ...and deletes the Scheduler (its finalizer needs a reconciling operator).
    kubectl(admin, ['delete', 'scheduler', SCHEDULER, '--wait=false']);
    await waitFor(() => kubectl(admin, ['get', 'scheduler', SCHEDULER, '--ignore-not-found', '-o', 'name']).trim() === '', { timeoutMs: 60_000, message: 'the scheduler deleted by release a\'s operator' });
    expect(ranOperationsOf('release-a-pod')).toBe(true);

    // The first comes back while release a's leads: it wins its own Lease at once, and its Lease
    // is the older, but it reconciles only once release a's operator has stood back, never beside it.
    let both = 0;
    let sampling = true;
    let back: RunningOperator | undefined;
    const sampler = (async () => {
      for (; sampling; await new Promise((resolve) => setTimeout(resolve, 5))) if (back?.isLeader && ofA.isLeader) both++;
    })();
    try {
      back = await launch(plane.operatorKubeconfig, {}, 'first-release-pod-again');
      const again = back;
      await waitFor(() => again.isLeader && !ofA.isLeader, { timeoutMs: 60_000, message: 'the first operator leads again, release a\'s stood back' });
    } finally {
      sampling = false;
      await sampler;
    }
    expect(both).toBe(0);
    await waitFor(() => said('first-release-pod-again', 'warn', `this operator won its Lease ${plane.releaseNamespace}/`), { timeoutMs: 5_000, message: 'the first operator says it waits for the newer one' });
    await waitFor(async () => (await readyz(ofA)).status === 503, { timeoutMs: 10_000, message: 'release a\'s operator stands back again' });
  } finally {
    for (const op of operators) await op.stop('test end', { drainMs: 0 }).catch(() => undefined);
    kubectl(admin, ['delete', 'scheduler', SCHEDULER, '--ignore-not-found', '--wait=false']);
    await helm(['uninstall', 'a', '--namespace', NS_A]);
    if (leaseOfA) kubectl(admin, ['delete', 'lease', leaseOfA.name, '-n', leaseOfA.namespace, '--ignore-not-found']);
    for (const ns of [NS_A, NS_B]) kubectl(admin, ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
  }
}, 300_000);
