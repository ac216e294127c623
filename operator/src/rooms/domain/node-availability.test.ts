import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { slimNode } from '../../../../common/src/kube/slim-node';
import { canTakeRooms, nodeAvailabilityChanged } from './node-availability';
import { hostOf, nodeAddressMoved } from './room-address';

/** A node as its kubelet reports it; `heartbeat` moves the conditions' times only (as every ~10 s). */
const node = (ready: 'True' | 'False' | 'Unknown' | undefined, opts: { heartbeat?: string; unschedulable?: boolean; pressure?: 'True' | 'False' } = {}): V1Node => {
  const at = new Date(opts.heartbeat ?? '2026-01-01T00:00:00Z');
  return {
    metadata: { name: 'node-a', resourceVersion: at.toISOString() },
    spec: { unschedulable: opts.unschedulable },
    status: {
      conditions: [
        { type: 'MemoryPressure', status: opts.pressure ?? 'False', lastHeartbeatTime: at, lastTransitionTime: new Date('2026-01-01T00:00:00Z') },
        ...(ready ? [{ type: 'Ready', status: ready, lastHeartbeatTime: at, lastTransitionTime: new Date('2026-01-01T00:00:00Z') }] : []),
      ],
    },
  };
};

describe('canTakeRooms: the nodes the health check\'s fingerprint counts', () => {
  test.each<[string, V1Node | undefined, boolean]>([
    ['Ready', node('True'), true],
    ['NotReady', node('False'), false],
    ['Ready Unknown (its kubelet stopped posting)', node('Unknown'), false],
    ['no Ready condition yet', node(undefined), false],
    ['Ready but cordoned', node('True', { unschedulable: true }), false],
    ['a node the cache does not show', undefined, false],
  ])('%s', (_name, n, want) => {
    expect(canTakeRooms(n)).toBe(want);
  });
});

describe('nodeAvailabilityChanged: which Node events change the fingerprint', () => {
  const ready = node('True');
  test.each<[string, 'add' | 'update' | 'delete', V1Node, V1Node | undefined, boolean]>([
    ['a heartbeat of a Ready node', 'update', node('True', { heartbeat: '2026-01-01T00:00:10Z' }), ready, false],
    ['a heartbeat of a NotReady node', 'update', node('False', { heartbeat: '2026-01-01T00:00:10Z' }), node('False'), false],
    ['another condition changed (memory pressure), still Ready', 'update', node('True', { pressure: 'True' }), ready, false],
    ['turned NotReady', 'update', node('False', { heartbeat: '2026-01-01T00:00:10Z' }), ready, true],
    ['turned Unknown (node lifecycle controller: heartbeats stopped)', 'update', node('Unknown'), ready, true],
    ['Ready again', 'update', ready, node('False'), true],
    ['NotReady to Unknown: could take none before or after', 'update', node('Unknown'), node('False'), false],
    ['cordoned', 'update', node('True', { unschedulable: true }), ready, true],
    ['uncordoned', 'update', ready, node('True', { unschedulable: true }), true],
    ['a Ready node added', 'add', ready, undefined, true],
    ['a node added before it is Ready', 'add', node(undefined), undefined, false],
    ['a Ready node deleted', 'delete', ready, undefined, true],
    ['a NotReady node deleted', 'delete', node('False'), undefined, false],
  ])('%s', (_name, type, n, before, want) => {
    expect(nodeAvailabilityChanged(type, n, before)).toBe(want);
  });
});

describe('the operator\'s Node readers on the slim Node its cache keeps (common/src/kube/slim-node.ts)', () => {
  const pod: V1Pod = { metadata: { name: 'r1', namespace: 's' }, spec: { nodeName: 'node-a', containers: [] }, status: { hostIP: '10.240.0.10' } };
  const full = (ready: 'True' | 'False', externalIP: string, unschedulable = false): V1Node => ({
    metadata: { name: 'node-a', uid: 'u', resourceVersion: '7', labels: { 'kubernetes.io/hostname': 'node-a' } },
    spec: { unschedulable, podCIDR: '10.200.0.0/24', taints: [{ key: 'k', effect: 'NoSchedule' }] },
    status: {
      addresses: [{ type: 'InternalIP', address: '10.240.0.10' }, { type: 'ExternalIP', address: externalIP }],
      conditions: [{ type: 'Ready', status: ready, reason: 'KubeletReady', lastHeartbeatTime: new Date('2026-01-01T00:00:00Z') }],
      images: [{ names: ['registry.example/game:v1'], sizeBytes: 100_000_000 }],
      capacity: { pods: '110' },
    },
  });
  const nodes = [full('True', '127.0.0.2'), full('False', '127.0.0.2'), full('True', '127.0.0.3'), full('True', '127.0.0.2', true)];

  test('answer as on the whole Node: a room\'s address, which nodes can take rooms, which events matter', () => {
    for (const n of nodes) {
      expect(hostOf(pod, slimNode(n))).toBe(hostOf(pod, n));
      expect(canTakeRooms(slimNode(n))).toBe(canTakeRooms(n));
      for (const before of nodes) {
        expect(nodeAvailabilityChanged('update', slimNode(n), slimNode(before))).toBe(nodeAvailabilityChanged('update', n, before));
        expect(nodeAddressMoved('update', slimNode(n), slimNode(before))).toBe(nodeAddressMoved('update', n, before));
      }
    }
  });
});
