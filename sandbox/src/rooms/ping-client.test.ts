import * as http from 'node:http';
import { listenLocally } from '../../../test/support/local-server';
import { PingClient } from './ping-client';

/** A rooms API stand-in: answers `{"success":true}`, `{"success":false}` for a room named `gone`, or never answers a room named `hang`. */
async function startServer(): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    received.push(req.url ?? '');
    req.resume();
    if (req.url?.includes('/rooms/hang/')) return;
    req.on('end', () => res.end(req.url?.includes('/rooms/gone/') ? '{"success":false}' : '{"success":true}'));
  });
  return { ...(await listenLocally(server)), received };
}

describe('PingClient', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let client: PingClient | undefined;

  beforeEach(async () => {
    server = await startServer();
  });

  afterEach(async () => {
    client?.close();
    await server.close();
  });

  it('answers ok with the status code when the rooms API answers 2xx', async () => {
    client = new PingClient({ timeoutMs: 5000 });
    const result = await client.send({ url: `${server.url}/scheduler/s/rooms/r1/ping`, status: 'ready', token: 't', timestamp: 1 });
    expect(result).toEqual({ ok: true, statusCode: 200 });
    expect(server.received).toEqual(['/scheduler/s/rooms/r1/ping']);
  });

  it('counts a 2xx {"success":false} as failed: the rooms API did not record the ping', async () => {
    client = new PingClient({ timeoutMs: 5000 });
    const result = await client.send({ url: `${server.url}/scheduler/s/rooms/gone/ping`, status: 'ready', timestamp: 1 });
    expect(result).toEqual({ ok: false, statusCode: 200, error: 'answered {"success":false}: the ping was not recorded' });
  });

  it('fails a ping with no answer by its deadline, and the wait for a free socket counts', async () => {
    client = new PingClient({ timeoutMs: 200, maxSockets: 1 });
    const hung = client.send({ url: `${server.url}/scheduler/s/rooms/hang/ping`, status: 'ready', timestamp: 1 });
    // Queued behind the hung ping on the only socket: its deadline runs while it waits.
    const queued = client.send({ url: `${server.url}/scheduler/s/rooms/r2/ping`, status: 'ready', timestamp: 1 });
    await expect(hung).resolves.toEqual({ ok: false, error: 'no answer within 200 ms (waiting for a socket included)' });
    await expect(queued).resolves.toEqual({ ok: false, error: 'no answer within 200 ms (waiting for a socket included)' });
    // The socket of the ping that timed out is gone, so the next ping gets a fresh one and its answer.
    await expect(client.send({ url: `${server.url}/scheduler/s/rooms/r3/ping`, status: 'ready', timestamp: 1 })).resolves.toEqual({ ok: true, statusCode: 200 });
  });

  it('says why a ping failed when nothing listens', async () => {
    const url = server.url;
    await server.close();
    server = await startServer();
    client = new PingClient({ timeoutMs: 5000 });
    const result = await client.send({ url: `${url}/scheduler/s/rooms/r1/ping`, status: 'ready', timestamp: 1 });
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('closes idle sockets before the server does: a burst after an event-loop stall is never sent on a connection the server is closing', async () => {
    // The rooms API's stand-in in this process, as in the in-process stack: a stall delays the
    // server's keep-alive timers and the burst's timer to the same turn of the event loop.
    const closing = await listenLocally(Object.assign(http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('{"success":true}'));
    }), { keepAliveTimeout: 2_000 }));
    try {
      client = new PingClient({ timeoutMs: 5000, maxSockets: 20, idleSocketTimeoutMs: 500 });
      const burst = async (): Promise<string[]> => (await Promise.all(Array.from({ length: 20 }, async (_, i) => {
        const result = await client?.send({ url: `${closing.url}/scheduler/s/rooms/r${i}/ping`, status: 'ready', timestamp: 1 });
        return result?.ok === true ? 'ok' : String(result?.error);
      })));
      expect(await burst()).toEqual(Array(20).fill('ok'));
      // Past the server's keep-alive timeout (and Node's grace after it) with the event loop
      // blocked, then 20 pings at once on the pooled sockets.
      const stall = (ms: number): void => {
        const end = Date.now() + ms;
        while (Date.now() < end) { /* a stalled event loop */ }
      };
      const second = new Promise<string[]>((resolve) => {
        setTimeout(() => stall(2_500), 1_000);
        setTimeout(() => void burst().then(resolve), 2_400);
      });
      expect(await second).toEqual(Array(20).fill('ok'));
    } finally {
      await closing.close();
    }
  });

  it('refuses a URL it cannot parse without sending', async () => {
    client = new PingClient();
    await expect(client.send({ url: 'not a url', status: 'ready', timestamp: 1 })).resolves.toEqual({ ok: false, error: 'invalid URL not a url' });
  });
});
