import * as k8s from '@kubernetes/client-node';
import * as http from 'node:http';
import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { listenLocally } from '../../../test/support/local-server';
import { waitFor } from '../../../test/support/wait';
import { ApiWaits, countApiWaits } from '../runtime/api-waits';
import { apiErrorFields, describeApiError, isApiUnavailable, makeKubeClients, roomkeeperUserAgent, socketErrorCode } from './clients';

/** What client-node throws for a Kubernetes `Status` answer: the body as a string. */
function statusError(code: number, reason: string, message: string): k8s.ApiException<string> {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
  return new k8s.ApiException(code, 'Unknown API Status Code!', body, { 'content-type': 'application/json' });
}

describe('API errors in logs', () => {
  test.each([
    ['a Status answer gives status code, reason and message as fields',
      statusError(409, 'Conflict', 'Operation.roomkeeper.io "op-1" is invalid: the object has been modified'),
      { statusCode: 409, reason: 'Conflict', error: 'Operation.roomkeeper.io "op-1" is invalid: the object has been modified' }],
    ['a body that is not JSON: the body, not the client\'s dump',
      new k8s.ApiException(502, 'Unknown API Status Code!', 'Bad Gateway', {}),
      { statusCode: 502, error: 'Bad Gateway' }],
    ['no body: the client\'s message line',
      new k8s.ApiException(401, 'Unauthorized', undefined, {}),
      { statusCode: 401, error: 'Unauthorized' }],
    ['a transport failure: its message only', new TypeError('fetch failed'), { error: 'fetch failed' }],
    ['not an error at all', 'boom', { error: 'boom' }],
  ])('%s', (_name, err, expected) => {
    expect(apiErrorFields(err)).toEqual(expected);
  });

  test('no field carries escaped JSON or headers', () => {
    const fields = apiErrorFields(statusError(403, 'Forbidden', 'gamerooms is forbidden'));
    expect(JSON.stringify(fields)).not.toMatch(/\\"|HTTP-Code|Headers|content-type/);
  });

  test('describeApiError is the same facts on one line', () => {
    expect(describeApiError(statusError(404, 'NotFound', 'gamerooms "x" not found'))).toBe('404 gamerooms "x" not found');
    expect(describeApiError(new Error('socket hang up'))).toBe('socket hang up');
  });
});

describe('the clients\' rate limits', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ crdDirs: ['crds'] });
  });
  afterAll(async () => {
    await (sandbox as Sandbox | undefined)?.stop();
  });

  test('an Event is written while the work waits for the one shared bucket: Events have their own', async () => {
    const clients = makeKubeClients(sandbox.kubeConfig(), { qps: 0.5, burst: 1 });
    try {
      await clients.core.createNamespace({ body: { metadata: { name: 'limits' } } });
      const order: string[] = [];
      // The bucket is empty: this read waits about two seconds for its token.
      const work = clients.core.readNamespace({ name: 'limits' }).then(() => order.push('work'));
      const event = clients.events.createNamespacedEvent({
        namespace: 'limits',
        body: { metadata: { generateName: 'limits-' }, eventTime: new k8s.V1MicroTime(), reportingController: 'roomkeeper.io/test', reportingInstance: 'test', action: 'Test', reason: 'Test', type: 'Normal', regarding: { kind: 'Namespace', name: 'limits', apiVersion: 'v1' } },
      }).then(() => order.push('event'));
      await Promise.all([work, event]);
      expect(order).toEqual(['event', 'work']);
    } finally {
      await clients.close();
    }
  });
});

