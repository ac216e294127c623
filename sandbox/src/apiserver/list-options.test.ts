/**
 * The list options kube-apiserver v1.28 honours or refuses, as the sandbox answers them: a
 * resourceVersion the server has not reached, resourceVersionMatch and sendInitialEvents,
 * continue tokens, boolean and integer parameters. Compared with the real server by
 * test/real-apiserver/differential.test.ts; the answers here are what it answers.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { waitFor } from '../../../test/support/wait';
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';
import { openWatch } from './watch-reader.fixture';

const MAPS = '/api/v1/namespaces/opts/configmaps';

describe('list options', () => {
  let sandbox: Sandbox;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['opts', 'opts-b']) await core.createNamespace({ body: { metadata: { name } } });
    for (const name of ['c1', 'c2', 'c3']) await core.createNamespacedConfigMap({ namespace: 'opts', body: { metadata: { name } } });
    await core.createNamespacedConfigMap({ namespace: 'opts-b', body: { metadata: { name: 'c1' } } });
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  const token = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

  it('waits for a write that reaches the resourceVersion a list names, then lists it', async () => {
    const wanted = sandbox.store.resourceVersion + 1;
    const listing = request(sandbox.url, 'GET', `${MAPS}?resourceVersion=${wanted}`);
    await core.createNamespacedConfigMap({ namespace: 'opts', body: { metadata: { name: 'later' } } });
    const res = await listing;
    expect(res.status).toBe(200);
    expect(res.json!.items!.map((i) => i.metadata?.name)).toContain('later');
    await core.deleteNamespacedConfigMap({ name: 'later', namespace: 'opts' });
  });

  it('answers 504 Timeout with Retry-After when no write reaches it, as the watch cache does', async () => {
    const future = sandbox.store.resourceVersion + 1_000;
    const res = await request(sandbox.url, 'GET', `${MAPS}/c1?resourceVersion=${future}`);
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.json).toMatchObject({
      reason: 'Timeout', message: `Timeout: Too large resource version: ${future}, current: ${sandbox.store.resourceVersion}`,
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    });
  });

  it.each([
    ['a limit', 'limit=1', 500, undefined, 'etcdserver: mvcc: required revision is a future revision'],
    ['Exact', 'resourceVersionMatch=Exact', 500, undefined, 'etcdserver: mvcc: required revision is a future revision'],
    ['NotOlderThan and a limit', 'resourceVersionMatch=NotOlderThan&limit=1', 504, 'Timeout', 'Timeout: Too large resource version: FUTURE, current: CURRENT'],
  ])('refuses at once a future resourceVersion in a list read from etcd (%s)', async (_what, query, status, reason, message) => {
    const future = sandbox.store.resourceVersion + 1_000;
    const res = await request(sandbox.url, 'GET', `${MAPS}?resourceVersion=${future}&${query}`);
    expect(res.status).toBe(status);
    expect(res.json?.reason).toBe(reason);
    expect(res.json?.message).toBe(message.replace('FUTURE', String(future)).replace('CURRENT', String(sandbox.store.resourceVersion)));
  });

  const LIST_OPTIONS = 'ListOptions.meta.k8s.io "" is invalid: ';
  it.each([
    ['resourceVersionMatch=Exact', `${LIST_OPTIONS}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`],
    ['resourceVersionMatch=Bogus&resourceVersion=1', `${LIST_OPTIONS}resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`],
    ['resourceVersionMatch=Exact&resourceVersion=0', `${LIST_OPTIONS}resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`],
    ['resourceVersionMatch=Exact&resourceVersion=abc&continue=x', `${LIST_OPTIONS}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`],
    ['sendInitialEvents=false', `${LIST_OPTIONS}sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`],
    ['watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1', `${LIST_OPTIONS}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`],
    ['watch=true&sendInitialEvents=true', `${LIST_OPTIONS}[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled]`],
  ])('refuses %s with 422 Invalid ListOptions', async (query, message) => {
    const res = await request(sandbox.url, 'GET', `${MAPS}?${query}`);
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ reason: 'Invalid', message, details: { group: 'meta.k8s.io', kind: 'ListOptions' } });
    expect(res.json?.details).not.toHaveProperty('name');
  });

  it('reads a malformed selector or integer before resourceVersionMatch (400)', async () => {
    expect((await request(sandbox.url, 'GET', `${MAPS}?labelSelector=a%3D%3D%3Db&resourceVersionMatch=Exact`)).status).toBe(400);
    expect((await request(sandbox.url, 'GET', `${MAPS}?timeoutSeconds=abc`)).json?.message).toBe('strconv.ParseInt: parsing "abc": invalid syntax');
  });

  const INVALID_TOKEN = 'invalid continue token: continue key is not valid';
  it.each([
    ['not base64', '!!!', `${INVALID_TOKEN}: illegal base64 data at input byte 0`],
    ['padded', `${token({ v: 'meta.k8s.io/v1', rv: 5, start: 'c1\u0000' })}=`, `${INVALID_TOKEN}: illegal base64 data at input byte 64`],
    ['revision 0', token({ v: 'meta.k8s.io/v1', rv: 0, start: 'c1\u0000' }), `${INVALID_TOKEN}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`],
    ['no start key', token({ v: 'meta.k8s.io/v1', rv: 5, start: '' }), `${INVALID_TOKEN}: encoded start key empty (version meta.k8s.io/v1)`],
    ['another version', token({ v: 'x/v2', rv: 5, start: 'c1' }), `${INVALID_TOKEN}: server does not recognize this encoded version x/v2`],
    ['a key out of the list', token({ v: 'meta.k8s.io/v1', rv: 5, start: '../c1' }), `${INVALID_TOKEN}: ../c1`],
  ])('refuses a continue token that is %s with 400', async (_what, continueToken, message) => {
    const res = await request(sandbox.url, 'GET', `${MAPS}?limit=1&continue=${continueToken}`);
    expect(res.status).toBe(400);
    expect(res.json?.message).toBe(message);
  });

  it('refuses a resourceVersion beside a continue token, and a token from the future', async () => {
    const first = await request(sandbox.url, 'GET', `${MAPS}?limit=1`);
    const next = first.json!.metadata!.continue!;
    expect((await request(sandbox.url, 'GET', `${MAPS}?limit=1&continue=${next}&resourceVersion=1`)).json?.message).toBe('specifying resource version is not allowed when using continue');
    const future = await request(sandbox.url, 'GET', `${MAPS}?limit=1&continue=${token({ v: 'meta.k8s.io/v1', rv: sandbox.store.resourceVersion + 1_000, start: 'c1\u0000' })}`);
    expect(future.status).toBe(500);
  });

  it('expires a continue token whose revision is gone with 410 and a token that goes on at the latest revision', async () => {
    const first = await request(sandbox.url, 'GET', `${MAPS}?limit=1`);
    expect(first.json!.items!.map((i) => i.metadata?.name)).toEqual(['c1']);
    sandbox.faults.forceGone();
    const expired = await request(sandbox.url, 'GET', `${MAPS}?limit=1&continue=${first.json!.metadata!.continue!}`);
    expect(expired.status).toBe(410);
    expect(expired.json?.message).toMatch(/^The provided continue parameter is too old/);
    const rest = await request(sandbox.url, 'GET', `${MAPS}?continue=${expired.json!.metadata!.continue!}`);
    expect(rest.json!.items!.map((i) => i.metadata?.name)).toEqual(['c2', 'c3']);
    const tooOld = await request(sandbox.url, 'GET', `${MAPS}?limit=1&resourceVersion=${first.json!.metadata!.resourceVersion!}`);
    expect(tooOld.json).toMatchObject({ reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' });
  });

  it('lists across namespaces in the order of etcd keys (opts-b/c1 before opts/c1), page by page', async () => {
    const names: string[] = [];
    let next = '';
    do {
      const page = await request(sandbox.url, 'GET', `/api/v1/configmaps?limit=2${next ? `&continue=${next}` : ''}`);
      names.push(...page.json!.items!.map((i) => `${String(i.metadata?.namespace)}/${String(i.metadata?.name)}`));
      next = page.json!.metadata!.continue ?? '';
    } while (next);
    expect(names.filter((n) => n.startsWith('opts'))).toEqual(['opts-b/c1', 'opts/c1', 'opts/c2', 'opts/c3']);
  });

  it('ignores the limit of a list at resourceVersion 0, which kube-apiserver v1.28 reads from its watch cache unpaged', async () => {
    const res = await request(sandbox.url, 'GET', `${MAPS}?limit=1&resourceVersion=0`);
    expect(res.json!.items!.map((i) => i.metadata?.name)).toEqual(['c1', 'c2', 'c3']);
    expect(res.json!.metadata!.continue).toBeUndefined();
  });

  it('counts the remaining items of a page only when no selector filters them, as etcd counts keys', async () => {
    const plain = await request(sandbox.url, 'GET', `${MAPS}?limit=1`);
    expect((plain.json!.metadata as { remainingItemCount?: number }).remainingItemCount).toBe(2);
    const selected = await request(sandbox.url, 'GET', `${MAPS}?limit=1&labelSelector=a!%3Db`);
    expect(selected.json!.metadata!.continue).toBeTruthy();
    expect(selected.json!.metadata).not.toHaveProperty('remainingItemCount');
  });

  it.each([
    ['watch=abc&timeoutSeconds=-1', 'watch'],
    ['watch=&timeoutSeconds=-1', 'watch'],
    ['watch=FALSE', 'list'],
    ['watch=0', 'list'],
  ])('reads %s as kube-apiserver reads a boolean (only absent, 0 and false are false): a %s', async (query, what) => {
    const res = await request(sandbox.url, 'GET', `${MAPS}?${query}`);
    expect(res.status).toBe(200);
    expect(res.json?.kind === 'ConfigMapList' ? 'list' : 'watch').toBe(what);
  });

  it('holds back, in a watch from a resourceVersion not reached yet, every event up to it', async () => {
    const from = sandbox.store.resourceVersion + 2;
    const watch = openWatch(sandbox.url, `${MAPS}?watch=true&resourceVersion=${from}`);
    expect(await watch.status).toBe(200);
    for (const name of ['held-1', 'held-2', 'sent-3']) await core.createNamespacedConfigMap({ namespace: 'opts', body: { metadata: { name } } });
    await waitFor(() => watch.events.length > 0, { timeoutMs: 10_000, message: 'the first event past the resourceVersion' });
    watch.close();
    expect(watch.events.map((e) => e.object?.metadata?.name)).toEqual(['sent-3']);
    for (const name of ['held-1', 'held-2', 'sent-3']) await core.deleteNamespacedConfigMap({ name, namespace: 'opts' });
  });

  it('reads watch=true on an object\'s own path as a get, and watches one object only on the /watch/ path', async () => {
    const got = await request(sandbox.url, 'GET', `${MAPS}/c1?watch=true`);
    expect(got.json).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'c1' } });
    expect((await request(sandbox.url, 'GET', `${MAPS}/absent?watch=true`)).status).toBe(404);
    const watched = await request(sandbox.url, 'GET', `/api/v1/watch/namespaces/opts/configmaps/c1?timeoutSeconds=-1&resourceVersion=${sandbox.store.resourceVersion}`);
    expect(watched.status).toBe(200);
  });

  it('ends a watch with a negative timeout at once', async () => {
    const res = await request(sandbox.url, 'GET', `${MAPS}?watch=true&timeoutSeconds=-1&resourceVersion=${sandbox.store.resourceVersion}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });
});
