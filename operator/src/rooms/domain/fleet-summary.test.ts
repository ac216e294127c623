import { summarizeFleet } from './fleet-summary';
import { roomView } from './test-rooms';
import { DEFAULT_ROOM_TIMEOUTS } from './types';

const S = 1000;
const NOW = 10_000 * S;

describe('summarizeFleet', () => {
  it('sorts rooms into expired, available and counts', () => {
    const rooms = [
      roomView('ready', { status: 'ready', lastPingAt: NOW }),
      roomView('occupied', { status: 'occupied', lastPingAt: NOW }),
      roomView('allocated', { status: 'allocated', lastPingAt: NOW }),
      roomView('pending', { status: 'pending', createdAt: NOW - S }),
      roomView('unready', { status: 'unready', createdAt: NOW - S }),
      roomView('silent', { status: 'ready', lastPingAt: NOW - 300 * S }),
      roomView('stuck-pending', { status: 'pending', createdAt: NOW - 400 * S, startedAt: NOW - 300 * S }),
      roomView('error', { status: 'error', lastPingAt: NOW }),
      roomView('expired-error', { status: 'error', lastPingAt: NOW - 300 * S }),
      roomView('deleting', { status: 'ready', terminating: true, terminatingSince: NOW, lastPingAt: NOW }),
      roomView('pinged-terminating', { status: 'terminating', lastPingAt: NOW }),
      roomView('terminated', { status: 'terminated', lastPingAt: NOW }),
      roomView('validation', { status: 'ready', validation: true, lastPingAt: NOW }),
      roomView('old-validation', { status: 'pending', validation: true, createdAt: NOW - 600 * S, startedAt: NOW - 500 * S }),
    ];
    const summary = summarizeFleet(rooms, NOW, DEFAULT_ROOM_TIMEOUTS);
    expect(summary.expired.map((e) => e.room.name)).toEqual(['silent', 'stuck-pending', 'expired-error', 'terminated', 'old-validation']);
    expect(summary.available.map((r) => r.name)).toEqual(['ready', 'occupied', 'allocated', 'pending', 'unready']);
    expect(summary.counts).toEqual({ pending: 1, unready: 1, ready: 1, occupied: 1, allocated: 1, active: 0, terminating: 3, error: 2, matches: 2, matchSlots: 3, freeSlots: 1 });
  });

  it('counts matches and match slots of a multi-match fleet (maxMatches 3)', () => {
    const rooms = [
      roomView('fresh', { status: 'ready', runningMatches: 0, lastPingAt: NOW }),
      roomView('one', { status: 'active', runningMatches: 1, lastPingAt: NOW }),
      roomView('two-and-a-slot', { status: 'active', runningMatches: 2, allocationOpen: true, lastPingAt: NOW }),
      roomView('allocated', { status: 'allocated', runningMatches: 0, allocationOpen: true, lastPingAt: NOW }),
      roomView('full', { status: 'occupied', runningMatches: 5, lastPingAt: NOW }),
      roomView('starting', { status: 'pending', createdAt: NOW - S }),
    ];
    const { counts } = summarizeFleet(rooms, NOW, DEFAULT_ROOM_TIMEOUTS, 3);
    // 0 + 1 + (2 + 1 allocated) + (0 + 1 allocated) + 3 (capped at maxMatches)
    expect(counts).toMatchObject({ ready: 1, active: 2, allocated: 1, occupied: 1, pending: 1, matches: 8, matchSlots: 15 });
    // Free slots are what the allocate API may offer: 3 (fresh) + 2 (one); 'two-and-a-slot' holds its
    // last slot back behind its open allocation, and 'allocated' its other two.
    expect(counts.freeSlots).toBe(5);
  });
});
