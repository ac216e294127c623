/**
 * The room client over real HTTP (global fetch) against a node:http server standing in for the
 * rooms API: the wire format of pings and events, tokens, typed errors for refused events, and
 * Retry-After read from a real answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RoomsApiError } from './errors';
import { RoomClient, type PingFailure } from './room-client';

interface Seen { method: string; url: string; authorization?: string; body: unknown }

async function fakeRoomsApi(answer: (seen: Seen) => { status: number; body: unknown; headers?: Record<string, string> }): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => { data += c.toString(); });
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', body: JSON.parse(data) as unknown, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) };
      seen.push(s);
      const a = answer(s);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

test('pings, room events and player events on the wire', async () => {
  const api = await fakeRoomsApi((s) => (s.url.endsWith('/playerevent') && (s.body as { metadata: { playerId: string } }).metadata.playerId === 'banned'
    ? { status: 400, body: { code: 'VALIDATION', message: 'metadata.playerId: nope' } }
    : { status: 200, body: s.url.endsWith('/ping') ? { success: true } : { success: true, message: '' } }));
  const room = new RoomClient({ config: { schedulerName: 'arena', roomId: 'arena-1', roomsApiUrl: api.url, token: 'secret-token', pingIntervalMs: 60_000 } });
  try {
    await room.ready();
    await expect(room.roomEvent('roomReady', { map: 'dust' })).resolves.toEqual({ success: true, message: '' });
    await expect(room.playerEvent('playerJoin', 'p1', { team: 'red' })).resolves.toEqual({ success: true, message: '' });
    const refused = room.playerEvent('playerLeft', 'banned');
    await expect(refused).rejects.toBeInstanceOf(RoomsApiError);
    await expect(refused).rejects.toThrow('the rooms API refused playerevent: HTTP 400: metadata.playerId: nope');
    const [ping, roomEvent, playerEvent] = api.seen;
    expect(ping).toMatchObject({ method: 'PUT', url: '/scheduler/arena/rooms/arena-1/ping', authorization: 'Bearer secret-token', body: { status: 'ready' } });
    expect(typeof (ping!.body as { timestamp: unknown }).timestamp).toBe('number');
    expect(roomEvent).toMatchObject({ method: 'POST', url: '/scheduler/arena/rooms/arena-1/roomevent', body: { event: 'roomReady', metadata: { map: 'dust' } } });
    expect(playerEvent).toMatchObject({ method: 'POST', url: '/scheduler/arena/rooms/arena-1/playerevent', body: { event: 'playerJoin', metadata: { playerId: 'p1', team: 'red' } } });
  } finally {
    room.close();
    await api.close();
  }
});

test('a 503 with Retry-After from the rooms API (or a proxy before it) sets the retry delay', async () => {
  let answered = 0;
  const api = await fakeRoomsApi(() => (answered++ === 0
    ? { status: 503, body: { message: 'overloaded' }, headers: { 'retry-after': '1' } }
    : { status: 200, body: { success: true } }));
  const room = new RoomClient({ config: { schedulerName: 'arena', roomId: 'arena-1', roomsApiUrl: api.url, pingIntervalMs: 60_000 }, random: () => 0 });
  const retries: number[] = [];
  room.on('pingFailed', (f) => retries.push(f.retryInMs));
  try {
    await room.ready();
    expect(retries).toEqual([1000]);
    expect(api.seen).toHaveLength(2);
  } finally {
    room.close();
    await api.close();
  }
});

test('a rooms API that cannot be reached is told with its cause (connection refused), not only "fetch failed"', async () => {
  // A port nothing listens on: a server that listened there and closed.
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const room = new RoomClient({ config: { schedulerName: 'arena', roomId: 'arena-1', roomsApiUrl: `http://127.0.0.1:${port}`, pingIntervalMs: 60_000 } });
  const failed = new Promise<PingFailure>((resolve) => room.once('pingFailed', resolve));
  void room.ready().catch(() => undefined);
  try {
    expect((await failed).reason).toMatch(/^fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    const event = room.roomEvent('matchStarted');
    await expect(event).rejects.toBeInstanceOf(RoomsApiError);
    await expect(event).rejects.toThrow(/^the rooms API could not be reached for roomevent: fetch failed: connect ECONNREFUSED/);
  } finally {
    room.close();
  }
});

test('an event waits for the forwarders within its own deadline; past it, a typed error says the event may still reach them and what to raise', async () => {
  // The rooms API answers an event only once the scheduler's forwarders took it: here, once the
  // room client gave up on a hung ping (past requestTimeoutMs), so the event outlives that deadline.
  let releaseEvent: (() => void) | undefined;
  const pingGaveUp = new Promise<void>((resolve) => { releaseEvent = resolve; });
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    req.resume();
    if (req.url?.endsWith('/ping')) {
      req.socket.on('close', () => releaseEvent?.());
      return; // never answered
    }
    if (req.url?.endsWith('/playerevent')) return; // a receiver that never answers
    void pingGaveUp.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"message":""}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const config = { schedulerName: 'arena', roomId: 'arena-1', roomsApiUrl: `http://127.0.0.1:${port}`, pingIntervalMs: 60_000 };
  const room = new RoomClient({ config, requestTimeoutMs: 100, eventTimeoutMs: 60_000 });
  const short = new RoomClient({ config, requestTimeoutMs: 60_000, eventTimeoutMs: 100 });
  try {
    const event = room.roomEvent('matchStarted');
    void room.ready().catch(() => undefined);
    await expect(event).resolves.toEqual({ success: true, message: '' });
    const late = short.playerEvent('playerJoin', 'p1');
    await expect(late).rejects.toBeInstanceOf(RoomsApiError);
    await expect(late).rejects.toThrow('the rooms API did not answer playerevent within 100 ms: it answers once the scheduler\'s forwarders took the event or their options.timeout passed, so the event may still reach them; give the room client an eventTimeoutMs above the forwarders\' options.timeout');
  } finally {
    room.close();
    short.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
