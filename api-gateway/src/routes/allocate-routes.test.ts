/**
 * POST /scheduler/{name}/rooms/allocate on the management app over the in-memory store (its
 * resourceVersion preconditions behave as the API server's); the behaviour across real replicas
 * and the API server is in test/e2e/allocation.test.ts and test/real-apiserver/allocation.test.ts.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import request from 'supertest';
import type { GameRoom, GameRoomStatus } from '../../../common/src/generated/resources';
import { groupAllocatable } from '../../../common/src/rooms/allocation';
import { roomToken } from '../../../common/src/rooms/room-token';
import { waitFor } from '../../../test/support/wait';
import { StoreUnavailableError } from '../errors';
import { AUTH, bodyOf, buildTestApps, ROOM_SECRET, validSpec, type TestApps } from '../testing/fixtures';
import { requestListener } from '../app';

const REPLAYED = 'replayed: this allocationId was already answered with this room';
const READY: GameRoomStatus = { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 40123, containerPort: 7777 }] };

/**
 * Makes the in-memory store's claim and room writes take a few milliseconds, as the API server's
 * do: tries sent at once then overlap (with none, a try is answered before the next one is read).
 */
function writesTakeApiServerTime(apps: TestApps): void {
  const claim = apps.store.claimAllocationId.bind(apps.store);
  const commit = apps.store.commitAllocation.bind(apps.store);
  jest.spyOn(apps.store, 'claimAllocationId').mockImplementation(async (...args) => { await delay(2); return claim(...args); });
  jest.spyOn(apps.store, 'commitAllocation').mockImplementation(async (...args) => { await delay(5); return commit(...args); });
}

