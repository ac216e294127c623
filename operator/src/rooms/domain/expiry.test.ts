import { expiryReason, findExpiredRooms, formatMs, isSilent, surplusErrorRooms } from './expiry';
import { roomView } from './test-rooms';
import { DEFAULT_ROOM_TIMEOUTS, type RoomView } from './types';

const S = 1000;
const NOW = 1_000_000 * S;
const timeouts = { initTimeoutMs: 120 * S, pingTimeoutMs: 240 * S, deletionTimeoutMs: 120 * S };

describe('expiryReason', () => {
  const cases: { name: string; room: Partial<RoomView>; reason: string | undefined }[] = [
    { name: 'fresh ready room', room: { status: 'ready', createdAt: NOW - 10 * S, lastPingAt: NOW - S }, reason: undefined },
    { name: 'terminated room', room: { status: 'terminated', createdAt: NOW - S, lastPingAt: NOW }, reason: 'room reported terminated' },
    // Its removal has started: not removed again (that removal would force-delete its pod), until the deletion timeout.
    { name: 'terminated room being deleted', room: { status: 'terminated', terminating: true, terminatingSince: NOW - 5 * S, createdAt: NOW - 10 * S, lastPingAt: NOW - 5 * S }, reason: undefined },
    { name: 'terminated room deleted past the deletion timeout', room: { status: 'terminated', terminating: true, terminatingSince: NOW - 121 * S, createdAt: NOW - 200 * S, lastPingAt: NOW - 121 * S }, reason: 'terminating for 121s (timeout 120s)' },
    {
      name: 'ready room silent past the ping timeout',
      room: { status: 'ready', createdAt: NOW - 1000 * S, lastPingAt: NOW - 245 * S },
      reason: 'no ping recorded for 245s (timeout 240s); its game server stopped pinging (hung or crashed: see its log), or the gateway refused its pings (see the gateway\'s warnings)',
    },
    { name: 'ready room silent exactly the ping timeout', room: { status: 'ready', createdAt: 0, lastPingAt: NOW - 240 * S }, reason: undefined },
    {
      name: 'occupied room silent past the ping timeout',
      room: { status: 'occupied', createdAt: 0, lastPingAt: NOW - 300 * S },
      reason: 'no ping recorded for 300s (timeout 240s); its game server stopped pinging (hung or crashed: see its log), or the gateway refused its pings (see the gateway\'s warnings)',
    },
    {
      name: 'error room silent past the ping timeout',
      room: { status: 'error', createdAt: 0, lastPingAt: NOW - 241 * S },
      reason: 'no ping recorded for 241s (timeout 240s); its game server stopped pinging (hung or crashed: see its log), or the gateway refused its pings (see the gateway\'s warnings)',
    },
    { name: 'error room that pinged recently', room: { status: 'error', createdAt: 0, lastPingAt: NOW - 10 * S }, reason: undefined },
    {
      name: 'pending room whose pod started past the init timeout ago',
      room: { status: 'pending', createdAt: NOW - 500 * S, startedAt: NOW - 121 * S },
      reason: 'pending 121s after its pod started (initialization timeout 120s); its pod never became ready and no ping of its game server was recorded: see the pod\'s conditions and its game server\'s log',
    },
    { name: 'pending room whose pod started within the init timeout', room: { status: 'pending', createdAt: NOW - 500 * S, startedAt: NOW - 119 * S }, reason: undefined },
    {
      name: 'pending room whose pod waits for the cluster is not replaced, however old',
      room: { status: 'pending', createdAt: NOW - 3600 * S },
      reason: undefined,
    },
    {
      name: 'pending room that pinged (its pod lost Ready, e.g. its node missed heartbeats) is not held to the init timeout',
      room: { status: 'pending', createdAt: NOW - 3600 * S, startedAt: NOW - 3000 * S, lastPingAt: NOW - 10 * S },
      reason: undefined,
    },
    {
      name: 'pending room that pinged, then fell silent past the ping timeout',
      room: { status: 'pending', createdAt: NOW - 3600 * S, startedAt: NOW - 3000 * S, lastPingAt: NOW - 241 * S },
      reason: 'no ping recorded for 241s (timeout 240s); its game server stopped pinging (hung or crashed: see its log), or the gateway refused its pings (see the gateway\'s warnings)',
    },
    {
      name: 'unready room with no known pod start, past the init timeout from creation',
      room: { status: 'unready', createdAt: NOW - 130 * S },
      reason: 'unready 130s after creation (initialization timeout 120s); no ping of its game server was recorded: make it ping the rooms API (ROOMKEEPER_ROOMS_API_URL) within that time of its start; pings the gateway refused (a 401 for the room token, say) are not recorded: see the gateway\'s warnings',
    },
    {
      name: 'unready room counts from its pod start, not its creation (the cluster was behind)',
      room: { status: 'unready', createdAt: NOW - 400 * S, startedAt: NOW - 60 * S },
      reason: undefined,
    },
    {
      name: 'unready room past the init timeout from its pod start',
      room: { status: 'unready', createdAt: NOW - 400 * S, startedAt: NOW - 125 * S },
      reason: 'unready 125s after its pod started (initialization timeout 120s); no ping of its game server was recorded: make it ping the rooms API (ROOMKEEPER_ROOMS_API_URL) within that time of its start; pings the gateway refused (a 401 for the room token, say) are not recorded: see the gateway\'s warnings',
    },
    {
      name: 'ready room that never pinged counts from creation',
      room: { status: 'ready', createdAt: NOW - 250 * S },
      reason: 'no ping recorded since creation for 250s (timeout 240s); see its game server\'s log, and the gateway\'s warnings for refused pings',
    },
    {
      name: 'ready room that never pinged counts from its pod start when known',
      room: { status: 'ready', createdAt: NOW - 900 * S, startedAt: NOW - 250 * S },
      reason: 'no ping recorded since its pod started for 250s (timeout 240s); see its game server\'s log, and the gateway\'s warnings for refused pings',
    },
    {
      name: 'room being deleted past the deletion timeout',
      room: { status: 'ready', terminating: true, terminatingSince: NOW - 125 * S, lastPingAt: NOW - S },
      reason: 'terminating for 125s (timeout 120s)',
    },
    {
      name: 'room being deleted within the deletion timeout, even with an old ping',
      room: { status: 'occupied', terminating: true, terminatingSince: NOW - 60 * S, lastPingAt: NOW - 600 * S },
      reason: undefined,
    },
    {
      name: 'room that pinged terminating counts from its last ping',
      room: { status: 'terminating', createdAt: 0, lastPingAt: NOW - 121 * S },
      reason: 'terminating for 121s (timeout 120s)',
    },
    {
      name: 'terminating room that never pinged counts from creation',
      room: { status: 'terminating', createdAt: NOW - 200 * S },
      reason: 'terminating for 200s (timeout 120s)',
    },
    {
      name: 'room that pings, its pod not ready on a ready node past the init timeout',
      room: { status: 'pending', pingStatus: 'ready', createdAt: NOW - 300 * S, startedAt: NOW - 200 * S, notReadySince: NOW - 125 * S, lastPingAt: NOW - S },
      reason: 'pending 125s with its pod not ready (initialization timeout 120s), though its game server pings: see the pod\'s conditions and its readiness probe (kubectl describe pod)',
    },
    {
      name: 'room that pings, its pod not ready since before it started: counted from its start',
      room: { status: 'pending', pingStatus: 'ready', createdAt: NOW - 300 * S, startedAt: NOW - 100 * S, notReadySince: NOW - 290 * S, lastPingAt: NOW - S },
      reason: undefined,
    },
    {
      name: 'room that pings, its pod not ready, within the init timeout',
      room: { status: 'pending', pingStatus: 'ready', createdAt: NOW - 300 * S, startedAt: NOW - 200 * S, notReadySince: NOW - 60 * S, lastPingAt: NOW - S },
      reason: undefined,
    },
    {
      name: 'room that pings occupied, its pod not ready past the init timeout: kept for its players (the ping timeout judges it)',
      room: { status: 'pending', pingStatus: 'occupied', createdAt: NOW - 300 * S, startedAt: NOW - 200 * S, notReadySince: NOW - 125 * S, lastPingAt: NOW - S },
      reason: undefined,
    },
    {
      name: 'room that pings, its pod not ready on a node that is not (notReadySince absent): judged by its pings',
      room: { status: 'pending', pingStatus: 'ready', createdAt: NOW - 300 * S, startedAt: NOW - 200 * S, lastPingAt: NOW - S },
      reason: undefined,
    },
    {
      name: 'validation rooms expire like others',
      room: { status: 'pending', validation: true, createdAt: NOW - 300 * S, startedAt: NOW - 180 * S },
      reason: 'pending 180s after its pod started (initialization timeout 120s); its pod never became ready and no ping of its game server was recorded: see the pod\'s conditions and its game server\'s log',
    },
  ];
  it.each(cases)('$name', ({ room, reason }) => {
    expect(expiryReason(roomView('r', room), NOW, timeouts)).toBe(reason);
  });
});

