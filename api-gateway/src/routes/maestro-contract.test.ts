/**
 * Points of Maestro's HTTP contract that docs/maestro-compatibility.md lists and no other router
 * test proves: request encodings a Maestro client sends, the gRPC code to HTTP status mapping,
 * the deprecated status route, 503 when the Kubernetes API is out of reach, and the rooms routes
 * Roomkeeper does not serve.
 */
import request from 'supertest';
import { silentLogger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import { createManagementApp } from '../app';
import { staticCredentials } from '../auth';
import { GrpcCode, httpStatusFromGrpcCode, StoreUnavailableError } from '../errors';
import { createSchedulerValidator } from '../scheduler-validator';
import { AUTH, bodyOf, buildTestApps, MAX_BODY, PASSWORD, ROOM_SECRET, USER, validCreateBody, validSpec, type TestApps } from '../testing/fixtures';
import { InMemoryStore } from '../testing/in-memory-store';
import { RoomReports, type RoomEventSink } from '../use-cases/room-reports';
import { roomToken } from '../../../common/src/rooms/room-token';
import { ROOMS_ROUTES } from './rooms-routes';

let t: TestApps;
beforeEach(() => {
  t = buildTestApps();
});

const api = () => request(t.management);
const token = (scheduler: string, room: string) => `Bearer ${roomToken(ROOM_SECRET, scheduler, room)}`;

describe('request encodings of a Maestro client', () => {
  it('accepts snake_case field names (protojson) and drops unknown fields', async () => {
    const { roomsReplicas: _r, maxSurge: _m, ...rest } = validCreateBody('snake');
    const res = await api().post('/schedulers').set('Authorization', AUTH).send({ ...rest, rooms_replicas: 2, max_surge: '25%', colour: 'red' });
    expect(res.status).toBe(200);
    const stored = t.store.schedulers.get('snake');
    expect(stored?.spec).toMatchObject({ roomsReplicas: 2, maxSurge: '25%' });
    expect(stored?.spec).not.toHaveProperty('colour');
    expect(stored?.spec).not.toHaveProperty('rooms_replicas');
  });

  it('reads integer fields sent as strings of digits as integers, as protojson does, on create and on PATCH', async () => {
    const body = { ...validCreateBody('quoted'), roomsReplicas: '2', portRange: { start: '40000', end: '40100' } };
    expect((await api().post('/schedulers').set('Authorization', AUTH).send(body)).status).toBe(200);
    expect(t.store.schedulers.get('quoted')?.spec).toMatchObject({ roomsReplicas: 2, portRange: { start: 40000, end: 40100 } });
    const patched = await api().patch('/schedulers/quoted').set('Authorization', AUTH).send({ roomsReplicas: '3' });
    expect(patched.status).toBe(200);
    const refused = await api().patch('/schedulers/quoted').set('Authorization', AUTH).send({ roomsReplicas: 'three' });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(bodyOf(refused))).toContain('roomsReplicas');
  });

  it('accepts rooms_ids in a remove-rooms body and stores the input as roomsIds with reason api', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const res = await api().post('/schedulers/tennis-eu/remove-rooms').set('Authorization', AUTH).send({ rooms_ids: ['tennis-eu-abcde'] });
    expect(res.status).toBe(200);
    expect(t.store.operations.get(bodyOf(res).operationId!)?.spec).toMatchObject({ definitionName: 'remove_rooms', input: { roomsIds: ['tennis-eu-abcde'], reason: 'api' } });
  });

  it('shows int64 and duration fields as strings in a scheduler', async () => {
    t.store.seedScheduler('fw', validSpec({ forwarders: [{ name: 'mm', enable: true, type: 'gRPC', address: 'mm:9090', options: { timeout: 1000, metadata: { region: 'eu' } } }] }));
    const res = await api().get('/schedulers/fw').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    expect(bodyOf(res).scheduler!.forwarders[0]).toEqual({ name: 'mm', enable: true, type: 'gRPC', address: 'mm:9090', options: { timeout: '1000', metadata: { region: 'eu' } } });
    expect(bodyOf(res).scheduler!.spec.terminationGracePeriod).toBe('100s');
    expect(bodyOf(res).scheduler!.maxSurge).toBe('10%');
  });
});

