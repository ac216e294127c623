import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { waitFor } from '../../../test/support/wait';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';
import { widget, widgetCrd } from './widget-crd.fixture';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function twoVersionCrd(): Record<string, unknown> {
  const crd = widgetCrd() as { metadata: { name: string }; spec: { group: string; names: Record<string, unknown>; versions: Record<string, unknown>[] } };
  crd.metadata.name = 'gadgets.test.roomkeeper.io';
  crd.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' };
  const v1 = crd.spec.versions[0]!;
  crd.spec.versions = [{ ...v1, name: 'v1beta1', storage: false }, v1];
  return crd;
}

describe('startSandbox', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rk-sandbox-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves CRDs from crdDirs with discovery entries for their subresources', async () => {
    writeFileSync(path.join(dir, 'widgets.yaml'), `${stringify(widgetCrd())}---\n${stringify(twoVersionCrd())}`);
    const sandbox = await startSandbox({ crdDirs: [dir] });
    try {
      const list = await request(sandbox.url, 'GET', '/apis/test.roomkeeper.io/v1');
      const names = (list.json!.resources as { name: string }[]).map((r) => r.name).sort();
      expect(names).toEqual(['gadgets', 'gadgets/scale', 'gadgets/status', 'widgets', 'widgets/scale', 'widgets/status']);
      const widgets = (list.json!.resources as Record<string, unknown>[]).find((r) => r.name === 'widgets');
      expect(widgets).toMatchObject({ singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'] });
      const group = await request(sandbox.url, 'GET', '/apis/test.roomkeeper.io');
      expect(group.json!.preferredVersion).toEqual({ groupVersion: 'test.roomkeeper.io/v1', version: 'v1' });
      expect(group.json!.versions!.map((v: { version: string }) => v.version)).toEqual(['v1', 'v1beta1']);
      const crd = await request(sandbox.url, 'GET', `${CRDS}/widgets.test.roomkeeper.io`);
      expect(crd.json!.status!.conditions!.map((c: { type: string; status: string }) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
    } finally {
      await sandbox.stop();
    }
  });

  it('serves aggregated discovery (apidiscovery.k8s.io/v2) when asked', async () => {
    writeFileSync(path.join(dir, 'widgets.yaml'), stringify(widgetCrd()));
    const sandbox = await startSandbox({ crdDirs: [dir] });
    try {
      const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
      const apis = await request(sandbox.url, 'GET', '/apis', undefined, { Accept: accept });
      expect(apis.headers.get('content-type')).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      expect(apis.json!.kind).toBe('APIGroupDiscoveryList');
      const group = apis.json!.items!.find((g) => g.metadata!.name === 'test.roomkeeper.io');
      expect(group!.versions![0]).toMatchObject({
        version: 'v1',
        freshness: 'Current',
        resources: [{
          resource: 'widgets', scope: 'Namespaced', singularResource: 'widget', shortNames: ['wd'],
          responseKind: { group: 'test.roomkeeper.io', version: 'v1', kind: 'Widget' },
          subresources: [
            { subresource: 'status', responseKind: { kind: 'Widget' }, verbs: ['get', 'patch', 'update'] },
            { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } },
          ],
        }],
      });
      const core = await request(sandbox.url, 'GET', '/api', undefined, { Accept: accept });
      expect(core.json!.items).toHaveLength(1);
      expect(core.json!.items![0]!.versions![0]!.resources.map((r: { resource: string }) => r.resource)).toContain('pods');
      const legacy = await request(sandbox.url, 'GET', '/api');
      expect(legacy.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    } finally {
      await sandbox.stop();
    }
  });

  it('serves every version of a CRD from one storage', async () => {
    const sandbox = await startSandbox();
    try {
      expect((await request(sandbox.url, 'POST', CRDS, twoVersionCrd())).status).toBe(201);
      const created = await request(sandbox.url, 'POST', '/apis/test.roomkeeper.io/v1beta1/namespaces/default/gadgets', { ...widget('g1', { color: 'red' }), kind: 'Gadget', apiVersion: 'test.roomkeeper.io/v1beta1' });
      expect(created.status).toBe(201);
      const asV1 = await request(sandbox.url, 'GET', '/apis/test.roomkeeper.io/v1/namespaces/default/gadgets/g1');
      expect(asV1.json!.apiVersion).toBe('test.roomkeeper.io/v1');
      const listV1 = await request(sandbox.url, 'GET', '/apis/test.roomkeeper.io/v1/gadgets');
      expect(listV1.json!.items!.map((i) => i.apiVersion)).toEqual(['test.roomkeeper.io/v1']);
    } finally {
      await sandbox.stop();
    }
  });

  it('removes a deleted CRD from discovery together with its objects', async () => {
    const sandbox = await startSandbox();
    try {
      await request(sandbox.url, 'POST', CRDS, widgetCrd());
      await request(sandbox.url, 'POST', '/apis/test.roomkeeper.io/v1/namespaces/default/widgets', widget('w', { color: 'red' }));
      expect(sandbox.store.count('widgets')).toBe(1);
      expect((await request(sandbox.url, 'DELETE', `${CRDS}/widgets.test.roomkeeper.io`)).status).toBe(200);
      expect(sandbox.store.count('widgets')).toBe(0);
      expect((await request(sandbox.url, 'GET', '/apis/test.roomkeeper.io/v1/namespaces/default/widgets')).status).toBe(404);
      expect((await request(sandbox.url, 'GET', '/apis/test.roomkeeper.io/v1')).status).toBe(404);
    } finally {
      await sandbox.stop();
    }
  });

  it('saves a snapshot on stop and loads it at start', async () => {
    const snapshotFile = path.join(dir, 'state', 'snapshot.json');
    const first = await startSandbox({ snapshotFile });
    await request(first.url, 'POST', CRDS, widgetCrd());
    await request(first.url, 'POST', '/apis/test.roomkeeper.io/v1/namespaces/default/widgets', widget('kept', { color: 'blue' }));
    await request(first.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'kept-cm' } });
    const rv = first.store.resourceVersion;
    await first.stop();
    const second: Sandbox = await startSandbox({ snapshotFile });
    try {
      const w = await request(second.url, 'GET', '/apis/test.roomkeeper.io/v1/namespaces/default/widgets/kept');
      expect(w.status).toBe(200);
      expect(w.json!.spec!.color).toBe('blue');
      expect((await request(second.url, 'GET', '/api/v1/namespaces/default/configmaps/kept-cm')).status).toBe(200);
      expect(second.store.resourceVersion).toBeGreaterThanOrEqual(rv);
      const next = await request(second.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'after' } });
      expect(Number(next.json!.metadata!.resourceVersion)).toBeGreaterThan(rv);
    } finally {
      await second.stop();
    }
  });

  it('answers health probes and /version, and stops idempotently', async () => {
    const sandbox = await startSandbox();
    for (const p of ['/healthz', '/livez', '/readyz']) expect((await request(sandbox.url, 'GET', p)).text).toBe('ok');
    expect((await request(sandbox.url, 'GET', '/version')).json!.gitVersion).toMatch(/^v1\.32\./);
    expect(sandbox.kubeconfigYaml()).toContain(`server: ${sandbox.url}`);
    expect(sandbox.kubeConfig().getCurrentCluster()?.server).toBe(sandbox.url);
    await Promise.all([sandbox.stop(), sandbox.stop()]);
    await waitFor(async () => {
      try {
        await fetch(`${sandbox.url}/healthz`);
        return false;
      } catch {
        return true;
      }
    }, { message: 'server closed' });
  });
});
