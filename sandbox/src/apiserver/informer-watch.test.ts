import { CoreV1Api, makeInformer, PatchStrategy, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '../../../test/support/wait';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';
import { openWatch } from './watch-reader.fixture';

const CM_PATH = '/api/v1/namespaces/default/configmaps';
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function names(list: readonly { metadata?: { name?: string } }[]): string[] {
  return list.map((o) => o.metadata?.name ?? '').sort();
}

describe('informers and watches', () => {
  let sandbox: Sandbox;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox({ bookmarkIntervalMs: 50 });
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  it('lets a client-node informer see adds, updates and deletes', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-before', labels: { suite: 'inf' } } } });
    const informer = makeInformer<V1ConfigMap>(
      sandbox.kubeConfig(),
      CM_PATH,
      () => core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'suite=inf' }),
      'suite=inf',
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${String(o.metadata?.name)}`));
    informer.on('update', (o) => seen.push(`update:${String(o.metadata?.name)}:${o.data?.k ?? ''}`));
    informer.on('delete', (o) => seen.push(`delete:${String(o.metadata?.name)}`));
    await informer.start();
    try {
      await waitFor(() => seen.includes('add:inf-before'), { message: 'initial list' });
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-new', labels: { suite: 'inf' } } } });
      await waitFor(() => seen.includes('add:inf-new'), { message: 'watch add' });
      await core.patchNamespacedConfigMap({ name: 'inf-new', namespace: 'default', body: { data: { k: 'v' } } }, MERGE);
      await waitFor(() => seen.includes('update:inf-new:v'), { message: 'watch update' });
      await core.deleteNamespacedConfigMap({ name: 'inf-new', namespace: 'default' });
      await waitFor(() => seen.includes('delete:inf-new'), { message: 'watch delete' });
      expect(names(informer.list())).toEqual(['inf-before']);
    } finally {
      await informer.stop();
    }
  });

  it('relists after a forced 410 and ends with exactly the server state', async () => {
    for (const n of ['gone-a', 'gone-b', 'gone-c']) {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: n, labels: { suite: 'gone' } }, data: { v: '0' } } });
    }
    let lists = 0;
    const informer = makeInformer<V1ConfigMap>(sandbox.kubeConfig(), CM_PATH, () => {
      lists++;
      return core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'suite=gone' });
    }, 'suite=gone');
    const adds = new Map<string, number>();
    const deletes: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => adds.set(o.metadata!.name!, (adds.get(o.metadata!.name!) ?? 0) + 1));
    informer.on('delete', (o) => deletes.push(o.metadata!.name!));
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    try {
      await waitFor(() => informer.list().length === 3, { message: 'initial state' });
      // The watch fails (500) and the informer stops; meanwhile the world changes; then history is gone.
      sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'watch', resource: 'configmaps' } });
      sandbox.faults.forceGone();
      await waitFor(() => errors.length > 0, { message: 'informer saw the watch error' });
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'gone-d', labels: { suite: 'gone' } } } });
      await core.patchNamespacedConfigMap({ name: 'gone-a', namespace: 'default', body: { data: { v: '1' } } }, MERGE);
      await core.deleteNamespacedConfigMap({ name: 'gone-b', namespace: 'default' });
      sandbox.faults.forceGone();
      sandbox.faults.clear();
      await informer.start(); // what an operator's error handler does
      const server = async () => (await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'suite=gone' })).items;
      await waitFor(async () => {
        const expected = (await server()).map((o) => `${String(o.metadata!.name)}@${String(o.metadata!.resourceVersion)}`).sort();
        const cached = informer.list().map((o) => `${String(o.metadata!.name)}@${String(o.metadata!.resourceVersion)}`).sort();
        return JSON.stringify(expected) === JSON.stringify(cached);
      }, { message: 'informer cache equals server state' });
      expect(lists).toBeGreaterThanOrEqual(2);
      expect(names(informer.list())).toEqual(['gone-a', 'gone-c', 'gone-d']);
      expect(deletes).toEqual(['gone-b']);
      expect([...adds.values()].every((n) => n === 1)).toBe(true);
      expect(informer.get('gone-a', 'default')?.data?.v).toBe('1');
    } finally {
      await informer.stop();
    }
  });

  it('lets an informer recover from forceGone() by itself', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'self-a', labels: { suite: 'self' } } } });
    let lists = 0;
    const informer = makeInformer<V1ConfigMap>(sandbox.kubeConfig(), CM_PATH, () => {
      lists++;
      return core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'suite=self' });
    }, 'suite=self');
    await informer.start();
    try {
      await waitFor(() => informer.list().length === 1, { message: 'initial state' });
      sandbox.faults.forceGone();
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'self-b', labels: { suite: 'self' } } } });
      await core.deleteNamespacedConfigMap({ name: 'self-a', namespace: 'default' });
      await waitFor(() => names(informer.list()).join() === 'self-b', { timeoutMs: 15_000, message: 'informer caught up' });
      await waitFor(() => lists >= 2, { timeoutMs: 15_000, message: 'informer relisted' });
    } finally {
      await informer.stop();
    }
  });

  it('resumes a watch after a resourceVersion', async () => {
    const list = await request(sandbox.url, 'GET', CM_PATH);
    const rv = list.json!.metadata!.resourceVersion as string;
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'resume-1' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'resume-2' } } });
    const watch = openWatch(sandbox.url, `${CM_PATH}?watch=true&resourceVersion=${rv}`);
    try {
      await waitFor(() => watch.events.length >= 2, { message: 'replayed events' });
      expect(watch.events.slice(0, 2).map((e) => `${e.type}:${String(e.object!.metadata!.name)}`)).toEqual(['ADDED:resume-1', 'ADDED:resume-2']);
    } finally {
      watch.close();
    }
  });

  it('starts a watch without resourceVersion with the current state', async () => {
    await core.createNamespacedConfigMap({ namespace: 'kube-public', body: { metadata: { name: 'state-1' } } });
    const watch = openWatch(sandbox.url, '/api/v1/namespaces/kube-public/configmaps?watch=1');
    try {
      await waitFor(() => watch.events.some((e) => e.object!.metadata!.name === 'state-1'), { message: 'synthetic ADDED' });
      expect(watch.events[0]!.type).toBe('ADDED');
    } finally {
      watch.close();
    }
  });

  it('sends bookmarks when asked', async () => {
    const watch = openWatch(sandbox.url, `${CM_PATH}?watch=true&allowWatchBookmarks=true&resourceVersion=${sandbox.store.resourceVersion}`);
    try {
      const bookmark = await waitFor(() => watch.events.find((e) => e.type === 'BOOKMARK'), { message: 'bookmark' });
      expect(bookmark.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
      expect(Number(bookmark.object!.metadata!.resourceVersion)).toBeGreaterThan(0);
    } finally {
      watch.close();
    }
  });

  it('turns objects that stop matching a label selector into DELETED events', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'sel-1', labels: { tier: 'a' } } } });
    const watch = openWatch(sandbox.url, `${CM_PATH}?watch=true&labelSelector=tier%3Da&resourceVersion=${sandbox.store.resourceVersion}`);
    try {
      await watch.status;
      await core.patchNamespacedConfigMap({ name: 'sel-1', namespace: 'default', body: { metadata: { labels: { tier: 'b' } } } }, MERGE);
      await core.patchNamespacedConfigMap({ name: 'sel-1', namespace: 'default', body: { metadata: { labels: { tier: 'a' } } } }, MERGE);
      await waitFor(() => watch.events.length >= 2, { message: 'two events' });
      expect(watch.events.map((e) => e.type)).toEqual(['DELETED', 'ADDED']);
    } finally {
      watch.close();
    }
  });

  it('ends watches after timeoutSeconds', async () => {
    const watch = openWatch(sandbox.url, `${CM_PATH}?watch=true&timeoutSeconds=1&resourceVersion=${sandbox.store.resourceVersion}`);
    await watch.ended;
    expect(await watch.status).toBe(200);
  });

  it('cuts watches after N events when the fault is set', async () => {
    sandbox.faults.set({ cutWatchAfterEvents: 2 });
    const watch = openWatch(sandbox.url, `${CM_PATH}?watch=true&resourceVersion=${sandbox.store.resourceVersion}`);
    await watch.status;
    sandbox.faults.clear();
    for (const n of ['cut-1', 'cut-2', 'cut-3']) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: n } } });
    await watch.ended;
    expect(watch.events.map((e) => e.object!.metadata!.name)).toEqual(['cut-1', 'cut-2']);
  });
});

describe('watch window', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ watchWindow: 3 });
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  it('answers a resume from a resourceVersion older than the window with 410 Expired', async () => {
    const start = (await request(sandbox.url, 'GET', CM_PATH)).json!.metadata!.resourceVersion as string;
    for (let i = 0; i < 6; i++) await request(sandbox.url, 'POST', CM_PATH, { metadata: { name: `w-${i}` } });
    const watch = openWatch(sandbox.url, `${CM_PATH}?watch=true&resourceVersion=${start}`);
    await watch.ended;
    expect(watch.events).toHaveLength(1);
    expect(watch.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(watch.events[0]!.object!.message).toMatch(/^too old resource version: /);
  });

  it('expires continue tokens older than the window', async () => {
    const page = await request(sandbox.url, 'GET', `${CM_PATH}?limit=2`);
    expect(page.json!.metadata!.continue).toBeTruthy();
    for (let i = 10; i < 16; i++) await request(sandbox.url, 'POST', CM_PATH, { metadata: { name: `w-${i}` } });
    const next = await request(sandbox.url, 'GET', `${CM_PATH}?limit=2&continue=${encodeURIComponent(page.json!.metadata!.continue!)}`);
    expect(next.status).toBe(410);
    expect(next.json).toMatchObject({ reason: 'Expired', code: 410 });
  });
});
