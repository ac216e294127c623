import { silentLogger } from '../../../common/src/logger';
import { makeKubeClients, type KubeClients } from '../../../common/src/kube/clients';
import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { SecretCredentials } from './secret-credentials';

jest.setTimeout(30_000);

let sandbox: Sandbox;
let clients: KubeClients;
beforeAll(async () => {
  sandbox = await startSandbox({ crdDirs: ['crds'] });
  clients = makeKubeClients(sandbox.kubeConfig(), { qps: 100, burst: 100 });
  await clients.core.createNamespace({ body: { metadata: { name: 'auth-ns' } } });
});
afterAll(async () => {
  await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

it('reads credentials from a Secret, follows rotation, and keeps the last good pair when the Secret breaks', async () => {
  const provider = new SecretCredentials({ core: clients.core, name: 'gw', namespace: 'auth-ns', logger: silentLogger() });
  expect(await provider.refresh()).toEqual({ unreadable: 404 });
  expect(provider.current()).toBeUndefined();
  expect(provider.unavailableReason()).toBe('Secret auth-ns/gw does not exist');

  await clients.core.createNamespacedSecret({ namespace: 'auth-ns', body: { metadata: { name: 'gw' }, data: { username: b64('alice'), password: b64('one') } } });
  expect(await provider.refresh()).toBe('read');
  expect(provider.current()).toEqual({ username: 'alice', password: 'one' });
  expect(provider.unavailableReason()).toBeUndefined();

  await clients.core.replaceNamespacedSecret({ name: 'gw', namespace: 'auth-ns', body: { metadata: { name: 'gw' }, data: { username: b64('alice'), password: b64('two') } } });
  await provider.refresh();
  expect(provider.current()).toEqual({ username: 'alice', password: 'two' });

  await clients.core.deleteNamespacedSecret({ name: 'gw', namespace: 'auth-ns' });
  expect(await provider.refresh()).toEqual({ unreadable: 404 });
  expect(provider.current()).toEqual({ username: 'alice', password: 'two' });
  expect(provider.unavailableReason()).toBeUndefined();
});

it('falls back to configured credentials when the Secret has none', async () => {
  const provider = new SecretCredentials({ core: clients.core, name: 'absent', namespace: 'auth-ns', logger: silentLogger(), fallback: { username: 'cfg', password: 'pw' } });
  await provider.refresh();
  expect(provider.current()).toEqual({ username: 'cfg', password: 'pw' });
});
