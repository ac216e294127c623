import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Operation, PingDigest, Scheduler, SchedulerVersion } from '../../common/src/generated/resources';
import { keysFor, type Enqueue, type WatchEvent } from './controller-watches';

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

/** Two room pods on node-a, none anywhere else. */
const onNodeA: k8s.V1Pod[] = [{ metadata: { name: 'r1', namespace: 's1' } }, { metadata: { name: 'r2', namespace: 's2' } }];
const event: WatchEvent<never> = { lookups: { podsOnNode: (name) => (name === 'node-a' ? onNodeA : []) } };
const node = (name: string, externalIP?: string, heartbeat = '2026-01-01T00:00:00Z', ready: 'True' | 'False' = 'True'): k8s.V1Node => ({
  metadata: { name },
  status: {
    addresses: [{ type: 'InternalIP', address: '10.240.0.10' }, ...(externalIP ? [{ type: 'ExternalIP', address: externalIP }] : [])],
    conditions: [{ type: 'Ready', status: ready, lastHeartbeatTime: new Date(heartbeat) }],
  },
});
/** Three room pods on node-c, two of them scheduler s1's. */
const onNodeC: k8s.V1Pod[] = [{ metadata: { name: 'r1', namespace: 's1' } }, { metadata: { name: 'r3', namespace: 's1' } }, { metadata: { name: 'r2', namespace: 's2' } }];
const nodeCEvent = (before?: k8s.V1Node): WatchEvent<k8s.V1Node> => ({ lookups: { podsOnNode: (name) => (name === 'node-c' ? onNodeC : []) }, before });
const nodeEvent = (before?: k8s.V1Node): WatchEvent<k8s.V1Node> => ({ ...event, before });

const now = (queue: Enqueue['queue'], key = 's1'): Enqueue => ({ queue, key, debounced: false });
const later = (queue: Enqueue['queue'], key = 's1'): Enqueue => ({ queue, key, debounced: true });

describe('what each controller watches (the keys an event enqueues)', () => {
  test.each<[string, Enqueue[], Enqueue[]]>([
    ['a scheduler changed: its status, its queue, a debounced health check', keysFor('schedulers', 'update', scheduler, event), [now('schedulers'), now('operations'), later('health')]],
    ['an operation changed: its scheduler\'s status and queue, a debounced health check', keysFor('operations', 'update', operation('in_progress'), event), [now('schedulers'), now('operations'), later('health')]],
    ['an operation ended: the health check at once', keysFor('operations', 'update', operation('finished'), event), [now('schedulers'), now('operations'), now('health')]],
    ['an operation deleted: the health check after the debounce', keysFor('operations', 'delete', operation('finished'), event), [now('schedulers'), now('operations'), later('health')]],
    ['a room changed: its status, then its scheduler\'s status and health check after the debounce', keysFor('gamerooms', 'update', room, event), [later('schedulers'), now('gamerooms', 's1/r1'), later('health')]],
    ['a room deleted: not reconciled itself', keysFor('gamerooms', 'delete', room, event), [later('schedulers'), later('health')]],
    ['a room\'s pod changed: the room', keysFor('pods', 'update', pod, event), [now('gamerooms', 's1/r1')]],
    ['pings arrived: a debounced health check', keysFor('pingdigests', 'update', digest, event), [later('health')]],
    ['a scheduler\'s namespace changed: its scheduler and a debounced health check', keysFor('namespaces', 'delete', namespace({ 'roomkeeper.io/scheduler': 's1' }), event), [now('schedulers'), later('health')]],
    ['a namespace that is no scheduler\'s: nothing', keysFor('namespaces', 'update', namespace(), event), []],
    ['a version changed (its active flag): its scheduler, and a debounced health check', keysFor('schedulerversions', 'update', version, event), [now('schedulers'), later('health')]],
    ['a Ready node added: the rooms on it, a debounced health check of their schedulers', keysFor('nodes', 'add', node('node-a', '127.0.0.2'), event), [now('gamerooms', 's1/r1'), now('gamerooms', 's2/r2'), later('health', 's1'), later('health', 's2')]],
    ['a node\'s ExternalIP changed: the rooms on it', keysFor('nodes', 'update', node('node-a', '127.0.0.9'), nodeEvent(node('node-a', '127.0.0.2'))), [now('gamerooms', 's1/r1'), now('gamerooms', 's2/r2')]],
    ['a node\'s heartbeat, its address unchanged: nothing', keysFor('nodes', 'update', node('node-a', '127.0.0.2', '2026-01-01T00:00:20Z'), nodeEvent(node('node-a', '127.0.0.2'))), []],
    ['a Ready node deleted: a debounced health check of the schedulers with rooms on it (its pods tell their rooms)', keysFor('nodes', 'delete', node('node-a', '127.0.0.2'), event), [later('health', 's1'), later('health', 's2')]],
    ['a NotReady node deleted: nothing (which nodes can take rooms did not change)', keysFor('nodes', 'delete', node('node-a', '127.0.0.2', undefined, 'False'), event), []],
    ['a node turned NotReady: one debounced health check per scheduler with rooms on it', keysFor('nodes', 'update', node('node-c', '127.0.0.2', '2026-01-01T00:00:10Z', 'False'), nodeCEvent(node('node-c', '127.0.0.2'))), [later('health', 's1'), later('health', 's2')]],
    ['a node Ready again: the same', keysFor('nodes', 'update', node('node-c', '127.0.0.2'), nodeCEvent(node('node-c', '127.0.0.2', undefined, 'False'))), [later('health', 's1'), later('health', 's2')]],
    ['a NotReady node\'s heartbeat: nothing', keysFor('nodes', 'update', node('node-c', '127.0.0.2', '2026-01-01T00:00:10Z', 'False'), nodeCEvent(node('node-c', '127.0.0.2', undefined, 'False'))), []],
    ['a node without rooms turned NotReady: nothing', keysFor('nodes', 'update', node('node-b', '127.0.0.3', undefined, 'False'), nodeEvent(node('node-b', '127.0.0.3'))), []],
    ['a node without rooms got its ExternalIP: nothing', keysFor('nodes', 'update', node('node-b', '127.0.0.3'), nodeEvent(node('node-b'))), []],
  ])('%s', (_name, got, expected) => {
    expect(got).toEqual(expected);
  });
});
