import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
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
});
