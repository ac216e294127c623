import { CoreV1Api } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';

const PODS = '/api/v1/namespaces/sel/pods';

describe('lists: selectors and paging', () => {
  let sandbox: Sandbox;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'sel' } } });
    const pods: [string, Record<string, string>, string | undefined][] = [
      ['p-a', { app: 'web', tier: 'front' }, 'node-1'],
      ['p-b', { app: 'web', tier: 'back' }, 'node-2'],
      ['p-c', { app: 'db' }, undefined],
      ['p-d', {}, 'node-1'],
    ];
    for (const [name, labels, nodeName] of pods) {
      await core.createNamespacedPod({ namespace: 'sel', body: { metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'i:1' }], nodeName } } });
    }
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  async function namesFor(query: string): Promise<string[]> {
    const res = await request(sandbox.url, 'GET', `${PODS}?${query}`);
    expect(res.status).toBe(200);
    return (res.json!.items as { metadata: { name: string } }[]).map((p) => p.metadata.name);
  }

  it.each([
    ['labelSelector=app%3Dweb', ['p-a', 'p-b']],
    ['labelSelector=app%3D%3Dweb', ['p-a', 'p-b']],
    ['labelSelector=app!%3Dweb', ['p-c', 'p-d']],
    ['labelSelector=tier%20in%20(front,side)', ['p-a']],
    ['labelSelector=app%20notin%20(web)', ['p-c', 'p-d']],
    ['labelSelector=tier', ['p-a', 'p-b']],
    ['labelSelector=!tier', ['p-c', 'p-d']],
    ['labelSelector=app%3Dweb,tier%3Dback', ['p-b']],
    ['fieldSelector=metadata.name%3Dp-c', ['p-c']],
    ['fieldSelector=spec.nodeName%3Dnode-1', ['p-a', 'p-d']],
    ['fieldSelector=spec.nodeName!%3Dnode-1', ['p-b', 'p-c']],
    ['fieldSelector=spec.nodeName%3D', ['p-c']],
    ['fieldSelector=status.phase%3DPending', ['p-a', 'p-b', 'p-c', 'p-d']],
    ['fieldSelector=metadata.namespace%3Dsel,metadata.name!%3Dp-a', ['p-b', 'p-c', 'p-d']],
  ])('%s', async (query, expected) => {
    expect(await namesFor(query)).toEqual(expected);
  });

  it('filters client-node lists by label and field selectors together', async () => {
    const pods = await core.listNamespacedPod({ namespace: 'sel', labelSelector: 'app in (web,db)', fieldSelector: 'spec.nodeName!=node-2' });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['p-a', 'p-c']);
  });

  it('refuses field labels the resource does not support, as the real server does', async () => {
    const res = await request(sandbox.url, 'GET', `${PODS}?fieldSelector=spec.containers%3Dx`);
    expect(res.status).toBe(400);
    expect(res.json!.message).toBe('field label not supported: spec.containers');
    const watch = await request(sandbox.url, 'GET', `${PODS}?watch=true&fieldSelector=status.foo%3Dx`);
    expect(watch.status).toBe(400);
  });

  it('rejects a malformed label selector with 400', async () => {
    const res = await request(sandbox.url, 'GET', `${PODS}?labelSelector=${encodeURIComponent('a in b')}`);
    expect(res.status).toBe(400);
  });

  const PARSE_UINT = (v: string) => `resourceVersion: Invalid value: ${JSON.stringify(v)}: strconv.ParseUint: parsing ${JSON.stringify(v)}: invalid syntax`;
  // As kube-apiserver v1.28 answers them (test/real-apiserver/differential.test.ts compares the two).
  it.each([
    ['a list', `${PODS}?resourceVersion=abc`, 500, undefined, PARSE_UINT('abc')],
    ['a list of every namespace', '/api/v1/pods?resourceVersion=-1', 500, undefined, PARSE_UINT('-1')],
    ['a get', `${PODS}/p-a?resourceVersion=abc`, 500, undefined, PARSE_UINT('abc')],
    ['a watch', `${PODS}?watch=true&resourceVersion=abc`, 500, undefined, PARSE_UINT('abc')],
    ['a list with a limit (read from etcd)', `${PODS}?limit=2&resourceVersion=abc`, 400, 'BadRequest', `invalid resource version: ${PARSE_UINT('abc')}`],
    ['a list with resourceVersionMatch=Exact', `${PODS}?resourceVersionMatch=Exact&resourceVersion=1x`, 400, 'BadRequest', `invalid resource version: ${PARSE_UINT('1x')}`],
    ['a limit that is not an integer', `${PODS}?limit=1.5`, 400, 'BadRequest', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
    ['an empty limit', `${PODS}?limit=`, 400, 'BadRequest', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['a watch timeout that is not an integer', `${PODS}?watch=true&timeoutSeconds=abc`, 400, 'BadRequest', 'strconv.ParseInt: parsing "abc": invalid syntax'],
  ])('refuses %s whose resourceVersion or integer parameter kube-apiserver cannot parse, with its status and message', async (_what, path, status, reason, message) => {
    const res = await request(sandbox.url, 'GET', path);
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, ...(reason ? { reason } : {}), code: status });
  });

  it('reads a limit of 0 or below as no limit, and resourceVersion 0 or empty as any', async () => {
    expect(await namesFor('limit=-1')).toHaveLength(4);
    expect(await namesFor('limit=0&resourceVersion=0')).toHaveLength(4);
    expect(await namesFor('resourceVersion=')).toHaveLength(4);
  });

  it('pages with limit and continue', async () => {
    const first = await core.listNamespacedPod({ namespace: 'sel', limit: 3 });
    expect(first.items.map((p) => p.metadata?.name)).toEqual(['p-a', 'p-b', 'p-c']);
    expect(first.metadata?.remainingItemCount).toBe(1);
    const token = first.metadata?._continue;
    expect(token).toBeTruthy();
    const second = await core.listNamespacedPod({ namespace: 'sel', limit: 3, _continue: token });
    expect(second.items.map((p) => p.metadata?.name)).toEqual(['p-d']);
    expect(second.metadata?._continue).toBeFalsy();
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });

  it('lists across namespaces with the list resourceVersion', async () => {
    const all = await core.listPodForAllNamespaces();
    expect(all.items).toHaveLength(4);
    expect(Number(all.metadata?.resourceVersion)).toBe(sandbox.store.resourceVersion);
  });
});
