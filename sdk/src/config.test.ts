import { ConfigError } from './errors';
import { readRoomConfig, roomUrl } from './config';
import { backoffDelay, drainShare, jitteredInterval, retryAfterMs } from './timing';

const NOW = Date.parse('2026-11-30T00:00:00Z');
import { parsePingAnswer } from './ping-answer';

describe('readRoomConfig', () => {
  test('reads what the operator injects', () => {
    expect(readRoomConfig({ ROOMKEEPER_SCHEDULER_NAME: 'arena', ROOMKEEPER_ROOM_ID: 'arena-x1', ROOMKEEPER_ROOMS_API_URL: 'http://gw:8081', ROOMKEEPER_ROOM_TOKEN: 'tok', ROOMKEEPER_PING_INTERVAL: '2000' }))
      .toEqual({ schedulerName: 'arena', roomId: 'arena-x1', roomsApiUrl: 'http://gw:8081', token: 'tok', pingIntervalMs: 2000 });
  });

  test('falls back to the MAESTRO_* names; no token and the default interval when unset', () => {
    expect(readRoomConfig({ MAESTRO_SCHEDULER_NAME: 'm', MAESTRO_ROOM_ID: 'm-1', ROOMKEEPER_ROOMS_API_URL: 'https://gw' }))
      .toEqual({ schedulerName: 'm', roomId: 'm-1', roomsApiUrl: 'https://gw', pingIntervalMs: 5000 });
  });

  test('one typed error names every missing or bad variable', () => {
    let err: unknown;
    try {
      readRoomConfig({ ROOMKEEPER_ROOM_ID: 'x', ROOMKEEPER_PING_INTERVAL: 'soon' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.message).toContain('ROOMKEEPER_SCHEDULER_NAME (or MAESTRO_SCHEDULER_NAME)');
    expect(e.message).toContain('ROOMKEEPER_ROOMS_API_URL');
    expect(e.message).toContain('ROOMKEEPER_PING_INTERVAL must be an integer');
    expect(e.variables).toEqual(['ROOMKEEPER_SCHEDULER_NAME (or MAESTRO_SCHEDULER_NAME)', 'ROOMKEEPER_ROOMS_API_URL', 'ROOMKEEPER_PING_INTERVAL']);
    expect(() => readRoomConfig({ ROOMKEEPER_SCHEDULER_NAME: 'a', ROOMKEEPER_ROOM_ID: 'b', ROOMKEEPER_ROOMS_API_URL: 'gw:8081' })).toThrow('ROOMKEEPER_ROOMS_API_URL must be an http(s) URL');
  });

  test('room URLs keep the base path and escape ids', () => {
    expect(roomUrl({ roomsApiUrl: 'http://gw/rooms/', schedulerName: 'a b', roomId: 'r/1' }, 'ping')).toBe('http://gw/rooms/scheduler/a%20b/rooms/r%2F1/ping');
  });
});

describe('timing', () => {
  test.each([[0, 900], [0.5, 1000], [0.999999, 1100]])('jitteredInterval(1000, %p) = %p', (r, ms) => {
    expect(jitteredInterval(1000, r)).toBe(ms);
  });

  test('one quick retry, then the ping interval or the doubling delay, whichever is longer, up to the cap', () => {
    const policy = { baseMs: 500, capMs: 30_000 };
    // random 0.5: the middle of the ±10 % jitter.
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50, 5000].map((n) => backoffDelay(n, policy, 5000, 0.5))).toEqual([250, 5000, 5000, 5000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(backoffDelay(1, policy, 5000, 0)).toBe(0);
    expect(backoffDelay(7, policy, 5000, 0)).toBe(27_000);
    // An interval longer than the cap: a failing room still pings no more often than a healthy one.
    expect(backoffDelay(9, policy, 60_000, 0.5)).toBe(60_000);
  });

  test.each([
    // budget, request deadline, drain's share: one request deadline is kept, at most a fifth of the budget.
    [25_000, 5000, 20_000],
    [20_000, 5000, 16_000],
    [20_000, 1000, 19_000],
    [60_000, 5000, 55_000],
    [3000, 5000, 2400],
    [0, 5000, 0],
  ])('drainShare(%p, %p) = %p', (budget, request, ms) => {
    expect(drainShare(budget, request)).toBe(ms);
  });

  test.each([
    ['7', 7000],
    [' 120 ', 120_000],
    [new Date(NOW + 10_000).toUTCString(), 10_000],
    [new Date(NOW - 10_000).toUTCString(), 0],
    ['soon', undefined],
    ['-5', undefined],
    ['', undefined],
    [null, undefined],
  ])('Retry-After %p is %p ms', (header, ms) => {
    expect(retryAfterMs(header, NOW)).toBe(ms);
  });
});

describe('parsePingAnswer', () => {
  test.each([
    ['{"success":true}', { success: true }],
    ['{"success":false}', { success: false }],
    ['{"success":false,"message":"room r reported terminating, so this ready ping was not recorded"}', { success: false, message: 'room r reported terminating, so this ready ping was not recorded' }],
    ['{"success":true,"allocation":{"id":"a","metadata":{"k":1},"expiresAt":"2026-01-01T00:00:00Z"}}', { success: true, allocation: { id: 'a', metadata: { k: 1 }, expiresAt: '2026-01-01T00:00:00Z' } }],
    ['{"success":true,"allocation":{"id":"a"}}', { success: true, allocation: { id: 'a', metadata: {} } }],
    ['{"success":true,"allocation":{"id":""}}', { success: true }],
    ['{"success":true,"allocation":"a"}', { success: true }],
    ['{"success":false,"roomGone":true,"message":"no scheduler gsd exists: ping terminated and exit"}', { success: false, roomGone: true, message: 'no scheduler gsd exists: ping terminated and exit' }],
    ['{"success":false,"roomGone":true}', { success: false, roomGone: true }],
    ['{"success":false,"roomGone":"yes"}', { success: false }],
    ['{"success":true,"roomGone":true}', { success: true }],
  ])('%s', (body, expected) => {
    expect(parsePingAnswer(body)).toEqual(expected);
  });

  test.each(['', 'ok', '[]', '{"success":"true"}', 'null'])('not an answer: %p', (body) => {
    expect(parsePingAnswer(body)).toBeUndefined();
  });
});
