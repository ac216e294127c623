import type { GameRoom, Scheduler } from '../../../common/src/generated/resources';
import { silentLogger } from '../../../common/src/logger';
import { schedulerObject } from '../../../test/support/scheduler-object';
import type { OperatorDeps } from '../deps';
import { RoomExpectations } from './expectations';
import { deletionStartedAt, RoomManager, toView } from './room-manager';

describe('deletionStartedAt', () => {
  it('is the deletionTimestamp minus the grace period (the API server sets the end of the grace period)', () => {
    expect(deletionStartedAt({ deletionTimestamp: '2026-01-01T00:10:00Z', deletionGracePeriodSeconds: 600 })).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(deletionStartedAt({ deletionTimestamp: new Date('2026-01-01T00:00:05Z'), deletionGracePeriodSeconds: 0 })).toBe(Date.parse('2026-01-01T00:00:05Z'));
    expect(deletionStartedAt({ deletionTimestamp: '2026-01-01T00:00:05Z' })).toBe(Date.parse('2026-01-01T00:00:05Z'));
  });

  it('is undefined while the object is not being deleted', () => {
    expect(deletionStartedAt({})).toBeUndefined();
    expect(deletionStartedAt(undefined)).toBeUndefined();
  });

  it('dates a room whose pod is deleted with a long grace period from the request, not from the end of the grace', () => {
    const room = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's', creationTimestamp: new Date('2026-01-01T00:00:00Z') }, spec: { scheduler: 's', version: 'v1.0.0' } } as GameRoom;
    const pod = { metadata: { name: 'r1', deletionTimestamp: new Date('2026-01-01T00:11:00Z'), deletionGracePeriodSeconds: 600 } };
    expect(toView(room, pod, new Map())).toMatchObject({ terminating: true, terminatingSince: Date.parse('2026-01-01T00:01:00Z') });
  });

  it('counts a room whose pod was seen and is gone as leaving (terminating), not as a room that serves: its replacement made the fleet look one above desired, and a healthy room was scaled down', () => {
    const base = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' } } as const;
    expect(toView({ ...base, status: { status: 'ready', instanceStatus: 'ready' } }, undefined, new Map()).terminating).toBe(true);
    // Its pod not seen yet (a room just made): not leaving.
    expect(toView({ ...base, status: { status: 'pending' } }, undefined, new Map()).terminating).toBe(false);
    expect(toView({ ...base, status: { status: 'ready', instanceStatus: 'ready' } }, { metadata: { name: 'r1' } }, new Map()).terminating).toBe(false);
  });

  it('shows a ready room held by an allocation the operator has not ended as allocated, so no removal by amount takes it', () => {
    const allocation = { id: 'm-1', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:05:00Z' };
    const base = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' } } as const;
    expect(toView({ ...base, status: { status: 'ready', allocation } }, undefined, new Map()).status).toBe('allocated');
    const ended = { ...allocation, endedAt: '2026-01-01T00:05:00Z', endReason: 'expired' as const };
    expect(toView({ ...base, status: { status: 'ready', allocation: ended } }, undefined, new Map()).status).toBe('ready');
  });

  it('says why a room is in error: its status.reason, or, before its status is written, its failed pod\'s', () => {
    const base = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' } } as const;
    const failed = { metadata: { name: 'r1' }, status: { phase: 'Failed', containerStatuses: [{ name: 'server', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, reason: 'Error' } } }] } };
    expect(toView({ ...base, status: { status: 'error', reason: 'written' } }, failed, new Map())).toMatchObject({ status: 'error', reason: 'written' });
    expect(toView(base, failed, new Map())).toMatchObject({ status: 'error', reason: 'pod phase Failed: container server terminated: Error (exit code 1)' });
    expect(toView(base, undefined, new Map()).reason).toBeUndefined();
  });

  it('dates a pod not ready from its Ready condition, only on a node that is ready itself (a lost node\'s pods are marked not ready by the node controller, not by their kubelet)', () => {
    const base = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'pending' } } as const;
    const pod = (ready: string) => ({ metadata: { name: 'r1' }, spec: { nodeName: 'n1', containers: [] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready, lastTransitionTime: new Date('2026-01-01T00:02:00Z') }] } });
    const node = (ready: string) => ({ metadata: { name: 'n1' }, status: { conditions: [{ type: 'Ready', status: ready }] } });
    expect(toView(base, pod('False'), new Map(), Infinity, node('True')).notReadySince).toBe(Date.parse('2026-01-01T00:02:00Z'));
    expect(toView(base, pod('False'), new Map(), Infinity, node('Unknown')).notReadySince).toBeUndefined();
    expect(toView(base, pod('False'), new Map()).notReadySince).toBeUndefined();
    expect(toView(base, pod('True'), new Map(), Infinity, node('True')).notReadySince).toBeUndefined();
  });
});

