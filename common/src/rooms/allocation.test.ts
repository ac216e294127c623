import type { GameRoom, GameRoomStatus } from '../generated/resources';
import { allocationNotice, allocationRecord, allocationStep, heldAllocation, MAX_ALLOCATION_TTL_SECONDS, previousAllocationCap, supersededAllocations, withAllocation } from './allocation';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const allocation = { id: 'm-1', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z', metadata: { mode: 'duel' } };
const room = (status: GameRoomStatus): GameRoom => ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, status });

describe('allocation rules', () => {
  it('holds a room until its TTL ends or the operator ends it', () => {
    expect(heldAllocation({ allocation }, T0)).toBe(allocation);
    expect(heldAllocation({ allocation }, T0 + 300_000)).toBeUndefined();
    expect(heldAllocation({ allocation: { ...allocation, endedAt: '2026-01-01T00:01:00.000Z', endReason: 'occupied' } }, T0)).toBeUndefined();
    expect(heldAllocation({}, T0)).toBeUndefined();
  });

  it('keeps a ready room allocated inside the TTL; every other status applies (Maestro)', () => {
    expect(withAllocation('ready', { allocation }, T0)).toBe('allocated');
    expect(withAllocation('occupied', { allocation }, T0)).toBe('occupied');
    expect(withAllocation('terminating', { allocation }, T0)).toBe('terminating');
    expect(withAllocation('ready', { allocation }, T0 + 300_000)).toBe('ready');
  });

  it('tells the operator to wait for the TTL, end it as expired, or end it when the room reported occupied', () => {
    expect(allocationStep(room({ pingStatus: 'ready', allocation }), T0)).toEqual({ kind: 'wait', untilMs: T0 + 300_000 });
    expect(allocationStep(room({ pingStatus: 'ready', allocation }), T0 + 300_000)).toEqual({ kind: 'end', reason: 'expired' });
    expect(allocationStep(room({ pingStatus: 'occupied', allocation }), T0)).toEqual({ kind: 'end', reason: 'occupied' });
    // Ended once: an ended allocation asks for nothing more.
    expect(allocationStep(room({ pingStatus: 'ready', allocation: { ...allocation, endedAt: '2026-01-01T00:05:00.000Z', endReason: 'expired' } }), T0 + 600_000)).toEqual({ kind: 'none' });
    expect(allocationStep(room({ pingStatus: 'ready' }), T0)).toEqual({ kind: 'none' });
  });

  it('takes an allocation that expires further ahead than the longest TTL (a year) allows as over: no allocate call wrote it (year 9999, by kubectl)', () => {
    const forever = { ...allocation, expiresAt: '9999-12-31T23:59:59.000Z' };
    expect(heldAllocation({ allocation: forever }, T0)).toBeUndefined();
    expect(withAllocation('ready', { allocation: forever }, T0)).toBe('ready');
    expect(allocationStep(room({ pingStatus: 'ready', allocation: forever }), T0)).toEqual({ kind: 'end', reason: 'expired' });
    // The longest TTL the allocate API takes, plus clock skew, still holds.
    const yearLong = { ...allocation, expiresAt: new Date(T0 + MAX_ALLOCATION_TTL_SECONDS * 1000 + 60_000).toISOString() };
    expect(heldAllocation({ allocation: yearLong }, T0)).toBe(yearLong);
    expect(allocationStep(room({ pingStatus: 'ready', allocation: yearLong }), T0)).toEqual({ kind: 'wait', untilMs: Date.parse(yearLong.expiresAt) });
  });

  it('ends a match-slot allocation when the room reports one more running match than when it was made', () => {
    const slot = { ...allocation, runningMatches: 1 };
    // A multi-match room with one match running, allocated its second slot: an occupied ping with 1 match is not the new match.
    expect(allocationStep(room({ pingStatus: 'occupied', runningMatches: 1, allocation: slot }), T0)).toEqual({ kind: 'wait', untilMs: T0 + 300_000 });
    expect(allocationStep(room({ pingStatus: 'occupied', runningMatches: 2, allocation: slot }), T0)).toEqual({ kind: 'end', reason: 'occupied' });
    // A single-match room allocated with 0 matches: its occupied ping (stored as 1 match) ends it.
    expect(allocationStep(room({ pingStatus: 'occupied', runningMatches: 1, allocation: { ...allocation, runningMatches: 0 } }), T0)).toEqual({ kind: 'end', reason: 'occupied' });
    expect(allocationStep(room({ pingStatus: 'ready', runningMatches: 0, allocation: { ...allocation, runningMatches: 0 } }), T0)).toEqual({ kind: 'wait', untilMs: T0 + 300_000 });
  });

  it('tells the room its allocation (id, metadata, expiry) only while it holds', () => {
    expect(allocationNotice({ allocation }, T0)).toEqual({ id: 'm-1', metadata: { mode: 'duel' }, expiresAt: '2026-01-01T00:05:00.000Z' });
    expect(allocationNotice({ allocation }, T0 + 300_000)).toBeUndefined();
  });

  it('keeps the replaced allocation first in previousAllocations, bounded by max(8, maxMatches) up to 35', () => {
    expect([1, 3, 8, 20, 35].map(previousAllocationCap)).toEqual([8, 8, 8, 20, 35]);
    let status: GameRoomStatus = {};
    for (let i = 0; i < 12; i++) {
      const previousAllocations = supersededAllocations(status, T0 + i * 1000, previousAllocationCap(1));
      status = { previousAllocations, allocation: { ...allocation, id: `m-${i}`, endedAt: '2026-01-01T00:00:30.000Z', endReason: 'expired' } };
    }
    expect(status.previousAllocations?.map((p) => p.id)).toEqual(['m-10', 'm-9', 'm-8', 'm-7', 'm-6', 'm-5', 'm-4', 'm-3']);
    expect(status.previousAllocations?.[0]).toEqual({
      id: 'm-10', requestHash: 'h', allocatedAt: allocation.allocatedAt, expiresAt: allocation.expiresAt,
      endedAt: '2026-01-01T00:00:30.000Z', endReason: 'expired', supersededAt: '2026-01-01T00:00:11.000Z',
    });
    expect(allocationRecord(status, 'm-11')).toMatchObject({ kind: 'current' });
    expect(allocationRecord(status, 'm-5')).toMatchObject({ kind: 'previous', allocation: { id: 'm-5' }, current: { id: 'm-11' } });
    expect(allocationRecord(status, 'm-2')).toBeUndefined();
    expect(supersededAllocations({}, T0, 8)).toEqual([]);
  });
});
