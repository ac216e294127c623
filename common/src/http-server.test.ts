/** The HTTP servers' limits (the gateway's APIs, every process's operations port), over real sockets (limits shrunk so the test runs quickly). */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import type * as http from 'node:http';
import { createHttpServer, listenerConnections, openFilesLimit, type HttpServerLimits, type HttpServerOptions } from './http-server';
import { MetricsRegistry } from './metrics';
import { startOpsServer } from './ops-server';

const LIMITS: HttpServerLimits = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, maxConnections: 0 };

async function serve(limits: Partial<HttpServerLimits>, options: HttpServerOptions = {}): Promise<{ server: http.Server; port: number }> {
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  }, { ...LIMITS, ...limits }, options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Connects, writes `data`, and resolves with everything the server sent once it closed. */
function exchange(port: number, data: string): { socket: net.Socket; closed: Promise<string> } {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(data);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))));
  socket.on('error', () => undefined);
  return { socket, closed };
}

describe('createHttpServer', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('answers 408 and closes a connection whose headers never end, saying so in JSON', async () => {
    const s = await serve({});
    server = s.server;
    const { closed } = exchange(s.port, 'PUT /scheduler/s/rooms/r/ping HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ code: 4, message: 'the request did not arrive in time (its headers within 0.3 s, the whole request within 0.6 s); send it again', details: [] });
  });

  it('answers 408 and closes a connection whose body never ends', async () => {
    const s = await serve({});
    server = s.server;
    const { closed } = exchange(s.port, 'PUT /scheduler/s/rooms/r/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sta');
    expect(await closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers a request Node cannot parse 400 with a JSON body naming the parser\'s error, and closes', async () => {
    const s = await serve({});
    server = s.server;
    const { closed } = exchange(s.port, 'GET /a b c\r\n\r\n');
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Content-Type: application\/json; charset=utf-8\r\n[\s\S]*Connection: close\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      code: 3, message: expect.stringMatching(/^malformed HTTP request \(HPE_[A-Z_]+\): the request line, a header or the body's framing \(Content-Length, Transfer-Encoding\) could not be read; the connection is closed$/) as unknown, details: [],
    });
  });

  it('answers a body longer than its Content-Length (the rest cannot be a request) with the same JSON 400, in the rooms API\'s shape when asked', async () => {
    const s = await serve({}, { errorBody: { success: false } });
    server = s.server;
    const { closed } = exchange(s.port, 'PUT /scheduler/s/rooms/r/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"status":"ready"}');
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ success: false, code: 3, message: expect.stringMatching(/^malformed HTTP request \(HPE_/) as unknown, details: [] });
  });

  it('answers headers over Node\'s limit 431 with a JSON body saying what to do', async () => {
    const s = await serve({});
    server = s.server;
    const { closed } = exchange(s.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ code: 3, message: expect.stringMatching(/^the request headers are larger than the limit \(\d+ bytes in all\); send fewer or shorter headers$/) as unknown, details: [] });
  });

  it('closes an idle keep-alive connection', async () => {
    const s = await serve({});
    server = s.server;
    const { closed } = exchange(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await closed).toMatch(/^HTTP\/1\.1 200 [\s\S]*ok$/);
  });

  it('closes connections beyond maxConnections as they arrive, and serves the others', async () => {
    const s = await serve({ maxConnections: 2, keepAliveTimeoutMs: 60_000, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    server = s.server;
    const held = [net.connect(s.port, '127.0.0.1'), net.connect(s.port, '127.0.0.1')];
    await Promise.all(held.map((c) => new Promise((resolve) => c.once('connect', resolve))));
    await new Promise<void>((resolve) => {
      const check = () => s.server.getConnections((_e, n) => (n === 2 ? resolve() : setTimeout(check, 10)));
      check();
    });
    const { closed } = exchange(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await closed).toBe('');
    const answer = new Promise<string>((resolve) => held[0]!.once('data', (c: Buffer) => resolve(c.toString('latin1'))));
    held[0]!.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await answer).toMatch(/^HTTP\/1\.1 200 /);
    for (const c of held) c.destroy();
  });
});

describe('startOpsServer', () => {
  it('closes a request whose body or headers never end (408), answering health checks meanwhile', async () => {
    const ops = await startOpsServer({ port: 0, host: '127.0.0.1', metrics: new MetricsRegistry(), readiness: [], limits: LIMITS });
    try {
      const port = Number(new URL(ops.url).port);
      const body = exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
      const headers = exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a');
      expect(await (await fetch(`${ops.url}/healthz`)).json()).toEqual({ status: 'ok', checks: [] });
      // The body's request is answered at once (the path reads no body), then cut at the request limit.
      expect(await body.closed).toMatch(/^HTTP\/1\.1 200 /);
      expect(await headers.closed).toMatch(/^HTTP\/1\.1 408 /);
      // Any method but GET and HEAD: refused at once, its body unread, the connection closed.
      const posted = exchange(port, 'POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
      expect(await posted.closed).toMatch(/^HTTP\/1\.1 405 [\s\S]*allow: GET, HEAD[\s\S]*method POST is not allowed: the operations port answers GET of \/healthz, \/livez, \/readyz and \/metrics\r\n0\r\n\r\n$/i);
      expect((await fetch(`${ops.url}/metrics`, { method: 'DELETE' })).status).toBe(405);
    } finally {
      await ops.close();
    }
  });
});

describe('listenerConnections', () => {
  const limits = 'Limit                     Soft Limit           Hard Limit           Units\nMax processes             unlimited            unlimited            processes\nMax open files            20000                40000                files\n';

  it('reads the soft open-files limit, and nothing where there is none', () => {
    expect(openFilesLimit(() => limits)).toBe(20_000);
    expect(openFilesLimit(() => 'Max open files            unlimited            unlimited            files\n')).toBeUndefined();
    expect(openFilesLimit(() => { throw new Error('ENOENT'); })).toBeUndefined();
  });

  it('lowers the connections of each listener to leave a quarter of the open-files limit to the rest of the process', () => {
    expect(listenerConnections(20_000, 2, 20_000)).toEqual({ perListener: 7_500, lowered: { limit: 20_000 } });
    expect(listenerConnections(20_000, 2, 1_048_576)).toEqual({ perListener: 20_000 });
    // At least 1,024 left over, and one connection a listener whatever the limit.
    expect(listenerConnections(20_000, 2, 2_048)).toEqual({ perListener: 512, lowered: { limit: 2_048 } });
    expect(listenerConnections(20_000, 2, 100)).toEqual({ perListener: 1, lowered: { limit: 100 } });
  });

  it('keeps what was asked where the limit is unknown, and keeps 0 (no limit) as asked', () => {
    expect(listenerConnections(20_000, 2, undefined)).toEqual({ perListener: 20_000 });
    expect(listenerConnections(0, 2, 20_000)).toEqual({ perListener: 0 });
  });
});
