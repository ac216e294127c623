/**
 * test/support/fault-proxy.ts in front of the sandbox: requests and watches pass through with the
 * caller's credentials; each fault answers as documented; requests are counted by verb/resource.
 */
import * as k8s from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { requestInfo, startFaultProxy, WRITE_VERBS, type FaultProxy } from '../support/fault-proxy';
import { waitFor } from '../support/wait';

describe('the fault proxy', () => {
  let sandbox: Sandbox;
  let proxy: FaultProxy;
  let core: k8s.CoreV1Api;
  beforeAll(async () => {
    sandbox = await startSandbox();
    proxy = await startFaultProxy({ upstream: sandbox.url });
    core = proxy.kubeConfig(sandbox.kubeConfig()).makeApiClient(k8s.CoreV1Api);
  });
  afterAll(async () => {
    await proxy.close();
    await sandbox.stop();
  });
  afterEach(() => proxy.clear());

  test('classifies requests as kube-apiserver does', () => {
    expect(requestInfo('GET', '/api/v1/namespaces/a/pods?watch=true')).toEqual({ verb: 'watch', resource: 'pods', subresource: '', namespace: 'a' });
    expect(requestInfo('GET', '/api/v1/pods')).toMatchObject({ verb: 'list', resource: 'pods' });
    expect(requestInfo('PATCH', '/apis/roomkeeper.io/v1/namespaces/s/gamerooms/r/status')).toEqual({ verb: 'patch', resource: 'gamerooms', subresource: 'status', namespace: 's' });
    expect(requestInfo('DELETE', '/api/v1/namespaces/x')).toMatchObject({ verb: 'delete', resource: 'namespaces' });
    expect(requestInfo('GET', '/readyz').verb).toBe('other');
  });

  test('forwards reads, writes and watches; cuts watches; counts requests', async () => {
    proxy.resetCounts();
    await core.createNamespace({ body: { metadata: { name: 'proxied' } } });
    const seen: string[] = [];
    let ended = 0;
    const watch = new k8s.Watch(proxy.kubeConfig(sandbox.kubeConfig()));
    await watch.watch('/api/v1/namespaces/proxied/configmaps', {}, (type, obj: k8s.V1ConfigMap) => seen.push(`${type} ${String(obj.metadata?.name)}`), () => ended++);
    await waitFor(() => proxy.openWatches === 1, { message: 'the watch open through the proxy' });
    await core.createNamespacedConfigMap({ namespace: 'proxied', body: { metadata: { name: 'one' } } });
    await waitFor(() => seen.includes('ADDED one'), { message: 'the event streamed through' });
    expect(proxy.cutWatches()).toBe(1);
    await waitFor(() => ended === 1, { message: 'the watch ended' });
    expect(proxy.requests({ verb: 'watch', resource: 'configmaps' })).toBe(1);
    expect(proxy.requests({ verb: 'create' })).toBe(2);
  });

  test('answers 429 with Retry-After to writes only, at the rate asked', async () => {
    proxy.set([{ verbs: WRITE_VERBS, fault: { status: 429, retryAfterSeconds: 2 } }]);
    const res = await fetch(`${proxy.url}/api/v1/namespaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(await res.json()).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 2 } });
    expect((await fetch(`${proxy.url}/api/v1/namespaces`)).status).toBe(200);
    proxy.set([{ fault: { status: 500 }, rate: 0 }]);
    expect((await fetch(`${proxy.url}/api/v1/namespaces`)).status).toBe(200);
  });

  test('410 as a status and as an ERROR event, 500, and reset', async () => {
    proxy.set([{ verbs: ['watch'], fault: { kind: 'watch-expired' } }]);
    const expired = await fetch(`${proxy.url}/api/v1/pods?watch=true`);
    expect(expired.status).toBe(200);
    expect(JSON.parse(await expired.text())).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    proxy.set([{ verbs: ['watch'], fault: { status: 410 } }, { resources: ['pods'], fault: { status: 500 } }]);
    expect((await fetch(`${proxy.url}/api/v1/pods?watch=true`)).status).toBe(410);
    expect((await fetch(`${proxy.url}/api/v1/pods`)).status).toBe(500);
    proxy.set([{ fault: { kind: 'reset' } }]);
    await expect(fetch(`${proxy.url}/api/v1/pods`)).rejects.toThrow();
    expect(proxy.injected).toBeGreaterThanOrEqual(5);
  });
});
