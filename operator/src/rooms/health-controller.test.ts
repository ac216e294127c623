import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { loadConfig } from '../../../common/src/config';
import { LOST_ROOMS_ANNOTATION } from '../../../common/src/resources/labels';
import { silentLogger } from '../../../common/src/logger';
import { MetricsRegistry } from '../../../common/src/metrics';
import type { OperatorDeps } from '../deps';
import type { KubeEvent } from '../../../common/src/kube/event-recorder';
import { HealthController } from './health-controller';
import { OutsideDeletions } from './outside-deletions';
import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';

/** A scheduler of 3 rooms with none yet, on caches that never catch up with the API server. */
function setup() {
  const s: Scheduler = {
    apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
    metadata: { name: 's', uid: 'uid-1', generation: 1, resourceVersion: '10' },
    spec: { game: 'g', roomsReplicas: 3, maxSurge: 1 } as Scheduler['spec'],
    status: { version: 'v1.0.0', state: 'in-sync', rooms: { desired: 3 }, autoscaling: { desired: 3, lastDecision: 'roomsReplicas is 3' } },
  };
  const created: Operation[] = [];
  const empty = { list: () => [], get: () => undefined };
  const deps = {
    api: {
      createOperation: (op: Operation) => {
        const stored = { ...op, metadata: { ...op.metadata, resourceVersion: String(20 + created.length) } };
        created.push(stored);
        return Promise.resolve(stored);
      },
      patchSchedulerStatus: () => Promise.resolve(s),
      getScheduler: () => Promise.resolve(s),
    },
    caches: {
      schedulers: { list: () => [s], get: () => s },
      namespaces: { list: () => [], get: () => ({ metadata: { name: 's', uid: 'ns-1' } }) },
      rooms: empty, pods: empty, versions: empty, nodes: empty, digests: empty, operations: empty,
    },
    config: loadConfig({}, {}),
    logger: silentLogger(),
    metrics: new MetricsRegistry(),
    now: () => Date.parse('2026-01-01T00:00:00Z'),
  } as unknown as OperatorDeps;
  return { deps, created };
}

/** A pods cache holding a bare pod of each room: rooms whose status says their pod was seen (instanceStatus) and whose pod is gone are leaving. */
function podOfEachRoom(rooms: readonly { metadata: { name: string } }[]) {
  return { list: () => [], get: (n: string) => (rooms.some((r) => r.metadata.name === n) ? { metadata: { name: n, namespace: 's' } } : undefined) };
}

describe('HealthController: autoscaling of a multi-match scheduler', () => {
  it('counts with the active version\'s maxMatches, not a refused spec change\'s', async () => {
    const { deps, created } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    const autoscaling = { enabled: true, min: 1, max: 10, policy: { type: 'roomOccupancy' as const, parameters: { roomOccupancy: { readyTarget: 0.5 } } } };
    s.spec = { ...s.spec, autoscaling };
    const active = { metadata: { name: 's-v1.0.0', uid: 'v-1' }, spec: { scheduler: 's', version: 'v1.0.0', kind: 'minor', definition: { ...s.spec } } };
    // The refused change asked for 3 matches a room; v1.0.0 runs single-match rooms.
    s.spec = { ...s.spec, matchAllocation: { maxMatches: 3 } };
    Object.assign(deps.caches, { versions: { list: () => [active], get: (name: string) => (name === 's-v1.0.0' ? active : undefined) } });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    const reason = (created[0]?.spec.input as { reason?: string } | undefined)?.reason;
    expect(reason).toContain('roomOccupancy: ceil(0 occupied / (1 - 0.5)) = 0');
    expect(reason).not.toContain('matches per room');
  });
});

describe('HealthController: a spec change that was refused', () => {
  /** Puts the active version's definition in the versions cache, and the refused change in the spec. */
  function refused(deps: OperatorDeps, version: string, change: Partial<Scheduler['spec']>) {
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.status = { ...s.status, version };
    const active = { metadata: { name: `s-${version}`, uid: 'v-1' }, spec: { scheduler: 's', version, kind: 'major', definition: { ...s.spec } } };
    Object.assign(deps.caches, { versions: { list: () => [active], get: (name: string) => (name === `s-${version}` ? active : undefined) } });
    s.spec = { ...s.spec, ...change };
  }

  it('decides the room count by the active version\'s autoscaling, not a refused change that enables it', async () => {
    const { deps, created } = setup();
    refused(deps, 'v1.0.0', { autoscaling: { enabled: true, min: 1, max: 10, policy: { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 5 } } } } });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.amount, o.spec.input?.reason])).toEqual([
      ['add_rooms', 3, 'roomsReplicas is 3; 0 available of 3 desired'],
    ]);
  });

  it('replaces rooms maxSurge of the active version at a time, not a refused change\'s', async () => {
    const { deps, created } = setup();
    refused(deps, 'v2.0.0', { maxSurge: 3 });
    const old = (name: string) => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'ready', pingStatus: 'ready', lastPingAt: '2025-12-31T23:59:59Z' } });
    const rooms = [old('a'), old('b'), old('c')];
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) } });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.amount, o.spec.input?.reason])).toEqual([
      ['add_rooms', 1, 'rolling update to v2.0.0: 1 new room (3 rooms when decided; 3 desired + surge 1 = 4)'],
    ]);
  });
});