describe('createRooms', () => {
  it('says, when the scheduler\'s namespace is being deleted, that the operator makes it again (NamespaceReady), not only the API server\'s 403', async () => {
    const terminating = Object.assign(new Error('forbidden'), {
      code: 403,
      body: JSON.stringify({ kind: 'Status', reason: 'Forbidden', message: 'gamerooms.roomkeeper.io "s-abcde" is forbidden: unable to create new content in namespace s because it is being terminated', details: { causes: [{ reason: 'NamespaceTerminating' }] } }),
    });
    const deps = {
      api: { createGameRoom: () => Promise.reject(terminating) },
      caches: { pods: { list: () => [] } },
      expectations: new RoomExpectations(() => 0),
      config: { addRoomsConcurrency: 2, roomsApiUrl: '', maestroEnv: false },
      logger: silentLogger(),
      now: () => 0,
    } as unknown as OperatorDeps;
    const scheduler = schedulerObject('s') as unknown as Scheduler;
    const result = await new RoomManager(deps).createRooms({ scheduler, version: 'v1.0.0', definition: scheduler.spec, count: 3 });
    expect(result.created).toEqual([]);
    expect(result.failure).toMatch(/because it is being terminated.* \(namespace s is being deleted: the operator makes it again once it is gone, as the Scheduler's NamespaceReady condition says\)$/);
  });
});

describe('removeRoomById (remove-rooms by id)', () => {
  const NOW = Date.parse('2026-01-01T01:00:00Z');
  const notFound = Object.assign(new Error('not found'), { code: 404 });
  function setup(room: GameRoom | undefined, cached?: GameRoom, cachedPod?: object) {
    const calls: string[] = [];
    const expectations = new RoomExpectations(() => 0);
    const deps = {
      api: {
        getGameRoom: (ns: string, name: string) => (room ? Promise.resolve(room) : Promise.reject(notFound)).finally(() => calls.push(`get ${ns}/${name}`)),
        deleteGameRoom: (ns: string, name: string, pre?: { uid?: string; resourceVersion?: string }) => {
          calls.push(`delete ${ns}/${name} uid=${String(pre?.uid)}${pre?.resourceVersion ? ` resourceVersion=${pre.resourceVersion}` : ''}`);
          return Promise.resolve({});
        },
        jsonPatchGameRoom: (ns: string, name: string, ops: { op: string; path: string; value: unknown }[]) => {
          calls.push(`patch ${ns}/${name} ${ops.map((o) => `${o.op} ${o.path}=${JSON.stringify(o.value)}`).join(', ')}`);
          return Promise.resolve({});
        },
      },
      core: {
        deleteNamespacedPod: (req: { namespace: string; name: string; gracePeriodSeconds?: number }) => {
          calls.push(`delete pod ${req.namespace}/${req.name} grace=${String(req.gracePeriodSeconds)}`);
          return Promise.resolve({});
        },
      },
      caches: { rooms: { get: () => cached }, pods: { get: () => cachedPod } },
      expectations,
      now: () => NOW,
      config: { roomDeletionTimeout: 120_000 },
    } as unknown as OperatorDeps;
    return { manager: new RoomManager(deps), calls, expectations, deps };
  }
  const room = (scheduler: string, extra: Partial<GameRoom['metadata']> = {}): GameRoom => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's', uid: 'uid-1', ...extra }, spec: { scheduler, version: 'v1.0.0' },
  });

  it.each([
    ['a room of the scheduler is deleted, on the condition that it is the room read, and its pod with its grace period (not at the garbage collector\'s pace)', room('s'), 'deleted', ['get s/r1', 'delete s/r1 uid=uid-1', 'delete pod s/r1 grace=undefined']],
    ['an unknown id is not found, and nothing is deleted', undefined, 'not-found', ['get s/r1']],
    ['a room that names another scheduler is not found, and not touched', room('other'), 'not-found', ['get s/r1']],
    ['a room terminating past the deletion timeout has its pod deleted without grace', room('s', { deletionTimestamp: new Date(0) }), 'forced', ['get s/r1', 'delete pod s/r1 grace=0']],
    ['a room whose deletion started within the deletion timeout is left to finish its grace period', room('s', { deletionTimestamp: new Date(NOW - 5_000) }), 'deleting', ['get s/r1']],
    [
      'a room terminating in the foreground whose pod is gone (a lagging garbage collector) loses the foregroundDeletion finalizer, on the condition that it is the room read',
      room('s', { deletionTimestamp: new Date(0), finalizers: ['foregroundDeletion', 'example.com/keep'], resourceVersion: '9' }), 'forced',
      ['get s/r1', 'delete pod s/r1 grace=0', 'patch s/r1 test /metadata/resourceVersion="9", replace /metadata/finalizers=["example.com/keep"]'],
    ],
  ])('%s', async (_name, existing, outcome, calls) => {
    const t = setup(existing);
    expect(await t.manager.removeRoomById('s', 'r1')).toBe(outcome);
    expect(t.calls).toEqual(calls);
  });

  it('keeps the foregroundDeletion finalizer while the room\'s pod is still in the cache (the collector\'s wait is real)', async () => {
    const t = setup(room('s', { deletionTimestamp: new Date(0), finalizers: ['foregroundDeletion'], resourceVersion: '9' }), undefined, { metadata: { name: 'r1' } });
    expect(await t.manager.removeRoomById('s', 'r1')).toBe('forced');
    expect(t.calls).toEqual(['get s/r1', 'delete pod s/r1 grace=0']);
  });

  it('reads a room the cache no longer shows at the version decided on, and keeps it when the read shows it changed', async () => {
    const t = setup(room('s', { resourceVersion: '7' }), room('s', { resourceVersion: '6' }));
    expect(await t.manager.removeRoomById('s', 'r1', '5')).toBe('changed');
    expect(t.calls).toEqual(['get s/r1']);
  });

  it('deletes a room still at the version decided on, on the condition that it still is', async () => {
    const t = setup(room('s', { resourceVersion: '5' }));
    expect(await t.manager.removeRoomById('s', 'r1', '5')).toBe('deleted');
    expect(t.calls).toEqual(['get s/r1', 'delete s/r1 uid=uid-1 resourceVersion=5', 'delete pod s/r1 grace=undefined']);
  });

  it('deletes a room the cache shows at the version decided on without reading it first, on the condition that it still is that version', async () => {
    const t = setup(room('s', { resourceVersion: '5' }), room('s', { resourceVersion: '5' }));
    expect(await t.manager.removeRoomById('s', 'r1', '5')).toBe('deleted');
    expect(t.calls).toEqual(['delete s/r1 uid=uid-1 resourceVersion=5', 'delete pod s/r1 grace=undefined']);
  });

  it('keeps a room the cache shows at the version decided on when the deletion finds it changed (409: a rollout on a stale cache), and waits for the cache; the refused deletion is not noted as its own, so a later kubectl delete of the room is told', async () => {
    const t = setup(room('s', { resourceVersion: '7' }), room('s', { resourceVersion: '5' }));
    const conflict = Object.assign(new Error('conflict'), { code: 409 });
    (t.deps.api as { deleteGameRoom: unknown }).deleteGameRoom = () => Promise.reject(conflict);
    expect(await t.manager.removeRoomById('s', 'r1', '5')).toBe('changed');
    expect(t.calls).toEqual(['get s/r1']);
    expect(t.expectations.satisfied('s')).toBe(false);
    expect(t.expectations.takeOwnDeletion('s', 'r1')).toBe(false);
  });

  it('a deletion refused 409 whose room is being deleted (a retry of a deletion that landed) stays noted as its own', async () => {
    const t = setup(room('s', { resourceVersion: '8', deletionTimestamp: new Date(NOW) }), room('s', { resourceVersion: '5' }));
    const conflict = Object.assign(new Error('conflict'), { code: 409 });
    (t.deps.api as { deleteGameRoom: unknown }).deleteGameRoom = () => Promise.reject(conflict);
    expect(await t.manager.removeRoomById('s', 'r1', '5')).toBe('changed');
    expect(t.expectations.takeOwnDeletion('s', 'r1')).toBe(true);
  });

  it('a room already gone that the cache still shows holds the health check until the cache shows it gone', async () => {
    const t = setup(undefined, room('s'));
    expect(await t.manager.removeRoomById('s', 'r1')).toBe('not-found');
    expect(t.expectations.satisfied('s')).toBe(false);
  });
});

