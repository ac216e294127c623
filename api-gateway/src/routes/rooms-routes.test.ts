import * as grpc from '@grpc/grpc-js';
import * as http from 'node:http';
import * as zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { silentLogger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import { EventForwarder } from '../../../common/src/forwarding/event-forwarder';
import { NO_REPLY, startForwardReceiver, type ForwardReceiver } from '../../../common/src/forwarding/forward-receiver';
import { roomToken, roomTokenKeyId } from '../../../common/src/rooms/room-token';
import { captureLogs } from '../../../test/support/log-capture';
import { RoomsRefusalLog } from '../http/rooms-refusal-log';
import { waitFor } from '../../../test/support/wait';
import { bodyOf, buildTestApps, MAX_BODY, ROOM_SECRET, validSpec, type TestApps } from '../testing/fixtures';
import { ROOMS_ROUTES } from './rooms-routes';
import { requestListener } from '../app';
import { ForwardingWorker } from '../../../common/src/forwarding/forwarding-worker';

const token = (scheduler: string, room: string) => `Bearer ${roomToken(ROOM_SECRET, scheduler, room)}`;

/** A PUT over a raw socket (supertest re-encodes Buffer bodies), its body written by `write`, its JSON answer read. */
function rawPut(url: string, headers: http.OutgoingHttpHeaders, write: (req: http.ClientRequest) => void): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    write(req);
  });
}