describe('who the API server sees', () => {
  test('every request, Event and watch carries the component\'s User-Agent', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method ?? ''} ${(req.url ?? '').split('?')[0] ?? ''} ${req.headers['user-agent'] ?? '(none)'}`);
      res.setHeader('content-type', 'application/json');
      if ((req.url ?? '').includes('watch=true')) {
        res.end();
        return;
      }
      res.end(req.method === 'GET' ? JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] }) : JSON.stringify({ metadata: { name: 'e' } }));
    });
    const local = await listenLocally(server);
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: local.url, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
    });
    const ua = roomkeeperUserAgent('operator');
    expect(ua).toMatch(/^roomkeeper-operator\/\d+\.\d+\.\d+ \(\w+\/\w+\) node\/v\d+/);
    const clients = makeKubeClients(kc, { qps: 100, burst: 100 }, { userAgent: ua });
    try {
      await clients.core.listNamespace();
      await clients.events.createNamespacedEvent({ namespace: 'n', body: { eventTime: new k8s.V1MicroTime(), metadata: { name: 'e' } } });
      await new Promise<void>((resolve, reject) => {
        void new k8s.Watch(clients.kc).watch('/api/v1/pods', {}, () => undefined, () => resolve()).catch(reject);
      });
      expect(seen).toEqual([`GET /api/v1/namespaces ${ua}`, `POST /apis/events.k8s.io/v1/namespaces/n/events ${ua}`, `GET /api/v1/pods ${ua}`]);
    } finally {
      await clients.close();
      await local.close();
    }
  });
});

describe('requests that get no whole answer', () => {
  function kubeConfigFor(server: string): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    return kc;
  }

  test('a refused connection and an answer cut off mid-body fail as the API being unavailable, with the socket\'s code and a message that says so', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"kind":"NamespaceList","items":[');
      setImmediate(() => res.destroy());
    });
    const local = await listenLocally(server);
    const cut = makeKubeClients(kubeConfigFor(local.url), { qps: 100, burst: 100 });
    const refused = makeKubeClients(kubeConfigFor('http://127.0.0.1:1'), { qps: 100, burst: 100 });
    try {
      const midBody = await cut.core.listNamespace().then(() => undefined, (err: unknown) => err);
      expect(midBody).toMatchObject({ name: 'KubeTransportError', message: expect.stringMatching(/^no answer from the Kubernetes API server: /) as unknown });
      expect(isApiUnavailable(midBody)).toBe(true);
      const noServer = await refused.core.listNamespace().then(() => undefined, (err: unknown) => err);
      expect(noServer).toMatchObject({ name: 'KubeTransportError', message: 'no answer from the Kubernetes API server: connect ECONNREFUSED 127.0.0.1:1' });
      expect(socketErrorCode(noServer)).toBe('ECONNREFUSED');
      expect(isApiUnavailable(noServer)).toBe(true);
      expect(apiErrorFields(noServer)).toEqual({ error: 'no answer from the Kubernetes API server: connect ECONNREFUSED 127.0.0.1:1' });
    } finally {
      await cut.close();
      await refused.close();
      await local.close();
    }
  });

  test('a request that outlived its timeout is the API being unavailable, not an answer: a DOMException\'s legacy code (23) is no HTTP status', () => {
    // What undici rejects with when a request's AbortSignal.timeout fires (the server went away mid-request).
    const timedOut = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(timedOut.code).toBe(23);
    expect(isApiUnavailable(timedOut)).toBe(true);
    expect(apiErrorFields(timedOut)).toEqual({ error: 'The operation was aborted due to timeout' });
    // A caller's own cancel is not an outage.
    const canceled = new DOMException('This operation was aborted', 'AbortError');
    expect(isApiUnavailable(canceled)).toBe(false);
    expect(apiErrorFields(canceled)).toEqual({ error: 'This operation was aborted' });
  });

  test('an answer with headers that repeat reaches client-node joined, and a JSON body is read as client-node reads it', async () => {
    const server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('warning', ['299 - "first"', '299 - "second"']);
      res.end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'n1' } }] }));
    });
    const local = await listenLocally(server);
    const clients = makeKubeClients(kubeConfigFor(local.url), { qps: 100, burst: 100 });
    try {
      const answer = await clients.core.listNamespaceWithHttpInfo();
      expect(answer.httpStatusCode).toBe(200);
      expect(answer.headers.warning).toBe('299 - "first", 299 - "second"');
      expect(answer.data.items.map((n) => n.metadata?.name)).toEqual(['n1']);
      expect(answer.data.metadata?.resourceVersion).toBe('7');
    } finally {
      await clients.close();
      await local.close();
    }
  });
});

describe('the time a reconcile waits on the Kubernetes API', () => {
  test('counts while a request it sent waits for its answer, through client-node, and not after', async () => {
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => { held.push(res); });
    const local = await listenLocally(server);
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: local.url, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
    });
    const clients = makeKubeClients(kc, { qps: 100, burst: 100 });
    let now = 0;
    const waits = new ApiWaits(() => now);
    try {
      const reconcile = countApiWaits(waits, async () => {
        await clients.core.listNamespace();
        now += 5_000; // work of its own, after the answer: not a wait on the API
      });
      await waitFor(() => held.length === 1);
      now += 40_000;
      expect(waits.waitedMs()).toBe(40_000);
      held[0]?.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] }));
      await reconcile;
      expect(waits.waitedMs()).toBe(40_000);
      // A request sent outside any counted work counts nowhere.
      const outside = clients.core.listNamespace();
      await waitFor(() => held.length === 2);
      now += 1_000;
      expect(waits.waitedMs()).toBe(40_000);
      held[1]?.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] }));
      await outside;
    } finally {
      await clients.close();
      await local.close();
    }
  });
});