describe('HealthController: status.version edited with kubectl', () => {
  it('replaces no room towards a status.version no SchedulerVersion holds while another says it is active (the scheduler controller sets it back)', async () => {
    const { deps, created } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.status = { ...s.status, version: 'v99.0.0' };
    const active = { metadata: { name: 's-v1.0.0', uid: 'v-1' }, spec: { scheduler: 's', version: 'v1.0.0', kind: 'major', definition: { ...s.spec } }, status: { active: true } };
    Object.assign(deps.caches, { versions: { list: () => [active], get: (name: string) => (name === 's-v1.0.0' ? active : undefined) } });
    const room = (name: string) => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'ready', pingStatus: 'ready', lastPingAt: '2025-12-31T23:59:59Z' } });
    const rooms = [room('a'), room('b'), room('c')];
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) } });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created).toEqual([]);
  });
});

describe('HealthController on an operations cache that lags (its watch broken after an outage)', () => {
  it('enqueues one healing operation and counts it at once, however often it runs before the cache shows it', async () => {
    const { deps, created } = setup();
    const tracked: Operation[] = [];
    const health = new HealthController(deps, { operationsOf: () => tracked, track: (op) => tracked.push(op) });
    for (let run = 0; run < 5; run++) await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input])).toEqual([['add_rooms', { amount: 3, reason: 'roomsReplicas is 3; 0 available of 3 desired' }]]);
    expect(tracked.map((o) => o.metadata.name)).toEqual(created.map((o) => o.metadata.name));
  });

  it('decides nothing while a cache it reads is not current (its watch failed and it has not relisted), and says so once', async () => {
    const { deps, created } = setup();
    const logs = captureLogs('info');
    let stale = ['operations', 'rooms'];
    Object.assign(deps, { logger: logs.logger, staleCaches: () => stale });
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined });
    for (let run = 0; run < 3; run++) expect(await health.reconcile('s')).toEqual({ requeueAfterMs: 1000 });
    expect(created).toEqual([]);
    stale = [];
    await health.reconcile('s');
    expect(created.map((o) => o.spec.definitionName)).toEqual(['add_rooms']);
    await waitFor(() => logs.lines.some((l) => l.message === 'health check waits for current caches'));
    expect(logs.lines.filter((l) => l.message === 'health check waits for current caches')).toEqual([expect.objectContaining({ scheduler: 's', caches: ['operations', 'rooms'] })]);
  });
});

describe('HealthController and rooms deleted in the foreground', () => {
  it('removes the foregroundDeletion finalizer of deleted rooms whose pods are gone, also while an operation runs, and leaves the others', async () => {
    const { deps } = setup();
    const room = (name: string, extra: Record<string, unknown>) => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', uid: `uid-${name}`, resourceVersion: '7', ...extra }, spec: { scheduler: 's', version: 'v1.0.0' } });
    const rooms = [
      room('gone-pod', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] }),
      room('pod-left', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] }),
      room('live', {}),
    ];
    const patched: string[] = [];
    Object.assign(deps.caches, {
      rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) },
      pods: { list: () => [], get: (n: string) => (n === 'pod-left' ? { metadata: { name: n } } : undefined) },
    });
    Object.assign(deps.api, {
      jsonPatchGameRoom: (ns: string, name: string, ops: object[]) => {
        patched.push(`${ns}/${name} ${JSON.stringify(ops)}`);
        return Promise.resolve({});
      },
    });
    const running = { metadata: { name: 'op-1' }, spec: { definitionName: 'add_rooms', schedulerName: 's' }, status: { status: 'in_progress' } } as unknown as Operation;
    const health = new HealthController(deps, { operationsOf: () => [running], track: () => undefined });
    await health.reconcile('s');
    expect(patched).toEqual(['s/gone-pod [{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"replace","path":"/metadata/finalizers","value":[]}]']);
  });
});

describe('HealthController during a rolling update', () => {
  it('names the rooms lost since its last add_rooms in the rollout\'s add_rooms too (the next one would not name them), and the counts that make its amount', async () => {
    const { deps, created } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.status = { ...s.status, version: 'v2.0.0', lostRooms: [{ name: 'gone', reason: 'its pod was deleted', lostAt: '2025-12-31T23:59:59Z' }] };
    const old = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'old', namespace: 's', uid: 'uid-old', resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'ready', pingStatus: 'ready', lastPingAt: '2025-12-31T23:59:59Z' } };
    Object.assign(deps.caches, { rooms: { list: () => [old], get: (n: string) => (n === 'old' ? old : undefined) } });
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined });
    await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.reason, o.metadata.annotations?.[LOST_ROOMS_ANNOTATION]])).toEqual([
      ['add_rooms', 'rolling update to v2.0.0: 3 new rooms (1 room when decided; 3 desired + surge 1 = 4); lost: gone (its pod was deleted)', 'gone'],
    ]);
  });
});


