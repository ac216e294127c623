import type { Operation, Scheduler } from '../generated/resources';
import { ofEarlierScheduler } from './queue-order';

const scheduler = (deleting = false): Scheduler => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
  metadata: { name: 'game', creationTimestamp: '2026-12-05T12:00:10Z' as unknown as Date, ...(deleting ? { deletionTimestamp: '2026-12-05T12:01:00Z' as unknown as Date } : {}) },
  spec: {} as Scheduler['spec'],
});

const op = (definitionName: string, status: string, created: string): Operation => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'Operation',
  metadata: { name: `${definitionName}-${status}`, creationTimestamp: created as unknown as Date },
  spec: { schedulerName: 'game', definitionName, enqueuedAt: created },
  status: { status } as Operation['status'],
});

describe('ofEarlierScheduler', () => {
  test.each([
    ['a final operation created in an earlier second', op('add_rooms', 'finished', '2026-12-05T12:00:09Z'), scheduler(), true],
    ['a final operation created in the same second (not judged by time)', op('add_rooms', 'error', '2026-12-05T12:00:10Z'), scheduler(), false],
    ['a pending operation created earlier (it is still to run)', op('add_rooms', 'pending', '2026-12-05T12:00:09Z'), scheduler(), false],
    ['the finished delete_scheduler of the same second', op('delete_scheduler', 'finished', '2026-12-05T12:00:10Z'), scheduler(), true],
    ['a canceled delete_scheduler of the same second', op('delete_scheduler', 'canceled', '2026-12-05T12:00:10Z'), scheduler(), false],
    ['a finished delete_scheduler while this scheduler is being deleted', op('delete_scheduler', 'finished', '2026-12-05T12:00:30Z'), scheduler(true), false],
    ['an operation created after the scheduler', op('remove_rooms', 'finished', '2026-12-05T12:00:11Z'), scheduler(), false],
  ])('%s', (_what, operation, s, expected) => {
    expect(ofEarlierScheduler(operation, s)).toBe(expected);
  });
});
