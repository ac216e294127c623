import { churnMark, describeCalm, describeChurn, roomChurn, type RoomFailure } from './room-churn';

const NOW = Date.parse('2026-12-06T23:40:00.000Z');
const MIN = 60_000;
const failure = (room: string, agoMs: number, over: Partial<RoomFailure> = {}): RoomFailure => ({
  room, version: 'v1.2.0', cause: 'error', pinged: true, withPlayers: false, at: NOW - agoMs, createdAt: NOW - agoMs - 21_000, why: 'pod phase Failed: container game terminated: Error (exit code 1)', ...over,
});

describe('roomChurn: rooms of the active version that keep failing after they pinged', () => {
  it('marks a quarter of the desired count, never fewer than 3 nor more than 500', () => {
    expect([0, 1, 4, 12, 13, 20, 1000, 2000, 10_000].map(churnMark)).toEqual([3, 3, 3, 3, 4, 5, 250, 500, 500]);
  });

  it('counts failures after a ping of the active major within the window, newest first', () => {
    const churn = roomChurn([
      failure('a', 9 * MIN),
      failure('b', 1 * MIN, { cause: 'expired', why: 'no ping for 240s' }),
      failure('c', 2 * MIN),
      failure('old', 11 * MIN), // before the window
      failure('never-pinged', 1 * MIN, { pinged: false }), // RoomsFailing's, not churn
      failure('node-lost', 1 * MIN, { cause: 'pod_deleted' }), // no fault of the game server
      failure('other-major', 1 * MIN, { version: 'v2.0.0' }),
      failure('same-major', 3 * MIN, { version: 'v1.1.0' }),
    ], { activeVersion: 'v1.2.0' }, 4, NOW, 0);
    expect(churn.failed.map((f) => f.room)).toEqual(['b', 'c', 'same-major', 'a']);
    expect(churn.churning).toBe(true);
  });

  it('does not churn below the mark', () => {
    const churn = roomChurn([failure('a', MIN), failure('b', MIN), failure('c', MIN), failure('d', MIN)], { activeVersion: 'v1.2.0' }, 20, NOW, 0);
    expect(churn).toMatchObject({ churning: false, mark: 5 });
  });

  it('says what churns, between which failures, the newest with its cause, and what to do', () => {
    const churn = roomChurn([failure('r-1', 30_000), failure('r-2', 5 * MIN), failure('r-3', 2 * MIN, { cause: 'expired', withPlayers: true })], { activeVersion: 'v1.2.0' }, 4, NOW, 0);
    expect(describeChurn(churn, 'arena', 'v1.2.0')).toBe('rooms of v1.2.0 keep failing after their game server pinged: 3 rooms between 2026-12-06T23:35:00.000Z and 2026-12-06T23:39:30.000Z '
      + '(2 in error, 1 expired: their pings stopped, or their pod was not ready, for a timeout; 1 of them held players or a matchmaker\'s allocation; the mark is 3: a quarter of the 4 desired rooms, at least 3 and at most 500); '
      + 'newest r-1, 21 s after it was made: pod phase Failed: container game terminated: Error (exit code 1). '
      + 'The health check replaces each failed room, so the room counts look whole while the matches on them end. '
      + 'Read a failed room\'s game server log (kubectl -n arena logs <room>; the newest rooms in error are kept until their ping timeout), '
      + 'then fix the game server in a new version (POST /schedulers/arena with the fixed definition, or kubectl edit scheduler arena), '
      + 'or switch back to a version that worked: PUT /schedulers/arena with {"version": "<version>"} (GET /schedulers/arena/versions lists them)');
  });

  it('says below the mark how many failed and since when the operator counts', () => {
    const churn = roomChurn([failure('r-1', MIN)], { activeVersion: 'v1.2.0' }, 20, NOW, Date.parse('2026-12-06T23:00:00.000Z'));
    expect(describeCalm(churn, 'v1.2.0')).toBe('1 room of v1.2.0 failed after their game server pinged in the last 10 min (the operator counts the failures it sees from when it began to lead, 2026-12-06T23:00:00.000Z), '
      + 'fewer than the mark (the mark is 5: a quarter of the 20 desired rooms, at least 3 and at most 500)');
  });
});
