/**
 * ResilientInformer against the sandbox's fault injection: a watch cut resumes without a relist;
 * a watch answered 410 (HTTP status or ERROR event) relists; a server that ends every watch with
 * an ERROR event at once is not asked again in a tight loop (the backoff holds across the
 * relists); afterwards the cache equals the server. Each change's age on arrival is measured.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { captureLogs } from '../../../test/support/log-capture';
import { silentLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { LIST_PAGE_SIZE, ResilientInformer } from './informer';
import { rfc3339 } from './timestamps';

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The informer's own token, so its requests are counted apart from the test's. */
const TOKEN = 'informer-under-test';

describe('ResilientInformer under watch faults', () => {
  let sandbox: Sandbox;
  let core: k8s.CoreV1Api;
  let informer: ResilientInformer<k8s.V1ConfigMap>;
  const names = () => informer.list('default').map((c) => `${String(c.metadata?.name)}@${String(c.metadata?.resourceVersion)}`).sort();
  const server = async () => (await core.listNamespacedConfigMap({ namespace: 'default' })).items.map((c) => `${String(c.metadata?.name)}@${String(c.metadata?.resourceVersion)}`).sort();
  const lists = () => sandbox.faults.requests({ verb: 'list', resource: 'configmaps', token: TOKEN });
  let n = 0;
  const create = () => core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `cm-${n++}` } } });

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const kc = sandbox.kubeConfig();
    kc.loadFromOptions({ clusters: kc.clusters, contexts: kc.contexts, currentContext: kc.currentContext, users: kc.users.map((u) => ({ ...u, token: TOKEN })) });
    const own = kc.makeApiClient(k8s.CoreV1Api);
    informer = new ResilientInformer<k8s.V1ConfigMap>({
      kc, path: '/api/v1/configmaps', name: 'configmaps', logger: silentLogger(), list: () => own.listConfigMapForAllNamespaces(),
      minBackoffMs: 100, maxBackoffMs: 2000,
    });
    await informer.start();
  });
  afterAll(async () => {
    await informer.stop();
    await sandbox.stop();
  });
  afterEach(() => sandbox.faults.clear());

  it('tells when it has applied every change up to a revision: after the watch brings it, never for a version that is not a decimal revision', async () => {
    await create();
    const revision = (await core.listNamespacedConfigMap({ namespace: 'default', limit: 1 })).metadata?.resourceVersion ?? '';
    expect(await informer.waitForResourceVersion(revision, 10_000)).toBe(true);
    expect(names()).toEqual(await server());
    expect(await informer.waitForResourceVersion('not-a-revision', 10_000)).toBe(false);
    // Nothing changes past a later revision: the wait ends at its timeout; a change lets a new wait pass.
    const later = String(BigInt(revision) + 1n);
    expect(await informer.waitForResourceVersion(later, 100)).toBe(false);
    const waiting = informer.waitForResourceVersion(later, 10_000);
    await create();
    expect(await waiting).toBe(true);
  });

  test('a cut watch resumes from its resourceVersion, without a relist', async () => {
    const before = lists();
    await create();
    await until(async () => JSON.stringify(names()) === JSON.stringify(await server()));
    expect(sandbox.faults.cutWatches()).toBeGreaterThanOrEqual(1);
    await create();
    await until(async () => JSON.stringify(names()) === JSON.stringify(await server()));
    expect(lists() - before).toBe(0);
  });

  test('a watch answered 410 as an HTTP status relists', async () => {
    const before = lists();
    sandbox.faults.set({ errorRate: 1, errorStatus: 410, match: { verb: 'watch', resource: 'configmaps', token: TOKEN } });
    sandbox.faults.cutWatches();
    await until(() => sandbox.faults.injected > 0);
    sandbox.faults.clear();
    await create();
    await until(async () => JSON.stringify(names()) === JSON.stringify(await server()));
    expect(lists() - before).toBeGreaterThanOrEqual(1);
  });

  test('every watch ended by an ERROR event (410 Expired): relists with backoff, no tight loop', async () => {
    const before = lists();
    const injected = sandbox.faults.injected;
    sandbox.faults.set({ errorRate: 1, errorStatus: 'expired', match: { verb: 'watch', resource: 'configmaps', token: TOKEN } });
    sandbox.faults.cutWatches();
    // For 2 s every watch is refused: with a backoff doubling from 0.1 s the informer tries about
    // 4 times (0.1 + 0.2 + 0.4 + 0.8 s); a tight loop makes hundreds of tries (and lists).
    await until(() => sandbox.faults.injected - injected >= 1);
    await new Promise((r) => setTimeout(r, 2000)); // the window over which the tries are counted (the property is a rate)
    await create();
    expect(lists() - before).toBeLessThanOrEqual(8);
    sandbox.faults.clear();
    await until(async () => JSON.stringify(names()) === JSON.stringify(await server()), 30_000);
    expect(informer.synced).toBe(true);
  });
});

