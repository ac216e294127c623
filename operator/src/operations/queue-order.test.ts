import type { Operation } from '../../../common/src/generated/resources';
import { compareQueueOrder } from '../../../common/src/operations/queue-order';
import { leaseState, operationsToPrune, pendingQueue } from './queue-order';

function op(name: string, o: { at?: number; priority?: boolean; status?: string; finishedAt?: number; ttl?: number } = {}): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name },
    spec: { schedulerName: 's', definitionName: 'add_rooms', enqueuedAt: new Date(o.at ?? 0).toISOString(), priority: o.priority ?? false },
    status: {
      status: (o.status ?? 'pending') as never,
      ...(o.finishedAt !== undefined ? { finishedAt: new Date(o.finishedAt).toISOString() } : {}),
      ...(o.ttl !== undefined ? { lease: { ttl: new Date(o.ttl).toISOString() } } : {}),
    },
  };
}

describe('queue order', () => {
  test.each([
    ['enqueue order', [op('b', { at: 2 }), op('a', { at: 1 }), op('c', { at: 3 })], ['a', 'b', 'c']],
    ['ties broken by name', [op('y', { at: 1 }), op('x', { at: 1 })], ['x', 'y']],
    ['priority first, in its own enqueue order', [op('n1', { at: 1 }), op('p2', { at: 5, priority: true }), op('p1', { at: 4, priority: true })], ['p1', 'p2', 'n1']],
    ['only pending operations queue', [op('done', { at: 0, status: 'finished' }), op('run', { at: 0, status: 'in_progress' }), op('next', { at: 9 })], ['next']],
  ])('%s', (_name, ops, expected) => {
    expect(pendingQueue(ops).map((o) => o.metadata.name)).toEqual(expected);
  });

  test('the comparison is a total order', () => {
    const a = op('a', { at: 1 });
    expect(compareQueueOrder(a, a)).toBe(0);
  });
});

describe('leases', () => {
  test.each([
    ['valid', op('x', { status: 'in_progress', ttl: 2000 }), 'valid'],
    ['expired', op('x', { status: 'in_progress', ttl: 500 }), 'expired'],
    ['missing', op('x', { status: 'in_progress' }), 'missing'],
  ])('%s', (_n, o, expected) => {
    expect(leaseState(o, 1000)).toBe(expected);
  });
});

describe('retention', () => {
  const day = 86_400_000;
  test('keeps the newest N finished operations and none older than the age limit', () => {
    const now = 10 * day;
    const ops = [
      op('old', { status: 'finished', finishedAt: now - 8 * day }),
      op('f1', { status: 'finished', finishedAt: now - 3 }),
      op('f2', { status: 'error', finishedAt: now - 2 }),
      op('f3', { status: 'canceled', finishedAt: now - 1 }),
      op('pending', { status: 'pending' }),
      op('running', { status: 'in_progress' }),
    ];
    const pruned = operationsToPrune(ops, now, { maxCount: 2, maxAgeMs: 7 * day }).map((o) => o.metadata.name).sort();
    expect(pruned).toEqual(['f1', 'old']);
  });

  test('counts the operator\'s own operations apart from the ones asked for: a rollout\'s many steps never push out the change that started it', () => {
    const now = 10 * day;
    const asked = (name: string, finishedAt: number, source: 'api' | 'kubectl') => ({ ...op(name, { status: 'finished', finishedAt }), spec: { ...op(name).spec, definitionName: 'create_new_scheduler_version', source } });
    const own = (name: string, finishedAt: number) => ({ ...op(name, { status: 'finished', finishedAt }), spec: { ...op(name).spec, source: 'operator' as const } });
    // The switch a version change enqueues is the operator's, but no step: it is kept with the changes.
    const switched = { ...op('switch', { status: 'finished', finishedAt: now - 89 }), spec: { ...op('switch').spec, definitionName: 'switch_active_version', source: 'operator' as const } };
    const ops = [
      asked('create', now - 100, 'api'), asked('change', now - 90, 'kubectl'), switched, asked('older-change', now - 95, 'api'),
      ...Array.from({ length: 5 }, (_, i) => own(`step-${i}`, now - 50 + i)),
    ];
    const pruned = operationsToPrune(ops, now, { maxCount: 3, maxAgeMs: 7 * day }).map((o) => o.metadata.name).sort();
    expect(pruned).toEqual(['create', 'step-0', 'step-1']);
  });
});
