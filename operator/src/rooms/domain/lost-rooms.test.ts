import type { V1Pod } from '@kubernetes/client-node';
import type { GameRoom, Operation, Scheduler } from '../../../../common/src/generated/resources';
import { LOST_ROOMS_ANNOTATION } from '../../../../common/src/resources/labels';
import { heldPlayers, leavingOnItsOwn, lostRoomPatch, lostRoomPlace, lostToName, lostWithPlayersNote, MAX_LOST_ROOMS, podWasSeen, type LostRoom } from './lost-rooms';
import type { Autoscaling } from './types';

const lost = (name: string, lostAt = '2026-01-01T00:00:10.000Z'): LostRoom => ({ name, reason: 'its pod was deleted', lostAt });

function scheduler(status: Scheduler['status']): Scheduler {
  return { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 's', resourceVersion: '42' }, spec: {} as Scheduler['spec'], ...(status ? { status } : {}) };
}

function op(definitionName: string, source: 'api' | 'operator', enqueuedAt: string, lostNamed?: string, status?: string): Operation {
  const annotations = lostNamed === undefined ? {} : { annotations: { [LOST_ROOMS_ANNOTATION]: lostNamed } };
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `${definitionName}-${enqueuedAt}`, ...annotations }, spec: { schedulerName: 's', definitionName, enqueuedAt, source },
    ...(status ? { status: { status } } : {}),
  } as Operation;
}

describe('lostRoomPatch: the status write that records a lost room', () => {
  test.each([
    {
      name: 'the first lost room creates the list, conditional on there still being none (not on the resourceVersion, which room counts move)',
      status: { version: 'v1.0.0' },
      want: [{ op: 'test', path: '/status/lostRooms', value: null }, { op: 'add', path: '/status/lostRooms', value: [lost('r9')] }],
    },
    {
      name: 'a scheduler without a status gets one holding the list',
      status: undefined,
      want: [{ op: 'test', path: '/status', value: null }, { op: 'add', path: '/status', value: { lostRooms: [lost('r9')] } }],
    },
    {
      name: 'a list with room to spare: an append, unconditional',
      status: { lostRooms: [lost('r1')] },
      want: [{ op: 'add', path: '/status/lostRooms/-', value: lost('r9') }],
    },
    {
      name: 'a full list: the append removes the oldest',
      status: { lostRooms: [lost('r1'), lost('r2'), lost('r3')] },
      want: [{ op: 'add', path: '/status/lostRooms/-', value: lost('r9') }, { op: 'remove', path: '/status/lostRooms/0' }],
    },
    {
      name: 'a room already recorded (its deletion did not happen yet): nothing',
      status: { lostRooms: [lost('r1'), lost('r9')] },
      want: undefined,
    },
  ])('$name', ({ status, want }) => {
    expect(lostRoomPatch(scheduler(status), lost('r9'), 3)).toEqual(want);
  });
});

