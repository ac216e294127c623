import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Operation, PingDigest, Scheduler, SchedulerVersion } from '../../common/src/generated/resources';
import { keysFor, type Enqueue } from './controller-watches';

const scheduler: Scheduler = { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 's1' }, spec: {} as Scheduler['spec'] };
const operation = (status?: 'finished' | 'in_progress'): Operation => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'op-1' },
  spec: { schedulerName: 's1', definitionName: 'add_rooms', enqueuedAt: '2026-01-01T00:00:00.000Z' },
  ...(status ? { status: { status } } : {}),
});
const room = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's1' }, spec: { scheduler: 's1', version: 'v1.0.0' } } as GameRoom;
const pod: k8s.V1Pod = { metadata: { name: 'r1', namespace: 's1' } };
const digest: PingDigest = { apiVersion: 'roomkeeper.io/v1', kind: 'PingDigest', metadata: { name: 'd', namespace: 's1' }, spec: {} as PingDigest['spec'] };
const namespace = (labels?: Record<string, string>): k8s.V1Namespace => ({ metadata: { name: 's1', ...(labels ? { labels } : {}) } });
const version: SchedulerVersion = {
  apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 's1-v1.0.0' },
  spec: { scheduler: 's1', version: 'v1.0.0', kind: 'initial', definition: {} as SchedulerVersion['spec']['definition'] },
};

const now = (queue: Enqueue['queue'], key = 's1'): Enqueue => ({ queue, key, debounced: false });
const later = (queue: Enqueue['queue'], key = 's1'): Enqueue => ({ queue, key, debounced: true });

describe('what each controller watches (the keys an event enqueues)', () => {
  test.each<[string, Enqueue[], Enqueue[]]>([
    ['a scheduler changed: its status, its queue, a debounced health check', keysFor('schedulers', 'update', scheduler), [now('schedulers'), now('operations'), later('health')]],
    ['an operation changed: its scheduler\'s status and queue, a debounced health check', keysFor('operations', 'update', operation('in_progress')), [now('schedulers'), now('operations'), later('health')]],
    ['an operation ended: the health check at once', keysFor('operations', 'update', operation('finished')), [now('schedulers'), now('operations'), now('health')]],
    ['an operation deleted: the health check after the debounce', keysFor('operations', 'delete', operation('finished')), [now('schedulers'), now('operations'), later('health')]],
    ['a room changed: its status, then its scheduler\'s status and health check after the debounce', keysFor('gamerooms', 'update', room), [later('schedulers'), now('gamerooms', 's1/r1'), later('health')]],
    ['a room deleted: not reconciled itself', keysFor('gamerooms', 'delete', room), [later('schedulers'), later('health')]],
    ['a room\'s pod changed: the room', keysFor('pods', 'update', pod), [now('gamerooms', 's1/r1')]],
    ['pings arrived: a debounced health check', keysFor('pingdigests', 'update', digest), [later('health')]],
    ['a scheduler\'s namespace changed: its scheduler and a debounced health check', keysFor('namespaces', 'delete', namespace({ 'roomkeeper.io/scheduler': 's1' })), [now('schedulers'), later('health')]],
    ['a namespace that is no scheduler\'s: nothing', keysFor('namespaces', 'update', namespace()), []],
    ['a version changed: its scheduler', keysFor('schedulerversions', 'delete', version), [now('schedulers')]],
  ])('%s', (_name, got, expected) => {
    expect(got).toEqual(expected);
  });
});
