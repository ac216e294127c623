import type { V1Pod } from '@kubernetes/client-node';
import { hostPortsByNode, isPortConflict, pickHostPorts, planHostPorts, roomFitsOnANode, type HostPortDefinition } from './host-ports';
import { seededRandom } from './test-rooms';
import type { SchedulerSpec } from './types';

const twoContainers = (portRange?: { start: number; end: number }): HostPortDefinition => ({
  ...(portRange ? { portRange } : {}),
  spec: {
    containers: [
      { name: 'game', ports: [{ name: 'tcp', port: 7777 }, { name: 'udp', port: 7778 }] },
      { name: 'sidecar' },
      { name: 'metrics', ports: [{ name: 'http', port: 9090 }] },
    ],
  },
});
const range = (start: number, end: number): Set<number> => {
  const s = new Set<number>();
  for (let p = start; p <= end; p++) s.add(p);
  return s;
};

describe('pickHostPorts', () => {
  it('gives every container port a port of the scheduler range, distinct, shaped per container', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const ports = pickHostPorts(twoContainers({ start: 20000, end: 20009 }), new Set(), seededRandom(seed));
      if ('error' in ports) throw new Error(ports.error);
      expect(ports.map((c) => c.length)).toEqual([2, 0, 1]);
      const flat = ports.flat();
      expect(new Set(flat).size).toBe(3);
      for (const p of flat) expect(p >= 20000 && p <= 20009).toBe(true);
    }
  });

  it('treats both ends of a range as usable', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 200; seed++) {
      const ports = pickHostPorts({ portRange: { start: 30000, end: 30002 }, spec: { containers: [{ name: 'c', ports: [{ name: 'p', port: 1 }] }] } }, new Set(), seededRandom(seed));
      if ('error' in ports) throw new Error(ports.error);
      seen.add(ports[0]![0]!);
    }
    expect([...seen].sort()).toEqual([30000, 30001, 30002]);
  });

  it('avoids ports used by other rooms while the range has free ones', () => {
    const used = range(20000, 20006); // 20007, 20008, 20009 are free
    for (let seed = 1; seed <= 50; seed++) {
      const plan = planHostPorts(twoContainers({ start: 20000, end: 20009 }), used, seededRandom(seed));
      if ('error' in plan) throw new Error(plan.error);
      expect(plan.ports.flat().sort()).toEqual([20007, 20008, 20009]);
      expect(plan.exhaustedRanges).toEqual([]);
    }
  });

  it('falls back to a used port, distinct within the pod, once the range is exhausted, and says so', () => {
    const used = range(20000, 20008); // one free port for three container ports
    const plan = planHostPorts(twoContainers({ start: 20000, end: 20009 }), used, seededRandom(7));
    if ('error' in plan) throw new Error(plan.error);
    const flat = plan.ports.flat();
    expect(flat).toContain(20009);
    expect(new Set(flat).size).toBe(3);
    expect(plan.exhaustedRanges).toEqual(['20000-20009']);
  });

  it('draws each port from its own hostPortRange', () => {
    const def: HostPortDefinition = {
      spec: {
        containers: [{
          name: 'game',
          ports: [
            { name: 'tcp', port: 7777, hostPortRange: { start: 40000, end: 40000 } },
            { name: 'udp', port: 7777, hostPortRange: { start: 50000, end: 50001 } },
          ],
        }],
      },
    };
    expect(pickHostPorts(def, new Set([50000]), seededRandom(3))).toEqual([[40000, 50001]]);
  });

  it('copes with a rand that returns 1 or NaN', () => {
    const def = { portRange: { start: 1000, end: 1001 }, spec: { containers: [{ name: 'c', ports: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] }] } };
    expect(pickHostPorts(def, new Set(), () => 1)).toEqual([[1001, 1000]]);
    expect(pickHostPorts(def, new Set(), () => Number.NaN)).toEqual([[1000, 1001]]);
  });

  it('accepts a whole scheduler definition', () => {
    const def: SchedulerSpec = {
      game: 'g',
      maxSurge: 1,
      portRange: { start: 5000, end: 5001 },
      spec: { terminationGracePeriod: '10s', containers: [{ name: 'c', image: 'i', ports: [{ name: 'p', protocol: 'udp', port: 7 }] }] },
    };
    expect(pickHostPorts(def, new Set([5000]), () => 0)).toEqual([[5001]]);
  });

  it('returns no ports for containers without ports, even with no range', () => {
    expect(pickHostPorts({ spec: { containers: [{ name: 'c' }, { name: 'd', ports: [] }] } }, new Set(), seededRandom(1))).toEqual([[], []]);
  });

  const errors: { name: string; def: HostPortDefinition; error: string }[] = [
    { name: 'no range anywhere', def: twoContainers(), error: 'container game port tcp has no host port range (set portRange or hostPortRange)' },
    { name: 'end before start', def: twoContainers({ start: 20010, end: 20000 }), error: 'container game port tcp: host port range 20010-20000 ends before it starts' },
    { name: 'outside the port space', def: twoContainers({ start: 0, end: 10 }), error: 'container game port tcp: host port range 0-10 is outside 1-65535' },
    { name: 'not integers', def: twoContainers({ start: 1.5, end: 10 }), error: 'container game port tcp: host port range 1.5-10 is not made of integers' },
    {
      name: 'too few ports for the pod',
      def: twoContainers({ start: 20000, end: 20001 }),
      error: 'container metrics port http: host port range 20000-20001 has too few ports for this room\'s ports',
    },
  ];
  it.each(errors)('error: $name', ({ def, error }) => {
    expect(pickHostPorts(def, new Set(), seededRandom(1))).toEqual({ error });
  });
});

