import { CoreV1Api } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';
import { openWatch } from './watch-reader.fixture';

function failure(e: unknown): { code?: number; headers?: Record<string, string> } {
  return typeof e === 'object' && e !== null ? e : {};
}

async function waitUntil(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
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

  it('answers 403 Forbidden, as RBAC refuses a verb, with a Status body naming the verb and resource', async () => {
    sandbox.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'deletecollection', resource: 'pods' } });
    const raw = await request(sandbox.url, 'DELETE', '/api/v1/namespaces/default/pods');
    expect(raw.status).toBe(403);
    expect(raw.json).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, message: 'pods is forbidden: cannot deletecollection resource "pods" in API group "": injected fault' });
    await expect(core.listNamespacedPod({ namespace: 'default' })).resolves.toBeDefined();
  });

  it('answers 401 Unauthorized, as kube-apiserver refuses a revoked token, to the matching token only', async () => {
    sandbox.faults.set({ errorRate: 1, errorStatus: 401, match: { token: 'revoked' } });
    const refused = await fetch(`${sandbox.url}/api/v1/namespaces/default/pods`, { headers: { Authorization: 'Bearer revoked' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    await expect(core.listNamespacedPod({ namespace: 'default' })).resolves.toBeDefined();
  });

  it('passes requests again after clear()', async () => {
    sandbox.faults.set({ errorRate: 1 });
    sandbox.faults.clear();
    await expect(core.listNamespacedPod({ namespace: 'default' })).resolves.toBeDefined();
  });

  it('holds a matching request for the set latency, then answers it; other requests pass at once', async () => {
    const waits: number[] = [];
    let release: (() => void) | undefined;
    const held = await startSandbox({ sleep: (ms) => new Promise<void>((resolve) => { waits.push(ms); release = resolve; }) });
    try {
      const api = held.kubeConfig().makeApiClient(CoreV1Api);
      held.faults.set({ latencyMs: 20, match: { resource: 'pods' } });
      let answered = false;
      const listing = api.listNamespacedPod({ namespace: 'default' }).then((list) => { answered = true; return list; });
      await waitUntil(() => release !== undefined);
      expect(waits).toEqual([20]);
      // Another resource is not delayed: it is answered while the pods request still waits.
      await expect(api.listNamespacedConfigMap({ namespace: 'default' })).resolves.toMatchObject({ kind: 'ConfigMapList' });
      expect(waits).toEqual([20]);
      expect(answered).toBe(false);
      release?.();
      await expect(listing).resolves.toMatchObject({ kind: 'PodList' });
    } finally {
      release?.();
      await held.stop();
    }
  });

  it('ends a held request\'s wait when its client goes away, and does not serve it', async () => {
    const signals: AbortSignal[] = [];
    const held = await startSandbox({ sleep: (_ms, signal) => new Promise<void>((resolve) => {
      signals.push(signal);
      signal.addEventListener('abort', () => resolve(), { once: true });
    }) });
    try {
      held.faults.set({ latencyMs: 120_000, match: { resource: 'configmaps' } });
      const client = new AbortController();
      const create = fetch(`${held.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST', signal: client.signal, headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held' } }),
      });
      await waitUntil(() => signals.length === 1);
      expect(signals[0]?.aborted).toBe(false);
      client.abort();
      await expect(create).rejects.toThrow();
      await waitUntil(() => signals[0]?.aborted === true);
      held.faults.clear();
      expect((await request(held.url, 'GET', '/api/v1/namespaces/default/configmaps/held')).status).toBe(404);
    } finally {
      await held.stop();
    }
  });

  it('answers watches 410 as a status or as an ERROR event, and resets connections', async () => {
    sandbox.faults.set({ errorRate: 1, errorStatus: 410, match: { verb: 'watch' } });
    expect((await request(sandbox.url, 'GET', '/api/v1/pods?watch=true')).json).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect((await request(sandbox.url, 'GET', '/api/v1/pods')).status).toBe(200);
    sandbox.faults.set({ errorRate: 1, errorStatus: 'expired', match: { verb: 'watch' } });
    const expired = openWatch(sandbox.url, '/api/v1/pods?watch=true');
    await expired.ended;
    expect(await expired.status).toBe(200);
    expect(expired.events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) as unknown }]);
    sandbox.faults.set({ errorRate: 1, errorStatus: 'reset', match: { resource: 'pods' } });
    await expect(fetch(`${sandbox.url}/api/v1/pods`)).rejects.toThrow();
  });

  it('cuts every open watch on demand and counts requests by verb and resource', async () => {
    const before = sandbox.faults.requests({ verb: 'watch', resource: 'secrets' });
    const watches = [openWatch(sandbox.url, '/api/v1/secrets?watch=true'), openWatch(sandbox.url, '/api/v1/namespaces/default/secrets?watch=true')];
    await Promise.all(watches.map((w) => w.status));
    const mine = openWatch(sandbox.url, '/api/v1/secrets?watch=true', { Authorization: 'Bearer counted' });
    await mine.status;
    expect(sandbox.faults.openWatches('counted')).toBe(1);
    expect(sandbox.faults.openWatches()).toBeGreaterThanOrEqual(3);
    expect(sandbox.faults.cutWatches()).toBeGreaterThanOrEqual(3);
    await mine.ended;
    expect(sandbox.faults.openWatches('counted')).toBe(0);
    await Promise.all(watches.map((w) => w.ended));
    expect(sandbox.faults.requests({ verb: 'watch', resource: 'secrets' }) - before).toBe(3);
    expect(sandbox.faults.requests({ verb: 'watch' })).toBeGreaterThanOrEqual(2);
    expect(sandbox.faults.requests({ verb: 'watch', resource: 'secrets', token: 'nobody' })).toBe(0);
  });

  it('delivers watch events late to the watches of one client (by its bearer token)', async () => {
    sandbox.faults.set({ watchDelayMs: 1500, match: { verb: 'watch', resource: 'configmaps', token: 'slow-client' } });
    const slow = openWatch(sandbox.url, '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=' + String((await core.listNamespacedConfigMap({ namespace: 'default' })).metadata?.resourceVersion), { Authorization: 'Bearer slow-client' });
    const prompt = openWatch(sandbox.url, '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=' + String((await core.listNamespacedConfigMap({ namespace: 'default' })).metadata?.resourceVersion));
    await Promise.all([slow.status, prompt.status]);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'late' } } });
    // The other client sees the event first; the slow one only afterwards.
    await waitUntil(() => prompt.events.some((e) => e.object?.metadata?.name === 'late'));
    expect(slow.events.some((e) => e.object?.metadata?.name === 'late')).toBe(false);
    await waitUntil(() => slow.events.some((e) => e.object?.metadata?.name === 'late'));
    slow.close();
    prompt.close();
  });

  it('answers health and discovery regardless of faults', async () => {
    sandbox.faults.set({ errorRate: 1 });
    expect((await request(sandbox.url, 'GET', '/healthz')).text).toBe('ok');
    expect((await request(sandbox.url, 'GET', '/api/v1')).status).toBe(200);
  });
});
