/**
 * /readyz while the Kubernetes API server refuses us: the sandbox answers every request of the
 * operator and the gateway (singled out by their bearer token) 401 Unauthorized, as kube-apiserver
 * answers a revoked or expired token, or 403 Forbidden, as it answers once their RBAC is gone; their
 * watches are cut, so they ask again. Meanwhile both /readyz answer 503 saying which request was
 * refused, with what status and what to do, and /healthz answers 200 (a restart fixes neither).
 * Their `roomkeeper_kube_api_refused` gauge counts the refusal while it lasts. Once the sandbox
 * serves them again, both are ready again by themselves and the gauge is back to 0.
 * (test/real-apiserver/readyz-refused.test.ts: a token kube-apiserver refuses for real.)
 */
import { sumMetricText } from '../../bench/support/metric-sum';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { withToken } from '../support/bearer-token';
import { startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const SUBJECT_TOKEN = 'refused-subject';

interface Probe { status: number; body: string }

async function get(url: string): Promise<Probe> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/** `roomkeeper_kube_api_refused{status}` in a /metrics text. */
const refusedGauge = (metrics: string, status: number): number => sumMetricText(metrics, 'roomkeeper_kube_api_refused', { status: String(status) });

describe('/readyz while the API server refuses the operator and the gateway', () => {
  let stack: Stack;
  let operator: RunningOperator;
  const urls = (): Record<'gateway' | 'operator', string> => ({ gateway: stack.managementUrl!, operator: operator.opsUrl! });

  beforeAll(async () => {
    stack = await startStack({ operators: 0, simulation: false, kubeConfigFor: (component, kc) => (component === 'gateway' ? withToken(kc, SUBJECT_TOKEN) : kc) });
    operator = await startOperator({ kubeConfig: withToken(stack.kc, SUBJECT_TOKEN), config: stack.config, logger: stack.logger.child({ component: 'operator' }) });
  });
  afterAll(async () => {
    stack.sandbox?.faults.clear();
    await operator.stop('test', { drainMs: 0 });
    await stack.stop();
  });

  test.each([
    [401, /401 Unauthorized: the API server at http:\/\/127\.0\.0\.1:\d+ rejected the credentials: .*check its ServiceAccount token/],
    [403, /watch [a-z]+(\.roomkeeper\.io)?( \(all namespaces\))? was answered 403 Forbidden: this identity may not watch .*: install with the Helm chart, whose RBAC grants it \(rbac\.create=true/],
  ] as const)('answered %d: /readyz 503 saying what and what to do, /healthz 200; ready again by itself once served', async (status, words) => {
    for (const [component, url] of Object.entries(urls())) {
      await waitFor(async () => (await get(`${url}/readyz`)).status === 200, { timeoutMs: 30_000, message: `${component} ready before the refusal` });
    }
    const faults = stack.sandbox!.faults;
    faults.set({ errorRate: 1, errorStatus: status, match: { token: SUBJECT_TOKEN } });
    try {
      faults.cutWatches();
      for (const [component, url] of Object.entries(urls())) {
        const refused = await waitFor(async () => {
          const ready = await get(`${url}/readyz`);
          return ready.status === 503 && words.test(ready.body) ? ready : undefined;
        }, { timeoutMs: 30_000, message: `${component} /readyz 503 saying why` });
        expect(refused.body).toMatch(/the Kubernetes API server refuses this replica's requests \(ready again by itself once it serves them\)/);
        expect((await get(`${url}/healthz`)).status).toBe(200);
        expect(refusedGauge((await get(`${url}/metrics`)).body, status)).toBeGreaterThanOrEqual(1);
      }
    } finally {
      faults.clear();
    }
    for (const [component, url] of Object.entries(urls())) {
      await waitFor(async () => (await get(`${url}/readyz`)).status === 200, { timeoutMs: 30_000, message: `${component} ready again once served` });
      expect(refusedGauge((await get(`${url}/metrics`)).body, status)).toBe(0);
    }
  }, 120_000);
});