describe('isPortConflict', () => {
  const pod = (phase: string | undefined, conditions: { type: string; status: string; message?: string }[]): V1Pod => ({ status: { phase, conditions } });
  const freePorts = '0/3 nodes are available: 3 node(s) didn\'t have free ports for the requested pod ports.';
  it.each([
    { name: 'pending, unschedulable for ports', pod: pod('Pending', [{ type: 'PodScheduled', status: 'False', message: freePorts }]), expected: true },
    {
      name: 'pending, unschedulable for cpu',
      pod: pod('Pending', [{ type: 'PodScheduled', status: 'False', message: '0/3 nodes are available: 3 Insufficient cpu.' }]),
      expected: false,
    },
    { name: 'pending, scheduled', pod: pod('Pending', [{ type: 'PodScheduled', status: 'True' }]), expected: false },
    { name: 'running', pod: pod('Running', [{ type: 'PodScheduled', status: 'False', message: freePorts }]), expected: false },
    { name: 'no status', pod: {}, expected: false },
    { name: 'pending with no conditions', pod: pod('Pending', []), expected: false },
  ])('$name -> $expected', ({ pod: p, expected }) => {
    expect(isPortConflict(p)).toBe(expected);
  });
});

describe('whether a new room finds its host ports free on a node', () => {
  const bound = (node: string | undefined, ports: number[], phase = 'Running'): V1Pod => ({
    spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'c', ports: ports.map((p) => ({ containerPort: 7777, hostPort: p })) }] },
    status: { phase },
  });
  const def = (portRange: { start: number; end: number }, ports = 1): HostPortDefinition => ({
    portRange, spec: { containers: [{ name: 'c', ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 7000 + i })) }] },
  });

  it('reads the host ports of the pods bound to each node, not those of pods unbound or ended', () => {
    const taken = hostPortsByNode([bound('a', [1, 2]), bound('a', [3]), bound('b', [1]), bound(undefined, [9]), bound('b', [5], 'Succeeded'), bound('c', [])]);
    expect([...taken.entries()].map(([n, s]) => [n, [...s].sort()])).toEqual([['a', [1, 2, 3]], ['b', [1]]]);
  });

  it.each([
    ['a port of the range free on one node', [new Set([42000, 42001]), new Set([42000])], def({ start: 42000, end: 42001 }), true],
    ['every port of the range taken on every node', [new Set([42000, 42001]), new Set([42001, 42000])], def({ start: 42000, end: 42001 }), false],
    ['no node', [], def({ start: 42000, end: 42001 }), false],
    ['ports outside the range do not count', [new Set([41999, 42002])], def({ start: 42000, end: 42001 }), true],
    ['two ports needed, one free on each node', [new Set([42000]), new Set([42001])], def({ start: 42000, end: 42001 }, 2), false],
    ['two ports needed, two free on a node', [new Set([42000]), new Set<number>()], def({ start: 42000, end: 42001 }, 2), true],
  ])('%s: %s', (_name, takenOnNodes, definition, fits) => {
    expect(roomFitsOnANode(definition, takenOnNodes)).toBe(fits);
  });
});
