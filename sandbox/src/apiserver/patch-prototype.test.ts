/**
 * Over HTTP: a field named `__proto__`, `constructor` or `prototype` is an ordinary field, as on
 * kube-apiserver (test/real-apiserver/differential.test.ts compares the two), and no PATCH reaches
 * Object.prototype of the process the sandbox runs in (under `npm start` the gateway and the
 * operator share it).
 */
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';

const CM = '/api/v1/namespaces/default/configmaps';

describe('PATCH and prototypes', () => {
  let sandbox: Sandbox;
  let n = 0;
  /** A fresh ConfigMap holding `{a: '1'}`; its path. */
  const configMap = async (): Promise<string> => {
    const name = `proto-${n++}`;
    expect((await request(sandbox.url, 'POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } })).status).toBe(201);
    return `${CM}/${name}`;
  };
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    delete (Object.prototype as Record<string, unknown>).polluted;
    await sandbox.stop();
  });
  afterEach(() => {
    expect((({}) as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['application/merge-patch+json', '{"data":{"__proto__":"x","constructor":"y","prototype":"z"}}'],
    ['application/strategic-merge-patch+json', '{"data":{"__proto__":"x","constructor":"y","prototype":"z"}}'],
    ['application/json-patch+json', '[{"op":"add","path":"/data/__proto__","value":"x"},{"op":"add","path":"/data/constructor","value":"y"},{"op":"add","path":"/data/prototype","value":"z"}]'],
  ])('%s stores __proto__, constructor and prototype as ordinary keys, returns and keeps them', async (contentType, body) => {
    const path = await configMap();
    const res = await request(sandbox.url, 'PATCH', path, body, { 'Content-Type': contentType });
    expect(res.status).toBe(200);
    // Entries, not an object literal: `{ __proto__: 'x' }` in source would not make a member.
    const entries = (text: string) => Object.entries((JSON.parse(text) as { data: Record<string, string> }).data).sort();
    const expected = [['__proto__', 'x'], ['a', '1'], ['constructor', 'y'], ['prototype', 'z']];
    expect(entries(res.text)).toEqual(expected);
    expect(entries((await request(sandbox.url, 'GET', path)).text)).toEqual(expected);
  });

  it('a merge patch replaces and removes a stored __proto__ key like any other', async () => {
    const path = await configMap();
    const patch = (body: string) => request(sandbox.url, 'PATCH', path, body, { 'Content-Type': 'application/merge-patch+json' });
    expect((await patch('{"data":{"__proto__":"x"}}')).status).toBe(200);
    expect((await patch('{"data":{"__proto__":"w"}}')).text).toContain('"__proto__":"w"');
    const removed = await patch('{"data":{"__proto__":null}}');
    expect(removed.status).toBe(200);
    expect(removed.json!.data).toEqual({ a: '1' });
  });

  it.each([
    ['application/merge-patch+json', '{"__proto__":{"polluted":"yes"}}'],
    ['application/merge-patch+json', '{"metadata":{"__proto__":{"polluted":"yes"}}}'],
    ['application/strategic-merge-patch+json', '{"__proto__":{"polluted":"yes"}}'],
    ['application/strategic-merge-patch+json', '{"metadata":{"__proto__":{"polluted":"yes"}}}'],
  ])('%s %s reaches no prototype: a ConfigMap has no such field, so it is dropped, as kube-apiserver drops it', async (contentType, body) => {
    const path = await configMap();
    const res = await request(sandbox.url, 'PATCH', path, body, { 'Content-Type': contentType });
    expect(res.status).toBe(200);
    const after = await request(sandbox.url, 'GET', path);
    expect(after.text).not.toContain('polluted');
    expect(after.json!.data).toEqual({ a: '1' });
  });

  it.each([
    '[{"op":"add","path":"/__proto__/polluted","value":"yes"}]',
    '[{"op":"add","path":"/metadata/__proto__/polluted","value":"yes"}]',
    '[{"op":"add","path":"/constructor/prototype/polluted","value":"yes"}]',
  ])('a JSON patch walking into a prototype (%s) names a missing path: 422, as kube-apiserver answers', async (body) => {
    const path = await configMap();
    const res = await request(sandbox.url, 'PATCH', path, body, { 'Content-Type': 'application/json-patch+json' });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    expect((await request(sandbox.url, 'GET', path)).json!.data).toEqual({ a: '1' });
  });
});