describe('lostToName: the lost rooms the next add_rooms of the health check names', () => {
  const recorded = [lost('r1', '2026-01-01T00:00:10.000Z'), lost('r2', '2026-01-01T00:00:20.000Z'), lost('r3', '2026-01-01T00:00:30.000Z')];
  const all = ['r1 (its pod was deleted)', 'r2 (its pod was deleted)', 'r3 (its pod was deleted)'];
  test.each([
    { name: 'no add_rooms yet: every recorded room', ops: [], podless: [], want: all },
    { name: 'only those lost after the last add_rooms of the health check', ops: [op('add_rooms', 'operator', '2026-01-01T00:00:05.000Z'), op('add_rooms', 'operator', '2026-01-01T00:00:20.000Z')], podless: [], want: ['r3 (its pod was deleted)'] },
    { name: 'a user\'s add_rooms or another operation names none of them', ops: [op('add_rooms', 'api', '2026-01-01T00:00:25.000Z'), op('remove_rooms', 'operator', '2026-01-01T00:00:25.000Z')], podless: [], want: all },
    { name: 'all named already: none', ops: [op('add_rooms', 'operator', '2026-01-01T00:00:31.000Z')], podless: [], want: [] },
    { name: 'a room still there whose pod is gone (not recorded yet): named too, once', ops: [op('add_rooms', 'operator', '2026-01-01T00:00:31.000Z')], podless: ['r4', 'r4'], want: ['r4 (its pod was deleted)'] },
    { name: 'a podless room recorded already: named once, with the recorded reason', ops: [], podless: ['r2'], want: all },
    {
      name: 'rooms the last add_rooms named while they were podless are not named again once recorded after it',
      ops: [op('add_rooms', 'operator', '2026-01-01T00:00:15.000Z', 'r2,r3')],
      podless: [],
      want: [],
    },
    {
      name: 'an add_rooms that ended in error does not count: the next one names its rooms again',
      ops: [op('add_rooms', 'operator', '2026-01-01T00:00:15.000Z'), op('add_rooms', 'operator', '2026-01-01T00:00:31.000Z', 'r3', 'error')],
      podless: [],
      want: ['r2 (its pod was deleted)', 'r3 (its pod was deleted)'],
    },
    {
      name: 'an add_rooms still pending or running counts: it replaces the rooms it named',
      ops: [op('add_rooms', 'operator', '2026-01-01T00:00:25.000Z', 'r2', 'in_progress')],
      podless: [],
      want: ['r3 (its pod was deleted)'],
    },
  ])('$name', ({ ops, podless, want }) => {
    expect(lostToName(recorded, ops, podless.map((name) => ({ name, why: 'its pod was deleted' }))).named).toEqual(want);
  });

  test('a scheduler that never lost a room: none', () => {
    expect(lostToName(undefined, [], [])).toEqual({ named: [], names: [], more: 0, recordFull: false });
  });

  test('at most `max` named, the rest counted; the names for the operation\'s annotation', () => {
    expect(lostToName(recorded, [], [{ name: 'r4', why: 'its pod was deleted' }], 2)).toEqual({ named: ['r1 (its pod was deleted)', 'r2 (its pod was deleted)'], names: ['r1', 'r2'], more: 2, recordFull: false });
  });

  test('says when the record is full of rooms lost since the last add_rooms: older losses may have left it', () => {
    const full = Array.from({ length: MAX_LOST_ROOMS }, (_, i) => ({ name: `f${i}`, reason: 'its pod never appeared', lostAt: '2026-12-05T12:00:00Z' }));
    expect(lostToName(full, [], []).recordFull).toBe(true);
    expect(lostToName(full.slice(1), [], []).recordFull).toBe(false);
  });
});

describe('leavingOnItsOwn: a room going by no decision of the operator', () => {
  const room = (status: NonNullable<GameRoom['status']>, extra: { deleting?: boolean; validation?: boolean } = {}): GameRoom => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
    metadata: { name: 'r1', namespace: 's', ...(extra.deleting ? { deletionTimestamp: new Date() } : {}) },
    spec: { scheduler: 's', version: 'v1.0.0', ...(extra.validation ? { validation: true } : {}) }, status,
  });
  const pod: V1Pod = { metadata: { name: 'r1', namespace: 's' } };
  const podDeleting: V1Pod = { metadata: { name: 'r1', namespace: 's', deletionTimestamp: new Date() } };
  test.each([
    { name: 'its pod, seen before, is gone', r: room({ instanceStatus: 'ready', pingStatus: 'ready' }), pod: undefined, want: 'its pod was deleted' },
    { name: 'its pod is being deleted', r: room({ status: 'terminating', instanceStatus: 'terminating', pingStatus: 'ready' }), pod: podDeleting, want: 'its pod was deleted' },
    { name: 'its game server pinged terminating, its pod still in the cache', r: room({ instanceStatus: 'ready', pingStatus: 'terminating' }), pod, want: 'its game server pinged terminating' },
    { name: 'a room that stays', r: room({ instanceStatus: 'ready', pingStatus: 'ready' }), pod, want: undefined },
    { name: 'a room never seen with its pod (it may still come)', r: room({}), pod: undefined, want: undefined },
    { name: 'a room the operator deletes', r: room({ instanceStatus: 'ready', pingStatus: 'terminating' }, { deleting: true }), pod: podDeleting, want: undefined },
    { name: 'a validation room', r: room({ instanceStatus: 'ready', pingStatus: 'terminating' }, { validation: true }), pod, want: undefined },
  ])('$name', ({ r, pod, want }) => {
    expect(leavingOnItsOwn(r, pod)).toBe(want);
  });
});

