import type { V1Pod } from '@kubernetes/client-node';
import { fitPod, unschedulableMessage, type NodeCandidate, type NodeLoad } from './node-fit';
import { hostPortsOf } from './pod-fields';

function node(name: string, extra: Partial<NodeCandidate> = {}): NodeCandidate {
  return { name, labels: { 'kubernetes.io/hostname': name }, taints: [], unschedulable: false, podCapacity: 10, ...extra };
}

function pod(spec: Partial<NonNullable<V1Pod['spec']>> = {}, hostPort?: number): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'ns' },
    spec: { containers: [{ name: 'c', ...(hostPort ? { ports: [{ containerPort: 7777, hostPort, protocol: 'UDP' }] } : {}) }], ...spec },
  };
}

const idle: NodeLoad = { podCount: 0, usedPorts: new Set() };

function loads(map: Record<string, NodeLoad>) {
  return (name: string) => map[name] ?? idle;
}

describe('fitPod', () => {
  it('picks the least loaded node, then the first by name', () => {
    const nodes = [node('a'), node('b'), node('c')];
    expect(fitPod(pod(), [], nodes, loads({ a: { podCount: 2, usedPorts: new Set() }, b: { podCount: 1, usedPorts: new Set() } }))).toEqual({ node: 'c' });
    expect(fitPod(pod(), [], nodes, loads({}))).toEqual({ node: 'a' });
  });

  it('skips nodes whose host port is taken for the same protocol', () => {
    const p = pod({}, 30000);
    const ports = hostPortsOf(p);
    expect(ports).toEqual(['UDP/30000']);
    const nodes = [node('a'), node('b')];
    expect(fitPod(p, ports, nodes, loads({ a: { podCount: 0, usedPorts: new Set(['UDP/30000']) } }))).toEqual({ node: 'b' });
    expect(fitPod(p, ports, nodes, loads({ a: { podCount: 5, usedPorts: new Set(['TCP/30000']) } }))).toEqual({ node: 'b' });
  });

  it('explains why no node fits, as kube-scheduler does', () => {
    const p = pod({}, 30000);
    const taken: NodeLoad = { podCount: 1, usedPorts: new Set(['UDP/30000']) };
    const nodes = [node('a'), node('b'), node('c', { podCapacity: 1 })];
    expect(fitPod(p, hostPortsOf(p), nodes, loads({ a: taken, b: taken, c: taken }))).toEqual({
      message: "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't have free ports for the requested pod ports.",
    });
    expect(fitPod(p, hostPortsOf(p), [node('a')], loads({ a: taken }))).toEqual({
      message: "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.",
    });
  });

  it('honours nodeSelector and required node affinity', () => {
    const nodes = [node('a', { labels: { zone: 'x' } }), node('b', { labels: { zone: 'y' } })];
    expect(fitPod(pod({ nodeSelector: { zone: 'y' } }), [], nodes, loads({}))).toEqual({ node: 'b' });
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['x'] }] }] } } };
    expect(fitPod(pod({ affinity }), [], nodes, loads({}))).toEqual({ node: 'b' });
    expect(fitPod(pod({ nodeSelector: { zone: 'z' } }), [], nodes, loads({}))).toEqual({
      message: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    });
  });

  it('honours taints, tolerations and unschedulable nodes', () => {
    const nodes = [node('a', { taints: [{ key: 'dedicated', value: 'games', effect: 'NoSchedule' }] }), node('b', { unschedulable: true })];
    expect(fitPod(pod(), [], nodes, loads({}))).toEqual({
      message: '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: games}, 1 node(s) were unschedulable.',
    });
    expect(fitPod(pod({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'games', effect: 'NoSchedule' }] }), [], nodes, loads({}))).toEqual({ node: 'a' });
    expect(fitPod(pod({ tolerations: [{ operator: 'Exists' }] }), [], nodes, loads({}))).toEqual({ node: 'a' });
    const soft = [node('a', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] })];
    expect(fitPod(pod(), [], soft, loads({}))).toEqual({ node: 'a' });
  });

  it('says so when there are no nodes', () => {
    expect(unschedulableMessage(0, new Map())).toBe('0/0 nodes are available.');
  });
});
