import type { V1Node } from '@kubernetes/client-node';
import { canTakeRooms, nodeAvailabilityChanged } from './node-availability';

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
