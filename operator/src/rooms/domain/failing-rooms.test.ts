import { describeFailingRooms, failingRooms, keptSilentRooms, probeAmount, probeIntervalMs, probeWords, silentRooms, SILENT_ROOMS_KEPT } from './failing-rooms';
import { roomView } from './test-rooms';
import type { RoomView } from './types';

const S = 1000;
const NOW = 1_000_000;
const ACTIVE = { activeVersion: 'v2.0.0' };
const INTERVAL = 60 * S;
const failed = (name: string, createdAt: number, more: Partial<RoomView> = {}) => roomView(name, { status: 'error', version: 'v2.0.0', createdAt, reason: 'pod phase Failed: container server terminated: Error (exit code 1)', ...more });

describe('failingRooms', () => {
  it('is failing when a room of the active major is in error and none of them has pinged, newest failure first', () => {
    const failing = failingRooms([failed('a', NOW - 30 * S), failed('b', NOW - 20 * S), roomView('old', { version: 'v1.0.0' })], ACTIVE, INTERVAL);
    expect(failing?.failed.map((f) => f.room.name)).toEqual(['b', 'a']);
    expect(failing?.starting).toBe(0);
    expect(failing?.probeAt).toBe(NOW - 20 * S + INTERVAL + S);
  });

  it('is not failing once one room of the active major pinged or serves, whatever its status now', () => {
    const rooms = [failed('a', NOW - 30 * S), failed('b', NOW - 20 * S)];
    expect(failingRooms([...rooms, roomView('ok', { version: 'v2.1.0', status: 'ready' })], ACTIVE, INTERVAL)).toBeUndefined();
    expect(failingRooms([...rooms, roomView('crashed-in-a-match', { version: 'v2.0.0', status: 'error', pingStatus: 'occupied' })], ACTIVE, INTERVAL)).toBeUndefined();
    expect(failingRooms([...rooms, roomView('pinged', { version: 'v2.0.0', status: 'pending', lastPingAt: NOW - S })], ACTIVE, INTERVAL)).toBeUndefined();
  });

  it('judges only fleet rooms of the active major: other majors, validation rooms and rooms being deleted do not count', () => {
    expect(failingRooms([failed('old', NOW, { version: 'v1.0.0' }), failed('validating', NOW, { validation: true }), failed('going', NOW, { terminating: true })], ACTIVE, INTERVAL)).toBeUndefined();
    // A ready room of another major says nothing of the active one.
    expect(failingRooms([failed('a', NOW), roomView('old', { version: 'v1.0.0', status: 'ready', pingStatus: 'ready' })], ACTIVE, INTERVAL)?.failed).toHaveLength(1);
  });

  it('is not failing with no room in error', () => {
    expect(failingRooms([roomView('starting', { version: 'v2.0.0', status: 'pending' })], ACTIVE, INTERVAL)).toBeUndefined();
    expect(failingRooms([], ACTIVE, INTERVAL)).toBeUndefined();
  });

  it('counts the rooms still starting, and the next probe from the newest room of the active major', () => {
    const failing = failingRooms([failed('a', NOW - 30 * S), roomView('probe', { version: 'v2.0.0', status: 'pending', createdAt: NOW - 5 * S })], ACTIVE, INTERVAL);
    expect(failing?.starting).toBe(1);
    expect(failing?.probeAt).toBe(NOW - 5 * S + INTERVAL + S);
  });
});

