import type { V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';
import { fitPod, nodeCandidate, sameCandidate, unschedulableMessage, type NodeCandidate, type NodeLoad } from './node-fit';
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

  const trial: V1Taint = { key: 'trial-g', value: 'down', effect: 'NoExecute' };
  const dedicated: V1Taint = { key: 'dedicated', value: 'games', effect: 'NoSchedule' };
  it.each<[string, V1Taint, V1Toleration[], boolean]>([
    ['no toleration, NoExecute', trial, [], false],
    ['no toleration, NoSchedule', dedicated, [], false],
    ['Equal, value and effect', trial, [{ key: 'trial-g', operator: 'Equal', value: 'down', effect: 'NoExecute' }], true],
    ['operator left out (Equal)', dedicated, [{ key: 'dedicated', value: 'games', effect: 'NoSchedule' }], true],
    ['Equal, other value', trial, [{ key: 'trial-g', operator: 'Equal', value: 'up', effect: 'NoExecute' }], false],
    ['Equal, no value, taint with a value', trial, [{ key: 'trial-g', operator: 'Equal', effect: 'NoExecute' }], false],
    ['Equal, no effect (every effect)', trial, [{ key: 'trial-g', operator: 'Equal', value: 'down' }], true],
    ['Exists, no effect', trial, [{ key: 'trial-g', operator: 'Exists' }], true],
    ['Exists, other effect', trial, [{ key: 'trial-g', operator: 'Exists', effect: 'NoSchedule' }], false],
    ['Exists, other key', trial, [{ key: 'dedicated', operator: 'Exists' }], false],
    ['Exists, no key (every taint)', dedicated, [{ operator: 'Exists' }], true],
    ['Exists, no key, other effect', dedicated, [{ operator: 'Exists', effect: 'NoExecute' }], false],
    ['an operator Kubernetes does not know', dedicated, [{ key: 'dedicated', operator: 'In', value: 'games' }], false],
    ['one of several tolerations', trial, [{ key: 'dedicated', operator: 'Exists' }, { key: 'trial-g', operator: 'Exists', effect: 'NoExecute' }], true],
  ])('taint vs tolerations: %s', (_name, taint, tolerations, fits) => {
    const result = fitPod(pod({ tolerations }), [], [node('a', { taints: [taint] })], loads({}));
    expect(result).toEqual(fits ? { node: 'a' } : { message: `0/1 nodes are available: 1 node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}.` });
  });

  it('needs every NoSchedule/NoExecute taint of a node tolerated; PreferNoSchedule never rejects', () => {
    const both = [node('a', { taints: [dedicated, trial, { key: 'soft', effect: 'PreferNoSchedule' }] })];
    expect(fitPod(pod({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), [], both, loads({}))).toEqual({
      message: '0/1 nodes are available: 1 node(s) had untolerated taint {trial-g: down}.',
    });
    expect(fitPod(pod({ tolerations: [{ key: 'dedicated', operator: 'Exists' }, { key: 'trial-g', operator: 'Exists' }] }), [], both, loads({}))).toEqual({ node: 'a' });
  });

  it('rejects a cordoned node whatever the pod tolerates', () => {
    expect(fitPod(pod({ tolerations: [{ operator: 'Exists' }] }), [], [node('a', { unschedulable: true })], loads({}))).toEqual({
      message: '0/1 nodes are available: 1 node(s) were unschedulable.',
    });
  });

  it('says so when there are no nodes', () => {
    expect(unschedulableMessage(0, new Map())).toBe('0/0 nodes are available.');
  });
});

describe('nodeCandidate', () => {
  it('reads labels, taints and the cordon from the Node as it is', () => {
    const candidate = nodeCandidate({
      metadata: { name: 'n', labels: { zone: 'x' } },
      spec: { unschedulable: true, taints: [{ key: 'trial-g', value: 'down', effect: 'NoExecute', timeAdded: new Date(0) }, { key: 'k', effect: 'NoSchedule' }] },
    }, 7);
    expect(candidate).toEqual({
      name: 'n', labels: { zone: 'x' }, unschedulable: true, podCapacity: 7,
      taints: [{ key: 'trial-g', value: 'down', effect: 'NoExecute' }, { key: 'k', effect: 'NoSchedule' }],
    });
    expect(nodeCandidate({ metadata: { name: 'n' } }, 7)).toEqual({ name: 'n', labels: {}, taints: [], unschedulable: false, podCapacity: 7 });
  });

  it('tells a change that matters to scheduling from one that does not', () => {
    const a = nodeCandidate({ metadata: { name: 'n', resourceVersion: '1' }, spec: {} }, 7);
    expect(sameCandidate(a, nodeCandidate({ metadata: { name: 'n', resourceVersion: '2' }, spec: {} }, 7))).toBe(true);
    expect(sameCandidate(a, nodeCandidate({ metadata: { name: 'n' }, spec: { unschedulable: true } }, 7))).toBe(false);
    expect(sameCandidate(a, nodeCandidate({ metadata: { name: 'n' }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }, 7))).toBe(false);
    expect(sameCandidate(a, undefined)).toBe(false);
    expect(sameCandidate(undefined, undefined)).toBe(true);
  });
});