describe('ResilientInformer after an outage', () => {
  let sandbox: Sandbox | undefined;
  let informer: ResilientInformer<k8s.V1ConfigMap> | undefined;
  afterAll(async () => {
    await informer?.stop();
    await sandbox?.stop();
  });

  test('a watch ended by 410 once the server answers again relists after the shortest backoff, not the one the failures before grew; a 410 after a 410 backs off further; roomkeeper_informer_impaired says 1 meanwhile', async () => {
    sandbox = await startSandbox();
    const faults = sandbox.faults;
    const kc = sandbox.kubeConfig();
    kc.loadFromOptions({ clusters: kc.clusters, contexts: kc.contexts, currentContext: kc.currentContext, users: kc.users.map((u) => ({ ...u, token: TOKEN })) });
    const own = kc.makeApiClient(k8s.CoreV1Api);
    const logs = captureLogs('warn');
    const metrics = new MetricsRegistry();
    const impaired = () => metrics.sum('roomkeeper_informer_impaired', { informer: 'outage' });
    const i = new ResilientInformer<k8s.V1ConfigMap>({
      kc, path: '/api/v1/configmaps', name: 'outage', logger: logs.logger, list: () => own.listConfigMapForAllNamespaces(),
      minBackoffMs: 100, maxBackoffMs: 1600, metrics,
    });
    informer = i;
    expect(impaired()).toBe(1); // nothing listed yet
    await i.start();
    expect(impaired()).toBe(0);
    const retries = (message: string) => logs.lines.filter((l) => l.message === message).map((l) => l.retryInMs);
    // Watches fail until the backoff reached its cap (100, 200, 400, 800, 1600 ms).
    faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'watch', resource: 'configmaps', token: TOKEN } });
    faults.cutWatches();
    await until(() => retries('watch failed, restarting').includes(1600));
    expect([i.sight.impaired, impaired()]).toEqual([true, 1]);
    expect(await metrics.render()).toMatch(/^roomkeeper_informer_impaired\{informer="outage"\} 1$/m);
    // Back, but the watch's resourceVersion is too old to resume from (as after a kube-apiserver restart).
    faults.set({ errorRate: 1, errorStatus: 'expired', match: { verb: 'watch', resource: 'configmaps', token: TOKEN } });
    await until(() => retries('watch expired (410), relisting').length >= 2);
    expect(retries('watch expired (410), relisting').slice(0, 2)).toEqual([100, 200]);
    faults.clear();
    await until(() => !i.sight.impaired && faults.openWatches(TOKEN) === 1);
    expect(impaired()).toBe(0);
  });
});

describe('ResilientInformer while nobody listens at the server\'s address', () => {
  test('tries again at least every 4 s, whatever its longest backoff', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
    });
    const logs = captureLogs('warn');
    const own = kc.makeApiClient(k8s.CoreV1Api);
    const i = new ResilientInformer<k8s.V1ConfigMap>({
      kc, path: '/api/v1/configmaps', name: 'refused', logger: logs.logger, list: () => own.listConfigMapForAllNamespaces(),
      minBackoffMs: 1000, maxBackoffMs: 30_000,
    });
    void i.start();
    try {
      const retries = () => logs.lines.filter((l) => l.message === 'list failed, retrying').map((l) => l.retryInMs);
      await until(() => retries().length >= 4, 20_000);
      expect(retries().slice(0, 4)).toEqual([1000, 2000, 4000, 4000]);
    } finally {
      await i.stop();
    }
  });
});