describe('silent rooms (never pinged, expired by the initialization timeout)', () => {
  const TIMEOUTS = { initTimeoutMs: 120 * S, pingTimeoutMs: 240 * S, deletionTimeoutMs: 120 * S };
  const unready = (name: string, startedAt: number, more: Partial<RoomView> = {}) => roomView(name, { status: 'unready', version: 'v2.0.0', createdAt: startedAt - S, startedAt, ...more });

  it('are the rooms past the initialization timeout that never pinged, each with its expiry reason', () => {
    const silent = silentRooms([
      unready('silent', NOW - 121 * S),
      unready('young', NOW - 60 * S),
      unready('pinged-once', NOW - 121 * S, { lastPingAt: NOW - 100 * S }),
      unready('going', NOW - 121 * S, { terminating: true }),
      unready('validating', NOW - 121 * S, { validation: true }),
    ], NOW, TIMEOUTS);
    expect([...silent.keys()]).toEqual(['silent']);
    expect(silent.get('silent')).toMatch(/^unready 121s after its pod started \(initialization timeout 120s\); no ping of its game server was recorded/);
  });

  it('make the version failing as rooms in error do, and are not counted as starting', () => {
    const rooms = [unready('s1', NOW - 200 * S), unready('s2', NOW - 130 * S), unready('probe', NOW - 10 * S)];
    const failing = failingRooms(rooms, ACTIVE, INTERVAL, silentRooms(rooms, NOW, TIMEOUTS));
    expect(failing?.failed.map((f) => [f.room.name, f.silent])).toEqual([['s2', true], ['s1', true]]);
    expect(failing?.starting).toBe(1);
    // Without the silence given (a wide silence the expiry brake holds), nothing fails.
    expect(failingRooms(rooms, ACTIVE, INTERVAL)).toBeUndefined();
    // One room of the active major that pinged: the version works, and silent rooms expire as before.
    expect(failingRooms([...rooms, unready('ok', NOW - 130 * S, { status: 'ready', lastPingAt: NOW - S })], ACTIVE, INTERVAL, silentRooms(rooms, NOW, TIMEOUTS))).toBeUndefined();
  });

  it('are kept, the newest SILENT_ROOMS_KEPT of them, while the version fails; none when it does not', () => {
    const rooms = Array.from({ length: SILENT_ROOMS_KEPT + 3 }, (_, i) => unready(`s${i}`, NOW - (200 + i) * S));
    const failing = failingRooms(rooms, ACTIVE, INTERVAL, silentRooms(rooms, NOW, TIMEOUTS));
    expect([...keptSilentRooms(failing)]).toEqual(rooms.slice(0, SILENT_ROOMS_KEPT).map((r) => r.name));
    expect(keptSilentRooms(undefined).size).toBe(0);
  });

  it('are said with the rooms in error, and what their expiry reason says', () => {
    const rooms = [unready('s1', NOW - 200 * S), failed('e1', NOW - 300 * S)];
    const failing = failingRooms(rooms, ACTIVE, INTERVAL, silentRooms(rooms, NOW, TIMEOUTS));
    if (!failing) throw new Error('fixture: failing');
    expect(probeWords(failing, 'v2.0.0')).toMatch(/: rooms of v2\.0\.0 fail before their game server pings: 1 in error, 1 still unready or pending at the initialization timeout with no ping recorded, and none has pinged \(newest s1: unready 200s after its pod started \(initialization timeout 120s\); no ping of its game server was recorded: make it ping the rooms API/);
  });
});

describe('probeAmount', () => {
  const failing = failingRooms([failed('a', NOW - 30 * S)], ACTIVE, INTERVAL);
  if (!failing) throw new Error('fixture: failing');

  it('adds one room once the probe interval (and a second, for the precision of creation times) passed since the newest room, none before', () => {
    expect(probeAmount(100, failing, NOW)).toBe(0);
    expect(probeAmount(100, failing, NOW - 30 * S + INTERVAL)).toBe(0);
    expect(probeAmount(100, failing, NOW - 29 * S + INTERVAL)).toBe(1);
    expect(probeAmount(0, failing, NOW + INTERVAL)).toBe(0);
  });

  it('adds none while a room of the active major is still starting', () => {
    expect(probeAmount(100, { ...failing, starting: 1 }, NOW + 10 * INTERVAL)).toBe(0);
  });
});

describe('probeIntervalMs', () => {
  it('is six health checks, at most half the ping timeout', () => {
    expect(probeIntervalMs(10 * S, 240 * S)).toBe(60 * S);
    expect(probeIntervalMs(10 * S, 60 * S)).toBe(30 * S);
    expect(probeIntervalMs(500, 20 * S)).toBe(3 * S);
  });
});

describe('describeFailingRooms', () => {
  it('says what fails, why, what the health check does and what to do', () => {
    const failing = failingRooms([failed('a', NOW - 30 * S), failed('b', NOW - 20 * S)], ACTIVE, INTERVAL);
    if (!failing) throw new Error('fixture: failing');
    expect(describeFailingRooms(failing, 'arena', 'v2.0.0', NOW)).toBe(
      'rooms of v2.0.0 fail before their game server pings: 2 in error and none has pinged (newest b: pod phase Failed: container server terminated: Error (exit code 1)); '
      + `the health check makes one room at a time, at most one every 60s (the next one at ${new Date(NOW + 41 * S).toISOString()}), instead of replacing every failed room, `
      + 'and makes the missing rooms once one pings. Fix the game server in a new version of the scheduler (POST /schedulers/arena with the fixed definition, PATCH /schedulers/arena, or kubectl edit scheduler arena): a new major version is validated on one room, then rolled out',
    );
    expect(describeFailingRooms({ ...failing, starting: 1 }, 'arena', 'v2.0.0', NOW)).toContain('(1 room of it still starting)');
    // Past due (the operator restarted, or the health check was held): not a time gone by.
    expect(describeFailingRooms(failing, 'arena', 'v2.0.0', NOW + 60 * S)).toContain('(the next one at the next health check)');
  });

  it('tells to create the Secret or ConfigMap when the rooms wait for one, not to fix the game server', () => {
    const failing = failingRooms([failed('a', NOW - 30 * S, { reason: 'CreateContainerConfigError: secret "game-secrets" not found' })], ACTIVE, INTERVAL);
    if (!failing) throw new Error('fixture: failing');
    const words = describeFailingRooms(failing, 'arena', 'v2.0.0', NOW);
    expect(words).toContain('(newest a: CreateContainerConfigError: secret "game-secrets" not found)');
    expect(words).toContain("and makes the missing rooms once one pings. Create what the rooms' environment reads in their namespace arena (kubectl -n arena create secret generic <name> --from-literal=<key>=<value>): "
      + "the kubelet creates the waiting rooms' containers once it is there. Or drop the reference in a new version of the scheduler (POST /schedulers/arena with the fixed definition");
    expect(words).not.toContain('Fix the game server');
  });
});

describe('probeWords', () => {
  it('says why an add_rooms makes one room', () => {
    const failing = failingRooms([failed('a', NOW - 30 * S)], ACTIVE, INTERVAL);
    if (!failing) throw new Error('fixture: failing');
    expect(probeWords(failing, 'v2.0.0')).toBe('one room, to see whether rooms of v2.0.0 start again (one room at a time, at most one every 60s until one pings): '
      + 'rooms of v2.0.0 fail before their game server pings: 1 in error and none has pinged (newest a: pod phase Failed: container server terminated: Error (exit code 1))');
  });
});
