import type * as k8s from '@kubernetes/client-node';
import { nodeBody, simNodeSpec } from '../../../sandbox/src/kubelet/sim-node';
import { slimNode } from './slim-node';

/** A Node as a real kubelet reports it: the simulated kubelet's, with the images a real one lists. */
function fullNode(heartbeat = '2026-01-01T00:00:00Z'): k8s.V1Node {
  const body = nodeBody(simNodeSpec(3, 110), heartbeat);
  return {
    ...body,
    metadata: { ...body.metadata, uid: 'uid-3', resourceVersion: '42', creationTimestamp: new Date('2026-01-01T00:00:00Z'), annotations: { 'node.alpha.kubernetes.io/ttl': '0' }, managedFields: [{ manager: 'kubelet' }] },
    spec: { podCIDR: '10.203.0.0/24', providerID: 'sim://3', taints: [{ key: 'k', effect: 'NoSchedule' }], unschedulable: true },
    status: {
      ...body.status,
      images: Array.from({ length: 40 }, (_, i) => ({ names: [`registry.example/game-${i}@sha256:${'0'.repeat(64)}`, `registry.example/game-${i}:v${i}`], sizeBytes: 100_000_000 + i })),
    },
  } as unknown as k8s.V1Node;
}

describe('slimNode: what the operator\'s nodes cache keeps of a Node', () => {
  const full = fullNode();
  const slim = slimNode(full);

  test('keeps its identity, cordon, addresses and conditions\' type and status; nothing else', () => {
    expect(slim).toEqual({
      metadata: { name: 'roomkeeper-sim-node-3', uid: 'uid-3', resourceVersion: '42', creationTimestamp: new Date('2026-01-01T00:00:00Z'), deletionTimestamp: undefined },
      spec: { unschedulable: true },
      status: {
        addresses: [{ type: 'InternalIP', address: '10.240.0.13' }, { type: 'ExternalIP', address: '127.0.0.5' }, { type: 'Hostname', address: 'roomkeeper-sim-node-3' }],
        conditions: [
          { type: 'MemoryPressure', status: 'False' }, { type: 'DiskPressure', status: 'False' }, { type: 'PIDPressure', status: 'False' }, { type: 'Ready', status: 'True' },
        ],
      },
    });
  });

  test('is a small part of the whole Node (images, capacity, nodeInfo and heartbeat times dropped)', () => {
    expect(JSON.stringify(slim).length * 10).toBeLessThan(JSON.stringify(full).length);
  });

  test('is the same after a heartbeat: only the conditions\' times moved', () => {
    const later = fullNode('2026-01-01T00:00:10Z');
    expect(JSON.stringify(later)).not.toBe(JSON.stringify(full));
    expect(slimNode(later)).toEqual(slim);
  });
});