describe('new version (POST /schedulers/{name})', () => {
  it('shows a forwarder without options with the timeout that applies, and takes the GET answer POSTed back', async () => {
    t.store.seedScheduler('fw', validSpec({ forwarders: [{ name: 'recv', enable: true, type: 'gRPC', address: 'recv:9090' }] }));
    const got = bodyOf(await api().get('/schedulers/fw').set('Authorization', AUTH)).scheduler!;
    expect(got.forwarders[0]!.options).toEqual({ timeout: '1000', metadata: {} });
    const res = await api().post('/schedulers/fw').set('Authorization', AUTH).send({ ...got, roomsReplicas: 5 });
    expect(res.body).toMatchObject({ operationId: expect.any(String) as string });
    expect(res.status).toBe(200);
    expect(t.store.schedulers.get('fw')?.spec.forwarders?.[0]?.options?.timeout).toBe('1000');
  });

  it('needs no portRange when every port has a hostPortRange (Maestro effectively requires one)', async () => {
    t.store.seedScheduler('tennis-eu', validSpec());
    const { portRange: _p, ...body } = validCreateBody('tennis-eu');
    const spec = validSpec().spec;
    const ports = [{ name: 'game', protocol: 'udp', port: 7777, hostPortRange: { start: 41000, end: 42000 } }];
    const res = await api().post('/schedulers/tennis-eu').set('Authorization', AUTH).send({ ...body, spec: { ...spec, containers: [{ ...spec.containers[0], ports }] } });
    expect(res.status).toBe(200);
    expect(t.store.operations.get(bodyOf(res).operationId!)?.spec.definitionName).toBe('create_new_scheduler_version');
    const stored = t.store.schedulers.get('tennis-eu')?.spec;
    expect(stored).not.toHaveProperty('portRange');
    expect(stored?.spec.containers[0]?.ports).toEqual(ports);
    // A scheduler created that way shows no portRange either (the new version above is not active yet).
    const { portRange: _q, ...created } = validCreateBody('hp');
    expect((await api().post('/schedulers').set('Authorization', AUTH).send({ ...created, spec: { ...spec, containers: [{ ...spec.containers[0], ports }] } })).status).toBe(200);
    const shown = bodyOf(await api().get('/schedulers/hp').set('Authorization', AUTH)).scheduler;
    expect(shown).not.toHaveProperty('portRange');
    expect(shown!.spec.containers[0]!.ports).toEqual([{ ...ports[0], hostPort: 0 }]);
  });

  it('drops a hostPort sent in a port and shows 0: each room\'s host port is drawn from the range (Maestro stores and shows the one sent, which no room uses either)', async () => {
    const spec = validSpec().spec;
    const body = { ...validCreateBody('hp'), spec: { ...spec, containers: [{ ...spec.containers[0], ports: [{ name: 'game', protocol: 'udp', port: 7777, hostPort: 54321 }] }] } };
    expect((await api().post('/schedulers').set('Authorization', AUTH).send(body)).status).toBe(200);
    expect(t.store.schedulers.get('hp')?.spec.spec.containers[0]?.ports).toEqual([{ name: 'game', protocol: 'udp', port: 7777 }]);
    expect(bodyOf(await api().get('/schedulers/hp').set('Authorization', AUTH)).scheduler!.spec.containers[0]!.ports).toEqual([{ name: 'game', protocol: 'udp', port: 7777, hostPort: 0 }]);
  });
});

describe('SchedulerInfo', () => {
  it('shows the configured autoscaling cooldown (Maestro always shows 0)', async () => {
    t.store.seedScheduler('a', validSpec({ autoscaling: { enabled: true, min: 1, max: 10, cooldown: 30, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } } }));
    const res = await api().get('/schedulers/info?game=tennis').set('Authorization', AUTH);
    expect(bodyOf(res).schedulers![0]!.autoscaling).toEqual({ enabled: true, min: 1, max: 10, cooldown: 30 });
  });
});

describe('error codes', () => {
  it('maps each gRPC code to the HTTP status grpc-gateway gives it', () => {
    expect(Object.entries(GrpcCode).map(([name, code]) => [name, code, httpStatusFromGrpcCode(code)])).toEqual([
      ['Unknown', 2, 500],
      ['InvalidArgument', 3, 400],
      ['NotFound', 5, 404],
      ['AlreadyExists', 6, 409],
      ['PermissionDenied', 7, 403],
      ['ResourceExhausted', 8, 429],
      ['FailedPrecondition', 9, 400],
      ['Aborted', 10, 409],
      ['Unimplemented', 12, 501],
      ['Internal', 13, 500],
      ['Unavailable', 14, 503],
      ['Unauthenticated', 16, 401],
    ]);
  });

  /** A management app whose scheduler store fails every listSchedulers with `error`. */
  const failingApp = (error: Error) => {
    const store = new InMemoryStore(() => Date.parse('2026-01-01T00:00:00.000Z'));
    const failing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'listSchedulers') return () => Promise.reject(error);
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    return createManagementApp({
      schedulers: failing, operations: store, rooms: store, allocationStore: store, validator: createSchedulerValidator(), credentials: staticCredentials({ username: USER, password: PASSWORD }),
      now: () => Date.now(), logger: silentLogger(), metrics: new MetricsRegistry(), readiness: [], maxBodyBytes: MAX_BODY,
    });
  };

  it('answers 500 (code 13) for an unexpected failure, telling nothing of its cause', async () => {
    const res = await request(failingApp(new Error('secret detail of a bug'))).get('/schedulers').set('Authorization', AUTH);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 13, message: 'internal error', details: [] });
  });

  it('answers 503 (code 14) with Retry-After when the Kubernetes API cannot be reached', async () => {
    const app = failingApp(new StoreUnavailableError('the scheduler cache is not synced yet'));
    const res = await request(app).get('/schedulers').set('Authorization', AUTH);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({ code: 14, message: 'the scheduler cache is not synced yet', details: [] });
  });
});