describe('ResilientInformer lists page by page', () => {
  test('a relist of more objects than a page asks for pages of LIST_PAGE_SIZE and caches every object of every page', async () => {
    const sandbox = await startSandbox();
    const core = sandbox.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const total = LIST_PAGE_SIZE * 2 + 7;
    for (let i = 0; i < total; i++) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `page-${i}` } } });
    const asked: (number | undefined)[] = [];
    const informer = new ResilientInformer<k8s.V1ConfigMap>({
      kc: sandbox.kubeConfig(), path: '/api/v1/namespaces/default/configmaps', name: 'paged', logger: silentLogger(),
      list: (page) => {
        asked.push(page?.limit);
        return core.listNamespacedConfigMap({ namespace: 'default', ...page });
      },
    });
    try {
      await informer.start();
      expect(asked).toEqual([LIST_PAGE_SIZE, LIST_PAGE_SIZE, LIST_PAGE_SIZE]);
      expect(informer.list('default').filter((c) => c.metadata?.name?.startsWith('page-'))).toHaveLength(total);
      // Custom objects come as plain JSON, whose list carries `continue` (not client-node's `_continue`).
      const plain = new ResilientInformer<k8s.V1ConfigMap>({
        kc: sandbox.kubeConfig(), path: '/api/v1/namespaces/default/configmaps', name: 'paged-plain', logger: silentLogger(),
        list: async (page) => {
          const r = await core.listNamespacedConfigMap({ namespace: 'default', ...page });
          return { items: r.items, metadata: { resourceVersion: r.metadata?.resourceVersion, continue: r.metadata?._continue } } as k8s.V1ConfigMapList;
        },
      });
      await plain.start();
      expect(plain.list('default').filter((c) => c.metadata?.name?.startsWith('page-'))).toHaveLength(total);
      await plain.stop();
      // The watch resumes from the snapshot the pages came from: a later change arrives.
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after-the-list' } } });
      await until(() => informer.get('after-the-list', 'default') !== undefined);
    } finally {
      await informer.stop();
      await sandbox.stop();
    }
  });

  test('stopped while its first list is read: start() resolves, and the list read is not applied', async () => {
    const sandbox = await startSandbox();
    const core = sandbox.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'listed-after-stop' } } });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked = false;
    const informer = new ResilientInformer<k8s.V1ConfigMap>({
      kc: sandbox.kubeConfig(), path: '/api/v1/namespaces/default/configmaps', name: 'stopped-early', logger: silentLogger(),
      list: async (page) => {
        asked = true;
        await held;
        return core.listNamespacedConfigMap({ namespace: 'default', ...page });
      },
    });
    try {
      let started = false;
      const starting = informer.start().then(() => {
        started = true;
      });
      await until(() => asked);
      await informer.stop();
      release();
      await starting;
      expect(started).toBe(true);
      expect(informer.synced).toBe(false);
      expect(informer.list('default')).toEqual([]);
    } finally {
      await informer.stop();
      await sandbox.stop();
    }
  });

  test('a relist is applied at once: between its pages the cache shows the state before it, never objects deleted meanwhile beside new ones', async () => {
    const sandbox = await startSandbox();
    const core = sandbox.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const kc = sandbox.kubeConfig();
    kc.loadFromOptions({ clusters: kc.clusters, contexts: kc.contexts, currentContext: kc.currentContext, users: kc.users.map((u) => ({ ...u, token: TOKEN })) });
    const own = kc.makeApiClient(k8s.CoreV1Api);
    const total = LIST_PAGE_SIZE * 2 + 7;
    for (let i = 0; i < total; i++) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `old-${String(i).padStart(4, '0')}` } } });
    const before = new Set(Array.from({ length: total }, (_, i) => `old-${String(i).padStart(4, '0')}`));
    // What the informer's cache held each time it asked for a page after the first, once synced.
    const midList: string[][] = [];
    let recording = false;
    const ours = (names: readonly string[]) => names.filter((n) => n.startsWith('old-') || n.startsWith('new-')).sort();
    const informer = new ResilientInformer<k8s.V1ConfigMap>({
      kc, path: '/api/v1/namespaces/default/configmaps', name: 'atomic', logger: silentLogger(), minBackoffMs: 100, maxBackoffMs: 500,
      list: (page) => {
        if (recording && page?._continue) midList.push(ours(informer.list('default').map((c) => c.metadata?.name ?? '')));
        return own.listNamespacedConfigMap({ namespace: 'default', ...page });
      },
    });
    try {
      await informer.start();
      recording = true;
      // Every watch of the informer fails (500: it resumes from its resourceVersion, no relist)
      // while 100 objects go and 100 others come; then watches are refused 410, and it relists.
      // The new names sort first, so the relist's first page holds them.
      sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'watch', resource: 'configmaps', token: TOKEN } });
      sandbox.faults.cutWatches();
      await until(() => sandbox.faults.injected > 0);
      for (let i = 0; i < 100; i++) {
        await core.deleteNamespacedConfigMap({ namespace: 'default', name: `old-${String(i).padStart(4, '0')}` });
        await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `new-${String(i).padStart(4, '0')}` } } });
      }
      expect(informer.get('new-0000', 'default')).toBeUndefined();
      sandbox.faults.set({ errorRate: 1, errorStatus: 410, match: { verb: 'watch', resource: 'configmaps', token: TOKEN } });
      const after = ours((await core.listNamespacedConfigMap({ namespace: 'default' })).items.map((c) => c.metadata?.name ?? ''));
      // The relist's two later pages asked for, and its result in the cache.
      await until(() => midList.length >= 2 && informer.get('new-0099', 'default') !== undefined);
      sandbox.faults.clear();
      // Between the pages of the relist the cache still showed the state before it, whole.
      expect(midList.filter((names) => JSON.stringify(names) !== JSON.stringify([...before].sort()))).toEqual([]);
      await until(() => JSON.stringify(ours(informer.list('default').map((c) => c.metadata?.name ?? ''))) === JSON.stringify(after));
    } finally {
      await informer.stop();
      await sandbox.stop();
    }
  });
});