describe('lastPings (the gateways\' ping digests)', () => {
  it('takes the latest ping of each room over the digests, and no time further ahead than clocks drift', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const digest = (lastPings: Record<string, number>) => ({ status: { lastPings: JSON.stringify(lastPings), flushedAt: String(now) } });
    const digests = [digest({ a: now - 5_000, b: now - 9_000, c: Date.parse('2100-01-01T00:00:00Z') }), digest({ a: now - 1_000, b: now + 30_000 })];
    const deps = { now: () => now, caches: { digests: { list: () => digests } } } as unknown as OperatorDeps;
    expect(new RoomManager(deps).lastPings('s')).toEqual(new Map([['a', now - 1_000], ['b', now + 30_000]]));
  });
});

describe('views (the rooms as the pure rules see them)', () => {
  it('keeps the pings it read when a PingDigest is deleted or garbled (kubectl), for the rooms the cache holds, and none from before a room was made', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const room = (name: string, createdAt = now - 600_000): GameRoom => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', creationTimestamp: new Date(createdAt) }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'occupied' },
    });
    let rooms = [room('a'), room('b')];
    let digests: { status: { lastPings: string; flushedAt: string } }[] = [{ status: { lastPings: JSON.stringify({ a: now - 5_000, b: now - 6_000 }), flushedAt: String(now) } }];
    const deps = { now: () => now, caches: { digests: { list: () => digests }, rooms: { list: () => rooms }, pods: { get: () => undefined } } } as unknown as OperatorDeps;
    const lastPings = () => Object.fromEntries(new RoomManager(deps).views('s').map((v) => [v.name, v.lastPingAt]));
    expect(lastPings()).toEqual({ a: now - 5_000, b: now - 6_000 });
    digests = [];
    expect(lastPings()).toEqual({ a: now - 5_000, b: now - 6_000 });
    digests = [{ status: { lastPings: '{not json', flushedAt: String(now) } }];
    expect(lastPings()).toEqual({ a: now - 5_000, b: now - 6_000 });
    // b goes; a room b made again later is not heard by the old one's pings.
    rooms = [room('a')];
    expect(lastPings()).toEqual({ a: now - 5_000 });
    rooms = [room('a'), room('b', now - 1_000)];
    expect(lastPings()).toEqual({ a: now - 5_000, b: undefined });
  });


  it('takes no GameRoom lastPingAt further ahead than clocks drift (written with kubectl, it kept a silent room from expiring)', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const room = (name: string, lastPingAt: string): GameRoom => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', creationTimestamp: new Date(now - 600_000) }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'ready', lastPingAt },
    });
    const rooms = [room('far', '2100-01-01T00:00:00Z'), room('skewed', new Date(now + 30_000).toISOString()), room('past', new Date(now - 5_000).toISOString())];
    const digests = [{ status: { lastPings: JSON.stringify({ far: now - 90_000 }), flushedAt: String(now) } }];
    const deps = { now: () => now, caches: { digests: { list: () => digests }, rooms: { list: () => rooms }, pods: { get: () => undefined } } } as unknown as OperatorDeps;
    const lastPing = Object.fromEntries(new RoomManager(deps).views('s').map((v) => [v.name, v.lastPingAt]));
    expect(lastPing).toEqual({ far: now - 90_000, skewed: now + 30_000, past: now - 5_000 });
  });
});