describe('rooms API without forwarders', () => {
  let t: TestApps;
  beforeEach(() => {
    t = buildTestApps();
    t.store.seedScheduler('s1', validSpec());
    t.store.seedRoom('s1', 'room-1', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 40123, containerPort: 7777 }] });
  });
  const ping = (body: unknown, room = 'room-1', scheduler = 's1') => request(t.rooms).put(`/scheduler/${scheduler}/rooms/${room}/ping`).set('Authorization', token(scheduler, room)).send(body as object);

  it('records an unchanged ping in memory only', async () => {
    const res = await ping({ status: 'ready', timestamp: 1700000000 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(t.store.writes).toEqual([]);
    expect(t.recorder.pendingSchedulers).toBe(1);
  });

  it('writes a status change at once, composed with the instance status', async () => {
    const res = await ping({ status: 'occupied', timestamp: '1700000000' });
    expect(res.body).toEqual({ success: true });
    expect(t.store.writes).toEqual([{ kind: 'gameroom-status', verb: 'patch', name: 's1/room-1' }]);
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', status: 'occupied', runningMatches: 1, lastPingAt: '2026-01-01T00:00:00.000Z' });
  });

  it.each([
    ['a number', { runningMatches: 2 }],
    ['a string of digits, as Maestro takes it', { runningMatches: '2' }],
    ['spelled running_matches', { running_matches: 2 }],
  ])('takes runningMatches as %s (docs/rooms-api.md)', async (_n, matches) => {
    expect((await ping({ status: 'occupied', timestamp: 1, ...matches })).body).toEqual({ success: true });
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ runningMatches: 2 });
  });

  it('refuses runningMatches sent in both spellings, naming the field, writing nothing (the management API refuses such a body too)', async () => {
    const res = await ping({ status: 'occupied', timestamp: 1, runningMatches: 2, running_matches: 3 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 3, details: [{ field: 'runningMatches', message: 'duplicate key: sent as both running_matches and runningMatches, one field in its two spellings, and only one of the values could be kept; send it once (the request was refused and nothing changed)' }] });
    expect(t.store.writes).toEqual([]);
  });

  it('reads a gzip or deflate ping as its Content-Encoding says, answers 415 to an encoding it cannot read and 400 to a body that is not what its encoding says, recording nothing for those', async () => {
    const server = http.createServer(requestListener(t.rooms));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scheduler/s1/rooms/room-1/ping`;
    const send = (encoding: string, bytes: Buffer) => rawPut(url, { authorization: token('s1', 'room-1'), 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': bytes.length }, (req) => req.end(bytes));
    const body = JSON.stringify({ status: 'occupied', timestamp: 1 });
    try {
      const refused = await send('compress', Buffer.from(body));
      expect(refused).toEqual({ status: 415, body: expect.objectContaining({ success: false, message: 'unsupported Content-Encoding "compress": send the body uncompressed, or compressed whole with gzip, deflate, br or zstd' }) as unknown });
      const garbled = await send('gzip', Buffer.from(body));
      expect(garbled).toEqual({ status: 400, body: expect.objectContaining({ success: false, message: expect.stringContaining('could not be decompressed') as unknown }) as unknown });
      expect(t.store.writes).toEqual([]);
      expect(await send('gzip', zlib.gzipSync(body))).toEqual({ status: 200, body: { success: true } });
      expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied' });
      expect(await send('deflate', zlib.deflateSync(JSON.stringify({ status: 'ready', timestamp: 2 })))).toEqual({ status: 200, body: { success: true } });
      expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'ready' });
      expect(await send('identity', Buffer.from(body))).toEqual({ status: 200, body: { success: true } });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers 200 {success:false} for an unknown room, saying why and what to check, writing nothing', async () => {
    const res = await ping({ status: 'ready', timestamp: 1 }, 'ghost');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, message: 'room ghost not found in scheduler s1, so the ping was not recorded: the gateway does not know this room (yet: one created a moment ago may not be in its cache; or it was deleted); ping again in a moment, and check ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID' });
    expect(t.store.writes).toEqual([]);
  });

  it('tells a room whose GameRoom the cache saw deleted to exit, not to ping again (roomGone), writing nothing', async () => {
    t.store.rooms.delete('s1/room-1');
    t.store.deletedRooms.set('s1/room-1', Date.parse('2026-12-05T18:00:00Z'));
    const res = await ping({ status: 'terminating', timestamp: 1 });
    expect(res.body).toEqual({
      success: false, roomGone: true,
      message: 'room room-1 not found in scheduler s1, so the ping was not recorded: its GameRoom is gone (deleted by its scheduler or by a user; this gateway saw it go at 2026-12-05T18:00:00.000Z), and its pod is deleted with it; no ping brings the room back: finish or hand over its matches and exit',
    });
    expect(t.store.writes).toEqual([]);
  });

  it('tells the room of a scheduler being deleted, or gone, to exit rather than to ping again (roomGone; just exit, when it pinged terminated)', async () => {
    const s1 = t.store.findScheduler('s1');
    if (!s1) throw new Error('no scheduler s1');
    s1.metadata.deletionTimestamp = new Date();
    expect((await ping({ status: 'ready', timestamp: 1 }, 'ghost')).body).toEqual({ success: false, roomGone: true, message: 'room ghost not found in scheduler s1, so the ping was not recorded: scheduler s1 is being deleted, and its rooms with it; finish or hand over its matches, stop pinging (terminated included: there is nothing left to end) and exit' });
    expect((await ping({ status: 'terminated', timestamp: 1 }, 'ghost')).body).toEqual({ success: false, roomGone: true, message: 'room ghost not found in scheduler s1, so the ping was not recorded: scheduler s1 is being deleted, and its rooms with it; stop pinging and exit' });
    const event = await request(t.rooms).post('/scheduler/s1/rooms/ghost/roomevent').set('Authorization', token('s1', 'ghost')).send({ event: 'matchEnded' });
    expect(event.body).toMatchObject({ success: false, roomGone: true, message: expect.stringMatching(/^room ghost not found in scheduler s1, so the event was not forwarded: scheduler s1 is being deleted/) as unknown });
    await t.store.deleteScheduler('s1');
    expect((await ping({ status: 'terminated', timestamp: 1 }, 'ghost')).body).toMatchObject({ success: false, roomGone: true, message: expect.stringMatching(/a deleted scheduler's rooms go with it: stop pinging and exit$/) as unknown });
    expect((await ping({ status: 'ready', timestamp: 1 }, 'ghost')).body).toEqual({ success: false, roomGone: true, message: 'room ghost not found in scheduler s1, so the ping was not recorded: no scheduler s1 exists (it was deleted, or ROOMKEEPER_SCHEDULER_NAME is wrong); a deleted scheduler\'s rooms go with it: finish or hand over its matches, stop pinging (terminated included: there is nothing left to end) and exit' });
    expect(t.store.writes.filter((w) => w.kind !== 'scheduler')).toEqual([]);
  });

  it('refuses to bring a terminated room back', async () => {
    t.store.seedRoom('s1', 'gone', { pingStatus: 'terminated', status: 'terminated' });
    expect((await ping({ status: 'ready' }, 'gone')).body).toEqual({ success: false, message: 'room gone already reported terminated, so this ready ping was not recorded: nothing follows terminated; stop pinging and exit (the room is removed and replaced)' });
  });

  it('keeps a room that pinged terminating terminating: a later ready or occupied ping is refused ({success:false}, saying why and what to send) and changes nothing; terminated is taken', async () => {
    expect((await ping({ status: 'terminating' })).body).toEqual({ success: true });
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminating', status: 'terminating' });
    const writes = t.store.writes.length;
    const refused = (status: string) => ({ success: false, message: `room room-1 reported terminating, so this ${status} ping was not recorded: a terminating room accepts no new players and only terminated follows; finish or hand over its matches, ping terminated and exit (keep pinging terminating meanwhile)` });
    expect((await ping({ status: 'ready' })).body).toEqual(refused('ready'));
    expect((await ping({ status: 'occupied', runningMatches: 1 })).body).toEqual(refused('occupied'));
    expect(t.store.writes).toHaveLength(writes);
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminating', status: 'terminating' });
    expect(await t.metrics.render()).toContain('roomkeeper_pings_total{result="rejected",status="ready"} 1');
    expect((await ping({ status: 'terminating' })).body).toEqual({ success: true });
    expect((await ping({ status: 'terminated' })).body).toEqual({ success: true });
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminated', status: 'terminated' });
  });

  it('refuses ready after a terminating whose write is still pending (the cache shows the room ready yet), so the retry still writes terminating', async () => {
    jest.spyOn(t.store, 'patchRoomStatus').mockRejectedValueOnce(Object.assign(new Error('service unavailable'), { code: 503 }));
    expect((await ping({ status: 'terminating' })).body).toEqual({ success: true });
    expect(t.recorder.pendingWrites).toBe(1);
    expect((await ping({ status: 'ready' })).body).toMatchObject({ success: false, message: expect.stringContaining('room room-1 reported terminating, so this ready ping was not recorded') as unknown });
    t.clock.now += 60_000;
    await t.recorder.retryDue();
    expect(t.recorder.pendingWrites).toBe(0);
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminating', status: 'terminating' });
  });

  it('answers terminated {success:true} only once written: while its write is pending (the API server failed it) the room is told it is not recorded yet and to ping terminated again, which is answered true once the write landed', async () => {
    jest.spyOn(t.store, 'patchRoomStatus').mockRejectedValueOnce(Object.assign(new Error('service unavailable'), { code: 503 }));
    const first = (await ping({ status: 'terminated' })).body as { success: boolean; message?: string; roomGone?: boolean };
    expect(first).toEqual({ success: false, message: 'room room-1 reported terminated, but it is not recorded yet: the Kubernetes API has not taken the write within a second (this gateway retries it); ping terminated again in a few seconds, until it is answered success, then exit' });
    expect(t.recorder.pendingWrites).toBe(1);
    // Sent again before the retry: still pending, still not true (no second write is made for it).
    expect((await ping({ status: 'terminated' })).body).toMatchObject({ success: false });
    expect(t.recorder.pendingWrites).toBe(1);
    t.clock.now += 60_000;
    await t.recorder.retryDue();
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminated', status: 'terminated' });
    expect((await ping({ status: 'terminated' })).body).toEqual({ success: true });
  });

  it('answers {success:false} saying the room was deleted when its status write finds it gone, and what its game server should do (stop pinging, terminated included, and exit)', async () => {
    jest.spyOn(t.store, 'patchRoomStatus').mockRejectedValueOnce(Object.assign(new Error('gamerooms "room-1" not found'), { code: 404 }));
    expect((await ping({ status: 'occupied' })).body).toEqual({ success: false, roomGone: true, message: 'room room-1 of scheduler s1 was deleted while this ping was recorded, so it was not recorded; its game server is (or was) sent SIGTERM: finish or hand over its matches, stop pinging (terminated included: there is nothing left to end) and exit' });
    jest.spyOn(t.store, 'patchRoomStatus').mockRejectedValueOnce(Object.assign(new Error('gamerooms "room-1" not found'), { code: 404 }));
    expect((await ping({ status: 'terminated' })).body).toMatchObject({ success: false, message: expect.stringMatching(/is \(or was\) sent SIGTERM: stop pinging and exit$/) as unknown });
    expect(await t.metrics.render()).toContain('roomkeeper_pings_total{result="write_failed",status="occupied"} 1');
  });

  it('takes terminated from a ready room, without terminating first (Maestro refuses it): the room says it is done, and the operator replaces it', async () => {
    expect((await ping({ status: 'terminated' })).body).toEqual({ success: true });
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminated', status: 'terminated' });
  });

  it('refuses a timestamp that is not an int64 (Maestro\'s type) on every route that takes one, saying what is wrong with it, and takes one within it', async () => {
    const rule = 'must be an integer (Unix seconds, as a number or a numeric string) within int64';
    for (const [timestamp, fault] of [[1.5, 'a fraction is refused'], [1e300, 'this one is beyond int64'], ['abc', 'this string is not a whole number'], ['9223372036854775808', 'this one is beyond int64'], [true, 'got a boolean']] as const) {
      const message = `${rule}; ${fault}`;
      expect((await ping({ status: 'ready', timestamp })).body).toMatchObject({ code: 3, details: [{ field: 'timestamp', message }] });
      const ev = await request(t.rooms).post('/scheduler/s1/rooms/room-1/roomevent').set('Authorization', token('s1', 'room-1')).send({ event: 'matchStarted', timestamp });
      expect(ev.body).toMatchObject({ code: 3, details: [{ field: 'timestamp', message }] });
    }
    // A number past a double's range is read as Infinity: out of range, not a fraction.
    for (const raw of ['1e400', '-1e400']) {
      const res = await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', token('s1', 'room-1')).set('Content-Type', 'application/json').send(`{"status":"ready","timestamp":${raw}}`);
      expect(res.body).toMatchObject({ code: 3, details: [{ field: 'timestamp', message: `${rule}; this one is beyond int64` }] });
    }
    for (const timestamp of [1764133200, '1764133200', -1, 9_007_199_254_740_991, '9223372036854775807']) expect((await ping({ status: 'ready', timestamp })).body).toEqual({ success: true });
  });

  it.each([
    [{ status: 'dancing', timestamp: 1 }, 'status'],
    [{ timestamp: 1 }, 'status'],
    [{ status: 'unknown' }, 'status'],
    [{ status: 'ready', timestamp: 'yesterday' }, 'timestamp'],
    [{ status: 'ready', timestamp: { t: 1 } }, 'timestamp'],
    [{ status: 'ready', timestamp: 1.5 }, 'timestamp'],
    [{ status: 'ready', timestamp: '1.5' }, 'timestamp'],
    [{ status: 'ready', timestamp: 9.3e18 }, 'timestamp'],
    [{ status: 'ready', timestamp: '9300000000000000000' }, 'timestamp'],
    [{ status: 'ready', runningMatches: -1 }, 'runningMatches'],
    [{ status: 'ready', runningMatches: 'two' }, 'runningMatches'],
    [{ status: 'ready', runningMatches: '1.5' }, 'runningMatches'],
    [{ status: 'ready', runningMatches: ' 2' }, 'runningMatches'],
    [{ status: 'ready', runningMatches: 1_000_001 }, 'runningMatches'],
    [{ status: 'ready', metadata: 'x' }, 'metadata'],
    [[], '(body)'],
  ])('answers 400 (code 3) for %j', async (body, field) => {
    const res = await ping(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 3, success: false });
    if (field !== '(body)') expect(bodyOf(res).details).toEqual([expect.objectContaining({ field })]);
    expect(t.store.writes).toEqual([]);
  });

  it.each([
    [{ timestamp: 1 }, 'is a required field: one of ready, occupied, terminating, terminated'],
    [{ Status: 'ready' }, 'is a required field: one of ready, occupied, terminating, terminated'],
    [{ status: 'READY' }, 'must be one of ready, occupied, terminating, terminated (in lower case); got "READY"'],
    [{ status: ' ready' }, 'must be one of ready, occupied, terminating, terminated (in lower case); got " ready"'],
    [{ status: 1 }, 'must be one of ready, occupied, terminating, terminated (in lower case); got number'],
    [{ status: null }, 'must be one of ready, occupied, terminating, terminated (in lower case); got null'],
  ])('a ping with %j is told what status it sent, not only which it may send', async (body, message) => {
    const res = await ping(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).details).toEqual([{ field: 'status', message }]);
  });

  it('answers 400 for malformed JSON and 413 for a huge body', async () => {
    const bad = await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', token('s1', 'room-1')).set('Content-Type', 'application/json').send('{"status"');
    expect(bad.status).toBe(400);
    const huge = await ping({ status: 'ready', metadata: { blob: 'x'.repeat(100_000) } });
    expect(huge.status).toBe(413);
    expect(bodyOf(huge).message).toMatch(/^request body is larger than the limit of \d+ bytes; send a smaller body \(in a ping or an event, less metadata\), or raise the limit: .*ROOMKEEPER_ROOMS_MAX_BODY_BYTES on the rooms API$/);
    let deep: unknown = {};
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const tooDeep = await ping({ status: 'ready', metadata: deep });
    expect(tooDeep.status).toBe(400);
    expect(bodyOf(tooDeep).details).toEqual([{ field: 'metadata', message: 'nests deeper than the 32 levels of objects and arrays a body may hold (no field of this API needs more); send it flatter' }]);
    expect(t.store.writes).toEqual([]);
  });

  const MISSING = 'missing room token: send Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN';
  const UNHELD_SECRET = 'invalid room token: it is not the token of room room-1 of scheduler s1, nor of any other room of that scheduler, under the room-token secrets this gateway holds: '
    + 'it was made under another secret, most likely the one this room was started with, which this gateway no longer holds (the room-token secret was changed without keeping the old one as the previous secret; or the operator and the gateway were given different secrets); '
    + 'the game server cannot mend it (its token is fixed in its environment): keep pinging at the usual interval, pings are recorded again once the gateway holds that secret; until then none is, so the room counts as silent and may be replaced by a new one (whose token is under the current secret). '
    + "The platform's operator gives the gateway the old secret back as roomToken.previousSecret (ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET; SECURITY.md, Rotation) and restarts it, or replaces the rooms started under the old secret; if the operator and the gateway hold different secrets, every new room gets this answer too, until both are given the same one. "
    + "If no secret changed, it is the token of a room of another scheduler: the URL and the token must come from one room pod's environment (its ROOMKEEPER_SCHEDULER_NAME, ROOMKEEPER_ROOM_ID and ROOMKEEPER_ROOM_TOKEN)";
  const NOT_BEARER = 'missing room token: the Authorization header is not a Bearer token (the word Bearer, a space, then the token); send Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN';
  it.each([
    ['missing', undefined, MISSING],
    ['for another room (or the path names another room)', token('s1', 'room-2'), "invalid room token: it is not the token of room room-1 of scheduler s1; send the ROOMKEEPER_ROOM_TOKEN of that room's own environment (each room's token is for its own scheduler and id only), and check that the path's scheduler and room id are that room's ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID"],
    ['malformed', 'Bearer', 'missing room token: the Authorization header says Bearer but holds no token; send Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN'],
    ['basic', 'Basic YTpi', NOT_BEARER],
    ['sent without the Bearer word', roomToken(ROOM_SECRET, 's1', 'room-1'), NOT_BEARER],
    ['made under a room-token secret this gateway does not hold (rotated without keeping the previous one)', `Bearer ${roomToken('a-retired-secret', 's1', 'room-1')}`, UNHELD_SECRET],
  ])('answers 401 (code 16) when the token is %s, saying what to send', async (_what, header, message) => {
    t.store.seedRoom('s1', 'room-1', { pingStatus: 'ready' });
    t.store.seedRoom('s1', 'room-2', { pingStatus: 'ready' });
    const req = request(t.rooms).put('/scheduler/s1/rooms/room-1/ping');
    const res = header ? await req.set('Authorization', header).send({ status: 'occupied' }) : await req.send({ status: 'occupied' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 16, success: false, message, details: [] });
    expect(t.store.writes).toEqual([]);
  });

  it('answers a refused token for a room it cannot tell apart (not in its cache) with both causes and what to do for each', async () => {
    const res = await request(t.rooms).put('/scheduler/s1/rooms/room-unseen/ping').set('Authorization', `Bearer ${roomToken('a-retired-secret', 's1', 'room-unseen')}`).send({ status: 'ready' });
    expect(res.status).toBe(401);
    expect((res.body as { message: string }).message).toBe("invalid room token: it is not the token of room room-unseen of scheduler s1; send the ROOMKEEPER_ROOM_TOKEN of that room's own environment (each room's token is for its own scheduler and id only), and check that the path's scheduler and room id are that room's ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID; "
      + "if it is this room's own ROOMKEEPER_ROOM_TOKEN, it was made under a room-token secret this gateway does not hold (changed without keeping the old one as the previous secret): keep pinging; the platform's operator gives the gateway that secret back as roomToken.previousSecret (SECURITY.md, Rotation)");
  });

  it('needs no token when ping authentication is off', async () => {
    const open = buildTestApps({ pingAuth: false });
    open.store.seedRoom('s1', 'room-1', { pingStatus: 'ready' });
    const res = await request(open.rooms).put('/scheduler/s1/rooms/room-1/ping').send({ status: 'ready', timestamp: 1 });
    expect(res.body).toEqual({ success: true });
  });

  it('answers events with success when there is nothing to forward', async () => {
    const ev = await request(t.rooms).post('/scheduler/s1/rooms/room-1/roomevent').set('Authorization', token('s1', 'room-1')).send({ event: 'matchStarted', timestamp: 1, metadata: {} });
    expect(ev.body).toEqual({ success: true, message: '' });
    const pe = await request(t.rooms).post('/scheduler/s1/rooms/room-1/playerevent').set('Authorization', token('s1', 'room-1')).send({ event: 'playerJoin', timestamp: 1, metadata: { playerId: 'p1' } });
    expect(pe.body).toEqual({ success: true, message: '' });
    const unknown = await request(t.rooms).post('/scheduler/s1/rooms/ghost/roomevent').set('Authorization', token('s1', 'ghost')).send({ event: 'x' });
    expect(unknown.body).toMatchObject({ success: false });
  });

  it('tells a room it does not know that its event was not forwarded, and what to do', async () => {
    const expected = 'room ghost not found in scheduler s1, so the event was not forwarded: the gateway does not know this room (yet: one created a moment ago may not be in its cache; or it was deleted); send it again in a moment, and check ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID';
    for (const [path, body] of [['roomevent', { event: 'x' }], ['playerevent', { event: 'playerJoin', metadata: { playerId: 'p1' } }]] as const) {
      const res = await request(t.rooms).post(`/scheduler/s1/rooms/ghost/${path}`).set('Authorization', token('s1', 'ghost')).send(body);
      expect(res.body).toEqual({ success: false, message: expected });
    }
  });

  it.each([
    ['/roomevent', { timestamp: 1 }],
    ['/roomevent', { event: 7 }],
    ['/playerevent', { event: 'playerDance', metadata: { playerId: 'p' } }],
    ['/playerevent', { event: 'playerJoin', metadata: {} }],
    ['/playerevent', { event: 'playerJoin' }],
  ])('answers 400 for %s %j', async (suffix, body) => {
    const res = await request(t.rooms).post(`/scheduler/s1/rooms/room-1${suffix}`).set('Authorization', token('s1', 'room-1')).send(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
  });

  it('names the type of a playerId that is not a string, not a missing field; a missing one and an empty one each as what it is', async () => {
    const res = await request(t.rooms).post('/scheduler/s1/rooms/room-1/playerevent').set('Authorization', token('s1', 'room-1')).send({ event: 'playerJoin', metadata: { playerId: 5 } });
    expect(res.status).toBe(400);
    expect(bodyOf(res).details).toEqual([{ field: 'metadata.playerId', message: 'must be a string; got number' }]);
    for (const [metadata, message] of [[{}, 'is a required field: the id of the player who joined or left'], [{ playerId: '' }, 'must not be empty: send the id of the player who joined or left']] as const) {
      const refused = await request(t.rooms).post('/scheduler/s1/rooms/room-1/playerevent').set('Authorization', token('s1', 'room-1')).send({ event: 'playerLeft', metadata });
      expect([refused.status, bodyOf(refused).details]).toEqual([400, [{ field: 'metadata.playerId', message }]]);
    }
  });

  it('returns the room address, or 404', async () => {
    const res = await request(t.rooms).get('/scheduler/s1/rooms/room-1/address').set('Authorization', token('s1', 'room-1'));
    expect(res.body).toEqual({ ports: [{ name: 'game', protocol: 'UDP', port: 40123 }], host: '10.0.0.7', ipv6Label: '' });
    const missing = await request(t.rooms).get('/scheduler/s1/rooms/ghost/address').set('Authorization', token('s1', 'ghost'));
    expect(missing.status).toBe(404);
    expect(bodyOf(missing).code).toBe(5);
    expect(bodyOf(missing).message).toBe('room ghost not found in scheduler s1: the gateway does not know this room (yet: one created a moment ago may not be in its cache; or it was deleted); ask again in a moment, and check ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID');
  });

  it('answers 404 saying so for a room whose address is not known yet, not an empty host with 200', async () => {
    t.store.seedRoom('s1', 'unplaced', { status: 'pending', instanceStatus: 'pending', ports: [{ name: 'game', protocol: 'UDP', port: 40124, containerPort: 7777 }] });
    const res = await request(t.rooms).get('/scheduler/s1/rooms/unplaced/address').set('Authorization', token('s1', 'unplaced'));
    expect(res.status).toBe(404);
    expect(bodyOf(res)).toMatchObject({ code: 5, message: 'room unplaced of scheduler s1 has no address yet: its pod is not on a node yet, or the operator has not written its host; ask again in a moment' });
  });

  it('answers 404 for unknown paths and 501 for a wrong method', async () => {
    const unknown = await request(t.rooms).put('/scheduler/s1/rooms/room-1/pong').set('Authorization', token('s1', 'room-1')).send({ status: 'ready' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, code: 5, message: 'Not Found: no route PUT /scheduler/s1/rooms/room-1/pong; the routes of both APIs are listed in GET /openapi.json on the management API', details: [] });
    const wrong = await request(t.rooms).post('/scheduler/s1/rooms/room-1/ping').set('Authorization', token('s1', 'room-1')).send({ status: 'ready' });
    expect(wrong.status).toBe(501);
    expect(wrong.body).toEqual({ success: false, code: 12, message: 'Method Not Allowed: /scheduler/{schedulerName}/rooms/{roomId}/ping takes PUT', details: [] });
    expect(wrong.headers.allow).toBe('PUT');
  });

  it('counts a ping refused for its token as rejected, so the alert on rejected pings sees rooms running with a wrong ROOMKEEPER_ROOM_TOKEN_SECRET', async () => {
    expect((await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', 'Bearer not-the-token').send({ status: 'ready' })).status).toBe(401);
    expect((await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').send({ status: 'occupied' })).status).toBe(401);
    const text = (await request(t.rooms).get('/metrics')).text;
    // A body is not read before its token passes: the status it reports is not known.
    expect(text).toContain('roomkeeper_pings_total{result="rejected",status="unknown"} 2');
  });

  it('counts pings by status and result', async () => {
    await ping({ status: 'ready' });
    await ping({ status: 'occupied' });
    await ping({ status: 'ready' }, 'ghost');
    const text = (await request(t.rooms).get('/metrics')).text;
    expect(text).toContain('roomkeeper_pings_total{result="recorded",status="ready"} 1');
    expect(text).toContain('roomkeeper_pings_total{result="status_written",status="occupied"} 1');
    expect(text).toContain('roomkeeper_pings_total{result="unknown_room",status="ready"} 1');
  });
});

describe('rooms API refusals in the log', () => {
  it('a flood of pings refused for their tokens makes one line per reason at once and one per reason when flushed, each naming the reason, counts, schedulers and rooms, and none holding a token', async () => {
    const { logger, lines } = captureLogs('debug', 'gateway');
    const refusals = new RoomsRefusalLog({ logger, now: Date.now, heldKeyIds: [roomTokenKeyId(ROOM_SECRET)] });
    const t = buildTestApps({ logger, refusals });
    const rooms = ['a', 'b'].flatMap((s) => Array.from({ length: 10 }, (_, i) => ({ scheduler: `game-${s}`, room: `room-${i}` })));
    for (const { scheduler, room } of rooms) t.store.seedRoom(scheduler, room, { pingStatus: 'ready' });
    const retired = (scheduler: string, room: string) => roomToken('a-retired-secret', scheduler, room);
    const sent: string[] = [];
    const listener = requestListener(t.rooms);
    const server = http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      // 20 rooms pinging 10 times each under a retired secret (the fast path hands them to Express), and 20 pings without a token.
      for (let round = 0; round < 10; round++) {
        await Promise.all(rooms.map(async ({ scheduler, room }) => {
          const token = retired(scheduler, room);
          sent.push(token);
          const res = await fetch(`${url}/scheduler/${scheduler}/rooms/${room}/ping`, { method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{"status":"ready"}' });
          expect(res.status).toBe(401);
        }));
      }
      await Promise.all(rooms.map(async ({ scheduler, room }) => {
        expect((await fetch(`${url}/scheduler/${scheduler}/rooms/${room}/ping`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{"status":"ready"}' })).status).toBe(401);
      }));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const refusalLines = () => lines.filter((l) => typeof l.reason === 'string');
    // The first refusal of each reason is said at once; the 219 after it wait for the interval.
    await waitFor(() => refusalLines().length === 2, { timeoutMs: 5_000, message: 'one line per reason' });
    refusals.flush();
    await waitFor(() => refusalLines().length === 4, { timeoutMs: 5_000, message: 'the flushed lines' });
    const byReason = (reason: string) => refusalLines().filter((l) => l.reason === reason);
    const unheld = byReason('token-under-unheld-secret');
    expect(unheld.map((l) => l.refused)).toEqual([1, 199]);
    expect(unheld[1]?.level).toBe('warn');
    // Which of the 200 came first (and was said at once) depends on the order they were answered in.
    const perScheduler = unheld[1]?.schedulers as Record<string, number>;
    expect(Object.keys(perScheduler).sort()).toEqual(['game-a', 'game-b']);
    expect(Object.values(perScheduler).reduce((a, b) => a + b, 0)).toBe(199);
    expect(unheld[1]?.message).toBe('rooms API requests refused (401): a room token of no room of that scheduler under the room-token secrets this gateway holds (made under a secret it does not hold, or the token of a room of another scheduler)');
    expect(unheld[1]?.remedy).toContain('roomToken.previousSecret');
    expect(unheld[1]?.remedy).toContain(`roomkeeper.io/room-token-key notin (${roomTokenKeyId(ROOM_SECRET)})`);
    expect((unheld[1]?.exampleRooms as string[]).length).toBe(5);
    expect(byReason('missing-room-token').map((l) => l.refused)).toEqual([1, 19]);
    for (const line of lines) {
      const text = JSON.stringify(line);
      for (const token of [...new Set(sent), roomToken(ROOM_SECRET, 'game-a', 'room-0')]) expect(text).not.toContain(token);
      expect(text).not.toContain(ROOM_SECRET);
    }
    // Nothing more comes until the interval is over: a storm makes no flood.
    expect(refusalLines().length).toBe(4);
  });

  it('logs the pings of rooms it saw deleted at info (deleted-room: their game servers ping on while their pods stop), and those of rooms it never knew as a warning', async () => {
    const { logger, lines } = captureLogs('debug', 'gateway');
    const refusals = new RoomsRefusalLog({ logger, now: Date.now });
    const t = buildTestApps({ logger, refusals });
    t.store.seedScheduler('s1', validSpec());
    t.store.deletedRooms.set('s1/validated', Date.parse('2026-12-05T18:00:00Z'));
    const ping = (room: string) => request(t.rooms).put(`/scheduler/s1/rooms/${room}/ping`).set('Authorization', `Bearer ${roomToken(ROOM_SECRET, 's1', room)}`).send({ status: 'ready', timestamp: 1 });
    expect((await ping('validated')).body).toMatchObject({ success: false, roomGone: true });
    expect((await ping('never-made')).body).toMatchObject({ success: false });
    await waitFor(() => lines.filter((l) => typeof l.reason === 'string').length === 2, { timeoutMs: 5_000, message: 'a line for each reason' });
    const line = (reason: string) => lines.find((l) => l.reason === reason);
    expect(line('deleted-room')).toMatchObject({ level: 'info', exampleRooms: ['s1/validated'] });
    expect(line('unknown-room')).toMatchObject({ level: 'warn', exampleRooms: ['s1/never-made'] });
    refusals.flush();
  });

  it('logs the refusals of an interval when it ends, and a later one in a line of its own', async () => {
    const { logger, lines } = captureLogs('warn', 'gateway');
    const refusals = new RoomsRefusalLog({ logger, now: Date.now, intervalMs: 200 });
    for (let i = 0; i < 50; i++) refusals.record({ reason: 'unknown-room', schedulerName: 's1', roomId: `ghost-${i % 7}`, answer: 'room ghost not found' });
    await waitFor(() => lines.length === 2, { timeoutMs: 5_000, message: 'the line at once and the one at the end of the interval' });
    expect(lines.map((l) => l.refused)).toEqual([1, 49]);
    expect(lines[1]).toMatchObject({ reason: 'unknown-room', schedulers: { s1: 49 }, answer: 'room ghost not found' });
    expect(lines[1]?.exampleRooms).toEqual(['s1/ghost-1', 's1/ghost-2', 's1/ghost-3', 's1/ghost-4', 's1/ghost-5']);
    refusals.record({ reason: 'unknown-room', schedulerName: 's1', roomId: 'late' });
    await waitFor(() => lines.length === 3, { timeoutMs: 5_000, message: 'a refusal after the interval, said at once or when it ends' });
    expect(lines[2]).toMatchObject({ refused: 1, exampleRooms: ['s1/late'] });
  });
});

describe('rooms API forwarding to a real gRPC receiver', () => {
  let receiver: ForwardReceiver;
  let forwarder: EventForwarder;
  let t: TestApps;

  beforeEach(async () => {
    receiver = await startForwardReceiver();
    forwarder = new EventForwarder({ logger: silentLogger(), metrics: new MetricsRegistry(), idleSweepIntervalMs: 0 });
    t = buildTestApps({ forwarder });
    t.store.seedScheduler('s1', validSpec({ forwarders: [{ name: 'mm', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 60_000, metadata: { region: 'eu' } } }] }));
    t.store.seedRoom('s1', 'room-1', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', host: 'h', ports: [] });
    t.store.seedRoom('s1', 'validator', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready' }, { validation: true });
  });

  afterEach(async () => {
    forwarder.close();
    await receiver.stop();
  });

  it('forwards room and player events and reports the outcome', async () => {
    const ev = await request(t.rooms).post('/scheduler/s1/rooms/room-1/roomevent').set('Authorization', token('s1', 'room-1')).send({ event: 'matchStarted', timestamp: 1, metadata: { a: 1 } });
    expect(ev.body).toEqual({ success: true, message: '' });
    const pe = await request(t.rooms).post('/scheduler/s1/rooms/room-1/playerevent').set('Authorization', token('s1', 'room-1')).send({ event: 'playerLeft', metadata: { playerId: 'p9' } });
    expect(pe.body).toEqual({ success: true, message: '' });
    expect(receiver.received.map((c) => c.rpc)).toEqual(['SendRoomEvent', 'SendPlayerEvent']);
  });

  it('answers success:false with a message when forwarding fails', async () => {
    receiver.setReply(() => ({ grpcError: { code: grpc.status.UNAVAILABLE, details: 'down for maintenance' } }));
    const ev = await request(t.rooms).post('/scheduler/s1/rooms/room-1/roomevent').set('Authorization', token('s1', 'room-1')).send({ event: 'matchStarted' });
    expect(ev.body).toEqual({ success: false, message: 'forwarding to mm failed: the receiver answered UNAVAILABLE: down for maintenance; see the receiver\'s log' });
    const st = await request(t.rooms).put('/scheduler/s1/rooms/room-1/status').set('Authorization', token('s1', 'room-1')).send({ status: 'ready', timestamp: 1 });
    expect(st.body).toEqual({ success: false, message: 'forwarding to mm failed: the receiver answered UNAVAILABLE: down for maintenance; see the receiver\'s log' });
  });

  it('tells the cause of a failed event in its message: the receiver\'s error, the deadline that passed, a receiver gone; no address, bounded', async () => {
    const playerEvent = async () => (await request(t.rooms).post('/scheduler/s1/rooms/room-1/playerevent').set('Authorization', token('s1', 'room-1')).send({ event: 'playerJoin', metadata: { playerId: 'p-1' } })).body as { success: boolean; message: string };
    receiver.setReply(() => ({ grpcError: { code: grpc.status.INTERNAL, details: `receiver says no to ${receiver.address} ${'x'.repeat(500)}` } }));
    const refused = await playerEvent();
    expect(refused.success).toBe(false);
    expect(refused.message).toMatch(/^forwarding to mm failed: the receiver answered INTERNAL: receiver says no to the receiver x+\.\.\.; see the receiver's log$/);
    expect(refused.message).not.toContain(receiver.address);
    expect(refused.message.length).toBeLessThan(300);

    t.store.seedScheduler('s1', validSpec({ forwarders: [{ name: 'mm', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 200 } }] }));
    receiver.setReply(() => NO_REPLY);
    expect(await playerEvent()).toEqual({ success: false, message: 'forwarding to mm failed: the receiver did not answer within 200 ms (DEADLINE_EXCEEDED); make it answer sooner or raise the forwarder\'s options.timeout' });

    const address = receiver.address;
    await receiver.stop();
    const gone = await playerEvent();
    expect(gone.message).toMatch(/^forwarding to mm failed: (the receiver could not be reached \(UNAVAILABLE[^)]*\); check that it runs and listens at the forwarder's address|the receiver did not answer within 200 ms \(DEADLINE_EXCEEDED\); .*)$/);
    expect(gone.message).not.toContain(address);
    expect(gone.message).not.toContain('127.0.0.1');
  });

  it('with the forwarding worker, a ping is answered before it is forwarded, forwarded from the worker thread, and counted when done', async () => {
    receiver.setReply(() => NO_REPLY);
    const metrics = new MetricsRegistry();
    const worker = new ForwardingWorker({ logger: silentLogger(), metrics, logLevel: 'error', record: (f) => forwarder.recordRelayed(f), reportIntervalMs: 20 });
    try {
      const w = buildTestApps({ forwarder, pingQueue: worker });
      // 3 s, so that the call reaches the receiver before its deadline also when the worker thread
      // (at nice 10) waits for a CPU: with 300 ms, two other suites on the 2 cores sometimes let the
      // deadline pass while the channel was still connecting, and the receiver never saw the call.
      w.store.seedScheduler('s1', validSpec({ forwarders: [{ name: 'mm', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 3000 } }] }));
      w.store.seedRoom('s1', 'room-1', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', host: 'h', ports: [] });
      const res = await request(w.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', token('s1', 'room-1')).send({ status: 'occupied', timestamp: 1 });
      expect(res.body).toEqual({ success: true });
      await waitFor(() => receiver.requestsOf('SendRoomResync').length === 1, { timeoutMs: 10_000 });
      // The receiver never answers: the call times out in the worker, and the ping counts as failed.
      await waitFor(async () => (await request(w.rooms).get('/metrics')).text.includes('roomkeeper_gateway_forwards_total{result="failed",type="ping"} 1'), { timeoutMs: 10_000, message: 'the failed forward counted' });
    } finally {
      await worker.close();
    }
  });

  it('forwards a terminated ping as a ping (SendRoomResync, statusType terminated), as Maestro: the one SendRoomStatus terminated is the room\'s removal\'s', async () => {
    const worker = new ForwardingWorker({ logger: silentLogger(), metrics: new MetricsRegistry(), logLevel: 'error', record: (f) => forwarder.recordRelayed(f) });
    try {
      for (const [apps, room] of [[t, 'room-1'], [buildTestApps({ forwarder, pingQueue: worker }), 'room-2']] as const) {
        apps.store.seedScheduler('s1', validSpec({ forwarders: [{ name: 'mm', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 60_000 } }] }));
        apps.store.seedRoom('s1', room, { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', host: 'h', ports: [] });
        for (const status of ['terminating', 'terminated']) {
          expect((await request(apps.rooms).put(`/scheduler/s1/rooms/${room}/ping`).set('Authorization', token('s1', room)).send({ status })).body).toEqual({ success: true });
        }
        const roomOf = (c: (typeof receiver.received)[number]) => (c.request as { room?: { roomId?: string; metadata?: Record<string, string> } }).room;
        const mine = () => receiver.received.filter((c) => roomOf(c)?.roomId === room);
        await waitFor(() => mine().length === 2, { timeoutMs: 10_000, message: `both pings of ${room} forwarded` });
        expect(mine().map((c) => [c.rpc, (c.request as { statusType?: unknown }).statusType, roomOf(c)?.metadata?.eventType])).toEqual([
          ['SendRoomResync', 'terminating', 'resync'],
          ['SendRoomResync', 'terminated', 'resync'],
        ]);
      }
    } finally {
      await worker.close();
    }
  });

  it('answers a ping without waiting for forwarding, and forwards it', async () => {
    receiver.setReply(() => NO_REPLY);
    const res = await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', token('s1', 'room-1')).send({ status: 'ready', timestamp: 1 });
    expect(res.body).toEqual({ success: true });
    await waitFor(() => receiver.requestsOf('SendRoomResync').length === 1, { timeoutMs: 10_000 });
  });

  it('never dials a forwarder address that is not host:port, and tells the room why', async () => {
    t.store.seedScheduler('s2', validSpec({ forwarders: [{ name: 'sock', enable: true, type: 'gRPC', address: 'unix:/var/run/docker.sock', options: { timeout: 1000 } }] }));
    t.store.seedRoom('s2', 'room-1', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', host: 'h', ports: [] });
    const ev = await request(t.rooms).post('/scheduler/s2/rooms/room-1/roomevent').set('Authorization', token('s2', 'room-1')).send({ event: 'matchStarted' });
    expect(ev.body).toEqual({ success: false, message: 'forwarding to sock failed: the forwarder\'s address is not host:port, so it was not dialled; set it to the receiver\'s host:port' });
    expect(forwarder.openConnections).toBe(0);
  });

  it('never forwards a validation room', async () => {
    const ev = await request(t.rooms).post('/scheduler/s1/rooms/validator/roomevent').set('Authorization', token('s1', 'validator')).send({ event: 'x' });
    expect(ev.body).toEqual({ success: true, message: '' });
    await request(t.rooms).put('/scheduler/s1/rooms/validator/ping').set('Authorization', token('s1', 'validator')).send({ status: 'occupied' });
    expect(receiver.received).toEqual([]);
  });
});

describe('every rooms route', () => {
  let t: TestApps;
  beforeEach(() => {
    t = buildTestApps();
    t.store.seedRoom('s1', 'room-1', { pingStatus: 'ready', instanceStatus: 'ready', status: 'ready' });
  });
  const concrete = (path: string) => path.replace(':schedulerName', 's1').replace(':roomId', 'room-1');
  const withBody = ROOMS_ROUTES.filter((r) => 'requestBody' in r);

  it.each(ROOMS_ROUTES.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 401 without a token and writes nothing', async (_m, _p, route) => {
    const res = await request(t.rooms)[route.method](concrete(route.path)).send({ status: 'occupied', event: 'playerJoin', metadata: { playerId: 'p' } });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 16, success: false });
    expect(t.store.writes).toEqual([]);
  });

  it.each(ROOMS_ROUTES.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 400 (success:false) naming the path part that is not percent-encoded UTF-8 and what to send', async (_m, _p, route) => {
    const badRoom = await request(t.rooms)[route.method](route.path.replace(':schedulerName', 's1').replace(':roomId', '%C0%AF')).set('Authorization', token('s1', 'room-1')).send({ status: 'occupied', timestamp: 1 });
    expect(badRoom.status).toBe(400);
    expect(badRoom.body).toEqual({ success: false, code: 3, message: expect.stringMatching(/^the room id in the path, '%C0%AF', is not percent-encoded UTF-8 and cannot be decoded: send each character .*; a room id is its pod's name \(ROOMKEEPER_ROOM_ID/) as unknown, details: [] });
    const badScheduler = await request(t.rooms)[route.method](route.path.replace(':schedulerName', '%FF').replace(':roomId', 'room-1')).send({ status: 'occupied', timestamp: 1 });
    expect(badScheduler.body).toMatchObject({ success: false, code: 3, message: expect.stringMatching(/^the scheduler name in the path, '%FF', .*a scheduler name is an RFC 1123 label/) as unknown });
    expect(t.store.writes).toEqual([]);
  });

  it('names an undecodable part of the path on the ping fast path\'s route and on allocate sent to the rooms port', async () => {
    const server = http.createServer(requestListener(t.rooms));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const body = JSON.stringify({ status: 'ready', timestamp: 1 });
      const ping = await fetch(`${base}/scheduler/s1/rooms/%C0%AF/ping`, { method: 'PUT', headers: { authorization: token('s1', 'room-1'), 'content-type': 'application/json' }, body });
      expect(ping.status).toBe(400);
      expect(await ping.json()).toEqual({ success: false, code: 3, message: expect.stringMatching(/^the room id in the path, '%C0%AF', is not percent-encoded UTF-8/) as unknown, details: [] });
      const allocate = await fetch(`${base}/scheduler/%C0%AF/rooms/allocate`, { method: 'POST' });
      expect(allocate.status).toBe(400);
      expect(await allocate.json()).toMatchObject({ success: false, code: 3, message: expect.stringMatching(/^the scheduler name in the path, '%C0%AF', is not percent-encoded UTF-8/) as unknown });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each(withBody.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s answers 413 over the limit and 400 for malformed JSON', async (_m, _p, route) => {
    const big = await request(t.rooms)[route.method](concrete(route.path)).set('Authorization', token('s1', 'room-1')).send({ blob: 'z'.repeat(MAX_BODY + 1) });
    expect(big.status).toBe(413);
    const bad = await request(t.rooms)[route.method](concrete(route.path)).set('Authorization', token('s1', 'room-1')).set('Content-Type', 'application/json').send('{"status":');
    expect(bad.status).toBe(400);
    expect(t.store.writes).toEqual([]);
  });

  it.each(withBody.flatMap((r) => ['text/plain', 'application/x-www-form-urlencoded', 'text/plain; charset=utf-8', undefined].map((ct) => [r.method.toUpperCase(), r.path, String(ct), r, ct] as const)))('%s %s reads a JSON body sent as %s, as Maestro parses any type (plain curl -d sends a form type)', async (_m, _p, _c, route, contentType) => {
    const body = JSON.stringify({ status: 'occupied', event: 'playerJoin', metadata: { playerId: 'p' }, timestamp: 1 });
    const req = request(t.rooms)[route.method](concrete(route.path)).set('Authorization', token('s1', 'room-1'));
    // Without a type superagent would say form-urlencoded; a Buffer body goes as it is.
    const res = await (contentType ? req.set('Content-Type', contentType).send(body) : req.send(Buffer.from(body)));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true });
    if (route.id === 'ping') expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', status: 'occupied' });
  });

  it.each(withBody.flatMap((r) => ['multipart/form-data; boundary=x', 'application/octet-stream', 'application/xml'].map((ct) => [r.method.toUpperCase(), r.path, ct, r] as const)))('%s %s answers 415 for a body sent as %s and writes nothing', async (_m, _p, contentType, route) => {
    const body = JSON.stringify({ status: 'terminated', event: 'playerJoin', metadata: { playerId: 'p' }, timestamp: 1 });
    const res = await request(t.rooms)[route.method](concrete(route.path)).set('Authorization', token('s1', 'room-1')).set('Content-Type', contentType).send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ success: false, code: 3, message: 'the request body must be JSON: send it with Content-Type: application/json', details: [] });
    expect(t.store.writes).toEqual([]);
    expect(t.recorder.pendingSchedulers).toBe(0);
  });

  it('the ping fast path and the Express route answer a ping alike, whatever its content type (the fast path takes bodies of known length; chunked ones go to Express)', async () => {
    const server = http.createServer(requestListener(t.rooms));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scheduler/s1/rooms/room-1/ping`;
    const send = (contentType: string | undefined, body: string, chunked: boolean) => {
      const headers = { authorization: token('s1', 'room-1'), ...(contentType ? { 'content-type': contentType } : {}), ...(chunked ? {} : { 'content-length': Buffer.byteLength(body) }) };
      return rawPut(url, headers, (req) => {
        if (chunked) req.write(body.slice(0, 3));
        req.end(chunked ? body.slice(3) : body);
      });
    };
    try {
      const cases: [string | undefined, string, number][] = [
        [undefined, '{"status":"ready","timestamp":1}', 200],
        ['text/plain', '{"status":"ready"}', 200],
        ['application/x-www-form-urlencoded', '{"status":"ready","timestamp":"123"}', 200],
        ['application/x-www-form-urlencoded; charset=utf-8', '{"status":"ready"}', 200],
        ['application/x-www-form-urlencoded', 'status=ready', 400],
        ['text/plain', '{"status":"dancing"}', 400],
        ['application/x-www-form-urlencoded; charset=latin1', '{"status":"ready"}', 415],
        ['multipart/form-data; boundary=x', '{"status":"ready"}', 415],
        // Keys sent twice are not looked for on the rooms API (docs/maestro-compatibility.md): the last one is read.
        ['application/json', '{"status":"ready","status":"occupied","metadata":{"a":"1","a":"2"}}', 200],
      ];
      for (const [contentType, body, status] of cases) {
        const fast = await send(contentType, body, false);
        const express = await send(contentType, body, true);
        expect([contentType, body, fast.status]).toEqual([contentType, body, status]);
        expect([contentType, body, express]).toEqual([contentType, body, fast]);
      }
      expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each(withBody.flatMap((r) => ['latin1', 'US-ASCII'].map((charset) => [r.method.toUpperCase(), r.path, charset, r] as const)))('%s %s answers 415 for charset=%s, as the management API, and writes nothing', async (_m, _p, charset, route) => {
    const body = JSON.stringify({ status: 'terminated', event: 'playerJoin', metadata: { playerId: 'p' }, timestamp: 1 });
    const res = await request(t.rooms)[route.method](concrete(route.path)).set('Authorization', token('s1', 'room-1')).set('Content-Type', `application/json; charset=${charset}`).send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ success: false, code: 3, message: `unsupported charset "${charset.toUpperCase()}": send the body in UTF-8 (Content-Type: application/json, or with charset=utf-8)`, details: [] });
    expect(t.store.writes).toEqual([]);
    expect(t.recorder.pendingSchedulers).toBe(0);
  });

  it('reads a ping declared UTF-8 in any case, quoted or not', async () => {
    const ping = (contentType: string) => request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', token('s1', 'room-1')).set('Content-Type', contentType).send('{"status":"ready"}');
    expect((await ping('application/json; charset="UTF-8"')).body).toEqual({ success: true });
    expect((await ping('application/json;charset=utf-8')).body).toEqual({ success: true });
    expect((await ping('application/json; charset=utf8')).body).toEqual({ success: true });
  });

  it.each(withBody.map((r) => [r.method.toUpperCase(), r.path, r] as const))('%s %s reads a body declared charset=utf8 (utf-8 spelt without its dash)', async (_m, _p, route) => {
    const body = JSON.stringify({ status: 'terminated', event: 'playerJoin', metadata: { playerId: 'p' }, timestamp: 1 });
    const res = await request(t.rooms)[route.method](concrete(route.path)).set('Authorization', token('s1', 'room-1')).set('Content-Type', 'application/json; charset=UTF8').send(body);
    expect(res.status).not.toBe(415);
  });

  it.each([...new Set(ROOMS_ROUTES.map((r) => r.path))])('%s answers 501 for OPTIONS', async (path) => {
    const res = await request(t.rooms).options(concrete(path)).set('Authorization', token('s1', 'room-1'));
    expect(res.status).toBe(501);
    expect(bodyOf(res).code).toBe(12);
  });
});