describe('isSilent', () => {
  it.each([
    { name: 'a room past the ping timeout', room: { status: 'ready', lastPingAt: NOW - 245 * S }, silent: true },
    { name: 'a room past the init timeout', room: { status: 'pending', startedAt: NOW - 121 * S }, silent: true },
    { name: 'a room within both', room: { status: 'ready', lastPingAt: NOW - 10 * S }, silent: false },
    { name: 'a room that pings, its pod not ready past the init timeout (not a matter of pings)', room: { status: 'pending', lastPingAt: NOW - S, startedAt: NOW - 200 * S, notReadySince: NOW - 130 * S }, silent: false },
    { name: 'a room that reported terminated', room: { status: 'terminated', lastPingAt: NOW - 1000 * S }, silent: false },
    { name: 'a room stuck terminating, whatever its pings', room: { status: 'ready', terminating: true, terminatingSince: NOW - 500 * S, lastPingAt: NOW - 500 * S }, silent: false },
  ] satisfies { name: string; room: Partial<RoomView>; silent: boolean }[])('$name: $silent', ({ room, silent }) => {
    expect(isSilent(roomView('r', room), NOW, timeouts)).toBe(silent);
  });
});

describe('findExpiredRooms', () => {
  it('returns the expired rooms in input order with their reasons', () => {
    const rooms = [
      roomView('a', { status: 'ready', lastPingAt: NOW - S }),
      roomView('b', { status: 'terminated' }),
      roomView('c', { status: 'pending', createdAt: NOW - 600 * S, startedAt: NOW - 500 * S }),
      roomView('d', { status: 'occupied', lastPingAt: NOW - 2 * S }),
    ];
    expect(findExpiredRooms(rooms, NOW, DEFAULT_ROOM_TIMEOUTS).map((e) => [e.room.name, e.reason])).toEqual([
      ['b', 'room reported terminated'],
      ['c', 'pending 500s after its pod started (initialization timeout 120s); its pod never became ready and no ping of its game server was recorded: see the pod\'s conditions and its game server\'s log'],
    ]);
  });

  it('returns nothing for no rooms', () => {
    expect(findExpiredRooms([], NOW, timeouts)).toEqual([]);
  });
});

