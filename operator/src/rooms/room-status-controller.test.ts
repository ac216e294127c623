import type { GameRoom } from '../../../common/src/generated/resources';
import { silentLogger } from '../../../common/src/logger';
import type { OperatorDeps } from '../deps';
import { allocationStatusChange, RoomStatusController } from './room-status-controller';

/** A room created 60 s ago whose pod the operator's cache has never shown. */
function setup(podOnServer: boolean) {
  const now = Date.parse('2026-01-01T00:01:00Z');
  const room: GameRoom = {
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
    metadata: { name: 'r1', namespace: 's', uid: 'uid-r1', resourceVersion: '5', creationTimestamp: new Date('2026-01-01T00:00:00Z') },
    spec: { scheduler: 's', version: 'v1.0.0' },
  };
  const calls: string[] = [];
  const scheduler = { metadata: { name: 's', resourceVersion: '9' }, spec: { roomsReplicas: 1 }, status: { version: 'v1.0.0', lostRooms: [] } };
  const deps = {
    api: {
      deleteGameRoom: (ns: string, name: string) => {
        calls.push(`delete ${ns}/${name}`);
        return Promise.resolve({});
      },
      jsonPatchSchedulerStatus: (name: string, ops: object[]) => {
        calls.push(`patch scheduler ${name} status ${JSON.stringify(ops)}`);
        return Promise.resolve({});
      },
    },
    core: {
      readNamespacedPod: (req: { namespace: string; name: string }) => {
        calls.push(`get pod ${req.namespace}/${req.name}`);
        return podOnServer ? Promise.resolve({ metadata: { name: req.name } }) : Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
      },
    },
    caches: { rooms: { get: () => room }, pods: { get: () => undefined }, nodes: { get: () => undefined }, schedulers: { get: () => scheduler }, namespaces: { get: () => ({ metadata: { name: 's' } }) }, versions: { get: () => undefined } },
    logger: silentLogger(),
    now: () => now,
  } as unknown as OperatorDeps;
  const controller = new RoomStatusController(deps);
  return { controller, calls };
}

describe('RoomStatusController: a room whose pod the cache never showed', () => {
  it('is not lost when a fresh read finds its pod (the pod cache lags on a loaded API server)', async () => {
    const t = setup(true);
    expect(await t.controller.reconcile('s/r1')).toEqual({ requeueAfterMs: 30_000 });
    expect(t.calls).toEqual(['get pod s/r1']);
  });

  it('is lost, recorded in its scheduler\'s status, then deleted, when the API server has no pod for it either', async () => {
    const t = setup(false);
    await t.controller.reconcile('s/r1');
    expect(t.calls).toEqual([
      'get pod s/r1',
      'patch scheduler s status [{"op":"add","path":"/status/lostRooms/-","value":{"name":"r1","reason":"its pod never appeared","lostAt":"2026-01-01T00:01:00.000Z"}}]',
      'delete s/r1',
    ]);
  });
});

