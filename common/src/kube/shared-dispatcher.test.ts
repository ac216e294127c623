import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { waitFor } from '../../../test/support/wait';
import { withSharedDispatcher } from './shared-dispatcher';

function insecureKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:6443', skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function dispatcherOf(kc: KubeConfig): Promise<unknown> {
  const ctx = new RequestContext('http://127.0.0.1:6443/api/v1/pods', HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  return ctx.getDispatcher();
}

describe('withSharedDispatcher', () => {
  it('hands every request the same dispatcher, where client-node makes one per request', async () => {
    const kc = insecureKubeConfig();
    const a = await dispatcherOf(kc);
    const b = await dispatcherOf(kc);
    expect(a).toBeDefined();
    expect(a).not.toBe(b);

    const shared = withSharedDispatcher(kc);
    const c = await dispatcherOf(shared.kubeConfig);
    const d = await dispatcherOf(shared.kubeConfig);
    expect(c).toBeDefined();
    expect(c).toBe(d);
    expect(await dispatcherOf(kc)).not.toBe(c);
    await shared.close();
  });

  it('keeps the authentication of the original', async () => {
    const shared = withSharedDispatcher(insecureKubeConfig());
    const ctx = new RequestContext('http://127.0.0.1:6443/api', HttpMethod.GET);
    await shared.kubeConfig.applySecurityAuthentication(ctx);
    expect(ctx.getHeaders().Authorization).toBe('Bearer t');
    expect(shared.kubeConfig.getCurrentCluster()?.server).toBe('http://127.0.0.1:6443');
    await shared.close();
  });

  it('reads the CA file once, and again after the pool is replaced', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-ca-'));
    const caFile = path.join(dir, 'ca.crt');
    fs.writeFileSync(caFile, 'not a certificate: no connection is made here');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caFile }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const shared = withSharedDispatcher(kc);
    const first = await dispatcherOf(shared.kubeConfig);
    expect(first).toBeDefined();
    fs.rmSync(dir, { recursive: true });
    // client-node reads the file on every request: without it, the original fails.
    await expect(dispatcherOf(kc)).rejects.toThrow(/ENOENT/);
    const ctx = new RequestContext('https://127.0.0.1:6443/api', HttpMethod.GET);
    await shared.kubeConfig.applySecurityAuthentication(ctx);
    expect([ctx.getDispatcher(), ctx.getHeaders().Authorization]).toEqual([first, 'Bearer t']);
    // A transport failure replaces the pool after a quiet second: the files are read again.
    shared.transportFailed();
    await waitFor(async () => dispatcherOf(shared.kubeConfig).then(() => false, (e: unknown) => /ENOENT/.test(String(e))), { timeoutMs: 10_000 });
    await shared.close();
  });
});
