import type { Operation, Scheduler } from '../../../../common/src/generated/resources';
import { lostRoomPatch, lostSinceLastAdd, type LostRoom } from './lost-rooms';

const lost = (name: string, lostAt = '2026-01-01T00:00:10.000Z'): LostRoom => ({ name, reason: 'its pod was deleted', lostAt });

function scheduler(status: Scheduler['status']): Scheduler {
  return { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 's', resourceVersion: '42' }, spec: {} as Scheduler['spec'], ...(status ? { status } : {}) };
}

function op(definitionName: string, source: 'api' | 'operator', enqueuedAt: string): Operation {
  return { apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `${definitionName}-${enqueuedAt}` }, spec: { schedulerName: 's', definitionName, enqueuedAt, source } };
}

describe('lostRoomPatch: the status write that records a lost room', () => {
  test.each([
    {
      name: 'the first lost room creates the list, conditional on the resourceVersion',
      status: { version: 'v1.0.0' },
      want: [{ op: 'test', path: '/metadata/resourceVersion', value: '42' }, { op: 'add', path: '/status/lostRooms', value: [lost('r9')] }],
    },
    {
      name: 'a scheduler without a status gets one holding the list',
      status: undefined,
      want: [{ op: 'test', path: '/metadata/resourceVersion', value: '42' }, { op: 'add', path: '/status', value: { lostRooms: [lost('r9')] } }],
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

describe('lostSinceLastAdd: the lost rooms the next add_rooms names', () => {
  const recorded = [lost('r1', '2026-01-01T00:00:10.000Z'), lost('r2', '2026-01-01T00:00:20.000Z'), lost('r3', '2026-01-01T00:00:30.000Z')];
  test.each([
    { name: 'no add_rooms yet: every recorded room', ops: [], want: ['r1 (its pod was deleted)', 'r2 (its pod was deleted)', 'r3 (its pod was deleted)'] },
    { name: 'only those lost after the last add_rooms of the health check', ops: [op('add_rooms', 'operator', '2026-01-01T00:00:05.000Z'), op('add_rooms', 'operator', '2026-01-01T00:00:20.000Z')], want: ['r3 (its pod was deleted)'] },
    { name: 'a user\'s add_rooms or another operation names none of them', ops: [op('add_rooms', 'api', '2026-01-01T00:00:25.000Z'), op('remove_rooms', 'operator', '2026-01-01T00:00:25.000Z')], want: ['r1 (its pod was deleted)', 'r2 (its pod was deleted)', 'r3 (its pod was deleted)'] },
    { name: 'all named already: none', ops: [op('add_rooms', 'operator', '2026-01-01T00:00:31.000Z')], want: [] },
  ])('$name', ({ ops, want }) => {
    expect(lostSinceLastAdd(recorded, ops)).toEqual(want);
  });

  test('a scheduler that never lost a room: none', () => {
    expect(lostSinceLastAdd(undefined, [])).toEqual([]);
  });
});