describe('HealthController naming lost rooms', () => {
  it('names a room whose record the Scheduler cache does not show yet (the GameRoom watch ran ahead of the Scheduler watch), as the API server has it', async () => {
    const { deps, created } = setup();
    const cached = deps.caches.schedulers.get('s') as Scheduler;
    const recorded: Scheduler = { ...cached, status: { ...cached.status, lostRooms: [{ name: 's-gone1', reason: 'its pod was deleted', lostAt: '2025-12-31T23:59:58Z' }] } };
    Object.assign(deps.api, { getScheduler: () => Promise.resolve(recorded) });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => [o.spec.input?.reason, o.metadata.annotations?.[LOST_ROOMS_ANNOTATION]])).toEqual([
      ['roomsReplicas is 3; 0 available of 3 desired; lost: s-gone1 (its pod was deleted)', 's-gone1'],
    ]);
  });

  it('names the rooms the cache shows when the Scheduler cannot be read', async () => {
    const { deps, created } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.status = { ...s.status, lostRooms: [{ name: 's-gone2', reason: 'its pod was deleted', lostAt: '2025-12-31T23:59:58Z' }] };
    Object.assign(deps.api, { getScheduler: () => Promise.reject(Object.assign(new Error('unavailable'), { code: 503 })) });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => o.spec.input?.reason)).toEqual(['roomsReplicas is 3; 0 available of 3 desired; lost: s-gone2 (its pod was deleted)']);
  });
});