describe('RoomStatusController: the status it writes', () => {
  function setup(writeAnswer: () => Promise<unknown>, deleting = false, scheduler?: { spec: object; status: object }, versions: Record<string, object> = {}) {
    const room: GameRoom = {
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: 'r1', namespace: 's', uid: 'uid-r1', resourceVersion: '5', creationTimestamp: new Date('2026-01-01T00:00:00Z'), ...(deleting ? { deletionTimestamp: new Date('2026-01-01T00:00:30Z') } : {}) },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'occupied', pingStatus: 'occupied', runningMatches: 1, instanceStatus: 'ready', host: '10.0.0.1', ports: [], createdAt: '2026-01-01T00:00:00.000Z' },
    };
    const pod = { metadata: { name: 'r1', namespace: 's' }, spec: { containers: [] }, status: { phase: 'Running', hostIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } };
    const writes: object[] = [];
    const deps = {
      api: { patchGameRoomStatus: (_ns: string, _name: string, patch: object) => (writes.push(patch), writeAnswer()) },
      caches: {
        rooms: { get: () => room }, pods: { get: () => pod }, nodes: { get: () => undefined },
        schedulers: { get: () => (scheduler ? { metadata: { name: 's' }, ...scheduler } : undefined) }, namespaces: { get: () => ({ metadata: { name: 's' } }) }, versions: { get: (name: string) => versions[name] },
      },
      events: { record: () => undefined },
      logger: silentLogger(),
      now: () => Date.parse('2026-01-01T00:01:00Z'),
    } as unknown as OperatorDeps;
    return { controller: new RoomStatusController(deps), room, writes };
  }

  it('composes a room\'s running matches with the active version\'s maxMatches, not a refused spec change\'s', async () => {
    const refused = { spec: { game: 'g', matchAllocation: { maxMatches: 3 } }, status: { version: 'v1.0.0' } };
    const single = { spec: { scheduler: 's', version: 'v1.0.0', definition: { game: 'g' } } };
    const t = setup(() => Promise.resolve({}), false, refused, { 's-v1.0.0': single });
    t.room.status = { ...t.room.status, status: 'ready' };
    expect(await t.controller.reconcile('s/r1')).toEqual({});
    // One match in a single-match room: occupied (maxMatches 3 would make it active).
    expect(t.writes[0]).toMatchObject({ status: { status: 'occupied' } });
    const multi = setup(() => Promise.resolve({}), false, refused, { 's-v1.0.0': { spec: { ...single.spec, definition: { game: 'g', matchAllocation: { maxMatches: 3 } } } } });
    multi.room.status = { ...multi.room.status, status: 'ready' };
    await multi.controller.reconcile('s/r1');
    expect(multi.writes[0]).toMatchObject({ status: { status: 'active' } });
  });

  it('writes terminating for a room whose deletion has begun, whatever its game server last said', async () => {
    const t = setup(() => Promise.resolve({}), true);
    expect(await t.controller.reconcile('s/r1')).toEqual({});
    expect(t.writes).toHaveLength(1);
    expect(t.writes[0]).toMatchObject({ metadata: { resourceVersion: '5' }, status: { status: 'terminating', instanceStatus: 'ready' } });
  });

  it('after a conflict, leaves the room to the newer version\'s event and looks again later, instead of failing the reconcile', async () => {
    const t = setup(() => Promise.reject(Object.assign(new Error('the object has been modified'), { code: 409 })), true);
    expect(await t.controller.reconcile('s/r1')).toEqual({ requeueAfterMs: 2_000 });
    expect(t.writes).toHaveLength(1);
  });

  it('fails the reconcile on any other error, to be retried with backoff', async () => {
    const t = setup(() => Promise.reject(Object.assign(new Error('etcdserver: request timed out'), { code: 500 })), true);
    await expect(t.controller.reconcile('s/r1')).rejects.toThrow('request timed out');
  });
});

describe('RoomStatusController: the room\'s address', () => {
  it('is its pod\'s hostIP while the cache does not show the pod\'s node, then the node\'s address: no timed look meanwhile (the node\'s add event brings the room back)', async () => {
    let room: GameRoom = {
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: 'r1', namespace: 's', uid: 'uid-r1', resourceVersion: '5', creationTimestamp: new Date('2026-01-01T00:00:00Z') },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', host: '', ports: [], createdAt: '2026-01-01T00:00:00.000Z' },
    };
    const pod = { metadata: { name: 'r1', namespace: 's' }, spec: { nodeName: 'node-a', containers: [] }, status: { phase: 'Running', hostIP: '10.240.0.10', conditions: [{ type: 'Ready', status: 'True' }] } };
    const nodes = new Map<string, object>();
    const hosts: string[] = [];
    const deps = {
      api: {
        patchGameRoomStatus: (_ns: string, _name: string, patch: { status: { host: string } }) => {
          hosts.push(patch.status.host);
          room = { ...room, status: { ...room.status, host: patch.status.host } };
          return Promise.resolve({});
        },
      },
      caches: { rooms: { get: () => room }, pods: { get: () => pod }, nodes: { get: (name: string) => nodes.get(name) }, schedulers: { get: () => undefined }, namespaces: { get: () => ({ metadata: { name: 's' } }) } },
      events: { record: () => undefined },
      logger: silentLogger(),
      now: () => Date.parse('2026-01-01T00:01:00Z'),
    } as unknown as OperatorDeps;
    const controller = new RoomStatusController(deps);

    expect(await controller.reconcile('s/r1')).toEqual({});
    expect(hosts).toEqual(['10.240.0.10']);
    expect(await controller.reconcile('s/r1')).toEqual({}); // still unseen: no write
    expect(hosts).toHaveLength(1);

    nodes.set('node-a', { metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '10.240.0.10' }, { type: 'ExternalIP', address: '127.0.0.2' }] } });
    expect(await controller.reconcile('s/r1')).toEqual({});
    expect(hosts).toEqual(['10.240.0.10', '127.0.0.2']);
  });
});

