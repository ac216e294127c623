/**
 * Over HTTP: a PATCH cannot reach Object.prototype of the process the sandbox runs in (under
 * `npm start` the gateway and the operator share it).
 */
import { startSandbox, type Sandbox } from '../index';
import { request } from './http-request.fixture';

const CM = '/api/v1/namespaces/default/configmaps';

describe('PATCH and prototypes', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    expect((await request(sandbox.url, 'POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proto' }, data: { a: '1' } })).status).toBe(201);
  });
  afterAll(async () => {
    delete (Object.prototype as Record<string, unknown>).polluted;
    await sandbox.stop();
  });

  it.each([
    ['application/json-patch+json', '[{"op":"add","path":"/__proto__/polluted","value":"yes"}]'],
    ['application/json-patch+json', '[{"op":"add","path":"/metadata/__proto__/polluted","value":"yes"}]'],
    ['application/json-patch+json', '[{"op":"add","path":"/constructor/prototype/polluted","value":"yes"}]'],
    ['application/merge-patch+json', '{"__proto__":{"polluted":"yes"}}'],
    ['application/merge-patch+json', '{"metadata":{"__proto__":{"polluted":"yes"}}}'],
    ['application/strategic-merge-patch+json', '{"data":{"__proto__":{"polluted":"yes"}}}'],
  ])('answers 422 for %s %s and leaves Object.prototype alone', async (contentType, body) => {
    const res = await request(sandbox.url, 'PATCH', `${CM}/proto`, body, { 'Content-Type': contentType });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    expect((({}) as Record<string, unknown>).polluted).toBeUndefined();
    const after = await request(sandbox.url, 'GET', `${CM}/proto`);
    expect(after.json!.data).toEqual({ a: '1' });
  });
});