/** The setup's scheduler with 20 ready rooms, r0 to r19, in the rooms cache; `status(i, now)`: the rest of room i's status (its last ping). */
function twentyRooms(status: (i: number, now: number) => Record<string, unknown>) {
  const { deps, created } = setup();
  const s = deps.caches.schedulers.get('s') as Scheduler;
  s.spec = { ...s.spec, roomsReplicas: 20 };
  s.status = { ...s.status, rooms: { desired: 20 }, autoscaling: { desired: 20, lastDecision: 'roomsReplicas is 20' } };
  const now = deps.now();
  const rooms = Array.from({ length: 20 }, (_, i) => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
    metadata: { name: `r${i}`, namespace: 's', uid: `uid-${i}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' },
    spec: { scheduler: 's', version: 'v1.0.0' },
    status: { status: 'ready', pingStatus: 'ready', ...status(i, now) },
  }));
  Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) } });
  return { deps, created };
}

describe('HealthController marking silent rooms', () => {
  /**
   * 20 ready rooms, `silent` of them last heard 100 s ago (past the 90 s silence timeout, within
   * the 240 s ping timeout), the others 5 s ago; `marked`: rooms marked before, heard 5 s ago;
   * `ops`: the scheduler's operations.
   */
  async function check(silent: number, marked: string[] = [], ops: Operation[] = []) {
    const { deps, created } = twentyRooms((i, now) => ({
      lastPingAt: new Date(now - (i < silent ? 100_000 : 5_000)).toISOString(),
      ...(marked.includes(`r${i}`) ? { silentSince: new Date(now - 200_000).toISOString() } : {}),
    }));
    const patches: [string, string, object][] = [];
    Object.assign(deps.api, { patchGameRoomStatus: (ns: string, name: string, patch: object) => (patches.push([ns, name, patch]), Promise.resolve({})) });
    const { lines, logger } = captureLogs('info');
    Object.assign(deps, { logger });
    await new HealthController(deps, { operationsOf: () => ops, track: () => undefined }).reconcile('s');
    // The log stream is written on the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    return { created, patches, lines };
  }

  it('marks the rooms silent past the silence timeout with their last ping, on the version judged, and removes none before the ping timeout', async () => {
    const { created, patches, lines } = await check(2);
    const lastPing = new Date(Date.parse('2026-01-01T00:00:00Z') - 100_000).toISOString();
    expect(patches).toEqual([
      ['s', 'r0', { metadata: { resourceVersion: '7' }, status: { silentSince: lastPing } }],
      ['s', 'r1', { metadata: { resourceVersion: '7' }, status: { silentSince: lastPing } }],
    ]);
    expect(created.filter((o) => o.spec.definitionName === 'remove_rooms')).toEqual([]);
    expect(lines.find((l) => String(l.message).startsWith('rooms marked silent'))).toMatchObject({ scheduler: 's', count: 2, rooms: ['r0', 'r1'], silenceTimeoutS: 90 });
  });

  it('clears the mark of a room heard since, and marks none of a silence as wide as a mass expiry (its pings\' path more likely failed)', async () => {
    const heard = await check(0, ['r3']);
    expect(heard.patches).toEqual([['s', 'r3', { status: { silentSince: null } }]]);
    expect(heard.lines.find((l) => l.message === 'silent rooms heard again: they may be allocated again')).toMatchObject({ count: 1, rooms: ['r3'] });
    const wide = await check(15);
    expect(wide.patches).toEqual([]);
  });
});

describe('HealthController marking silent rooms while an operation runs', () => {
  it('marks them all the same (a rollout of minutes must not keep a hung room allocatable), at most once a health interval, and decides nothing else', async () => {
    const { deps, created } = twentyRooms((i, now) => ({ lastPingAt: new Date(now - (i < 2 ? 100_000 : 5_000)).toISOString() }));
    let now = deps.now();
    Object.assign(deps, { now: () => now });
    const patches: [string, string, object][] = [];
    Object.assign(deps.api, { patchGameRoomStatus: (ns: string, name: string, patch: object) => (patches.push([ns, name, patch]), Promise.resolve({})) });
    const rollout = { metadata: { name: 'op-1' }, spec: { schedulerName: 's', definitionName: 'create_new_scheduler_version' }, status: { status: 'in_progress' } } as unknown as Operation;
    const health = new HealthController(deps, { operationsOf: () => [rollout], track: () => undefined });
    expect(await health.reconcile('s')).toEqual({ requeueAfterMs: 500 });
    expect(patches.map(([, name]) => name)).toEqual(['r0', 'r1']);
    // The cache does not show the marks yet: judged again only after a health interval.
    now += deps.config.healthInterval - 1;
    await health.reconcile('s');
    expect(patches).toHaveLength(2);
    now += 1;
    await health.reconcile('s');
    expect(patches.map(([, name]) => name)).toEqual(['r0', 'r1', 'r0', 'r1']);
    expect(created).toEqual([]);
  });
});

describe('HealthController and the expiry brake', () => {
  /** 20 ready rooms of the scheduler, `expiring` of them last heard 241 s ago and the others `othersAgoS` ago. */
  async function check(expiring: number, othersAgoS: number) {
    const { deps, created } = twentyRooms((i, now) => ({ lastPingAt: new Date(now - (i < expiring ? 241_000 : othersAgoS * 1000)).toISOString() }));
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined });
    await health.reconcile('s');
    return { created, held: deps.metrics.sum('roomkeeper_room_expiry_held_total', { reason: 'mass-expiry' }) };
  }

  it('holds a silence of the whole fleet that crosses the timeout a few rooms at a time', async () => {
    // 3 rooms cross the ping timeout now; the other 17 have been silent for 200 s of 240 s.
    const { created, held } = await check(3, 200);
    expect(created.filter((o) => o.spec.definitionName === 'remove_rooms')).toEqual([]);
    expect(held).toBe(1);
  });

  it('expires the few silent rooms of a fleet that is otherwise heard', async () => {
    const { created, held } = await check(3, 5);
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.roomsIds])).toEqual([['remove_rooms', ['r0', 'r1', 'r2']]]);
    // Each with the version judged silent: one written since (a game server back with a status-changing ping) is kept.
    expect(created[0]?.spec.input?.resourceVersions).toEqual({ r0: '7', r1: '7', r2: '7' });
    expect(held).toBe(0);
  });

  /**
   * 20 ready rooms of the scheduler, all last heard 241 s before the clock's start, and 10 rooms of
   * scheduler `other` last heard `othersAgoS` before each look; `digests(now)`: what the digest
   * cache holds (other's only).
   */
  function hangingFleet(digests: (now: number) => object[], othersAgoS = 5) {
    const { deps, created } = setup();
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    deps.now = () => clock.now;
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.spec = { ...s.spec, roomsReplicas: 20 };
    s.status = { ...s.status, rooms: { desired: 20 }, autoscaling: { desired: 20, lastDecision: 'roomsReplicas is 20' } };
    const silentSince = clock.now - 241_000;
    const rooms = Array.from({ length: 20 }, (_, i) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: `r${i}`, namespace: 's', uid: `uid-${i}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'ready', pingStatus: 'ready', lastPingAt: new Date(silentSince).toISOString() },
    }));
    const otherRooms = () => Array.from({ length: 10 }, (_, i) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: `o${i}`, namespace: 'other', uid: `uid-o${i}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' },
      spec: { scheduler: 'other', version: 'v1.0.0' },
      status: { status: 'ready', pingStatus: 'ready', lastPingAt: new Date(clock.now - othersAgoS * 1000).toISOString() },
    }));
    const other = { ...s, metadata: { ...s.metadata, name: 'other', uid: 'uid-other' } };
    const events: { reason: string; type: string; note: string }[] = [];
    Object.assign(deps, { events: { record: (e: { reason: string; type: string; note: string }) => events.push(e) } });
    Object.assign(deps.caches, {
      schedulers: { list: () => [s, other], get: (n: string) => (n === 'other' ? other : s) },
      rooms: { list: (ns?: string) => (ns === 'other' ? otherRooms() : rooms), get: (n: string) => rooms.find((r) => r.metadata.name === n) },
      digests: { list: (ns?: string) => (ns === undefined || ns === 'other' ? digests(clock.now) : []), get: () => undefined },
    });
    const changed: string[] = [];
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined, heldExpiryChanged: (n) => changed.push(n) });
    return { deps, created, clock, events, health, changed };
  }
  const otherDigest = (flushedAt: number) => ({ metadata: { name: 'roomkeeper-pings-gw', namespace: 'other' }, spec: { scheduler: 'other', replica: 'gw' }, status: { lastPings: '{}', flushedAt: String(flushedAt) } });

  it('says while it holds expiry for a sight gained lately, in words that stay the same through the hold (one condition write), and when it ends', async () => {
    const { deps, clock, health, changed } = hangingFleet((now) => [otherDigest(now - 5_000)]);
    // The operator gained its sight (leadership) just now: every silent room waits the expiry grace (one ping timeout, 240 s, by default).
    const since = clock.now;
    Object.assign(deps, { sight: () => ({ impaired: false, since }) });
    await health.reconcile('s');
    clock.now += 100_000;
    await health.reconcile('s');
    expect(health.heldExpiryOf('s')).toBe('room expiry held: the operator has seen the cluster only since it gained leadership or its caches reconnected, and pings may not have reached it yet, so rooms that look expired are expired no sooner than 2026-01-01T00:04:00.000Z (the expiry grace, 240 s, later), and only those still silent then');
    expect(changed).toEqual(['s']);
    // Caches that cannot reach the API server: another hold, other words.
    Object.assign(deps, { sight: () => ({ impaired: true, since }) });
    await health.reconcile('s');
    expect(health.heldExpiryOf('s')).toMatch(/^room expiry held: the operator's room caches cannot reach the API server/);
    expect(changed).toEqual(['s', 's']);
  });

  it('expires a whole fleet that hangs while gateways have been seen flushing other rooms\' pings for a ping timeout, and holds it, telling the scheduler once, until then', async () => {
    // Another scheduler's rooms are heard: its digest is flushed 5 s before every look.
    const { created, clock, events, health, changed } = hangingFleet((now) => [otherDigest(now - 5_000)]);
    // Pings first seen flowing now: not yet for a ping timeout, so the wide silence is held, and told.
    await health.reconcile('s');
    clock.now += 120_000;
    await health.reconcile('s');
    expect(created).toEqual([]);
    expect(events.filter((e) => e.reason === 'RoomExpiryHeld').map((e) => e.type)).toEqual(['Warning']);
    expect(events.find((e) => e.reason === 'RoomExpiryHeld')?.note).toMatch(/^20 rooms would expire now/);
    // The scheduler's HealingHeld condition says it while it lasts (scheduler-controller.ts reads it).
    expect(health.heldExpiryOf('s')).toMatch(/^room expiry held \(RoomExpiryHeld\): 20 rooms would expire now.*; meanwhile these rooms stay counted ready, and those not marked silent before \(status\.silentSince\) may be allocated$/);
    expect(changed).toEqual(['s']); // the same counts at both looks: one change
    // Seen flowing for a whole ping timeout (240 s): the silent rooms are silent themselves.
    clock.now += 120_000;
    await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, (o.spec.input?.roomsIds as string[]).length])).toEqual([['remove_rooms', 20]]);
    expect(health.heldExpiryOf('s')).toBeUndefined();
    expect(changed).toEqual(['s', 's']);
  });

  it('keeps holding a whole fleet\'s silence while no gateway is seen flushing pings (every room of the cluster silent: the gateways or the operator\'s sight)', async () => {
    // The last digest flush of the cluster is as old as the silence, and so are the other rooms' pings.
    const silentSince = Date.parse('2026-01-01T00:00:00Z') - 241_000;
    const { deps, created, clock, health } = hangingFleet(() => [otherDigest(silentSince)], 241);
    for (let look = 0; look < 4; look++, clock.now += 240_000) await health.reconcile('s');
    expect(created).toEqual([]);
    expect(deps.metrics.sum('roomkeeper_room_expiry_held_total', { reason: 'mass-expiry' })).toBe(4);
  });

  it('keeps holding it while digests are flushed but most of the other schedulers\' rooms are silent too (a gateway too busy to hear pings, as at 15,000 rooms on two cores)', async () => {
    const { created, clock, health } = hangingFleet((now) => [otherDigest(now - 5_000)], 200);
    for (let look = 0; look < 4; look++, clock.now += 120_000) await health.reconcile('s');
    expect(created).toEqual([]);
  });
});

describe('HealthController and a room whose pod was deleted', () => {
  it('removes no healthy room while the lost room waits for its deletion beside its replacement (it counted as serving, the fleet looked one above desired, and a ready room was scaled down)', async () => {
    const { deps, created } = setup();
    const now = deps.now();
    const room = (name: string, status: Record<string, unknown>) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name, namespace: 's', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' },
      spec: { scheduler: 's', version: 'v1.0.0' }, status,
    });
    const heard = { status: 'ready', instanceStatus: 'ready', pingStatus: 'ready', lastPingAt: new Date(now - 1000).toISOString() };
    // 3 desired: r0 and r1 serve, `lost` was ready and its pod is gone, `new` replaces it (just made).
    const rooms = [room('r0', heard), room('r1', heard), room('lost', heard), room('new', { status: 'pending' })];
    const pods = new Set(['r0', 'r1']);
    Object.assign(deps.caches, {
      rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) },
      pods: { list: () => [], get: (n: string) => (pods.has(n) ? { metadata: { name: n, namespace: 's' } } : undefined) },
    });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.filter((o) => o.spec.definitionName === 'remove_rooms')).toEqual([]);
  });
});

describe('HealthController and the size of its operations', () => {
  /** `old` ready rooms of v1.0.0 and `current` of v2.0.0, heard 5 s ago (241 s ago: those `silent` names). */
  function fleet(deps: OperatorDeps, counts: { old: number; current: number }, silent: string[] = []) {
    const now = deps.now();
    const room = (name: string, version: string) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name, namespace: 's', uid: `uid-${name}`, resourceVersion: `rv-${name}`, creationTimestamp: '2025-12-31T23:00:00Z' },
      spec: { scheduler: 's', version },
      status: { status: 'ready', pingStatus: 'ready', lastPingAt: new Date(now - (silent.includes(name) ? 241_000 : 5_000)).toISOString() },
    });
    const rooms = [
      ...Array.from({ length: counts.old }, (_, i) => room(`old${i}`, 'v1.0.0')),
      ...Array.from({ length: counts.current }, (_, i) => room(`new${i}`, 'v2.0.0')),
    ];
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) } });
    return rooms;
  }

  it('removes at most removeRoomsLimit expired rooms in one operation (the next check takes the rest)', async () => {
    const { deps, created } = setup();
    deps.config = { ...deps.config, removeRoomsLimit: 2 };
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.spec = { ...s.spec, roomsReplicas: 20 };
    s.status = { ...s.status, version: 'v1.0.0', rooms: { desired: 20 }, autoscaling: { desired: 20, lastDecision: 'roomsReplicas is 20' } };
    const rooms = fleet(deps, { old: 20, current: 0 }, ['old3', 'old4', 'old5']);
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined });
    await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.roomsIds, (o.spec.input?.details as string[]).length])).toEqual([['remove_rooms', ['old3', 'old4'], 2]]);
    // That operation ran: its two rooms are gone.
    rooms.splice(3, 2);
    await health.reconcile('s');
    expect(created.map((o) => o.spec.input?.roomsIds)).toEqual([['old3', 'old4'], ['old5']]);
  });

  it('replaces at most removeRoomsLimit rooms of an older version in one operation, and its rollout event counts those', async () => {
    const { deps, created } = setup();
    deps.config = { ...deps.config, removeRoomsLimit: 3 };
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.spec = { ...s.spec, roomsReplicas: 10, maxSurge: '100%' };
    s.status = { ...s.status, version: 'v2.0.0', rooms: { desired: 10 }, autoscaling: { desired: 10, lastDecision: 'roomsReplicas is 10' } };
    fleet(deps, { old: 10, current: 10 });
    const notes: string[] = [];
    Object.assign(deps, { events: { record: (e: { note: string }) => notes.push(e.note) } });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.reason, (o.spec.input?.roomsIds as string[]).length, Object.keys(o.spec.input?.resourceVersions as object).length])).toEqual([['remove_rooms', 'rolling_update_replace', 3, 3]]);
    expect(notes).toEqual([`Rolling update to v2.0.0: replacing 3 rooms of an older version (operation ${created[0]?.metadata.name as string})`]);
  });
});

describe('HealthController and rooms deleted outside Roomkeeper', () => {
  const deletedRoom = (name: string) => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', uid: `uid-${name}` }, spec: { scheduler: 's', version: 'v1.0.0' } }) as const;
  const withOutside = (deps: OperatorDeps, names: string[]) => {
    const outside = new OutsideDeletions({ caches: deps.caches });
    for (const n of names) outside.observe('delete', deletedRoom(n), true);
    const events: KubeEvent[] = [];
    Object.assign(deps, { events: { record: (e: KubeEvent) => events.push(e) } });
    return { outside, events };
  };

  it('names them in the add_rooms that replaces them and tells them once in a Warning Event naming it', async () => {
    const { deps, created } = setup();
    const { outside, events } = withOutside(deps, ['s-aaaaa', 's-bbbbb']);
    const health = new HealthController(deps, { operationsOf: () => [], outside });
    await health.reconcile('s');
    expect(created.map((o) => o.spec.input?.reason)).toEqual(['roomsReplicas is 3; 0 available of 3 desired; lost: s-aaaaa (deleted outside Roomkeeper), s-bbbbb (deleted outside Roomkeeper)']);
    expect(events.filter((e) => e.reason === 'RoomsDeletedOutsideRoomkeeper')).toEqual([expect.objectContaining({
      type: 'Warning',
      note: `2 rooms were deleted outside Roomkeeper (by kubectl or another client; no operation deleted them): s-aaaaa, s-bbbbb. The health check enqueued add_rooms ${created[0]?.metadata.name as string} for 3 rooms (0 available of 3 desired).`,
    })]);
    expect(outside.of('s')).toBeUndefined();
  });

  it('says no room was added when the fleet wants none, and keeps them while the queue is busy', async () => {
    const { deps, created } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.spec.roomsReplicas = 0;
    const { outside, events } = withOutside(deps, ['s-aaaaa']);
    let busy: Operation[] = [{ spec: { schedulerName: 's', definitionName: 'add_rooms' }, status: { status: 'in_progress' } } as Operation];
    const health = new HealthController(deps, { operationsOf: () => busy, outside });
    await health.reconcile('s');
    expect(events.filter((e) => e.reason === 'RoomsDeletedOutsideRoomkeeper')).toEqual([]);
    busy = [];
    await health.reconcile('s');
    expect(created).toEqual([]);
    expect(events.filter((e) => e.reason === 'RoomsDeletedOutsideRoomkeeper').map((e) => e.note)).toEqual([
      'Room s-aaaaa was deleted outside Roomkeeper (by kubectl or another client; no operation deleted it). No room was added for it: 0 available of 0 desired.',
    ]);
  });
});

describe('HealthController and a fleet above the desired count whose surplus rooms are all held', () => {
  /** Rooms of the scheduler, heard 5 s ago, with the given statuses. */
  function fleet(deps: OperatorDeps, statuses: string[]) {
    const now = deps.now();
    const rooms = statuses.map((status, i) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: `r${i}`, namespace: 's', uid: `uid-${i}`, resourceVersion: '7', creationTimestamp: '2025-12-31T23:00:00Z' },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status, pingStatus: status, lastPingAt: new Date(now - 5_000).toISOString() },
    }));
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) } });
  }
  const kept = (events: KubeEvent[]) => events.filter((e) => e.reason === 'RoomsKeptAboveDesired');

  it('removes none, and says so in one Normal Event when it starts and again only when its numbers change or it comes back', async () => {
    const { deps, created } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.spec = { ...s.spec, roomsReplicas: 1 };
    s.status = { ...s.status, rooms: { desired: 1 }, autoscaling: { desired: 1, lastDecision: 'roomsReplicas is 1' } };
    const events: KubeEvent[] = [];
    Object.assign(deps, { events: { record: (e: KubeEvent) => events.push(e) } });
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined });
    fleet(deps, ['allocated', 'allocated', 'allocated']);
    for (let run = 0; run < 3; run++) await health.reconcile('s');
    expect(created).toEqual([]);
    expect(kept(events).map((e) => [e.regarding.kind, e.regarding.name, e.type, e.action])).toEqual([['Scheduler', 's', 'Normal', 'ScaleDown']]);
    expect(kept(events).map((e) => e.note)).toEqual([
      '3 rooms, 1 desired: kept 3 rooms held by players or a matchmaker (3 allocated), 2 above the desired count, and removed none: scale-down never removes such a room; the health check removes it once it is free',
    ]);
    // One match ended and its room went: the numbers changed.
    fleet(deps, ['allocated', 'occupied']);
    for (let run = 0; run < 2; run++) await health.reconcile('s');
    expect(kept(events).map((e) => e.note)).toEqual([
      expect.stringMatching(/^3 rooms, 1 desired/),
      '2 rooms, 1 desired: kept 2 rooms held by players or a matchmaker (1 allocated, 1 occupied), 1 above the desired count, and removed none: scale-down never removes such a room; the health check removes it once it is free',
    ]);
    // A room is free: remove_rooms tells what it keeps; when the fleet is all held again, the Event comes back.
    fleet(deps, ['allocated', 'occupied', 'ready']);
    await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.amount])).toEqual([['remove_rooms', 1]]);
    fleet(deps, ['allocated', 'occupied']);
    await health.reconcile('s');
    expect(kept(events)).toHaveLength(3);
  });
});

describe('HealthController: a room count decision', () => {
  it('is written and told once, although the schedulers cache shows the status from before the write at the next check', async () => {
    const { deps } = setup();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.spec = { ...s.spec, roomsReplicas: 5 };
    const events: KubeEvent[] = [];
    const writes: unknown[] = [];
    Object.assign(deps, { events: { record: (e: KubeEvent) => events.push(e) } });
    Object.assign(deps.api, { patchSchedulerStatus: (_name: string, patch: unknown) => { writes.push(patch); return Promise.resolve(s); } });
    const health = new HealthController(deps, { operationsOf: () => [], track: () => undefined });
    const decisions = () => events.filter((e) => e.reason === 'AutoscalingDecision').map((e) => e.note);
    // The cache has not seen the write yet: the second check reads desired 3 again.
    await health.reconcile('s');
    await health.reconcile('s');
    expect(decisions()).toEqual(['Desired rooms 3 -> 5: roomsReplicas is 5']);
    expect(writes).toHaveLength(1);
    // The cache catches up; then a new count is written and told.
    s.status = { ...s.status, rooms: { desired: 5 }, autoscaling: (writes[0] as { status: Scheduler['status'] }).status?.autoscaling };
    await health.reconcile('s');
    expect(writes).toHaveLength(1);
    s.spec = { ...s.spec, roomsReplicas: 6 };
    await health.reconcile('s');
    expect(decisions()).toEqual(['Desired rooms 3 -> 5: roomsReplicas is 5', 'Desired rooms 5 -> 6: roomsReplicas is 6']);
    expect(writes).toHaveLength(2);
  });
});

describe('HealthController and rooms in error', () => {
  it('removes at once the rooms in error beyond the newest ERROR_ROOMS_KEPT, which no expiry brake holds, and keeps the newest', async () => {
    const { deps, created } = setup();
    const now = deps.now();
    // 8 rooms in error, created a second apart (e0 the oldest), all heard from a moment ago.
    const rooms = Array.from({ length: 8 }, (_, i) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: `e${i}`, namespace: 's', uid: `uid-e${i}`, resourceVersion: `rv-e${i}`, creationTimestamp: new Date(now - (60 - i) * 1000).toISOString() },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'error', instanceStatus: 'error', reason: 'pod phase Failed: container server terminated: Error (exit code 1)', lastPingAt: new Date(now - 1000).toISOString() },
    }));
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) }, pods: podOfEachRoom(rooms) });
    // The operator has only just come to see the cluster: the brake would hold ping expiry, not this.
    const health = new HealthController({ ...deps, sight: () => ({ impaired: false, since: now }) }, { operationsOf: () => [], track: () => undefined });
    await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.reason, o.spec.input?.roomsIds])).toEqual([['remove_rooms', 'expired_room', ['e2', 'e1', 'e0']]]);
    expect(created[0]?.spec.input?.details).toContain("e0: in error, and 5 newer rooms in error are kept for their pods' status and logs (its GameRoom's status.reason says why it failed)");
    // No write undoes a failure: the operator's own status writes to these rooms do not hold their removal.
    expect(created[0]?.spec.input?.resourceVersions).toBeUndefined();
  });
});

describe('HealthController and rooms that fail before they ping', () => {
  it('makes one room at a time, once the probe interval passed since the newest, instead of replacing every failed room', async () => {
    const { deps, created } = setup();
    let now = deps.now();
    // 2 rooms of the active version in error, that never pinged, made 20 s and 10 s ago; 3 desired.
    const rooms = [20, 10].map((ago, i) => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: `f${i}`, namespace: 's', uid: `uid-f${i}`, resourceVersion: `rv-f${i}`, creationTimestamp: new Date(now - ago * 1000).toISOString() },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'error', instanceStatus: 'error', reason: 'pod phase Failed: container server terminated: Error (exit code 1)' },
    }));
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) }, pods: podOfEachRoom(rooms) });
    const health = new HealthController({ ...deps, now: () => now }, { operationsOf: () => [], track: () => undefined });
    // The probe interval is six health checks (60 s): the next room is due 51 s from now (creation times have a second's precision).
    const held = await health.reconcile('s');
    expect(created).toEqual([]);
    expect(held.requeueAfterMs).toBe(deps.config.healthInterval);
    now += 50_000;
    await health.reconcile('s');
    expect(created).toEqual([]);
    now += 1_000;
    await health.reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.amount])).toEqual([['add_rooms', 1]]);
    // The probe starts: nothing more until it failed or pinged, checked at the usual pace.
    created.length = 0;
    rooms.push({ ...rooms[1]!, metadata: { ...rooms[1]!.metadata, name: 'probe', creationTimestamp: new Date(now).toISOString() }, status: { status: 'pending', instanceStatus: 'pending', reason: '' } });
    now += 120_000;
    expect(await health.reconcile('s')).toEqual({ requeueAfterMs: deps.config.healthInterval });
    expect(created).toEqual([]);
  });

  it("says in the probe's history why it makes one room", async () => {
    const { deps, created } = setup();
    const now = deps.now();
    const rooms = [{
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: 'f1', namespace: 's', uid: 'uid-f1', resourceVersion: 'rv-f1', creationTimestamp: new Date(now - 120_000).toISOString() },
      spec: { scheduler: 's', version: 'v1.0.0' },
      status: { status: 'error', instanceStatus: 'error', reason: 'pod phase Failed: container server terminated: Error (exit code 1)' },
    }];
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) }, pods: podOfEachRoom(rooms) });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.amount])).toEqual([['add_rooms', 1]]);
    expect(created[0]?.spec.input?.reason).toMatch(/^roomsReplicas is 3; 0 available of 3 desired; one room, to see whether rooms of v1\.0\.0 start again \(one room at a time, at most one every 60s until one pings\): rooms of v1\.0\.0 fail before their game server pings: 1 in error and none has pinged \(newest f1: pod phase Failed: .*\(exit code 1\)\)$/);
  });
});

describe('HealthController and rooms in error of another major', () => {
  it('removes them at once once another major is active: no rollout replaces them, and they held Progressing True until their ping timeout', async () => {
    const { deps, created } = setup();
    const now = deps.now();
    const s = deps.caches.schedulers.get('s') as Scheduler;
    s.status = { ...s.status, version: 'v2.0.0' };
    const room = (name: string, version: string, status: 'error' | 'ready') => ({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name, namespace: 's', uid: `uid-${name}`, resourceVersion: `rv-${name}`, creationTimestamp: new Date(now - 30_000).toISOString() },
      spec: { scheduler: 's', version },
      status: { status, instanceStatus: status, ...(status === 'ready' ? { pingStatus: 'ready', lastPingAt: new Date(now - 1000).toISOString() } : { reason: 'pod phase Failed: container server terminated: Error (exit code 1)' }) },
    });
    const rooms = [room('old-1', 'v1.0.0', 'error'), room('old-2', 'v1.0.0', 'error'), room('new-1', 'v2.0.0', 'ready'), room('new-2', 'v2.0.0', 'ready'), room('new-3', 'v2.0.0', 'ready')];
    Object.assign(deps.caches, { rooms: { list: () => rooms, get: (n: string) => rooms.find((r) => r.metadata.name === n) }, pods: podOfEachRoom(rooms) });
    await new HealthController(deps, { operationsOf: () => [], track: () => undefined }).reconcile('s');
    expect(created.map((o) => [o.spec.definitionName, o.spec.input?.reason, o.spec.input?.roomsIds])).toEqual([['remove_rooms', 'expired_room', ['old-1', 'old-2']]]);
    expect(created[0]?.spec.input?.details).toContain("old-1: in error, and of v1.0.0, another major than the active version v2.0.0: no room of it is kept (its GameRoom's status.reason says why it failed)");
  });
});
