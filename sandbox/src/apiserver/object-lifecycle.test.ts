import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1OwnerReference } from '@kubernetes/client-node';
import { waitFor } from '../../../test/support/wait';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const CONTAINERS = [{ name: 'c', image: 'img:1' }];

describe('deletion, finalizers and garbage collection', () => {
  let sandbox: Sandbox;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  async function exists(path: string): Promise<boolean> {
    return (await request(sandbox.url, 'GET', path)).status === 200;
  }

  async function ownerWithChildren(owner: string, children: string[], block = false): Promise<void> {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: owner } } });
    const ref: V1OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid: cm.metadata!.uid!, blockOwnerDeletion: block };
    for (const child of children) {
      await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: child, ownerReferences: [ref] }, spec: { containers: CONTAINERS } } });
    }
  }

  it('deletes the children of a deleted owner (background)', async () => {
    await ownerWithChildren('bg-owner', ['bg-child-1', 'bg-child-2']);
    await core.deleteNamespacedConfigMap({ name: 'bg-owner', namespace: 'default', propagationPolicy: 'Background' });
    expect(await exists('/api/v1/namespaces/default/configmaps/bg-owner')).toBe(false);
    await waitFor(async () => !(await exists('/api/v1/namespaces/default/pods/bg-child-1')) && !(await exists('/api/v1/namespaces/default/pods/bg-child-2')), { message: 'children gone' });
  });

  it('keeps a foreground-deleted owner until its children are gone', async () => {
    await ownerWithChildren('fg-owner', ['fg-child'], true);
    await core.patchNamespacedPod({ name: 'fg-child', namespace: 'default', body: { metadata: { finalizers: ['test/hold'] } } }, MERGE);
    await core.deleteNamespacedConfigMap({ name: 'fg-owner', namespace: 'default', propagationPolicy: 'Foreground' });
    const owner = await core.readNamespacedConfigMap({ name: 'fg-owner', namespace: 'default' });
    expect(owner.metadata?.deletionTimestamp).toBeDefined();
    expect(owner.metadata?.finalizers).toContain('foregroundDeletion');
    await waitFor(async () => (await core.readNamespacedPod({ name: 'fg-child', namespace: 'default' })).metadata?.deletionTimestamp, { message: 'child being deleted' });
    await sandbox.idle();
    expect(await exists('/api/v1/namespaces/default/configmaps/fg-owner')).toBe(true);
    await core.patchNamespacedPod({ name: 'fg-child', namespace: 'default', body: { metadata: { finalizers: null } } }, MERGE);
    await waitFor(async () => !(await exists('/api/v1/namespaces/default/configmaps/fg-owner')), { message: 'owner gone' });
    expect(await exists('/api/v1/namespaces/default/pods/fg-child')).toBe(false);
  });

  it('orphans children when asked', async () => {
    await ownerWithChildren('or-owner', ['or-child']);
    await core.deleteNamespacedConfigMap({ name: 'or-owner', namespace: 'default', propagationPolicy: 'Orphan' });
    await waitFor(async () => !(await exists('/api/v1/namespaces/default/configmaps/or-owner')), { message: 'owner gone' });
    const child = await core.readNamespacedPod({ name: 'or-child', namespace: 'default' });
    expect(child.metadata?.ownerReferences ?? []).toEqual([]);
  });

  it('holds an object with finalizers until the last one is removed', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fin', finalizers: ['a/one', 'a/two'] } } });
    await core.deleteNamespacedConfigMap({ name: 'fin', namespace: 'default' });
    const held = await core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' });
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    await core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: { metadata: { finalizers: ['a/two'] } } }, MERGE);
    expect(await exists('/api/v1/namespaces/default/configmaps/fin')).toBe(true);
    await core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: { metadata: { finalizers: [] } } }, MERGE);
    expect(await exists('/api/v1/namespaces/default/configmaps/fin')).toBe(false);
  });

  it('deletes a bound pod gracefully and an unbound pod at once', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'unbound' }, spec: { containers: CONTAINERS } } });
    await core.deleteNamespacedPod({ name: 'unbound', namespace: 'default' });
    expect(await exists('/api/v1/namespaces/default/pods/unbound')).toBe(false);

    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'bound' }, spec: { containers: CONTAINERS, terminationGracePeriodSeconds: 20 } } });
    await core.createNamespacedPodBinding({ name: 'bound', namespace: 'default', body: { metadata: { name: 'bound' }, target: { kind: 'Node', name: 'node-1' } } });
    const bound = await core.readNamespacedPod({ name: 'bound', namespace: 'default' });
    expect(bound.spec?.nodeName).toBe('node-1');
    const rebind = await request(sandbox.url, 'POST', '/api/v1/namespaces/default/pods/bound/binding', { target: { kind: 'Node', name: 'node-2' } });
    expect(rebind.status).toBe(409);

    await core.deleteNamespacedPod({ name: 'bound', namespace: 'default' });
    const terminating = await core.readNamespacedPod({ name: 'bound', namespace: 'default' });
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    expect(terminating.metadata?.deletionGracePeriodSeconds).toBe(20);
    // the kubelet confirms with gracePeriodSeconds=0
    await core.deleteNamespacedPod({ name: 'bound', namespace: 'default', gracePeriodSeconds: 0 });
    expect(await exists('/api/v1/namespaces/default/pods/bound')).toBe(false);
  });

  it('empties a deleted namespace, then removes it', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedPod({ namespace: 'doomed', body: { metadata: { name: 'p1' }, spec: { containers: CONTAINERS } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['test/hold'] } } });
    await core.deleteNamespace({ name: 'doomed' });
    const ns = await core.readNamespace({ name: 'doomed' });
    expect(ns.status?.phase).toBe('Terminating');
    const refused = await request(sandbox.url, 'POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'late' } });
    expect(refused.status).toBe(403);
    expect(refused.json!.message).toContain('because it is being terminated');
    await waitFor(async () => !(await exists('/api/v1/namespaces/doomed/pods/p1')), { message: 'pod removed' });
    await sandbox.idle();
    expect(await exists('/api/v1/namespaces/doomed')).toBe(true);
    // an update of a terminating namespace does not skip its cleanup
    await core.patchNamespace({ name: 'doomed', body: { metadata: { labels: { touched: 'yes' } } } }, MERGE);
    expect(await exists('/api/v1/namespaces/doomed')).toBe(true);
    await core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: { metadata: { finalizers: null } } }, MERGE);
    await waitFor(async () => !(await exists('/api/v1/namespaces/doomed')), { message: 'namespace removed' });
  });
});