describe('podWasSeen', () => {
  test.each([
    { instanceStatus: undefined, want: false },
    { instanceStatus: 'unknown', want: false },
    { instanceStatus: 'pending', want: true },
    { instanceStatus: 'ready', want: true },
  ] as const)('instanceStatus $instanceStatus: $want', ({ instanceStatus, want }) => {
    const room: GameRoom = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, ...(instanceStatus ? { status: { instanceStatus } } : {}) };
    expect(podWasSeen(room)).toBe(want);
  });
});

describe('lostRoomPlace: what the health check does about a lost room\'s place', () => {
  const autoscaling = (enabled: boolean): Autoscaling => ({ enabled, min: 2, max: 10, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } });
  const withReplicas = (replicas: number, deleting = false): Scheduler => ({
    ...scheduler({}), spec: { roomsReplicas: replicas } as Scheduler['spec'],
    metadata: { name: 's', ...(deleting ? { deletionTimestamp: new Date(0) } : {}) },
  });
  test.each([
    { name: 'no Scheduler', s: undefined, as: undefined, want: 'no room replaces it: no Scheduler s exists' },
    { name: 'its Scheduler being deleted', s: withReplicas(3, true), as: undefined, want: 'no room replaces it: its Scheduler s is being deleted' },
    {
      name: 'roomsReplicas in force',
      s: withReplicas(3), as: undefined,
      want: 'the health check adds a room in its place (an add_rooms naming it) if fewer than spec.roomsReplicas 3 rooms are available; none while 3 or more are',
    },
    {
      name: 'autoscaling disabled: roomsReplicas in force',
      s: withReplicas(0), as: autoscaling(false),
      want: 'no room replaces it: spec.roomsReplicas is 0',
    },
    {
      name: 'autoscaling enabled: the policy decides',
      s: withReplicas(3), as: autoscaling(true),
      want: 'the health check adds a room in its place (an add_rooms naming it) only if autoscaling (roomOccupancy, min 2) then wants more rooms than are available; if not, the fleet stays smaller',
    },
  ])('$name', ({ s, as, want }) => {
    expect(lostRoomPlace('s', s, as)).toBe(want);
  });
});

describe('rooms lost while players or a matchmaker held them', () => {
  const room = (status: GameRoom['status']): GameRoom => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r-1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, ...(status ? { status } : {}),
  });
  const future = new Date(Date.now() + 60_000).toISOString();

  test('held players: an occupied ping, a running match or an allocation not ended; not a ready room', () => {
    expect(heldPlayers(room({ status: 'occupied', pingStatus: 'occupied' }))).toBe(true);
    expect(heldPlayers(room({ status: 'active', pingStatus: 'ready', runningMatches: 1 }))).toBe(true);
    expect(heldPlayers(room({ status: 'allocated', pingStatus: 'ready', allocation: { id: 'm-1', requestHash: 'h', allocatedAt: new Date().toISOString(), expiresAt: future } }))).toBe(true);
    expect(heldPlayers(room({ status: 'ready', pingStatus: 'ready' }))).toBe(false);
    expect(heldPlayers(room(undefined))).toBe(false);
  });

  test('the Warning says what held the room, where it was, why it went and what replaces it', () => {
    const r = room({ status: 'occupied', pingStatus: 'occupied', runningMatches: 2, host: '10.0.0.7' });
    expect(lostWithPlayersNote(r, 'its pod was deleted', 'the health check adds a room in its place')).toBe(
      'Room r-1 on host 10.0.0.7 was lost while players or a matchmaker held it (its game server said occupied, 2 running matches): its pod was deleted, and its matches ended with it; '
      + 'the health check adds a room in its place. A node lost takes every room on it: kubectl get nodes, and kubectl get events -A --field-selector involvedObject.kind=Node; '
      + 'roomkeeper_room_failures_total{cause="pod_deleted",stage="with_players"} counts such rooms');
  });
});
