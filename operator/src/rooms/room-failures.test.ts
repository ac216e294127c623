import type { GameRoom } from '../../../common/src/generated/resources';
import { MetricsRegistry } from '../../../common/src/metrics';
import { CHURN_MAX, roomChurn } from './domain/room-churn';
import { RoomFailures } from './room-failures';

const room = (name: string, over: { uid?: string; pinged?: boolean; validation?: boolean; scheduler?: string } = {}): GameRoom => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
  metadata: { name, namespace: over.scheduler ?? 'arena', uid: over.uid ?? `uid-${name}`, creationTimestamp: new Date(1_000) },
  spec: { scheduler: over.scheduler ?? 'arena', version: 'v1.0.0', ...(over.validation ? { validation: true } : {}) },
  status: over.pinged === false ? { status: 'error' } : { status: 'error', lastPingAt: new Date(2_000).toISOString(), pingStatus: 'ready' },
});

describe('RoomFailures: the rooms this replica saw fail', () => {
  let now = 10_000;
  const clock = (): number => now;

  it('counts each room once, by scheduler, cause and stage, and leaves validation rooms out', () => {
    const metrics = new MetricsRegistry();
    const failures = new RoomFailures(metrics, clock);
    expect(failures.record(room('a'), 'error', 'exit code 1')).toBe(true);
    expect(failures.record(room('a'), 'expired', 'no ping')).toBe(false); // in error first: not counted again
    expect(failures.record(room('b', { pinged: false }), 'expired')).toBe(true);
    expect(failures.record(room('v', { validation: true }), 'error')).toBe(false);
    const counter = metrics.counter('roomkeeper_room_failures_total', '');
    expect(counter.get({ cause: 'error', scheduler: 'arena', stage: 'after_ping' })).toBe(1);
    expect(counter.get({ cause: 'expired', scheduler: 'arena', stage: 'before_ping' })).toBe(1);
    const occupied = room('c');
    occupied.status = { ...occupied.status, pingStatus: 'occupied' };
    failures.record(occupied, 'pod_deleted', 'its pod was deleted');
    expect(counter.get({ cause: 'pod_deleted', scheduler: 'arena', stage: 'with_players' })).toBe(1);
    expect(failures.of('arena').map((f) => [f.room, f.cause, f.pinged, f.withPlayers, f.createdAt, f.why])).toEqual([
      ['a', 'error', true, false, 1_000, 'exit code 1'], ['b', 'expired', false, false, 1_000, undefined], ['c', 'pod_deleted', true, true, 1_000, 'its pod was deleted'],
    ]);
  });

  it('keeps a window of failures per scheduler, and starts afresh when this replica begins to lead', () => {
    now = 10_000;
    const failures = new RoomFailures(new MetricsRegistry(), clock, 60_000);
    failures.record(room('a'), 'error');
    now = 50_000;
    failures.record(room('b'), 'error');
    now = 80_000;
    expect(failures.of('arena').map((f) => f.room)).toEqual(['b']);
    failures.startWatching();
    expect(failures.since).toBe(80_000);
    expect(failures.of('arena')).toEqual([]);
  });

  it('keeps enough failures of one scheduler to reach the churn rule\'s highest mark', () => {
    const failures = new RoomFailures(new MetricsRegistry(), clock);
    for (let i = 0; i < CHURN_MAX + 10; i++) failures.record(room(`r${i}`), 'error');
    expect(roomChurn(failures.of('arena'), { activeVersion: 'v1.0.0' }, 10_000, now, 0)).toMatchObject({ churning: true, mark: CHURN_MAX });
  });

  it('forgets a gone room\'s uid, and a gone scheduler\'s failures and series', () => {
    const metrics = new MetricsRegistry();
    const failures = new RoomFailures(metrics, clock);
    failures.zeroFor('arena');
    failures.record(room('a'), 'error');
    failures.roomGone(room('a'));
    expect(failures.record(room('a'), 'error')).toBe(true); // a new room of the same uid would be a new failure
    const counter = metrics.counter('roomkeeper_room_failures_total', '');
    expect(counter.get({ cause: 'pod_deleted', scheduler: 'arena', stage: 'before_ping' })).toBe(0);
    expect(counter.sum({ scheduler: 'arena' })).toBe(2);
    failures.schedulerGone('arena');
    expect(counter.sum({ scheduler: 'arena' })).toBe(0);
    expect(failures.of('arena')).toEqual([]);
  });
});
