import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { CoreV1Api, HttpMethod, KubeConfig, RequestContext, Watch } from '@kubernetes/client-node';
import { waitFor } from '../../../test/support/wait';
import { request, type Dispatcher } from 'undici';
import { isRetiredPoolFailure, withSharedDispatcher } from './shared-dispatcher';

function insecureKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:6443', skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function dispatcherOf(kc: KubeConfig): Promise<unknown> {
  const ctx = new RequestContext('http://127.0.0.1:6443/api/v1/pods', HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  return ctx.getDispatcher();
}

describe('withSharedDispatcher', () => {
  it('hands every request the same dispatcher, where client-node makes one per request', async () => {
    const kc = insecureKubeConfig();
    const a = await dispatcherOf(kc);
    const b = await dispatcherOf(kc);
    expect(a).toBeDefined();
    expect(a).not.toBe(b);

    const shared = withSharedDispatcher(kc);
    const c = await dispatcherOf(shared.kubeConfig);
    const d = await dispatcherOf(shared.kubeConfig);
    expect(c).toBeDefined();
    expect(c).toBe(d);
    expect(await dispatcherOf(kc)).not.toBe(c);
    await shared.close();
  });

  it('keeps the authentication of the original', async () => {
    const shared = withSharedDispatcher(insecureKubeConfig());
    const ctx = new RequestContext('http://127.0.0.1:6443/api', HttpMethod.GET);
    await shared.kubeConfig.applySecurityAuthentication(ctx);
    expect(ctx.getHeaders().Authorization).toBe('Bearer t');
    expect(shared.kubeConfig.getCurrentCluster()?.server).toBe('http://127.0.0.1:6443');
    await shared.close();
  });

  it('reads the CA file once, and again after the pool is replaced', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-ca-'));
    const caFile = path.join(dir, 'ca.crt');
    fs.writeFileSync(caFile, 'not a certificate: no connection is made here');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caFile }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const shared = withSharedDispatcher(kc);
    const first = await dispatcherOf(shared.kubeConfig);
    expect(first).toBeDefined();
    fs.rmSync(dir, { recursive: true });
    // client-node reads the file on every request: without it, the original fails.
    await expect(dispatcherOf(kc)).rejects.toThrow(/ENOENT/);
    const ctx = new RequestContext('https://127.0.0.1:6443/api', HttpMethod.GET);
    await shared.kubeConfig.applySecurityAuthentication(ctx);
    expect([ctx.getDispatcher(), ctx.getHeaders().Authorization]).toEqual([first, 'Bearer t']);
    // A transport failure replaces the pool after a quiet second: the files are read again.
    shared.transportFailed();
    await waitFor(async () => dispatcherOf(shared.kubeConfig).then(() => false, (e: unknown) => /ENOENT/.test(String(e))), { timeoutMs: 10_000 });
    await shared.close();
  });
});

