import { CoreV1Api } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';

function failure(e: unknown): { code?: number; headers?: Record<string, string> } {
  return typeof e === 'object' && e !== null ? (e as { code?: number; headers?: Record<string, string> }) : {};
}

describe('fault injection', () => {
  let sandbox: Sandbox;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox({ random: () => 0 });
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
  });

  afterEach(() => sandbox.faults.clear());

  afterAll(async () => {
    await sandbox.stop();
  });

  it('answers 429 with Retry-After and a Status body', async () => {
    sandbox.faults.set({ errorRate: 1, errorStatus: 429 });
    let caught: unknown;
    try {
      await core.listNamespacedPod({ namespace: 'default' });
    } catch (e) {
      caught = e;
    }
    expect(failure(caught).code).toBe(429);
    expect(failure(caught).headers?.['retry-after']).toBe('1');
    const raw = await request(sandbox.url, 'GET', '/api/v1/namespaces/default/pods');
    expect(raw.json).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
  });

  it('answers 500 only to the matching verb and resource', async () => {
    sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'create', resource: 'configmaps' } });
    let caught: unknown;
    try {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'x' } } });
    } catch (e) {
      caught = e;
    }
    expect(failure(caught).code).toBe(500);
    await expect(core.listNamespacedConfigMap({ namespace: 'default' })).resolves.toBeDefined();
    await expect(core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } })).resolves.toBeDefined();
  });

  it('passes requests again after clear()', async () => {
    sandbox.faults.set({ errorRate: 1 });
    sandbox.faults.clear();
    await expect(core.listNamespacedPod({ namespace: 'default' })).resolves.toBeDefined();
  });

  it('adds latency without failing', async () => {
    sandbox.faults.set({ latencyMs: 20 });
    await expect(core.listNamespacedPod({ namespace: 'default' })).resolves.toBeDefined();
  });

  it('answers health and discovery regardless of faults', async () => {
    sandbox.faults.set({ errorRate: 1 });
    expect((await request(sandbox.url, 'GET', '/healthz')).text).toBe('ok');
    expect((await request(sandbox.url, 'GET', '/api/v1')).status).toBe(200);
  });
});
