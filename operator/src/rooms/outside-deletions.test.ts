import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Scheduler } from '../../../common/src/generated/resources';
import { RoomExpectations } from './expectations';
import { OutsideDeletions, outsideDeletionNote } from './outside-deletions';

const room = (name: string, opts: { deleting?: boolean; validation?: boolean; namespace?: string } = {}): GameRoom => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
  metadata: { name, namespace: opts.namespace ?? 's', uid: `uid-${name}`, ...(opts.deleting ? { deletionTimestamp: new Date('2026-12-02T10:00:00Z') } : {}) },
  spec: { scheduler: opts.namespace ?? 's', version: 'v1.0.0', validation: opts.validation ?? false },
});

describe('rooms deleted outside Roomkeeper', () => {
  let now = 0;
  let schedulers: Map<string, Scheduler>;
  let namespaces: Map<string, k8s.V1Namespace>;
  let expectations: RoomExpectations;
  const make = () => new OutsideDeletions({
    caches: {
      schedulers: { get: (name: string) => schedulers.get(name), list: () => [...schedulers.values()] },
      namespaces: { get: (name: string) => namespaces.get(name), list: () => [...namespaces.values()] },
    },
    expectations,
  });
  beforeEach(() => {
    now = 0;
    schedulers = new Map([['s', { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 's' }, spec: { game: 'g' } } as Scheduler]]);
    namespaces = new Map([['s', { metadata: { name: 's' } }]]);
    expectations = new RoomExpectations(() => now, 30_000);
  });

  test.each([
    ['kubectl delete (removed at once)', [['delete', room('a')]], ['a']],
    ['kubectl delete --cascade=foreground (a deletionTimestamp first), told once', [['update', room('a', { deleting: true })], ['update', room('a', { deleting: true })], ['delete', room('a', { deleting: true })]], ['a']],
    ['a room first seen already deleting (a list) is not judged', [['add', room('a', { deleting: true })], ['delete', room('a', { deleting: true })]], []],
    ['a validation room (its operation tells)', [['delete', room('a', { validation: true })]], []],
    ['a room merely updated', [['update', room('a')]], []],
  ] as const)('%s', (_title, events, told) => {
    const o = make();
    for (const [type, r] of events) o.observe(type, r, true);
    expect(o.of('s')?.names ?? []).toEqual(told);
  });

  test('a deletion this replica asked for is its own, once; a later one of the same name is not', () => {
    const o = make();
    expectations.expectDelete('s', 'a');
    o.observe('update', room('a', { deleting: true }), true);
    o.observe('delete', room('a', { deleting: true }), true);
    expect(o.of('s')).toBeUndefined();
    o.observe('delete', { ...room('a'), metadata: { ...room('a').metadata, uid: 'uid-a2' } }, true);
    expect(o.of('s')?.names).toEqual(['a']);
  });

  test('a deletion asked for more than 10 minutes ago is not taken for its own; one whose request failed (it may have landed) or seen minutes late is', () => {
    const o = make();
    expectations.noteOwnDeletion('s', 'a');
    now = 10 * 60_000 + 1;
    expectations.expectDelete('s', 'b');
    expectations.cancel('s', 'b');
    expectations.expectDelete('s', 'c');
    o.observe('delete', room('a'), true);
    now += 5 * 60_000;
    o.observe('delete', room('b'), true);
    o.observe('delete', room('c'), true);
    expect(o.of('s')?.names).toEqual(['a']);
  });

  test('rooms going with their scheduler or namespace, or recorded lost, are not outside deletions', () => {
    const o = make();
    schedulers.set('s', { ...schedulers.get('s'), status: { lostRooms: [{ name: 'lost', reason: 'its pod was deleted', lostAt: '2026-12-02T10:00:00Z' }] } } as Scheduler);
    o.observe('delete', room('lost'), true);
    expectations.expectLossRecorded('s', 'pending');
    o.observe('delete', room('pending'), true);
    namespaces.set('s', { metadata: { name: 's', deletionTimestamp: new Date() } });
    o.observe('delete', room('with-ns'), true);
    namespaces.delete('s');
    o.observe('delete', room('ns-gone'), true);
    o.observe('delete', room('no-scheduler', { namespace: 'gone' }), true);
    expect(o.of('s')).toBeUndefined();
    expect(o.of('gone')).toBeUndefined();
  });

  test('a standby judges but keeps nothing, and once leading does not judge again what it saw begin', () => {
    const o = make();
    o.observe('update', room('a', { deleting: true }), false);
    o.observe('delete', room('b'), false);
    o.observe('delete', room('a', { deleting: true }), true);
    expect(o.of('s')).toBeUndefined();
  });

  test('counts the rooms that held players or an allocation when deleted', () => {
    const o = make();
    const withStatus = (name: string, status: string): GameRoom => ({ ...room(name), status: { status } } as GameRoom);
    o.observe('delete', withStatus('a', 'occupied'), true);
    o.observe('delete', withStatus('b', 'ready'), true);
    o.observe('update', { ...withStatus('c', 'allocated'), metadata: room('c', { deleting: true }).metadata }, true);
    expect(o.of('s')).toEqual({ names: ['a', 'b', 'c'], count: 3, busy: 2 });
  });

  test('a thousand deletions keep 20 names and the count, until cleared', () => {
    const o = make();
    for (let i = 0; i < 1000; i++) o.observe('delete', room(`r${i}`), true);
    expect(o.of('s')?.count).toBe(1000);
    expect(o.of('s')?.names).toHaveLength(20);
    o.clear('s');
    expect(o.of('s')).toBeUndefined();
  });

  test.each([
    [{ names: ['s-abcde'], count: 1 }, 'Room s-abcde was deleted outside Roomkeeper (by kubectl or another client; no operation deleted it). X.'],
    [{ names: ['a', 'b'], count: 2 }, '2 rooms were deleted outside Roomkeeper (by kubectl or another client; no operation deleted them): a, b. X.'],
    [{ names: Array.from({ length: 20 }, (_, i) => `r${i}`), count: 1000 }, '1000 rooms were deleted outside Roomkeeper (by kubectl or another client; no operation deleted them): r0, r1, r2, r3, r4, r5, r6, r7, r8, r9 and 990 more. X.'],
    [{ names: ['s-abcde'], count: 1, busy: 1 }, 'Room s-abcde was deleted outside Roomkeeper (by kubectl or another client; no operation deleted it) while it held players or a matchmaker\'s allocation (allocated, occupied or active). X.'],
    [{ names: ['a', 'b', 'c'], count: 3, busy: 1 }, '3 rooms were deleted outside Roomkeeper (by kubectl or another client; no operation deleted them): a, b, c; 1 of them held players or a matchmaker\'s allocation (allocated, occupied or active). X.'],
    [{ names: ['a', 'b'], count: 2, busy: 2 }, '2 rooms were deleted outside Roomkeeper (by kubectl or another client; no operation deleted them): a, b; both held players or a matchmaker\'s allocation (allocated, occupied or active). X.'],
  ])('note %#', (deleted, note) => {
    expect(outsideDeletionNote(deleted, 'X.')).toBe(note);
  });
});