describe('withSharedDispatcher when its pool is replaced', () => {
  it('lets a request in flight on the old pool finish, and sends a request handed the pool before on the fresh one', async () => {
    // Each answer says which connection carried it; '/held' is answered when the test says so.
    const sockets: Socket[] = [];
    let answerHeld: (() => void) | undefined;
    const server = http.createServer((req, res) => {
      const connection = String(sockets.indexOf(req.socket));
      if (req.url === '/held') answerHeld = () => res.end(connection);
      else res.end(connection);
    });
    server.on('connection', (socket: Socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const shared = withSharedDispatcher(kc);
    const ask = async (dispatcher: Dispatcher, pathname: string) => (await request(`${url}${pathname}`, { dispatcher })).body.text();
    try {
      const ctx = new RequestContext(`${url}/api`, HttpMethod.GET);
      await shared.kubeConfig.applySecurityAuthentication(ctx);
      const handed = ctx.getDispatcher() as unknown as Dispatcher;
      const held = ask(handed, '/held');
      await waitFor(() => answerHeld !== undefined, { timeoutMs: 10_000, message: 'the held request reached the server' });
      shared.transportFailed();
      await waitFor(() => shared.replacements() === 1, { timeoutMs: 10_000, message: 'the pool was replaced' });
      // Sent after the replacement with the dispatcher handed before: a connection of the fresh pool.
      expect(await ask(handed, '/now')).toBe('1');
      answerHeld?.();
      expect(await held).toBe('0');
      // The old pool is closed once its request is answered: its connection ends.
      await waitFor(() => sockets[0]?.closed === true, { timeoutMs: 10_000, message: 'the old pool closed its connection' });
      expect(sockets[1]?.closed).toBe(false);
    } finally {
      await shared.close();
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });

  it('tells the failures of a destroyed pool from the failures of a connection', () => {
    expect(isRetiredPoolFailure('UND_ERR_DESTROYED')).toBe(true);
    expect(isRetiredPoolFailure('ECONNRESET')).toBe(false);
    expect(isRetiredPoolFailure('UND_ERR_SOCKET')).toBe(false);
    expect(isRetiredPoolFailure(undefined)).toBe(false);
  });
});

/**
 * A throwaway key and certificate for 127.0.0.1 (P-256, valid to 2126), made for this test only:
 * the server below needs TLS to offer HTTP/2, as kube-apiserver does.
 */
const TEST_ONLY_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwRAoXNJlB5YdjoX0
FK14pdjB+u8R/AtTVfaV1cwFDCyhRANCAAQUlr1xcWHiz+c4onvPy7mgGKLlNY0R
mI3ueIWxQnHJVeVR5aTqMAb+9JeP+jSJ0muLVJ2mID/otS2RmeOL/1OU
-----END PRIVATE KEY-----`;
const TEST_ONLY_CERT = `-----BEGIN CERTIFICATE-----
MIIBjzCCATagAwIBAgIUVgsOR+ToeMm+LwGTEN8kUvm5BtAwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEzMDA1NDU1OFoYDzIxMjYxMTA2
MDU0NTU4WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQUlr1xcWHiz+c4onvPy7mgGKLlNY0RmI3ueIWxQnHJVeVR5aTqMAb+
9JeP+jSJ0muLVJ2mID/otS2RmeOL/1OUo2QwYjAdBgNVHQ4EFgQUCxXcpJcUsvIy
ISCHcoAu166GlGswHwYDVR0jBBgwFoAUCxXcpJcUsvIyISCHcoAu166GlGswDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0cAMEQC
IF0pcwj9LLmNCSEucmLZTLTFbU9FVPpqwBVD4DRMMy4VAiBrVurGkoDqu9uNhA9H
fe9IPAeK9Od1JBaC90ZpcmlpCg==
-----END CERTIFICATE-----`;

describe('withSharedDispatcher over TLS', () => {
  it('sends requests over the HTTP/2 the server offers, and each watch over HTTP/1.1, on a connection of its own', async () => {
    const versions: string[] = [];
    const server = http2.createSecureServer({ key: TEST_ONLY_KEY, cert: TEST_ONLY_CERT, allowHTTP1: true }, (req, res) => {
      versions.push(`${req.httpVersion} ${req.url.includes('watch=true') ? 'watch' : 'list'}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: { resourceVersion: '1' }, items: [] }));
    });
    // client-node's own pools (one per request) keep their connections open: closed here at the end.
    const sockets = new Set<TLSSocket>();
    server.on('secureConnection', (socket: TLSSocket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caData: Buffer.from(TEST_ONLY_CERT).toString('base64') }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const shared = withSharedDispatcher(kc);
    try {
      const watchOnce = (config: KubeConfig) => new Promise<void>((resolve, reject) => {
        new Watch(config).watch('/api/v1/namespaces', {}, () => undefined, () => resolve()).catch(reject);
      });
      // client-node as it comes takes the HTTP/2 the server offers, for watches too.
      await kc.makeApiClient(CoreV1Api).listNamespace();
      await watchOnce(kc);
      expect(versions).toEqual(['2.0 list', '2.0 watch']);
      versions.length = 0;
      await shared.kubeConfig.makeApiClient(CoreV1Api).listNamespace();
      await watchOnce(shared.kubeConfig);
      await shared.kubeConfig.makeApiClient(CoreV1Api).listNamespace();
      expect(versions).toEqual(['2.0 list', '1.1 watch', '2.0 list']);
    } finally {
      await shared.close();
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });
});
