/**
 * The allocate fast path answers a bodiless allocate as the Express route answers the same
 * request with a body (`{}`), and leaves every other request to Express.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import type { GameRoomStatus } from '../../../common/src/generated/resources';
import { fastPathOf } from '../app';
import { AUTH, buildTestApps, validSpec, type TestApps } from '../testing/fixtures';

const READY: GameRoomStatus = { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 40123, containerPort: 7777 }] };

describe('the allocate fast path', () => {
  let t: TestApps;
  let taken: number;
  /** The management server's listener, counting the requests the fast path took. */
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (fastPathOf(t.management)?.(req, res)) {
      taken++;
      return;
    }
    t.management(req, res);
  };
  const allocate = (path = '/scheduler/s1/rooms/allocate') => request(listener).post(path).set('Authorization', AUTH);

  beforeEach(() => {
    t = buildTestApps();
    t.store.seedScheduler('s1', validSpec(), { version: 'v1.0.0' });
    taken = 0;
  });

  it('takes a bodiless allocate and answers as the Express route: the room, X-Request-Id, metrics', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    t.store.seedRoom('s1', 'room-2', READY);
    const fast = await allocate().set('X-Request-Id', 'mm-1');
    expect(taken).toBe(1);
    const slow = await allocate().send({});
    expect(taken).toBe(1);
    expect(fast.status).toBe(200);
    expect(fast.headers['x-request-id']).toBe('mm-1');
    expect(fast.headers['content-type']).toBe(slow.headers['content-type']);
    const shape = (body: Record<string, unknown>) => ({ ...body, roomId: 'a room', allocationId: 'an id' });
    expect(shape(fast.body as Record<string, unknown>)).toEqual(shape(slow.body as Record<string, unknown>));
    expect(new Set([(fast.body as { roomId: string }).roomId, (slow.body as { roomId: string }).roomId])).toEqual(new Set(['room-1', 'room-2']));
    expect(await t.metrics.render()).toContain('roomkeeper_http_requests_total{api="management",method="POST",route="/scheduler/:schedulerName/rooms/allocate",status="200"} 2');
  });

  it('answers no room (429, Retry-After) and an unknown scheduler (404) as the Express route', async () => {
    for (const path of ['/scheduler/s1/rooms/allocate', '/scheduler/nowhere/rooms/allocate']) {
      const fast = await allocate(path);
      const slow = await allocate(path).send({});
      expect([fast.status, fast.headers['retry-after'], fast.body]).toEqual([slow.status, slow.headers['retry-after'], slow.body]);
    }
    expect(taken).toBe(2);
    expect(await t.metrics.render()).toContain('roomkeeper_http_requests_total{api="management",method="POST",route="/scheduler/:schedulerName/rooms/allocate",status="429"} 2');
  });

  it('replays an Idempotency-Key header with the same room', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    t.store.seedRoom('s1', 'room-2', READY);
    const first = await allocate().set('Idempotency-Key', 'match-7');
    const again = await allocate().set('Idempotency-Key', 'match-7');
    expect(taken).toBe(2);
    expect(again.body).toMatchObject({ roomId: (first.body as { roomId: string }).roomId, allocationId: 'match-7' });
  });

  it('leaves to Express what it does not take: no or wrong credentials, a body, a query, an odd name, another method', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const none = await request(listener).post('/scheduler/s1/rooms/allocate');
    expect([none.status, none.headers['www-authenticate']]).toEqual([401, 'Basic realm="roomkeeper", charset="UTF-8"']);
    expect((await request(listener).post('/scheduler/s1/rooms/allocate').set('Authorization', 'Basic d3Jvbmc6d3Jvbmc=')).status).toBe(401);
    expect((await allocate().send({ strategy: 'none' })).status).toBe(400);
    expect((await allocate('/scheduler/s1/rooms/allocate?x=1')).status).toBe(200);
    expect((await allocate('/scheduler/S_1/rooms/allocate')).status).toBe(404);
    expect((await request(listener).get('/scheduler/s1/rooms/allocate').set('Authorization', AUTH)).status).toBe(501);
    expect(taken).toBe(0);
  });
});
