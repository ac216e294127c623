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

  it('refuses a URL it cannot parse without sending', async () => {
    client = new PingClient();
    await expect(client.send({ url: 'not a url', status: 'ready', timestamp: 1 })).resolves.toEqual({ ok: false, error: 'invalid URL not a url' });
  });
});