describe('rooms API routes beside Maestro\'s', () => {
  beforeEach(() => {
    t.store.seedScheduler('s1', validSpec());
    t.store.seedRoom('s1', 'room-1', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0 });
  });

  it('the deprecated status route answers success and changes no room', async () => {
    const res = await request(t.rooms).put('/scheduler/s1/rooms/room-1/status').set('Authorization', token('s1', 'room-1')).send({ status: 'occupied', timestamp: 1700000000 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(t.store.writes).toEqual([]);
    expect(t.recorder.pendingSchedulers).toBe(0);
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ status: 'ready', pingStatus: 'ready' });
  });

  it('answers 404 (code 5) for allocate on the rooms port: allocating is a management call, behind Basic auth', async () => {
    const message = 'allocation is not served on the rooms API port: send POST /scheduler/{name}/rooms/allocate to the management API port, with HTTP Basic auth';
    const res = await request(t.rooms).post('/scheduler/s1/rooms/allocate').set('Authorization', token('s1', 'room-1')).send({});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, code: 5, message, details: [] });
    // The same answer without a token and for a scheduler that does not exist: it tells nothing of either.
    for (const path of ['/scheduler/s1/rooms/allocate', '/scheduler/ghost/rooms/allocate']) {
      const bare = await request(t.rooms).post(path);
      expect([bare.status, bare.body]).toEqual([404, { success: false, code: 5, message, details: [] }]);
    }
    expect(t.store.writes).toEqual([]);
  });
});

describe('rooms API calls sent to the management port', () => {
  it.each(ROOMS_ROUTES.map((r) => [r.method.toUpperCase(), r.path.replace(':schedulerName', 's1').replace(':roomId', 'room-1')] as const))(
    '%s %s answers 404 (code 5) naming the rooms API port, with or without credentials, and writes nothing',
    async (method, path) => {
      const openApi = path.replace('/s1/', '/{schedulerName}/').replace('/room-1/', '/{roomId}/');
      const message = `the rooms API is not served on the management API port: a game server sends ${method} ${openApi} to the rooms API port (the URL in the room's ROOMKEEPER_ROOMS_API_URL; 8090 by default), with Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN`;
      const send = (withToken: boolean) => {
        const req = request(t.management)[method.toLowerCase() as 'put' | 'post' | 'get'](path);
        if (withToken) void req.set('Authorization', token('s1', 'room-1'));
        return method === 'GET' ? req : req.send({ status: 'ready', event: 'x' });
      };
      for (const withToken of [true, false]) {
        const res = await send(withToken);
        expect([res.status, res.body]).toEqual([404, { code: 5, message, details: [] }]);
      }
      expect(t.store.writes).toEqual([]);
    },
  );
});

describe('ping forwarding', () => {
  const ok = { ok: true, results: [] };
  const sent: string[] = [];
  const sink: RoomEventSink = {
    forwardPing: (_f, room, status) => { sent.push(`${room.roomId}:${status}`); return Promise.resolve(ok); },
    forwardStatus: (_f, room, status) => { sent.push(`${room.roomId}:status:${status}`); return Promise.resolve(ok); },
    forwardRoomEvent: () => Promise.resolve(ok),
    forwardPlayerEvent: () => Promise.resolve(ok),
  };
  const reports = (intervalMs: number | undefined) => new RoomReports({
    rooms: t.store, recorder: t.recorder, forwarder: sink, logger: silentLogger(), metrics: new MetricsRegistry(), now: () => t.clock.now,
    ...(intervalMs === undefined ? {} : { forwardResyncIntervalMs: intervalMs }),
  });

  beforeEach(() => {
    sent.length = 0;
    t.store.seedScheduler('s1', validSpec({ forwarders: [{ name: 'mm', enable: true, type: 'gRPC', address: 'mm:9090', options: { timeout: 1000 } }] }));
    t.store.seedRoom('s1', 'room-1', { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: 'h', ports: [] });
  });

  it('forwards a status change at once and an unchanged ping at most every 30 s by default (Maestro: every ping)', async () => {
    const r = reports(undefined);
    for (let i = 0; i < 3; i++) expect(await r.ping('s1', 'room-1', { status: 'ready' })).toEqual({ success: true });
    expect(sent).toEqual(['room-1:ready']);
    await r.ping('s1', 'room-1', { status: 'occupied' });
    expect(sent).toEqual(['room-1:ready', 'room-1:occupied']);
    t.clock.now += 29_999;
    await r.ping('s1', 'room-1', { status: 'occupied' });
    expect(sent).toHaveLength(2);
    t.clock.now += 1;
    await r.ping('s1', 'room-1', { status: 'occupied' });
    expect(sent).toEqual(['room-1:ready', 'room-1:occupied', 'room-1:occupied']);
  });

  it('forwards every ping, as Maestro, with a resync interval of 0', async () => {
    const r = reports(0);
    for (let i = 0; i < 3; i++) await r.ping('s1', 'room-1', { status: 'ready' });
    expect(sent).toEqual(['room-1:ready', 'room-1:ready', 'room-1:ready']);
  });
});