describe('RoomStatusController: Events for a room becoming ready or occupied', () => {
  function setup() {
    const now = Date.parse('2026-01-01T00:00:05Z');
    const room: GameRoom = {
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: 'r1', namespace: 's', uid: 'uid-r1', resourceVersion: '5', creationTimestamp: new Date('2026-01-01T00:00:00Z') },
      spec: { scheduler: 's', version: 'v1.0.0' },
    };
    const events: string[] = [];
    const deps = {
      // The pod is not in the cache yet and the room is young: the reconcile only waits for it.
      caches: { rooms: { get: () => room }, pods: { get: () => undefined }, nodes: { get: () => undefined }, schedulers: { get: () => undefined }, namespaces: { get: () => ({ metadata: { name: 's' } }) } },
      events: { record: (e: { regarding: { name: string }; reason: string; note: string }) => events.push(`${e.regarding.name} ${e.reason}: ${e.note}`) },
      logger: silentLogger(),
      now: () => now,
    } as unknown as OperatorDeps;
    return { room, events, controller: () => new RoomStatusController(deps) };
  }

  it('tells each change to ready or occupied once, and nothing for a room first seen (a new leader\'s first look)', async () => {
    const t = setup();
    const leader = t.controller();
    await leader.reconcile('s/r1'); // just created: no status yet
    t.room.status = { status: 'ready' };
    await leader.reconcile('s/r1');
    await leader.reconcile('s/r1'); // unchanged: nothing more
    t.room.status = { status: 'occupied' };
    await leader.reconcile('s/r1');
    const next = t.controller(); // after a failover
    await next.reconcile('s/r1');
    expect(t.events).toEqual(['r1 GameRoomReady: Room is ready (was pending)', 'r1 GameRoomOccupied: Room is occupied (was ready)']);
  });

  /** A ready room allocated, then ready again with its allocation ended (expired) at `endedAt`. */
  async function allocatedThenEnded(expiresAt: string, endedAt: string) {
    const t = setup();
    const controller = t.controller();
    t.room.status = { status: 'ready' };
    await controller.reconcile('s/r1');
    const allocation = { id: 'm-1', requestHash: 'h', allocatedAt: '2026-01-01T00:00:01.000Z', expiresAt };
    t.room.status = { status: 'allocated', allocation };
    await controller.reconcile('s/r1');
    t.room.status = { status: 'ready', allocation: { ...allocation, endedAt, endReason: 'expired' } };
    await controller.reconcile('s/r1');
    return { ...t, controller, allocation };
  }

  it('says why an allocated room is ready again when its allocation expired without the match, and when', async () => {
    const t = await allocatedThenEnded('2026-01-01T00:00:03.000Z', '2026-01-01T00:00:03.050Z');
    // A room freed by its game server after the match tells no allocation.
    t.room.status = { status: 'occupied', allocation: { ...t.allocation, id: 'm-2', endedAt: '2026-01-01T00:00:04.000Z', endReason: 'occupied' } };
    await t.controller.reconcile('s/r1');
    t.room.status = { ...t.room.status, status: 'ready' };
    await t.controller.reconcile('s/r1');
    expect(t.events).toEqual([
      'r1 GameRoomReady: Room is ready (was allocated): allocation m-1 expired at 2026-01-01T00:00:03.050Z, as the room did not report its match (an occupied ping, or one more runningMatches) before 2026-01-01T00:00:03.000Z; it can be allocated again',
      'r1 GameRoomOccupied: Room is occupied (was ready)',
      'r1 GameRoomReady: Room is ready (was occupied)',
    ]);
  });

  it('says why a room is ready again when its allocation expired further ahead than any TTL allows (year 9999, by kubectl) and was ended early', async () => {
    const t = await allocatedThenEnded('9999-12-31T23:59:59.000Z', '2026-01-01T00:00:05.000Z');
    expect(t.events).toEqual(['r1 GameRoomReady: Room is ready (was allocated): allocation m-1 was ended at 2026-01-01T00:00:05.000Z: its expiresAt 9999-12-31T23:59:59.000Z is further ahead than the longest allocation TTL (a year) allows, so no allocate call wrote it; it can be allocated again']);
  });
});

describe('allocationStatusChange', () => {
  const allocation = { id: 'm-1', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z' };
  const room = (status: NonNullable<GameRoom['status']>): GameRoom => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, status });

  it('tells a ready room allocated as occupied, and its TTL end as ready, with what happened', () => {
    expect(allocationStatusChange('ready', room({ status: 'allocated', allocation }))).toEqual({
      status: 'occupied', metadata: { roomStatus: 'allocated', allocationId: 'm-1', expiresAt: '2026-01-01T00:05:00.000Z' },
    });
    expect(allocationStatusChange('allocated', room({ status: 'ready', allocation: { ...allocation, endedAt: '2026-01-01T00:05:00.000Z', endReason: 'expired' } }))).toEqual({
      status: 'ready', metadata: { roomStatus: 'ready', allocationId: 'm-1', allocationEnded: 'expired' },
    });
  });

  it('leaves changes a ping made, and a multi-match slot (no status change), to the ping path', () => {
    expect(allocationStatusChange('allocated', room({ status: 'occupied', allocation: { ...allocation, endedAt: '2026-01-01T00:01:00.000Z', endReason: 'occupied' } }))).toBeUndefined();
    expect(allocationStatusChange('active', room({ status: 'active', allocation }))).toBeUndefined();
    expect(allocationStatusChange('ready', room({ status: 'occupied' }))).toBeUndefined();
  });
});
