import type { GameRoom, Scheduler } from '../../../common/src/generated/resources';
import { RoomExpectations } from './expectations';

const room = (name: string, deleting = false): GameRoom => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
  metadata: { name, namespace: 's', ...(deleting ? { deletionTimestamp: new Date('2026-11-25T10:00:00Z') } : {}) },
  spec: { scheduler: 's', version: 'v1.0.0' },
});

const scheduler = (name: string, lost: string[]): Scheduler => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
  metadata: { name },
  spec: { game: 'g' },
  status: { lostRooms: lost.map((n) => ({ name: n, reason: 'its pod was deleted', lostAt: '2026-11-25T10:00:00Z' })) },
} as Scheduler);

describe('room expectations', () => {
  let now = 0;
  const make = () => new RoomExpectations(() => now, 30_000);
  beforeEach(() => {
    now = 0;
  });

  test('a deletion this replica asked for is its own for 10 minutes, a failed request included (it may have landed), and is taken once', () => {
    const e = make();
    e.expectDelete('s', 'a');
    e.expectDelete('s', 'b');
    e.cancel('s', 'b'); // the request failed, on a timeout perhaps
    now = 5 * 60_000; // a watch minutes behind
    expect(e.takeOwnDeletion('s', 'a')).toBe(true);
    expect(e.takeOwnDeletion('s', 'a')).toBe(false);
    expect(e.takeOwnDeletion('s', 'b')).toBe(true);
    e.noteOwnDeletion('s', 'c');
    now += 10 * 60_000 + 1;
    expect(e.takeOwnDeletion('s', 'c')).toBe(false);
    expect(e.takeOwnDeletion('s', 'x')).toBe(false);
  });

  test('a created room is expected until the cache shows it', () => {
    const e = make();
    e.expectAdd('s', 'a');
    expect(e.satisfied('s')).toBe(false);
    e.observe('add', room('b'));
    expect(e.satisfied('s')).toBe(false);
    e.observe('add', room('a'));
    expect(e.satisfied('s')).toBe(true);
  });

  test('a deleted room is expected until the cache shows it deleted or terminating, not merely updated', () => {
    const e = make();
    e.expectDelete('s', 'a');
    e.observe('update', room('a'));
    expect(e.satisfied('s')).toBe(false);
    e.observe('update', room('a', true));
    expect(e.satisfied('s')).toBe(true);
    e.expectDelete('s', 'b');
    e.observe('delete', room('b'));
    expect(e.satisfied('s')).toBe(true);
  });

  test('a room that changed on the server is expected until the cache shows any event of it', () => {
    const e = make();
    e.expectChange('s', 'a');
    e.observe('update', room('b'));
    expect(e.satisfied('s')).toBe(false);
    e.observe('update', room('a'));
    expect(e.satisfied('s')).toBe(true);
  });

  test('a room created and deleted before the cache saw it leaves nothing to wait for', () => {
    const e = make();
    e.expectAdd('s', 'a');
    e.expectDelete('s', 'a');
    expect(e.satisfied('s')).toBe(true);
  });

  test('an expectation not met within the TTL is dropped; other schedulers are unaffected', () => {
    const e = make();
    e.expectAdd('s', 'a');
    expect(e.satisfied('other')).toBe(true);
    now = 30_001;
    expect(e.satisfied('s')).toBe(true);
  });

  test('an expectation recorded before a request that failed is cancelled', () => {
    const e = make();
    e.expectAdd('s', 'a');
    e.cancel('s', 'a');
    expect(e.satisfied('s')).toBe(true);
  });

  test('a watch event that comes before the answer is not missed: the expectation is recorded first', () => {
    const e = make();
    e.expectAdd('s', 'a');
    e.observe('add', room('a'));
    expect(e.satisfied('s')).toBe(true);
  });

  test('a lost room recorded in the status is expected until the Scheduler\'s event shows it, whatever the rooms show', () => {
    const e = make();
    e.expectLossRecorded('s', 'a');
    e.observe('delete', room('a'));
    expect(e.satisfied('s')).toBe(false);
    expect(e.lossRecordPending('s', 'a')).toBe(true);
    expect(e.lossRecordPending('s', 'b')).toBe(false);
    e.observeScheduler('update', scheduler('s', ['b']));
    expect(e.satisfied('s')).toBe(false);
    e.observeScheduler('update', scheduler('s', ['b', 'a']));
    expect(e.satisfied('s')).toBe(true);
    expect(e.lossRecordPending('s', 'a')).toBe(false);
  });

  test('a loss record whose patch failed, whose Scheduler was deleted, or not seen within the TTL, is no longer waited for', () => {
    const e = make();
    e.expectLossRecorded('s', 'a');
    e.cancelLossRecord('s', 'a');
    expect(e.satisfied('s')).toBe(true);
    e.expectLossRecorded('s', 'b');
    e.observeScheduler('delete', scheduler('s', []));
    expect(e.satisfied('s')).toBe(true);
    e.expectLossRecorded('s', 'c');
    now = 30_001;
    expect(e.satisfied('s')).toBe(true);
  });
});