describe('POST /scheduler/{name}/rooms/allocate', () => {
  let t: TestApps;
  beforeEach(() => {
    t = buildTestApps();
    t.store.seedScheduler('s1', validSpec(), { version: 'v1.0.0' });
  });
  /** The rooms' status writes (an allocationId's claim is created and deleted around each try). */
  const roomWrites = () => t.store.writes.filter((w) => w.kind === 'gameroom-status');
  const allocate = (body?: unknown, scheduler = 's1') => {
    const req = request(t.management).post(`/scheduler/${scheduler}/rooms/allocate`).set('Authorization', AUTH);
    return body === undefined ? req : req.send(body as object);
  };

  it('needs credentials', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await request(t.management).post('/scheduler/s1/rooms/allocate');
    expect(res.status).toBe(401);
    expect(t.store.findRoom('s1', 'room-1')?.status?.allocation).toBeUndefined();
  });

  it('allocates a ready room with an empty body (Maestro) and writes it with one status write', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true, roomId: 'room-1', host: '10.0.0.7', ports: [{ name: 'game', protocol: 'UDP', port: 40123 }], version: 'v1.0.0', message: '',
      expiresAt: '2026-01-01T00:05:00.000Z',
    });
    expect(typeof bodyOf(res).allocationId).toBe('string');
    expect(t.store.writes).toEqual([{ kind: 'gameroom-status', verb: 'patch', name: 's1/room-1' }]);
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ status: 'allocated', allocation: { id: bodyOf(res).allocationId, expiresAt: '2026-01-01T00:05:00.000Z' } });
  });

  it('answers 429 with Retry-After and code 8 when no room is ready, changing nothing', async () => {
    t.store.seedRoom('s1', 'busy', { ...READY, status: 'occupied', pingStatus: 'occupied' });
    t.store.seedRoom('s1', 'pending', { status: 'pending' });
    const res = await allocate({});
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatchObject({ code: 8, message: 'no ready rooms available for scheduler s1; retry later or add rooms', details: [{ reason: 'NO_ROOM_AVAILABLE' }] });
    expect(t.store.writes).toEqual([]);
  });

  it('answers Maestro\'s 500 (code 2) when no room is ready and ROOMKEEPER_ALLOCATION_NO_ROOM_MAESTRO is set', async () => {
    const maestro = buildTestApps({ allocationSettings: { maestroNoRoomStatus: true } });
    maestro.store.seedScheduler('s1', validSpec(), { version: 'v1.0.0' });
    const res = await request(maestro.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH);
    expect(res.status).toBe(500);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.body).toMatchObject({ code: 2, message: 'no ready rooms available for scheduler s1; retry later or add rooms' });
  });

  it('answers 404 for an unknown scheduler', async () => {
    const res = await allocate({}, 'ghost');
    expect(res.status).toBe(404);
    expect(bodyOf(res).message).toBe('scheduler ghost not found');
  });

  it('counts an unknown scheduler as not_found and a Kubernetes API it cannot reach as error', async () => {
    expect((await allocate({}, 'ghost')).status).toBe(404);
    jest.spyOn(t.store, 'getScheduler').mockRejectedValueOnce(new StoreUnavailableError('the Kubernetes API is unavailable: connect ECONNREFUSED'));
    expect((await allocate({}, 'ghost')).status).toBe(503);
    const text = await t.metrics.render();
    expect(text).toContain('roomkeeper_allocations_total{result="not_found"} 1');
    expect(text).toContain('roomkeeper_allocations_total{result="error"} 1');
  });

  describe('a write the Kubernetes API server refuses for the cluster\'s policy, not the gateway\'s rights', () => {
    /** kube-apiserver's 403 (a client-node ApiException) as v1.28 words it. */
    const forbidden = (message: string, details?: object) => Object.assign(new Error('HTTP-Code: 403'), {
      code: 403, body: JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message, ...(details ? { details } : {}) }),
    });

    it("answers 429 with Retry-After and code 8 naming the claim's create, the ResourceQuota's words and how to raise it", async () => {
      t.store.seedRoom('s1', 'room-1', READY);
      jest.spyOn(t.store, 'claimAllocationId').mockRejectedValueOnce(forbidden(
        'allocationclaims.roomkeeper.io "id-1" is forbidden: exceeded quota: cq, requested: count/allocationclaims.roomkeeper.io=1, used: count/allocationclaims.roomkeeper.io=0, limited: count/allocationclaims.roomkeeper.io=0',
        { name: 'id-1', group: 'roomkeeper.io', kind: 'allocationclaims' },
      ));
      const res = await allocate({ allocationId: 'trial-1' });
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toMatchObject({
        code: 8,
        details: [{ reason: 'KUBERNETES_QUOTA_EXCEEDED', request: 'create allocationclaims.roomkeeper.io in namespace s1', quota: 'cq', namespace: 's1' }],
      });
      const message = String(bodyOf(res).message);
      expect(message).toContain("refused the gateway's own request to create allocationclaims.roomkeeper.io in namespace s1 (403 Forbidden: exceeded quota: cq, requested: count/allocationclaims.roomkeeper.io=1");
      expect(message).toContain('the request was not carried out');
      expect(message).toContain('raise its hard limit for it (kubectl -n s1 edit resourcequota cq)');
      expect(message).not.toContain('RBAC');
      expect(t.store.findRoom('s1', 'room-1')?.status?.allocation).toBeUndefined();
    });

    it("answers 403 with code 7 naming the room's status write and the webhook that denied it", async () => {
      t.store.seedRoom('s1', 'room-1', READY);
      jest.spyOn(t.store, 'commitAllocation').mockRejectedValueOnce(forbidden('admission webhook "rooms.policy.example.com" denied the request: allocations are paused'));
      const res = await allocate({});
      expect(res.status).toBe(403);
      expect(res.headers['retry-after']).toBeUndefined();
      expect(res.body).toMatchObject({
        code: 7,
        details: [{ reason: 'KUBERNETES_ADMISSION_DENIED', request: 'patch gamerooms.roomkeeper.io/status in namespace s1', admission: 'admission webhook "rooms.policy.example.com"' }],
      });
      expect(String(bodyOf(res).message)).toContain('admission webhook "rooms.policy.example.com" denied it (admission webhook "rooms.policy.example.com" denied the request: allocations are paused)');
    });
  });

  it('refuses a malformed body with 400 naming each field, and changes nothing', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate({ allocationId: 'bad id!', strategy: 'random', ttlSeconds: 0, selectors: [{ version: '1.0' }], metadata: { blob: 'x'.repeat(5000) } });
    expect(res.status).toBe(400);
    const fields = (bodyOf(res).details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['allocationId', 'metadata', 'selectors[0].version', 'strategy', 'ttlSeconds']);
    expect(t.store.writes).toEqual([]);
    expect((await allocate([1, 2])).status).toBe(400);
    expect(t.store.findRoom('s1', 'room-1')?.status?.allocation).toBeUndefined();
  });

  it('refuses a "__proto__" key anywhere in metadata with 400 naming its path, and changes nothing', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    // As JSON text: a "__proto__" key in an object literal would set its prototype instead.
    const res = await request(t.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).set('Content-Type', 'application/json')
      .send('{"metadata":{"__proto__":{"x":1},"players":[{"a":{"__proto__":null}}],"mode":"duel"}}');
    expect(res.status).toBe(400);
    const rule = 'the key "__proto__" is not accepted (it names a JavaScript object\'s prototype): rename it';
    expect(bodyOf(res).details).toEqual([{ field: 'metadata.__proto__', message: rule }, { field: 'metadata.players[0].a.__proto__', message: rule }]);
    expect(t.store.writes).toEqual([]);
    expect(t.store.findRoom('s1', 'room-1')?.status?.allocation).toBeUndefined();
  });

  it.each<[string, unknown, string[]]>([
    ['an unknown selector field', { selectors: [{ bogus: 1 }] }, ['selectors[0].bogus']],
    ['a typo of labels, and of ttlSeconds', { selectors: [{ version: 'v1.0.0' }, { label: { tier: 'gold' } }], ttlSecond: 5 }, ['ttlSecond', 'selectors[1].label']],
    ['a typo of selectors', { selector: [{ labels: { tier: 'gold' } }] }, ['selector']],
    ['a label key Kubernetes cannot hold', { selectors: [{ labels: { 'a b': 'c' } }] }, ['selectors[0].labels']],
    ['a label value Kubernetes cannot hold', { selectors: [{ labels: { tier: 'gold!' } }] }, ['selectors[0].labels']],
  ])('refuses %s with 400 naming the field, instead of taking any room, and changes nothing', async (_what, body, fields) => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate(body);
    expect(res.status).toBe(400);
    expect(bodyOf(res).code).toBe(3);
    expect((bodyOf(res).details as { field: string }[]).map((d) => d.field)).toEqual(fields);
    expect(t.store.writes).toEqual([]);
    expect(t.store.findRoom('s1', 'room-1')?.status?.allocation).toBeUndefined();
  });

  it('reads the body as every management body is: ttlSeconds as a string of digits, snake_case names, null as not sent', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate({ ttl_seconds: '5', allocation_id: 'snake-1', selectors: null, strategy: null });
    expect(res.status).toBe(200);
    expect(bodyOf(res)).toMatchObject({ roomId: 'room-1', allocationId: 'snake-1', expiresAt: '2026-01-01T00:00:05.000Z' });
    // The same request in camelCase is its replay.
    const replay = await allocate({ allocationId: 'snake-1', ttlSeconds: 5 });
    expect(bodyOf(replay)).toMatchObject({ roomId: 'room-1', allocationId: 'snake-1' });
    const twice = await allocate({ ttlSeconds: 5, ttl_seconds: 6 });
    expect(twice.status).toBe(400);
    expect((bodyOf(twice).details as { field: string }[]).map((d) => d.field)).toEqual(['ttlSeconds']);
    expect((await allocate({ ttlSeconds: '5.0' })).status).toBe(400);
  });

  it.each(['schedulerName', 'scheduler_name'])('takes the scheduler in the body as Maestro\'s gRPC gateway does (%s), the path deciding', async (field) => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate({ [field]: 'another' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, roomId: 'room-1' });
  });

  it('takes a selector of a prefixed label key, and an empty label value, as Kubernetes does', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate({ selectors: [{ labels: { 'example.com/tier': 'gold', mode: '' } }] });
    expect(res.status).toBe(429);
  });

  it('replays an allocationId (body or Idempotency-Key) with the same room, and refuses it with another body (409)', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    t.store.seedRoom('s1', 'room-2', READY);
    const first = await allocate({ allocationId: 'match-42', metadata: { mode: 'duel' } });
    expect(first.status).toBe(200);
    const again = await request(t.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).set('Idempotency-Key', 'match-42').send({ metadata: { mode: 'duel' } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ roomId: bodyOf(first).roomId, allocationId: 'match-42', expiresAt: bodyOf(first).expiresAt });
    expect(roomWrites()).toHaveLength(1);
    const other = await allocate({ allocationId: 'match-42', metadata: { mode: 'ffa' } });
    expect(other.status).toBe(409);
    expect(bodyOf(other).message).toContain('allocationId match-42 was already used with another request body');
    const mismatch = await request(t.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).set('Idempotency-Key', 'k-1').send({ allocationId: 'k-2' });
    expect(mismatch.status).toBe(400);
    expect(bodyOf(mismatch).details).toEqual([{ field: 'allocationId', message: 'differs from the Idempotency-Key header; send one, or the same value in both' }]);
    // Sent twice: Node joins the two headers with ", ", as here.
    const twice = await request(t.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).set('Idempotency-Key', 'k-1, k-2').send({});
    expect(twice.status).toBe(400);
    expect(bodyOf(twice).details).toEqual([{ field: 'Idempotency-Key', message: 'was sent more than once (or holds ", "); send one Idempotency-Key header' }]);
  });

  it('tries of one allocationId sent at once take one room: exactly one answers it as allocated (message ""), every other as a replay of that room', async () => {
    for (let i = 0; i < 10; i++) t.store.seedRoom('s1', `room-${i}`, READY);
    writesTakeApiServerTime(t);
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => allocate({ allocationId: `x-${round}` })));
      expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200));
      const rooms = new Set(answers.map((r) => bodyOf(r).roomId as string));
      expect(rooms.size).toBe(1);
      expect(answers.map((r) => bodyOf(r).message as string).sort()).toEqual(['', ...Array.from({ length: 5 }, () => REPLAYED)]);
    }
    expect(roomWrites()).toHaveLength(10);
    expect(t.metrics.sum('roomkeeper_allocations_total', { result: 'allocated' })).toBe(10);
    expect(t.metrics.sum('roomkeeper_allocations_total', { result: 'replayed' })).toBe(50);
  });

  it('one allocationId sent at once to two schedulers makes an allocation on each: neither answers the other\'s room', async () => {
    t.store.seedScheduler('s2', validSpec(), { version: 'v1.0.0' });
    t.store.seedRoom('s1', 'room-1', READY);
    t.store.seedRoom('s2', 'room-2', READY);
    writesTakeApiServerTime(t);
    const [a, b] = await Promise.all([allocate({ allocationId: 'x-1' }, 's1'), allocate({ allocationId: 'x-1' }, 's2')]);
    expect([a.body, b.body]).toMatchObject([{ roomId: 'room-1', message: '' }, { roomId: 'room-2', message: '' }]);
    expect(roomWrites().map((w) => w.name).sort()).toEqual(['s1/room-1', 's2/room-2']);
  });

  it('a replay on a replica whose cache is behind, after the first try\'s claim went: the room it writes is taken back once its own write shows another room took the id, and the first room is answered', async () => {
    const apps = buildTestApps({ allocationSettings: { claimLingerMs: 1 } });
    apps.store.seedScheduler('s1', validSpec(), { version: 'v1.0.0' });
    apps.store.seedRoom('s1', 'room-1', READY);
    apps.store.seedRoom('s1', 'room-2', READY);
    const stale = apps.store.listRooms('s1').map((r) => structuredClone(r));
    const send = () => request(apps.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).send({ allocationId: 'late-1' });
    const first = await send();
    expect(first.status).toBe(200);
    await waitFor(() => apps.store.claims.size === 0, { message: 'the first try\'s claim to go' });
    const firstRoom = bodyOf(first).roomId as string;
    apps.clock.now += 10_000;
    const otherRoom = firstRoom === 'room-1' ? 'room-2' : 'room-1';
    // This replica's cache is behind: it shows the rooms as they were before the first try, and
    // cannot tell it caught up; the API server (the list) has them as they are.
    const current = apps.store.listRooms.bind(apps.store);
    jest.spyOn(apps.store, 'listRoomsFresh').mockImplementation((scheduler) => Promise.resolve(current(scheduler).map((r) => structuredClone(r))));
    jest.spyOn(apps.store, 'listRooms').mockReturnValue(stale);
    jest.spyOn(apps.store, 'listAllocatableGroups').mockReturnValue(groupAllocatable(stale.filter((r) => r.metadata.name === otherRoom)));
    jest.spyOn(apps.store, 'roomsCacheCaughtUp').mockResolvedValue(false);
    const replay = await send();
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ roomId: firstRoom, allocationId: 'late-1' });
    // Written, then taken back: the other room is as it was.
    expect(apps.store.writes.filter((w) => w.kind === 'gameroom-status').map((w) => w.name)).toEqual([`s1/${firstRoom}`, `s1/${otherRoom}`, `s1/${otherRoom}`]);
    const other = apps.store.findRoom('s1', otherRoom);
    expect(other?.status?.status).toBe('ready');
    expect(other?.status?.allocation).toBeUndefined();
    expect(other?.status?.previousAllocations).toBeUndefined();
    expect(apps.metrics.sum('roomkeeper_allocation_replay_checks_total', { by: 'list' })).toBe(1);
    await waitFor(() => apps.store.claims.size === 0, { message: 'the claim to go' });
  });

  it('a new id on a scheduler whose cache catches up only while the list runs is decided by the cache, without waiting for the list', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    let caughtUp: (ok: boolean) => void = () => undefined;
    jest.spyOn(t.store, 'roomsCacheCaughtUp').mockReturnValue(new Promise<boolean>((resolve) => { caughtUp = resolve; }));
    // The list comes back only once the test lets it: the answer must not wait for it.
    let releaseList: (rooms: GameRoom[]) => void = () => undefined;
    const list = jest.spyOn(t.store, 'listRoomsFresh').mockReturnValue(new Promise<GameRoom[]>((resolve) => { releaseList = resolve; }));
    let answered = false;
    const answer = allocate({ allocationId: 'quiet-1' }).then((res) => { answered = true; return res; });
    await waitFor(() => list.mock.calls.length > 0, { message: 'the list to start after the cache did not catch up at once' });
    caughtUp(true);
    try {
      await waitFor(() => answered, { message: 'the answer, decided by the cache while the list is still out' });
    } finally {
      releaseList([]);
    }
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ roomId: 'room-1', allocationId: 'quiet-1' });
    expect(t.metrics.sum('roomkeeper_allocation_replay_checks_total', { by: 'cache' })).toBe(1);
    expect(t.metrics.sum('roomkeeper_allocation_replay_checks_total', { by: 'list' })).toBe(0);
  });

  it('a new id whose own write the cache cannot show (the wait fails) is checked by a list; when the list fails too, the room written is answered', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    t.store.seedRoom('s1', 'room-2', READY);
    jest.spyOn(t.store, 'roomsCacheCaughtUp').mockRejectedValue(Object.assign(new Error('watch closed'), { code: 500 }));
    const list = jest.spyOn(t.store, 'listRoomsFresh');
    expect((await allocate({ allocationId: 'fail-1' })).status).toBe(200);
    expect(list).toHaveBeenCalledTimes(1);
    list.mockRejectedValue(new StoreUnavailableError('the Kubernetes API is busy: 429'));
    const res = await allocate({ allocationId: 'fail-2' });
    expect(res.status).toBe(200);
    expect(roomWrites()).toHaveLength(2);
  });

  describe('two tries of one allocationId on two replicas at once (its AllocationClaim)', () => {
    let other: TestApps;
    beforeEach(() => {
      t = buildTestApps({ allocationSettings: { claimLingerMs: 200 } });
      t.store.seedScheduler('s1', validSpec(), { version: 'v1.0.0' });
      other = buildTestApps({ replicaOf: t, allocationSettings: { claimLingerMs: 200 } });
      t.store.seedRoom('s1', 'room-1', READY);
      t.store.seedRoom('s1', 'room-2', READY);
    });
    const allocateOn = (apps: TestApps, body: unknown) => request(apps.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).send(body as object).then((res) => res);
    /** Holds the next room write until the test lets it go: the try making it holds the id's claim meanwhile. */
    function holdNextRoomWrite(): () => void {
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => { release = resolve; });
      const commit = t.store.commitAllocation.bind(t.store);
      jest.spyOn(t.store, 'commitAllocation').mockImplementationOnce(async (...args) => { await released; return commit(...args); });
      return () => release();
    }

    it('the second waits for the first one\'s room and answers it: one room written; the claim goes once the first try\'s linger ends', async () => {
      const release = holdNextRoomWrite();
      const claims = jest.spyOn(t.store, 'claimAllocationId');
      const first = allocateOn(t, { allocationId: 'match-7', ttlSeconds: 60 });
      await waitFor(() => t.store.claims.size === 1, { message: 'the first try to claim the id' });
      const second = allocateOn(other, { allocationId: 'match-7', ttlSeconds: 60 });
      await waitFor(() => claims.mock.calls.length === 2, { message: 'the second try to find the claim held' });
      release();
      const [a, b] = await Promise.all([first, second]);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(bodyOf(b).roomId).toBe(bodyOf(a).roomId);
      expect(roomWrites()).toHaveLength(1);
      expect(other.metrics.sum('roomkeeper_allocation_id_waits_total', { outcome: 'room' })).toBe(1);
      await waitFor(() => t.store.claims.size === 0, { message: 'the claim to go after its linger' });
    });

    it('tries of one id sent at once to both replicas: one answers the room as allocated, every other (a waiting one too) as a replay of it', async () => {
      for (let i = 3; i < 10; i++) t.store.seedRoom('s1', `room-${i}`, READY);
      writesTakeApiServerTime(t);
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => allocateOn(i % 2 === 0 ? t : other, { allocationId: `x-${round}` })));
        expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200));
        expect(new Set(answers.map((r) => bodyOf(r).roomId as string)).size).toBe(1);
        expect(answers.map((r) => bodyOf(r).message as string).sort()).toEqual(['', ...Array.from({ length: 5 }, () => REPLAYED)]);
      }
      expect(roomWrites()).toHaveLength(5);
      // Tries on the replica that did not allocate waited on the id's claim for the room.
      expect(t.metrics.sum('roomkeeper_allocation_id_waits_total', { outcome: 'room' }) + other.metrics.sum('roomkeeper_allocation_id_waits_total', { outcome: 'room' })).toBeGreaterThan(0);
      await waitFor(() => t.store.claims.size === 0, { message: 'the claims to go after their linger' });
    });

    it('a try with another body than the one being answered is refused at once (409), writing no room', async () => {
      await t.store.claimAllocationId('s1', 'match-8', { requestHash: 'another-body', replica: 'gateway-9' });
      const res = await allocateOn(other, { allocationId: 'match-8' });
      expect(res.status).toBe(409);
      expect(bodyOf(res).message).toContain('allocationId match-8 was already used with another request body');
      expect(roomWrites()).toHaveLength(0);
    });

    it('a try that finds no room releases its claim at once: the same id sent again is answered without waiting', async () => {
      t.store.rooms.clear();
      expect((await allocateOn(t, { allocationId: 'match-11' })).status).toBe(429);
      expect(t.store.claims.size).toBe(0);
      t.store.seedRoom('s1', 'room-3', READY);
      const res = await allocateOn(other, { allocationId: 'match-11' });
      expect(res.status).toBe(200);
      expect(other.metrics.sum('roomkeeper_allocation_id_waits_total')).toBe(0);
    });

    it('a claim whose try never ends answers 503 (send it again) once the wait is over, writing no room', async () => {
      const release = holdNextRoomWrite();
      const claims = jest.spyOn(t.store, 'claimAllocationId');
      const held = allocateOn(t, { allocationId: 'match-9' });
      await waitFor(() => t.store.claims.size === 1, { message: 'the first try to claim the id' });
      const waiting = allocateOn(other, { allocationId: 'match-9' });
      await waitFor(() => claims.mock.calls.length === 2, { message: 'the second try to find the claim held' });
      t.clock.now += 11_000;
      const answer = await waiting;
      expect(answer.status).toBe(503);
      expect(bodyOf(answer).message).toBe('another try of allocationId match-9 is still being answered (by gateway replica gateway-0); send it again shortly, and it answers the same room; if that replica stopped mid-request, its claim is taken over once 60 s old, in 49 s');
      expect(roomWrites()).toHaveLength(0);
      // The first try ends: it answers, and its claim goes after its linger.
      release();
      expect((await held).status).toBe(200);
      await waitFor(() => t.store.claims.size === 0, { message: 'the claim to go after its linger' });
    });

    it('a claim over 60 s old (its replica stopped mid-request) is taken over: the next try allocates', async () => {
      t.clock.now -= 61_000;
      await t.store.claimAllocationId('s1', 'match-10', { requestHash: '', replica: 'gateway-gone' });
      t.clock.now += 61_000;
      // The stale claim's hash is not this body's: a stale claim is taken over before its body is compared.
      const res = await allocateOn(other, { allocationId: 'match-10' });
      expect(res.status).toBe(200);
      expect(roomWrites()).toHaveLength(1);
      expect(other.metrics.sum('roomkeeper_allocation_id_waits_total', { outcome: 'taken_over' })).toBe(1);
      await waitFor(() => t.store.claims.size === 0, { message: 'the claim to go after its linger' });
    });
  });

  it('a room this replica just claimed is not offered again while its cache still shows it as claimed: the next request writes another room, losing no compare-and-swap', async () => {
    // packed: the room on the host that already runs a busy room comes first.
    t.store.seedRoom('s1', 'room-1', { ...READY, host: 'h-a' });
    t.store.seedRoom('s1', 'busy-1', { ...READY, status: 'occupied', pingStatus: 'occupied', host: 'h-a' });
    t.store.seedRoom('s1', 'room-2', { ...READY, host: 'h-b' });
    const stale = t.store.listRooms('s1').map((r) => structuredClone(r));
    expect(bodyOf(await allocate({ strategy: 'packed' })).roomId).toBe('room-1');
    // The cache has not applied the first write yet: it shows room-1 free, at the version claimed.
    jest.spyOn(t.store, 'listAllocatableGroups').mockReturnValue(groupAllocatable(stale.filter((r) => r.status?.status === 'ready')));
    jest.spyOn(t.store, 'findRoom').mockImplementation((_scheduler, roomId) => stale.find((r) => r.metadata.name === roomId));
    const commits = jest.spyOn(t.store, 'commitAllocation');
    expect(bodyOf(await allocate({ strategy: 'packed' })).roomId).toBe('room-2');
    expect(commits).toHaveBeenCalledTimes(1);
    // Once the cache shows the rooms at another version, the claims are dropped: both are offered again (and refused by their versions).
    jest.spyOn(t.store, 'findRoom').mockImplementation((_scheduler, roomId) => ({ ...(stale.find((r) => r.metadata.name === roomId) as GameRoom), metadata: { name: roomId, namespace: 's1', resourceVersion: 'newer' } }));
    const third = await allocate({ strategy: 'packed' });
    expect(third.status).toBe(429);
    expect(commits.mock.calls.map((c) => c[1])).toEqual(['room-2', 'room-1', 'room-2']);
  });

  /** What the operator does when an allocation ends (TTL over, or the room reported its match). */
  function endAllocation(scheduler: string, roomId: string, endReason: 'expired' | 'occupied', status: GameRoomStatus = {}): void {
    const current = t.store.findRoom(scheduler, roomId)?.status ?? {};
    const allocation = current.allocation;
    if (!allocation) throw new Error(`room ${roomId} has no allocation`);
    t.store.seedRoom(scheduler, roomId, { ...current, ...status, allocation: { ...allocation, endedAt: '2026-01-01T00:01:00.000Z', endReason } });
  }

  it('a replayed allocationId whose single-match room was allocated again answers 410 (ended: when, why), never a second room', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    expect(bodyOf(await allocate({ allocationId: 'm-1' })).roomId).toBe('room-1');
    endAllocation('s1', 'room-1', 'expired', { status: 'ready' });
    expect(bodyOf(await allocate({ allocationId: 'm-2' })).roomId).toBe('room-1');
    expect(t.store.findRoom('s1', 'room-1')?.status?.previousAllocations).toEqual([
      expect.objectContaining({ id: 'm-1', endedAt: '2026-01-01T00:01:00.000Z', endReason: 'expired', supersededAt: '2026-01-01T00:00:00.000Z' }),
    ]);
    t.store.seedRoom('s1', 'room-2', READY);
    const writes = t.store.writes.length;
    const replay = await allocate({ allocationId: 'm-1' });
    expect(replay.status).toBe(410);
    expect(replay.body).toMatchObject({
      code: 9,
      message: 'allocation m-1 of room room-1 ended at 2026-01-01T00:01:00.000Z (expired: the room never reported the match within its TTL); the room was allocated to another match at 2026-01-01T00:00:00.000Z; use a new allocationId for a new allocation',
      details: [{ reason: 'ALLOCATION_ENDED', roomId: 'room-1', endedAt: '2026-01-01T00:01:00.000Z', endReason: 'expired', supersededAt: '2026-01-01T00:00:00.000Z' }],
    });
    expect(t.store.writes).toHaveLength(writes);
    expect(t.store.findRoom('s1', 'room-2')?.status?.allocation).toBeUndefined();
    // The current allocation, once expired, is ended too (410), and another body is still 409.
    endAllocation('s1', 'room-1', 'expired', { status: 'ready' });
    expect((await allocate({ allocationId: 'm-2' })).status).toBe(410);
    expect((await allocate({ allocationId: 'm-1', metadata: { x: 1 } })).status).toBe(409);
  });

  it('a replayed allocationId whose room has since pinged terminating answers 410 (the room is terminating; allocate again with a new id), never a room', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const first = await allocate({ allocationId: 'term-1' });
    expect(bodyOf(first).roomId).toBe('room-1');
    const ping = await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`).send({ status: 'terminating' });
    expect(ping.body).toEqual({ success: true });
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ status: 'terminating', allocation: { id: 'term-1' } });
    t.store.seedRoom('s1', 'room-2', READY);
    const writes = t.store.writes.length;
    const replay = await allocate({ allocationId: 'term-1' });
    expect(replay.status).toBe(410);
    expect(replay.body).toEqual({
      code: 9,
      message: 'allocation term-1 of room room-1 ended: the room is terminating: its game server pinged terminating and accepts no new players; allocate again with a new allocationId',
      details: [{ reason: 'ALLOCATION_ENDED', roomId: 'room-1', endReason: 'terminating' }],
    });
    expect(t.store.writes).toHaveLength(writes);
    expect(t.store.findRoom('s1', 'room-2')?.status?.allocation).toBeUndefined();
    expect(await t.metrics.render()).toContain('roomkeeper_allocations_total{result="ended"} 1');
  });

  it.each([
    ['being deleted', { ...READY, status: 'terminating' as const, instanceStatus: 'terminating' as const }, 'the room is terminating: it is being deleted', 'terminating'],
    ['in error', { ...READY, status: 'error' as const, instanceStatus: 'error' as const }, 'the room is in error', 'error'],
    ['terminated', { ...READY, status: 'terminated' as const, pingStatus: 'terminated' as const }, 'the room is terminating: its game server pinged terminated', 'terminating'],
  ])('a replayed allocationId whose room is %s answers 410 saying so', async (_what, status, why, endReason) => {
    t.store.seedRoom('s1', 'room-1', READY);
    expect((await allocate({ allocationId: 'x-1' })).status).toBe(200);
    const allocation = t.store.findRoom('s1', 'room-1')?.status?.allocation;
    t.store.seedRoom('s1', 'room-1', { ...status, allocation });
    t.store.seedRoom('s1', 'room-2', READY);
    const replay = await allocate({ allocationId: 'x-1' });
    expect(replay.status).toBe(410);
    expect(replay.body).toMatchObject({ code: 9, message: `allocation x-1 of room room-1 ended: ${why}; allocate again with a new allocationId`, details: [{ reason: 'ALLOCATION_ENDED', roomId: 'room-1', endReason }] });
    expect(t.store.findRoom('s1', 'room-2')?.status?.allocation).toBeUndefined();
  });

  it('a replayed allocationId whose room reported the match and runs none now answers 410 (the match is over), even before the room is allocated again', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const first = await allocate({ allocationId: 'm-1' });
    expect(bodyOf(first).roomId).toBe('room-1');
    // The players arrived: the match runs, and a replay answers the room.
    endAllocation('s1', 'room-1', 'occupied', { status: 'occupied', pingStatus: 'occupied', runningMatches: 1 });
    const during = await allocate({ allocationId: 'm-1' });
    expect(during.status).toBe(200);
    expect(bodyOf(during)).toMatchObject({ roomId: 'room-1', allocationId: 'm-1' });
    // The match ended and the room is ready for the next one: not the match of m-1 any more.
    endAllocation('s1', 'room-1', 'occupied', { status: 'ready', pingStatus: 'ready', runningMatches: 0 });
    const writes = t.store.writes.length;
    const after = await allocate({ allocationId: 'm-1' });
    expect(after.status).toBe(410);
    expect(after.body).toEqual({
      code: 9,
      message: 'allocation m-1 of room room-1 ended at 2026-01-01T00:01:00.000Z (occupied: the room reported the match, which has since ended); use a new allocationId for a new allocation',
      details: [{ reason: 'ALLOCATION_ENDED', roomId: 'room-1', endedAt: '2026-01-01T00:01:00.000Z', endReason: 'occupied' }],
    });
    expect(t.store.writes).toHaveLength(writes);
    expect(t.store.findRoom('s1', 'room-1')?.status?.allocation).toMatchObject({ id: 'm-1', endReason: 'occupied' });
    // In a multi-match room, the same once the room runs no match.
    t.store.seedScheduler('mm', validSpec({ matchAllocation: { maxMatches: 3 } }), { version: 'v1.0.0' });
    t.store.seedRoom('mm', 'arena', READY);
    expect(bodyOf(await allocate({ allocationId: 'duel-1' }, 'mm')).roomId).toBe('arena');
    endAllocation('mm', 'arena', 'occupied', { status: 'ready', pingStatus: 'ready', runningMatches: 0 });
    const over = await allocate({ allocationId: 'duel-1' }, 'mm');
    expect(over.status).toBe(410);
    expect(bodyOf(over).message).toBe('allocation duel-1 of room arena ended at 2026-01-01T00:01:00.000Z (occupied: the room reported the match, and runs no match now); use a new allocationId for a new allocation');
  });

  it('a replayed allocationId of a multi-match slot answers its room while the room runs matches, after newer slots were allocated', async () => {
    t.store.seedScheduler('mm', validSpec({ matchAllocation: { maxMatches: 3 } }), { version: 'v1.0.0' });
    t.store.seedRoom('mm', 'arena', READY);
    const first = await allocate({ allocationId: 'duel-1' }, 'mm');
    expect(bodyOf(first).roomId).toBe('arena');
    endAllocation('mm', 'arena', 'occupied', { status: 'active', pingStatus: 'occupied', runningMatches: 1 });
    expect(bodyOf(await allocate({ allocationId: 'duel-2' }, 'mm')).roomId).toBe('arena');
    t.store.seedRoom('mm', 'fresh', READY);
    const writes = t.store.writes.length;
    const replay = await allocate({ allocationId: 'duel-1' }, 'mm');
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ roomId: 'arena', allocationId: 'duel-1', expiresAt: bodyOf(first).expiresAt });
    expect(bodyOf(replay).message).toContain('replayed');
    expect(t.store.writes).toHaveLength(writes);
    // Once the room runs no match, the match of duel-1 is over.
    endAllocation('mm', 'arena', 'occupied', { status: 'ready', pingStatus: 'ready', runningMatches: 0 });
    const over = await allocate({ allocationId: 'duel-1' }, 'mm');
    expect(over.status).toBe(410);
    expect(bodyOf(over).message).toContain('occupied: the room reported the match, and runs no match now');
    expect(t.store.findRoom('mm', 'fresh')?.status?.allocation).toBeUndefined();
  });

  it('a replayed allocationId of a multi-match slot that expired says what the rule saw: no more running matches than when allocated, whatever the room runs now', async () => {
    t.store.seedScheduler('mm', validSpec({ matchAllocation: { maxMatches: 3 } }), { version: 'v1.0.0' });
    t.store.seedRoom('mm', 'arena', { ...READY, status: 'active', pingStatus: 'occupied', runningMatches: 2 });
    expect(bodyOf(await allocate({ allocationId: 'duel-3' }, 'mm')).roomId).toBe('arena');
    expect(t.store.findRoom('mm', 'arena')?.status?.allocation?.runningMatches).toBe(2);
    // One match ended as the allocated one began: still 2 running when the TTL ended.
    endAllocation('mm', 'arena', 'expired', { status: 'active', pingStatus: 'occupied', runningMatches: 2 });
    const replay = await allocate({ allocationId: 'duel-3' }, 'mm');
    expect(replay.status).toBe(410);
    expect(bodyOf(replay).message).toBe('allocation duel-3 of room arena ended at 2026-01-01T00:01:00.000Z (expired: within its TTL the room never reported more running matches than the 2 it ran when allocated); use a new allocationId for a new allocation');
  });

  it('takes the first selector that matches a ready room, and the active version first', async () => {
    t.store.seedRoom('s1', 'old', READY, { version: 'v0.9.0' });
    t.store.seedRoom('s1', 'new', READY);
    expect(bodyOf(await allocate({})).roomId).toBe('new');
    t.store.seedRoom('s1', 'old-2', READY, { version: 'v0.9.0' });
    t.store.seedRoom('s1', 'new-2', READY);
    const res = await allocate({ selectors: [{ version: 'v5.0.0' }, { version: 'v0.9.0' }] });
    expect(['old', 'old-2']).toContain(bodyOf(res).roomId);
  });

  it('caps ttlSeconds at the scheduler\'s allocation.maxTtlSeconds (default 300, as Maestro) and says so', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate({ ttlSeconds: 999_999 });
    expect(res.status).toBe(200);
    expect(bodyOf(res).message).toBe("ttlSeconds capped at 300 (the scheduler's allocation.maxTtlSeconds, default)");
    expect(bodyOf(res).expiresAt).toBe('2026-01-01T00:05:00.000Z');
  });

  it('caps ttlSeconds at a scheduler\'s own maxTtlSeconds, and at ROOMKEEPER_ALLOCATION_MAX_TTL above it', async () => {
    t.store.seedScheduler('short', validSpec({ allocation: { maxTtlSeconds: 30 } }), { version: 'v1.0.0' });
    t.store.seedRoom('short', 'room-1', READY);
    t.store.seedRoom('short', 'room-2', READY);
    const capped = await allocate({ ttlSeconds: 60 }, 'short');
    expect(capped.body).toMatchObject({ message: "ttlSeconds capped at 30 (the scheduler's allocation.maxTtlSeconds)", expiresAt: '2026-01-01T00:00:30.000Z' });
    // No ttlSeconds: the default TTL (300 s), held to the scheduler's cap; the message says so.
    expect((await allocate({}, 'short')).body).toMatchObject({ message: "ttlSeconds not sent: the default 300 capped at 30 (the scheduler's allocation.maxTtlSeconds)", expiresAt: '2026-01-01T00:00:30.000Z' });
    const long = buildTestApps({ allocationSettings: { maxTtlSeconds: 100 } });
    long.store.seedScheduler('long', validSpec({ allocation: { maxTtlSeconds: 86_400 } }), { version: 'v1.0.0' });
    long.store.seedRoom('long', 'room-1', READY);
    const res = await request(long.management).post('/scheduler/long/rooms/allocate').set('Authorization', AUTH).send({ ttlSeconds: 1000 });
    expect(res.body).toMatchObject({ message: 'ttlSeconds capped at 100 (ROOMKEEPER_ALLOCATION_MAX_TTL)', expiresAt: '2026-01-01T00:01:40.000Z' });
  });

  it('caps ttlSeconds at the active version\'s maxTtlSeconds, not at a refused change\'s in the spec', async () => {
    const refused = t.store.seedScheduler('short', validSpec({ allocation: { maxTtlSeconds: 30 } }), { version: 'v1.0.0' });
    refused.spec = { ...refused.spec, allocation: { maxTtlSeconds: 600 } };
    t.store.seedRoom('short', 'room-1', READY);
    expect((await allocate({ ttlSeconds: 60 }, 'short')).body).toMatchObject({ message: "ttlSeconds capped at 30 (the scheduler's allocation.maxTtlSeconds)", expiresAt: '2026-01-01T00:00:30.000Z' });
  });

  it('multi-match (maxMatches 3): a slot of an active room before a fresh room, the room stays active, and a full room is never offered', async () => {
    t.store.seedScheduler('mm', validSpec({ matchAllocation: { maxMatches: 3 } }), { version: 'v1.0.0' });
    t.store.seedRoom('mm', 'fresh', READY);
    t.store.seedRoom('mm', 'one-match', { ...READY, status: 'active', pingStatus: 'occupied', runningMatches: 1 });
    t.store.seedRoom('mm', 'full', { ...READY, status: 'occupied', pingStatus: 'occupied', runningMatches: 3 });
    const first = await allocate({}, 'mm');
    expect(bodyOf(first).roomId).toBe('one-match');
    expect(t.store.findRoom('mm', 'one-match')?.status).toMatchObject({ status: 'active', allocation: { id: bodyOf(first).allocationId, runningMatches: 1 } });
    // One open allocation per room: the next goes to the fresh room, which shows allocated.
    const second = await allocate({}, 'mm');
    expect(bodyOf(second).roomId).toBe('fresh');
    expect(t.store.findRoom('mm', 'fresh')?.status).toMatchObject({ status: 'allocated', allocation: { runningMatches: 0 } });
    const none = await allocate({}, 'mm');
    expect(none.status).toBe(429);
    // Free slots are held back by the open allocations: the answer says why and when they come.
    expect(bodyOf(none).message).toBe('no ready rooms available for scheduler mm (a multi-match room holds one open allocation at a time: its next match slot is offered once the room reports the match in runningMatches or the allocation\'s TTL ends); retry later or add rooms');
    const info = await request(t.management).get('/schedulers/info?game=tennis').set('Authorization', AUTH);
    // 1 + 1 (slot) + 1 (allocated) + 3; three serving rooms of 3 slots; the allocated rooms count as
    // occupied, 'one-match' too: its open allocation holds its next slot back, so no room is active
    // (one the allocate API would offer a slot of), as the 429 above says.
    expect(bodyOf(info).schedulers!.find((s: { name: string }) => s.name === 'mm')).toMatchObject({ roomsReady: 0, roomsActive: 0, roomsOccupied: 3, matchAllocation: { maxMatches: 3 }, runningMatches: 6, matchSlots: 9 });
  });

  it('multi-match: a 429 with every room full (or not ready) and no open allocation does not say slots are held back by one', async () => {
    t.store.seedScheduler('mm', validSpec({ matchAllocation: { maxMatches: 3 } }), { version: 'v1.0.0' });
    t.store.seedRoom('mm', 'full', { ...READY, status: 'occupied', pingStatus: 'occupied', runningMatches: 3 });
    t.store.seedRoom('mm', 'silent', { ...READY, status: 'unready', pingStatus: 'unknown' });
    const none = await allocate({}, 'mm');
    expect(none.status).toBe(429);
    expect(bodyOf(none).message).toBe('no ready rooms available for scheduler mm; retry later or add rooms');
    // A room whose open allocation takes its last free slot holds nothing back either.
    t.store.seedRoom('mm', 'last-slot', { ...READY, status: 'active', pingStatus: 'occupied', runningMatches: 2 });
    expect((await allocate({}, 'mm')).status).toBe(200);
    expect(bodyOf(await allocate({}, 'mm')).message).toBe('no ready rooms available for scheduler mm; retry later or add rooms');
  });

  it('after a refused change that set maxMatches 3, pings, allocation and /schedulers/info keep the active version\'s maxMatches 1', async () => {
    // The operator left v1.0.0 (single-match) active; the spec holds the refused maxMatches 3.
    const refused = t.store.seedScheduler('mm', validSpec(), { version: 'v1.0.0' });
    refused.spec = { ...refused.spec, matchAllocation: { maxMatches: 3 } };
    t.store.seedRoom('mm', 'arena', READY);
    const first = await allocate({}, 'mm');
    expect(bodyOf(first).roomId).toBe('arena');
    expect(t.store.findRoom('mm', 'arena')?.status).toMatchObject({ status: 'allocated' });
    // The match starts: a single-match room running a match is occupied, not active.
    const ping = await request(t.rooms).put('/scheduler/mm/rooms/arena/ping').set('Authorization', `Bearer ${roomToken(ROOM_SECRET, 'mm', 'arena')}`).send({ status: 'occupied', runningMatches: 1 });
    expect(ping.body).toMatchObject({ success: true });
    expect(t.store.findRoom('mm', 'arena')?.status).toMatchObject({ status: 'occupied', runningMatches: 1 });
    // Its other two slots are not offered: it has none.
    expect((await allocate({}, 'mm')).status).toBe(429);
    const info = await request(t.management).get('/schedulers/info?game=tennis').set('Authorization', AUTH);
    expect(bodyOf(info).schedulers!.find((s: { name: string }) => s.name === 'mm')).toMatchObject({ roomsOccupied: 1, roomsActive: 0, matchAllocation: { maxMatches: 1 }, runningMatches: 1, matchSlots: 1 });
  });

  it('tries the next candidate when a room changed since the cache showed it, and never hands a room out twice', async () => {
    for (let i = 0; i < 5; i++) t.store.seedRoom('s1', `room-${i}`, READY);
    const answers = await Promise.all(Array.from({ length: 8 }, () => allocate({})));
    const ok = answers.filter((r) => r.status === 200).map((r) => bodyOf(r).roomId as string);
    expect(new Set(ok).size).toBe(5);
    expect(ok).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
  });

  it('tells the room of its allocation in the answer to its next ping whatever it reports: an occupied ping that takes it up, or a multi-match ping with one match more; never a terminating one', async () => {
    const pingAs = (scheduler: string, room: string, body: object) => request(t.rooms).put(`/scheduler/${scheduler}/rooms/${room}/ping`).set('Authorization', `Bearer ${roomToken(ROOM_SECRET, scheduler, room)}`).send(body);
    const notice = { id: 'occ-1', metadata: { m: 1 }, expiresAt: '2026-01-01T00:05:00.000Z' };
    t.store.seedRoom('s1', 'room-1', READY);
    expect((await allocate({ allocationId: 'occ-1', metadata: { m: 1 } })).status).toBe(200);
    expect((await pingAs('s1', 'room-1', { status: 'occupied' })).body).toEqual({ success: true, allocation: notice });
    // Until the operator ends it (the room reported the match), answers repeat it; then they do not.
    expect((await pingAs('s1', 'room-1', { status: 'occupied' })).body).toEqual({ success: true, allocation: notice });
    endAllocation('s1', 'room-1', 'occupied', {});
    expect((await pingAs('s1', 'room-1', { status: 'occupied' })).body).toEqual({ success: true });

    t.store.seedScheduler('mm', validSpec({ matchAllocation: { maxMatches: 3 } }), { version: 'v1.0.0' });
    t.store.seedRoom('mm', 'arena', { ...READY, status: 'active', runningMatches: 1 });
    expect((await allocate({ allocationId: 'duel-1', metadata: { m: 2 } }, 'mm')).status).toBe(200);
    expect((await pingAs('mm', 'arena', { status: 'ready', runningMatches: 2 })).body).toEqual({ success: true, allocation: { ...notice, id: 'duel-1', metadata: { m: 2 } } });

    t.store.seedRoom('s1', 'room-2', READY);
    expect((await allocate({ allocationId: 'term-1' })).body).toMatchObject({ roomId: 'room-2' });
    expect((await pingAs('s1', 'room-2', { status: 'terminating' })).body).toEqual({ success: true });
  });

  it('with ROOMKEEPER_PING_ANSWER_ALLOCATION=false answers an allocated room\'s pings as Maestro ({success:true} only, no field a strict parser would refuse), on the fast path too, and the room stays allocated', async () => {
    const strict = buildTestApps({ pingAnswerAllocation: false });
    strict.store.seedScheduler('s1', validSpec(), { version: 'v1.0.0' });
    strict.store.seedRoom('s1', 'room-1', READY);
    const res = await request(strict.management).post('/scheduler/s1/rooms/allocate').set('Authorization', AUTH).send({ allocationId: 'm-8' });
    expect(bodyOf(res).roomId).toBe('room-1');
    const token = `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`;
    const ready = await request(strict.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', token).send({ status: 'ready', timestamp: 1 });
    expect(ready.text).toBe('{"success":true}');
    const server = http.createServer(requestListener(strict.rooms));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const fast = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/scheduler/s1/rooms/room-1/ping`, { method: 'PUT', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'occupied', timestamp: 1 }) });
      expect(await fast.text()).toBe('{"success":true}');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(strict.store.findRoom('s1', 'room-1')?.status).toMatchObject({ allocation: { id: 'm-8' } });
  });

  it('tells the room of its allocation in the answer to its next ready ping', async () => {
    t.store.seedRoom('s1', 'room-1', READY);
    const res = await allocate({ allocationId: 'm-7', metadata: { players: ['a', 'b'] } });
    expect(res.status).toBe(200);
    const ping = await request(t.rooms).put('/scheduler/s1/rooms/room-1/ping').set('Authorization', `Bearer ${roomToken(ROOM_SECRET, 's1', 'room-1')}`).send({ status: 'ready', timestamp: 1 });
    expect(ping.body).toEqual({ success: true, allocation: { id: 'm-7', metadata: { players: ['a', 'b'] }, expiresAt: '2026-01-01T00:05:00.000Z' } });
    // A ready ping inside the TTL writes nothing and keeps the allocation.
    expect(t.store.findRoom('s1', 'room-1')?.status).toMatchObject({ status: 'allocated', allocation: { id: 'm-7' } });
  });
});
