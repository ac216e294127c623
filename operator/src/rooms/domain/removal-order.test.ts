import { chooseRoomsToRemove, isRemovable } from './removal-order';
import { roomView } from './test-rooms';
import type { RoomView } from './types';

const S = 1000;
const NOW = 10_000 * S;
const PING = { pingTimeoutMs: 240 * S };
const names = (rooms: RoomView[]): string[] => rooms.map((r) => r.name);

describe('chooseRoomsToRemove', () => {
  const fleet = [
    roomView('ready-new', { status: 'ready', version: 'v2.0.0', createdAt: 100, lastPingAt: NOW }),
    roomView('occupied-old', { status: 'occupied', version: 'v1.0.0', createdAt: 1, lastPingAt: NOW }),
    roomView('ready-old', { status: 'ready', version: 'v1.0.0', createdAt: 200, lastPingAt: NOW }),
    roomView('pending-new', { status: 'pending', version: 'v2.0.0', createdAt: 300 }),
    roomView('unready-old', { status: 'unready', version: 'v1.3.0', createdAt: 400, lastPingAt: NOW }),
    roomView('expired-new', { status: 'ready', version: 'v2.0.0', createdAt: 0, lastPingAt: NOW - 300 * S }),
    roomView('error-new', { status: 'error', version: 'v2.0.0', createdAt: 500, lastPingAt: NOW }),
    roomView('terminating', { status: 'ready', terminating: true, createdAt: 0, lastPingAt: NOW }),
    roomView('pinged-terminating', { status: 'terminating', createdAt: 0, lastPingAt: NOW }),
    roomView('terminated', { status: 'terminated', createdAt: 0, lastPingAt: NOW }),
    roomView('validation', { status: 'ready', validation: true, createdAt: 0, lastPingAt: NOW }),
  ];

  const cases: { name: string; amount: number; options: Parameters<typeof chooseRoomsToRemove>[3]; remove: string[]; shortBy: number }[] = [
    {
      name: 'priority order, other major first within a class',
      amount: 10,
      options: { ...PING, activeMajor: 2 },
      remove: ['error-new', 'expired-new', 'unready-old', 'pending-new', 'ready-old', 'ready-new'],
      shortBy: 4,
    },
    {
      name: 'without an active version, age decides within a class',
      amount: 10,
      options: PING,
      remove: ['error-new', 'expired-new', 'pending-new', 'unready-old', 'ready-new', 'ready-old'],
      shortBy: 4,
    },
    { name: 'cut to the amount', amount: 3, options: { ...PING, activeMajor: 2 }, remove: ['error-new', 'expired-new', 'unready-old'], shortBy: 0 },
    { name: 'zero amount', amount: 0, options: PING, remove: [], shortBy: 0 },
    { name: 'negative amount', amount: -3, options: PING, remove: [], shortBy: 0 },
    { name: 'fractional amount rounds down', amount: 1.7, options: PING, remove: ['error-new'], shortBy: 0 },
    { name: 'NaN amount', amount: Number.NaN, options: PING, remove: [], shortBy: 0 },
    {
      name: 'active version given as a string',
      amount: 10,
      options: { ...PING, activeVersion: 'v2.1.0' },
      remove: ['error-new', 'expired-new', 'unready-old', 'pending-new', 'ready-old', 'ready-new'],
      shortBy: 4,
    },
    {
      name: 'other major only (rolling replacement)',
      amount: 5,
      options: { ...PING, activeMajor: 2, otherMajorOnly: true },
      remove: ['unready-old', 'ready-old'],
      shortBy: 3,
    },
  ];
  it.each(cases)('$name', ({ amount, options, remove, shortBy }) => {
    const choice = chooseRoomsToRemove(fleet, amount, NOW, options);
    expect(names(choice.remove)).toEqual(remove);
    expect(choice.shortBy).toBe(shortBy);
  });

  it('never chooses occupied, terminating, terminated or validation rooms', () => {
    const chosen = names(chooseRoomsToRemove(fleet, 100, NOW, { ...PING, activeMajor: 2 }).remove);
    for (const never of ['occupied-old', 'terminating', 'pinged-terminating', 'terminated', 'validation']) {
      expect(chosen).not.toContain(never);
    }
  });

  it('never chooses a room whose game server says players are in it while its pod is not ready', () => {
    const rooms = [
      roomView('pending-occupied', { status: 'pending', pingStatus: 'occupied', createdAt: 0, lastPingAt: NOW - 10 * S }),
      roomView('unready-matches', { status: 'unready', runningMatches: 2, createdAt: 1, lastPingAt: NOW }),
      roomView('pending-allocated', { status: 'pending', allocationOpen: true, createdAt: 2, lastPingAt: NOW - 900 * S }),
      roomView('silent-occupied', { status: 'pending', pingStatus: 'occupied', createdAt: 3, lastPingAt: NOW - 300 * S }),
      roomView('error-occupied', { status: 'error', pingStatus: 'occupied', createdAt: 4, lastPingAt: NOW }),
      roomView('pending-ready', { status: 'pending', pingStatus: 'ready', createdAt: 5, lastPingAt: NOW }),
    ];
    // A room in error is over; one silent past the ping timeout says nothing any more.
    expect(names(chooseRoomsToRemove(rooms, 6, NOW, PING).remove)).toEqual(['error-occupied', 'silent-occupied', 'pending-ready']);
  });

  it('breaks ties by creation time, then name', () => {
    const rooms = [
      roomView('b', { createdAt: 5, lastPingAt: NOW }),
      roomView('a', { createdAt: 5, lastPingAt: NOW }),
      roomView('c', { createdAt: 1, lastPingAt: NOW }),
    ];
    expect(names(chooseRoomsToRemove(rooms, 3, NOW, PING).remove)).toEqual(['c', 'a', 'b']);
  });

  it('treats a pending room as expired only once it has pinged and fallen silent (expiry.ts rule 4)', () => {
    const rooms = [
      roomView('ready', { status: 'ready', createdAt: 1, lastPingAt: NOW }),
      roomView('never-pinged', { status: 'pending', createdAt: 0 }),
      roomView('silent-pending', { status: 'pending', createdAt: 2, lastPingAt: NOW - 900 * S }),
      roomView('silent-unready', { status: 'unready', createdAt: 3 }),
    ];
    expect(names(chooseRoomsToRemove(rooms, 4, NOW, PING).remove)).toEqual(['silent-pending', 'silent-unready', 'never-pinged', 'ready']);
  });

  it('takes a room marked silent and not heard since with the expired ones; one heard since its mark is ready as any', () => {
    const rooms = [
      roomView('ready', { status: 'ready', createdAt: 1, lastPingAt: NOW }),
      roomView('pending', { status: 'pending', createdAt: 2 }),
      roomView('heard-again', { status: 'ready', createdAt: 3, lastPingAt: NOW, silentSince: NOW - 100 * S }),
      roomView('silent', { status: 'ready', createdAt: 4, lastPingAt: NOW - 100 * S, silentSince: NOW - 100 * S }),
    ];
    expect(names(chooseRoomsToRemove(rooms, 4, NOW, PING).remove)).toEqual(['silent', 'pending', 'ready', 'heard-again']);
  });

  it('is pure: the input is not reordered', () => {
    const copy = [...fleet];
    chooseRoomsToRemove(fleet, 10, NOW, { ...PING, activeMajor: 2 });
    expect(fleet).toEqual(copy);
  });
});

describe('isRemovable', () => {
  it.each([
    [{ status: 'ready' }, true],
    [{ status: 'pending' }, true],
    [{ status: 'unready' }, true],
    [{ status: 'error' }, true],
    [{ status: 'occupied' }, false],
    [{ status: 'terminating' }, false],
    [{ status: 'terminated' }, false],
    [{ status: 'ready', terminating: true }, false],
    [{ status: 'ready', validation: true }, false],
    [{ status: 'allocated' }, false],
  ] as [Partial<RoomView>, boolean][])('%j -> %s', (room, expected) => {
    expect(isRemovable(roomView('r', room))).toBe(expected);
  });
});