describe('surplusErrorRooms', () => {
  const ACTIVE = { activeVersion: 'v1.0.0' };
  const error = (name: string, createdAt: number, more: Partial<RoomView> = {}) => roomView(name, { status: 'error', createdAt, ...more });

  it('keeps the newest rooms in error and names the older ones, oldest last, with why', () => {
    const rooms = [error('e1', NOW - 50 * S), error('e2', NOW - 40 * S), error('e3', NOW - 30 * S), roomView('ok'), error('e4', NOW - 20 * S)];
    const surplus = surplusErrorRooms(rooms, ACTIVE, 2);
    expect(surplus.map((e) => e.room.name)).toEqual(['e2', 'e1']);
    expect(surplus[0]?.reason).toBe("in error, and 2 newer rooms in error are kept for their pods' status and logs (its GameRoom's status.reason says why it failed)");
  });

  it('counts neither rooms being deleted, validation rooms, nor rooms whose game server last said it has players, and names none up to the number kept', () => {
    const rooms = [
      error('gone', NOW - 90 * S, { terminating: true }), error('valid', NOW - 80 * S, { validation: true }),
      error('occupied', NOW - 79 * S, { pingStatus: 'occupied' }), error('matches', NOW - 78 * S, { runningMatches: 1 }), error('allocated', NOW - 77 * S, { allocationOpen: true }),
      error('e1', NOW - 50 * S), error('e2', NOW - 40 * S),
    ];
    expect(surplusErrorRooms(rooms, ACTIVE, 2)).toEqual([]);
    expect(surplusErrorRooms(rooms, ACTIVE, 1).map((e) => e.room.name)).toEqual(['e1']);
  });

  it('names every room in error of another major than the active version, however new, and keeps the newest of the active major', () => {
    const rooms = [error('old1', NOW - 10 * S, { version: 'v1.2.0' }), error('old2', NOW - 5 * S, { version: 'v1.0.0' }), error('e1', NOW - 50 * S, { version: 'v2.0.0' })];
    const surplus = surplusErrorRooms(rooms, { activeVersion: 'v2.0.0' }, 5);
    expect(surplus.map((e) => e.room.name)).toEqual(['old2', 'old1']);
    expect(surplus[0]?.reason).toBe("in error, and of v1.0.0, another major than the active version v2.0.0: no room of it is kept (its GameRoom's status.reason says why it failed)");
    // A room of another major whose game server last said it has players waits for its ping timeout.
    expect(surplusErrorRooms([error('old', NOW, { version: 'v1.0.0', pingStatus: 'occupied' })], { activeVersion: 'v2.0.0' })).toEqual([]);
  });
});

describe('formatMs', () => {
  it.each([
    [0, '0ms'],
    [1500, '1500ms'],
    [2000, '2s'],
    [245_300, '245s'],
    [240_000, '240s'],
  ])('%d -> %s', (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });
});