describe('ResilientInformer tells how old a change is when it arrives', () => {
  test('observes now minus the latest managedFields time of each added or modified object, by informer', async () => {
    const writtenAgo = (seconds: number) => rfc3339(Date.now() - seconds * 1000);
    const configMap = (name: string, rv: string, times: string[]) => ({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name, namespace: 'default', resourceVersion: rv, managedFields: times.map((time, i) => ({ manager: `writer-${i}`, operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: {} })) },
    });
    // A real HTTP server speaking the list and watch protocol: the watch sends a change written
    // 90 s ago (its newest entry; an older writer's entry is 300 s old), then one written now, then a bookmark.
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (!req.url?.includes('watch=true')) {
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [] }));
        return;
      }
      for (const event of [
        { type: 'ADDED', object: configMap('late', '2', [writtenAgo(300), writtenAgo(90)]) },
        { type: 'MODIFIED', object: configMap('prompt', '3', [writtenAgo(0)]) },
        { type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '4' } } },
      ]) res.write(`${JSON.stringify(event)}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
    });
    const metrics = new MetricsRegistry();
    const informer = new ResilientInformer<k8s.V1ConfigMap>({
      kc, path: '/api/v1/configmaps', name: 'configmaps', logger: silentLogger(), metrics,
      list: () => kc.makeApiClient(k8s.CoreV1Api).listConfigMapForAllNamespaces(),
    });
    try {
      await informer.start();
      expect(await informer.waitForResourceVersion('4', 10_000)).toBe(true);
      const text = await metrics.render();
      const value = (series: string) => Number(new RegExp(`^roomkeeper_informer_change_age_seconds_${series} (\\S+)$`, 'm').exec(text)?.[1]);
      expect(value('count{informer="configmaps"}')).toBe(2);
      expect(value('bucket{le="2",informer="configmaps"}')).toBe(1);
      expect(value('bucket{le="60",informer="configmaps"}')).toBe(1);
      expect(value('bucket{le="120",informer="configmaps"}')).toBe(2);
      // The cache keeps no managedFields.
      expect(informer.get('late', 'default')?.metadata?.managedFields).toBeUndefined();
    } finally {
      await informer.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('ResilientInformer tells each change with what the cache held before', () => {
  test('an update comes with the object it replaced; an add and a delete without one', async () => {
    const sandbox = await startSandbox();
    const core = sandbox.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const told: string[] = [];
    const informer = new ResilientInformer<k8s.V1ConfigMap>({
      kc: sandbox.kubeConfig(), path: '/api/v1/configmaps', name: 'configmaps', logger: silentLogger(),
      list: () => core.listConfigMapForAllNamespaces(),
      onEvent: (type, cm, before) => told.push(`${type} ${cm.data?.v ?? '-'} before ${before?.data?.v ?? '-'}`),
    });
    try {
      await informer.start();
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm' }, data: { v: '1' } } });
      await core.replaceNamespacedConfigMap({ name: 'cm', namespace: 'default', body: { metadata: { name: 'cm' }, data: { v: '2' } } });
      await core.deleteNamespacedConfigMap({ name: 'cm', namespace: 'default' });
      await until(() => told.length >= 3);
      expect(told).toEqual(['add 1 before -', 'update 2 before 1', 'delete 2 before -']);
    } finally {
      await informer.stop();
      await sandbox.stop();
    }
  });
});
