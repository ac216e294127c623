/**
 * Two Roomkeeper releases in one cluster, on the sandbox: two operators, each with the leader Lease
 * of its own release namespace, so each wins its own election. The one whose Lease was made first
 * reconciles; the other stands back: it holds its Lease but writes nothing but it and one Warning
 * Event, its /readyz answers 503 saying why and what to do, and its log says so. Once the first
 * one stops (its Lease released), the other reconciles by itself. Each operator has a bearer token
 * of its own, so the sandbox counts their requests apart.
 */
import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '../../common/src/config';
import { MERGE_PATCH } from '../../common/src/kube/clients';
import { OPERATOR_LEASE_LABEL } from '../../common/src/resources/labels';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { captureLogs } from '../support/log-capture';
import { CRD_DIR, schedulerObject, TEST_CONFIG } from '../support/stack';
import { waitFor } from '../support/wait';

const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const RELEASES = { a: { namespace: 'rk-a', name: 'a-roomkeeper-operator' }, b: { namespace: 'rk-b', name: 'b-roomkeeper-operator' } };

describe('two Roomkeeper releases in one cluster (sandbox)', () => {
  let sandbox: Sandbox;
  const running: RunningOperator[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ crdDirs: [CRD_DIR] });
  });
  afterAll(async () => {
    for (const op of running) await op.stop('test end', { drainMs: 0 });
    await sandbox.stop();
  });

  const start = async (release: 'a' | 'b', logs = captureLogs('info', 'operator')): Promise<RunningOperator> => {
    const token = `operator-${release}`;
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sandbox.kubeconfigYaml().replace(/token: .*/, `token: ${token}`));
    const config = loadConfig({}, { ...TEST_CONFIG, identity: `${release}-pod-1`, leaseNamespace: RELEASES[release].namespace, leaseName: RELEASES[release].name, roomsApiUrl: 'http://127.0.0.1:1' });
    const op = await startOperator({ kubeConfig: kc, config, logger: logs.logger });
    running.push(op);
    return op;
  };
  const readyz = async (op: RunningOperator) => {
    const res = await fetch(`${op.opsUrl ?? ''}/readyz`);
    return { status: res.status, body: await res.text() };
  };
  const writesOf = (release: string, except: string[]) => {
    const resources = ['schedulers', 'schedulerversions', 'operations', 'gamerooms', 'pods', 'namespaces', 'pingdigests', 'leases', 'events'].filter((r) => !except.includes(r));
    return resources.flatMap((resource) => WRITES.map((verb) => sandbox.faults.requests({ verb, resource, token: `operator-${release}` }))).reduce((a, b) => a + b, 0);
  };

  test('the newer stands back (503, log, Event, no write), the older reconciles; the newer takes over once the older stops', async () => {
    const coordination = sandbox.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    const logsOfA = captureLogs('info', 'operator');
    const a = await start('a', logsOfA);
    await waitFor(() => a.isLeader, { timeoutMs: 15_000, message: 'a leads' });
    const bLogs = captureLogs('info', 'operator');
    const b = await start('b', bLogs);

    // b wins its own election (its Lease is held by it) but stands back, and says why.
    await waitFor(async () => (await coordination.readNamespacedLease(RELEASES.b)).spec?.holderIdentity === 'b-pod-1', { timeoutMs: 15_000, message: 'b holds its own Lease' });
    const notReady = await readyz(b);
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain('another Roomkeeper operator leads in this cluster (Lease rk-a/a-roomkeeper-operator, held by a-pod-1, made before this operator\'s Lease rk-b/b-roomkeeper-operator)');
    expect(notReady.body).toContain('uninstall this release (helm list -n rk-b, then helm uninstall <release> -n rk-b), or uninstall the one in namespace rk-a');
    expect(b.isLeader).toBe(false);
    expect((await readyz(a)).status).toBe(200);
    expect(a.isLeader).toBe(true);
    for (const l of Object.values(RELEASES)) expect((await coordination.readNamespacedLease(l)).metadata?.labels?.[OPERATOR_LEASE_LABEL]).toBe('true');
    await waitFor(() => bLogs.lines.some((l) => l.level === 'warn' && /^another Roomkeeper operator leads in this cluster/.test(String(l.message))), { timeoutMs: 5_000, message: 'b logs why it stands back' });
    const events = sandbox.kubeConfig().makeApiClient(k8s.EventsV1Api);
    const event = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'rk-b' })).items.find((e) => e.reason === 'AnotherOperatorLeads'), { timeoutMs: 10_000, message: 'the Warning Event on b\'s Lease' });
    expect(event).toMatchObject({ type: 'Warning', regarding: { kind: 'Lease', namespace: 'rk-b', name: 'b-roomkeeper-operator' } });
    await waitFor(async () => /^roomkeeper_operator_other_operators 1$/m.test(await a.metrics.render()), { timeoutMs: 10_000, message: 'a counts the other operator' });
    await waitFor(() => logsOfA.lines.some((l) => l.level === 'warn' && String(l.message).startsWith('another Roomkeeper operator runs in this cluster (Lease rk-b/b-roomkeeper-operator, held by b-pod-1); its Lease is newer')), { timeoutMs: 5_000, message: 'a logs the newer operator' });

    // A Scheduler made now is reconciled by a alone: b writes nothing but its Lease and Event (its
    // one write before, the namespace of its Lease, made before it campaigned).
    const bWritesBefore = writesOf('b', ['leases', 'events']);
    expect(bWritesBefore).toBeLessThanOrEqual(1);
    const api = sandbox.kubeConfig().makeApiClient(k8s.CustomObjectsApi);
    await api.createClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', body: schedulerObject('two-releases', { roomsReplicas: 0 }) });
    const state = async () => ((await api.getClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name: 'two-releases' })) as { status?: { state?: string } }).status?.state;
    await waitFor(async () => (await state()) === 'in-sync', { timeoutMs: 30_000, message: 'a reconciled the new scheduler' });
    expect(writesOf('b', ['leases', 'events'])).toBe(bWritesBefore);
    expect(writesOf('a', ['leases', 'events'])).toBeGreaterThan(0);

    // a stops (its Lease released): b reconciles, and is ready.
    await a.stop('test', { drainMs: 0 });
    running.splice(running.indexOf(a), 1);
    await waitFor(() => b.isLeader, { timeoutMs: 15_000, message: 'b leads once a is gone' });
    expect((await readyz(b)).status).toBe(200);
    await waitFor(() => bLogs.lines.some((l) => l.message === 'no other Roomkeeper operator leads in this cluster any more (Lease rk-a/a-roomkeeper-operator was released or expired): this operator reconciles again'), { timeoutMs: 5_000, message: 'b logs that it reconciles again' });
    await api.patchClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name: 'two-releases', body: { spec: { roomsReplicas: 1 } } }, MERGE_PATCH);
    await waitFor(() => writesOf('b', ['leases', 'events']) > bWritesBefore, { timeoutMs: 30_000, message: 'b reconciles the scheduler' });
  }, 120_000);

  test('the older operator, back after a crash while the newer led, leads only once the newer stood back: never both at once', async () => {
    for (const op of running.splice(0)) await op.stop('the test before', { drainMs: 0 });
    const a = await start('a');
    await waitFor(() => a.isLeader, { timeoutMs: 15_000, message: 'a leads' });
    const b = await start('b');
    await waitFor(async () => (await readyz(b)).status === 503, { timeoutMs: 15_000, message: 'b stands back' });
    // a crashes (its Lease is left to expire): b leads.
    await a.crash();
    running.splice(running.indexOf(a), 1);
    await waitFor(() => b.isLeader, { timeoutMs: 20_000, message: 'b leads once a\'s Lease expired' });
    // a comes back: its Lease is older, so b stands back; until it has, a must not lead.
    const both: string[] = [];
    let sampling = true;
    const again: RunningOperator[] = [];
    const sampler = (async () => {
      while (sampling) {
        const [first] = again;
        if (first?.isLeader && b.isLeader) both.push(new Date().toISOString());
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      const logs = captureLogs('info', 'operator');
      again.push(await start('a', logs));
      const [a2] = again as [RunningOperator];
      await waitFor(() => a2.isLeader && !b.isLeader, { timeoutMs: 30_000, message: 'a leads again, b stood back' });
      expect(logs.lines.filter((l) => l.level === 'warn').map((l) => String(l.message))).toContainEqual(expect.stringMatching(
        /^this operator won its Lease rk-a\/a-roomkeeper-operator while a newer Roomkeeper operator's Lease is live \(rk-b\/b-roomkeeper-operator, held by b-pod-1\): that one stands back once it sees this Lease, so this one reconciles from \S+, after that Lease's duration, and not beside it$/));
    } finally {
      sampling = false;
      await sampler;
    }
    expect(both).toEqual([]);
    await waitFor(async () => (await readyz(b)).status === 503, { timeoutMs: 5_000, message: 'b says it stands back' });
  }, 120_000);
});
