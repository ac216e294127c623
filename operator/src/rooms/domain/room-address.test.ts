import type { V1Node, V1NodeAddress, V1Pod } from '@kubernetes/client-node';
import { hostOf, nodeAddressMoved } from './room-address';

const node = (addresses: V1NodeAddress[], heartbeat = '2026-01-01T00:00:00Z', unschedulable = false): V1Node => ({
  metadata: { name: 'node-a', resourceVersion: heartbeat },
  spec: { unschedulable },
  status: { addresses, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(heartbeat) }] },
});
const internal = { type: 'InternalIP', address: '10.240.0.10' };
const external = (address: string) => ({ type: 'ExternalIP', address });
const pod: V1Pod = { metadata: { name: 'r1', namespace: 's' }, spec: { nodeName: 'node-a', containers: [] }, status: { hostIP: '10.240.0.10' } };

describe('hostOf: a room\'s address', () => {
  test.each<[string, V1Node | undefined, string]>([
    ['ExternalDNS first', node([internal, external('127.0.0.2'), { type: 'ExternalDNS', address: 'a.example' }]), 'a.example'],
    ['then ExternalIP', node([internal, { type: 'InternalDNS', address: 'a.internal' }, external('127.0.0.2')]), '127.0.0.2'],
    ['then InternalDNS', node([internal, { type: 'InternalDNS', address: 'a.internal' }]), 'a.internal'],
    ['then InternalIP', node([{ type: 'Hostname', address: 'node-a' }, internal]), '10.240.0.10'],
    ['a node with none of them: the pod\'s hostIP', node([{ type: 'Hostname', address: 'node-a' }]), '10.240.0.10'],
    ['a node the cache does not show: the pod\'s hostIP', undefined, '10.240.0.10'],
  ])('%s', (_name, n, want) => {
    expect(hostOf(pod, n)).toBe(want);
  });
});

describe('nodeAddressMoved: which Node events bring back the rooms on the node', () => {
  test.each<[string, 'add' | 'update' | 'delete', V1Node, V1Node | undefined, boolean]>([
    ['added with an address (the rooms had their pods\' hostIPs)', 'add', node([internal, external('127.0.0.2')]), undefined, true],
    ['added with no address a room takes: nothing moves', 'add', node([{ type: 'Hostname', address: 'node-a' }]), undefined, false],
    ['its ExternalIP came later', 'update', node([internal, external('127.0.0.2')]), node([internal]), true],
    ['its ExternalIP replaced', 'update', node([internal, external('127.0.0.9')]), node([internal, external('127.0.0.2')]), true],
    ['its ExternalIP gone: InternalIP now', 'update', node([internal]), node([internal, external('127.0.0.2')]), true],
    ['a heartbeat: conditions only', 'update', node([internal, external('127.0.0.2')], '2026-01-01T00:00:20Z'), node([internal, external('127.0.0.2')]), false],
    ['cordoned: not an address', 'update', node([internal, external('127.0.0.2')], undefined, true), node([internal, external('127.0.0.2')]), false],
    ['the addresses reordered, the same one first', 'update', node([external('127.0.0.2'), internal]), node([internal, external('127.0.0.2')]), false],
    ['an address rooms do not take changed (InternalIP under an ExternalIP)', 'update', node([{ type: 'InternalIP', address: '10.240.0.99' }, external('127.0.0.2')]), node([internal, external('127.0.0.2')]), false],
    ['deleted: its pods go with it', 'delete', node([internal, external('127.0.0.2')]), undefined, false],
  ])('%s', (_name, type, n, before, want) => {
    expect(nodeAddressMoved(type, n, before)).toBe(want);
  });
});
