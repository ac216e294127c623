/**
 * /readyz of a gateway that kube-apiserver refuses for real: a gateway runs as a ServiceAccount of
 * its own, bound to the chart's gateway ClusterRole. Its ClusterRoleBinding deleted, its lists and
 * watches are answered 403; bound again, it is ready again by itself. Its ServiceAccount deleted, its
 * token is answered 401. Meanwhile /readyz answers 503 naming the request, the status and what to
 * do, /healthz 200, `roomkeeper_kube_api_refused` counts the refusal, and the log says so without
 * the token. kube-apiserver does not end a watch already open when a binding or a token goes, so the
 * gateway reaches it through the fault proxy, which only cuts its watches (as the server's watch
 * timeout would), so it asks again.
 */
import * as k8s from '@kubernetes/client-node';
import { sumMetricText } from '../../bench/support/metric-sum';
import { loadConfig } from '../../common/src/config';
import { startGateway, type RunningGateway } from '../../api-gateway/src/main';
import { writeTokenKubeconfig } from '../support/control-plane';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { captureLogs } from '../support/log-capture';
import { kubectl, realApiServer, reportNotRun, RELEASE_NAMESPACE } from '../support/real-apiserver';
import { TEST_CONFIG } from '../support/stack';
import { waitFor } from '../support/wait';

const ACCOUNT = 'rk-readyz-refused';
const CHART_GATEWAY_ROLE = 'roomkeeper-gateway';

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

test('a gateway whose RBAC is removed, then whose ServiceAccount is deleted: /readyz 503 saying why, /healthz 200; ready again once bound again', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('/readyz refused by kube-apiserver')).toMatch(/NOT RUN/);
    return;
  }
  const admin = plane.adminKubeconfig;
  const bind = () => kubectl(admin, ['create', 'clusterrolebinding', ACCOUNT, `--clusterrole=${CHART_GATEWAY_ROLE}`, `--serviceaccount=${RELEASE_NAMESPACE}:${ACCOUNT}`]);
  let proxy: FaultProxy | undefined;
  let gateway: RunningGateway | undefined;
  try {
    kubectl(admin, ['create', 'serviceaccount', ACCOUNT, '-n', RELEASE_NAMESPACE]);
    bind();
    const token = kubectl(admin, ['create', 'token', ACCOUNT, '-n', RELEASE_NAMESPACE, '--duration=1h']).trim();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(writeTokenKubeconfig(plane, `system:serviceaccount:${RELEASE_NAMESPACE}:${ACCOUNT}`, token));
    const p = await startFaultProxy({ upstream: plane.url, caFile: plane.caFile });
    proxy = p;
    const logs = captureLogs('info', 'gateway');
    const config = loadConfig({}, { ...TEST_CONFIG, authUsername: 'tester', authPassword: 'test-password', roomTokenSecret: 'test-room-token-secret', gatewayPort: 0, roomsPort: 0 });
    const g = await startGateway({ config, kubeConfig: p.kubeConfig(kc), host: '127.0.0.1', logger: logs.logger, replicaId: ACCOUNT });
    gateway = g;
    await waitFor(async () => (await get(`${g.managementUrl}/readyz`)).status === 200, { timeoutMs: 60_000, message: 'the gateway ready' });

    /** Cuts the gateway's watches until /readyz answers 503 with `words`. */
    const refusedWith = (words: RegExp, what: string) => waitFor(async () => {
      p.cutWatches();
      const ready = await get(`${g.managementUrl}/readyz`);
      return ready.status === 503 && words.test(ready.body) ? ready : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500, message: `/readyz 503 saying ${what}` });

    kubectl(admin, ['delete', 'clusterrolebinding', ACCOUNT]);
    const forbidden = await refusedWith(/(list|watch) [a-z]+\.roomkeeper\.io( \(all namespaces\))? was answered 403 Forbidden: this identity may not (list|watch) .*: install with the Helm chart, whose RBAC grants it \(rbac\.create=true/, 'the 403');
    expect(JSON.parse(forbidden.body)).toMatchObject({ status: 'not ready' });
    expect((await get(`${g.managementUrl}/healthz`)).status).toBe(200);
    const refused = async (status: number) => sumMetricText((await get(`${g.managementUrl}/metrics`)).body, 'roomkeeper_kube_api_refused', { status: String(status) });
    expect(await refused(403)).toBeGreaterThanOrEqual(1);
    bind();
    await waitFor(async () => (await get(`${g.managementUrl}/readyz`)).status === 200, { timeoutMs: 90_000, message: 'ready again once bound again' });
    expect(await refused(403)).toBe(0);

    kubectl(admin, ['delete', 'serviceaccount', ACCOUNT, '-n', RELEASE_NAMESPACE]);
    await refusedWith(/[a-z]+ [a-z]+\.roomkeeper\.io( \(all namespaces\))? was answered 401 Unauthorized: the API server at http:\/\/127\.0\.0\.1:\d+ rejected the credentials: .*check its ServiceAccount token/, 'the 401');
    expect((await get(`${g.managementUrl}/healthz`)).status).toBe(200);
    expect(await refused(401)).toBe(1);
    const said = await waitFor(() => logs.lines.find((l) => l.message === 'the API server rejects our credentials: /readyz answers 503 until it accepts them'), { timeoutMs: 10_000, message: 'the 401 logged' });
    expect(said).toMatchObject({ level: 'error', statusCode: 401, whatToDo: expect.stringMatching(/ServiceAccount token/) as unknown });
    expect(logs.lines.some((l) => l.message === 'the API server forbids a cache\'s requests: /readyz answers 503 until it allows them' && l.statusCode === 403)).toBe(true);
    expect(JSON.stringify(logs.lines)).not.toContain(token);
  } finally {
    await gateway?.stop();
    await proxy?.close();
    for (const args of [['delete', 'clusterrolebinding', ACCOUNT], ['delete', 'serviceaccount', ACCOUNT, '-n', RELEASE_NAMESPACE]]) {
      try {
        kubectl(admin, [...args, '--ignore-not-found']);
      } catch {
        // gone already
      }
    }
  }
}, 300_000);
