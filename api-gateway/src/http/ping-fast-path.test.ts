/**
 * The ping fast path over a real socket: what it takes, what it leaves to Express, and that
 * pings without credentials (or with names no room can have) never grow its token cache.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { createLogger, silentLogger, type Logger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import { roomToken } from '../../../common/src/rooms/room-token';
import { PingRecorder } from '../pings/ping-recorder';
import { InMemoryStore } from '../testing/in-memory-store';
import { ROOM_SECRET, validSpec } from '../testing/fixtures';
import { RoomReports } from '../use-cases/room-reports';
import { pingFastPath, type PingFastPath } from './ping-fast-path';

jest.setTimeout(60_000);

interface Harness { fast: PingFastPath; url: string; metrics: MetricsRegistry; fellThrough: () => number; close: () => Promise<void> }

async function start(tokenCacheSize: number, secrets: readonly string[] = [ROOM_SECRET], logger: Logger = silentLogger()): Promise<Harness> {
  const now = () => Date.parse('2026-01-01T00:00:00.000Z');
  const store = new InMemoryStore(now);
  store.seedScheduler('s1', validSpec());
  for (let i = 0; i < 40; i++) store.seedRoom('s1', `room-${i}`, { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready' });
  const metrics = new MetricsRegistry();
  const recorder = new PingRecorder({ now, rooms: store, digests: store, replicaId: 'gw', logger });
  const reports = new RoomReports({ rooms: store, recorder, logger, metrics, now });
  const fast = pingFastPath({ reports, roomTokenSecrets: secrets, maxBodyBytes: 16 * 1024, metrics, logger, tokenCacheSize });
  let fellThrough = 0;
  const server = http.createServer((req, res) => {
    if (fast(req, res)) return;
    fellThrough++;
    req.resume();
    res.writeHead(418).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { fast, url, metrics, fellThrough: () => fellThrough, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
afterAll(() => agent.destroy());

function put(url: string, path: string, authorization?: string, body = '{"status":"ready","timestamp":1}'): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
    if (authorization) headers.authorization = authorization;
    const req = http.request(`${url}${path}`, { method: 'PUT', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function inParallel(n: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < n) await fn(next++);
  }));
}

describe('ping fast path answers', () => {
  it('counts a ping it refuses for its body as rejected (under the status it reports, when it reports one it may), as the alert on rejected pings reads them', async () => {
    const h = await start(8);
    try {
      const auth = `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`;
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', auth, '{"status":"READY"}')).toBe(400);
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', auth, '{"status":"ready","runningMatches":-1}')).toBe(400);
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', auth, '{"status":')).toBe(400);
      expect(h.fellThrough()).toBe(0);
      const text = await h.metrics.render();
      expect(text).toContain('roomkeeper_pings_total{result="rejected",status="unknown"} 2');
      expect(text).toContain('roomkeeper_pings_total{result="rejected",status="ready"} 1');
    } finally {
      await h.close();
    }
  });
});

describe('ping fast path at debug', () => {
  it('leaves every ping to Express while the gateway logs at debug, so each is logged with its request id; takes them again at info', async () => {
    const logger = createLogger('gateway', { level: 'debug', stream: new PassThrough() });
    const h = await start(8, [ROOM_SECRET], logger);
    try {
      const auth = `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`;
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', auth)).toBe(418);
      expect(h.fellThrough()).toBe(1);
      logger.level = 'info';
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', auth)).toBe(200);
      expect(h.fellThrough()).toBe(1);
    } finally {
      await h.close();
    }
  });
});

describe('ping fast path token cache', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('caches nothing for pings without a valid token, however many names they use', async () => {
    h = await start(100);
    const long = () => randomBytes(1500).toString('hex');
    await inParallel(3000, async (i) => {
      const auth = i % 3 === 0 ? undefined : i % 3 === 1 ? 'Bearer wrong-token' : `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`;
      const status = await put(h.url, `/scheduler/${i % 2 ? long().slice(0, 60) : long()}/rooms/${long()}/ping`, auth);
      expect(status).toBe(418);
    });
    expect(h.fellThrough()).toBe(3000);
    expect(h.fast.cachedTokens()).toBe(0);
  });

  it('does not cache names no Kubernetes object can have, even with their valid token', async () => {
    h = await start(100);
    const names: [string, string][] = [['s1', 'r'.repeat(254)], ['s'.repeat(64), 'room-1'], ['S1', 'room-1'], ['s1', 'Room_1']];
    for (const [s, r] of names) {
      expect(await put(h.url, `/scheduler/${s}/rooms/${r}/ping`, `Bearer ${roomToken(ROOM_SECRET, s, r)}`)).toBe(418);
    }
    expect(h.fast.cachedTokens()).toBe(0);
  });

  it('keeps at most its capacity of verified rooms, answering every valid ping', async () => {
    h = await start(10);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 40; i++) {
        expect(await put(h.url, `/scheduler/s1/rooms/room-${i}/ping`, `Bearer ${roomToken(ROOM_SECRET, 's1', `room-${i}`)}`)).toBe(200);
        expect(h.fast.cachedTokens()).toBeLessThanOrEqual(10);
      }
    }
    expect(h.fast.cachedTokens()).toBe(10);
    expect(h.fellThrough()).toBe(0);
  });
});

describe('ping fast path during a room-token rotation (issue 12 M3)', () => {
  it('takes tokens under the current and the previous secret, refuses any other, and a cached token does not shadow the other secret', async () => {
    const previous = 'the-previous-room-token-secret';
    const h = await start(100, [ROOM_SECRET, previous]);
    try {
      const bearer = (secret: string, room: string) => `Bearer ${roomToken(secret, 's1', room)}`;
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', bearer(ROOM_SECRET, 'room-1'))).toBe(200);
      expect(await put(h.url, '/scheduler/s1/rooms/room-2/ping', bearer(previous, 'room-2'))).toBe(200);
      // room-1 is cached under the current secret; its token under the previous one still passes.
      expect(await put(h.url, '/scheduler/s1/rooms/room-1/ping', bearer(previous, 'room-1'))).toBe(200);
      expect(h.fellThrough()).toBe(0);
      // A third secret is left to Express (which answers 401 in the gateway), and nothing is cached for it.
      const before = h.fast.cachedTokens();
      expect(await put(h.url, '/scheduler/s1/rooms/room-3/ping', bearer('some-other-secret', 'room-3'))).toBe(418);
      expect(h.fellThrough()).toBe(1);
      expect(h.fast.cachedTokens()).toBe(before);
    } finally {
      await h.close();
    }
  });
});
