import type { SchedulerSpec } from '../generated/resources';
import { changedFields, classifyChange, describeChange, unusedRoomsReplicas } from './scheduler-change';

function definition(): SchedulerSpec {
  return {
    game: 'g',
    maxSurge: '10%',
    roomsReplicas: 2,
    portRange: { start: 1000, end: 2000 },
    forwarders: [{ name: 'f', enable: true, type: 'gRPC', address: 'a:1', options: { timeout: 1000 } }],
    autoscaling: { enabled: true, min: 1, max: 10, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } },
    annotations: { a: 'b' },
    labels: { l: 'v' },
    spec: {
      terminationGracePeriod: '100s',
      containers: [{ name: 'c', image: 'i:1', ports: [{ name: 'p', protocol: 'tcp', port: 80 }], environment: [{ name: 'E', value: 'x' }] }],
      toleration: 't',
      affinity: 'a',
    },
  };
}

type Change = (d: SchedulerSpec) => void;

describe('classifyChange', () => {
  const cases: Array<[string, Change, 'major' | 'minor' | 'none']> = [
    ['nothing', () => undefined, 'none'],
    ['key order only', (d) => { d.spec = { affinity: 'a', toleration: 't', containers: d.spec.containers, terminationGracePeriod: '100s' }; }, 'none'],
    ['empty command list vs absent', (d) => { d.spec.containers[0]!.command = []; }, 'none'],
    ['empty forwarder options vs absent', (d) => { d.forwarders![0]!.options!.metadata = {}; }, 'none'],
    ['protocol case', (d) => { d.spec.containers[0]!.ports![0]!.protocol = 'TCP'; }, 'none'],
    ['explicit default downThreshold', (d) => { d.autoscaling!.policy.parameters!.roomOccupancy!.downThreshold = 0.99; }, 'none'],
    ['timeout as a numeric string', (d) => { d.forwarders![0]!.options!.timeout = '1000'; }, 'none'],
    ['a timeout as long as the default one', (d) => { d.forwarders![0]!.options!.timeout = 999.5; }, 'none'],
    ['a timeout other than the default', (d) => { d.forwarders![0]!.options!.timeout = '1500'; }, 'minor'],
    ['maxSurge', (d) => { d.maxSurge = 3; }, 'minor'],
    ['roomsReplicas', (d) => { d.roomsReplicas = 5; }, 'minor'],
    ['autoscaling', (d) => { d.autoscaling!.max = 20; }, 'minor'],
    ['forwarders (the spec wins over Maestro)', (d) => { d.forwarders![0]!.address = 'b:2'; }, 'minor'],
    ['forwarders removed', (d) => { delete d.forwarders; }, 'minor'],
    ['game', (d) => { d.game = 'other'; }, 'minor'],
    ['matchAllocation (as Maestro)', (d) => { d.matchAllocation = { maxMatches: 3 }; }, 'minor'],
    ['matchAllocation {} (the API server fills in maxMatches 1) vs absent', (d) => { d.matchAllocation = {}; }, 'none'],
    ['matchAllocation at its default vs absent', (d) => { d.matchAllocation = { maxMatches: 1 }; }, 'none'],
    ['allocation {} vs absent', (d) => { d.allocation = {}; }, 'none'],
    ['allocation TTL cap at its default vs absent', (d) => { d.allocation = { maxTtlSeconds: 300 }; }, 'none'],
    ['allocation TTL cap', (d) => { d.allocation = { maxTtlSeconds: 60 }; }, 'minor'],
    ['maxSurge and roomsReplicas together', (d) => { d.maxSurge = 3; d.roomsReplicas = 1; }, 'minor'],
    ['image', (d) => { d.spec.containers[0]!.image = 'i:2'; }, 'major'],
    ['terminationGracePeriod', (d) => { d.spec.terminationGracePeriod = '50s'; }, 'major'],
    ['environment', (d) => { d.spec.containers[0]!.environment![0]!.value = 'y'; }, 'major'],
    ['toleration', (d) => { d.spec.toleration = 'u'; }, 'major'],
    ['portRange', (d) => { d.portRange = { start: 1000, end: 3000 }; }, 'major'],
    ['annotations', (d) => { d.annotations = { a: 'c' }; }, 'major'],
    ['labels (they go on pods)', (d) => { d.labels = {}; }, 'major'],
    ['a minor and a major field', (d) => { d.maxSurge = 3; d.spec.affinity = 'b'; }, 'major'],
  ];
  it.each(cases)('%s', (_name, change, expected) => {
    const next = definition();
    change(next);
    expect(classifyChange(definition(), next)).toBe(expected);
  });

  it('takes a forwarder created without options, POSTed back with the options GET shows (the timeout that applies), as no change', () => {
    const created = definition();
    delete created.forwarders![0]!.options;
    const shown = definition();
    shown.forwarders![0]!.options = { timeout: '1000', metadata: {} };
    expect(classifyChange(created, shown)).toBe('none');
    expect(classifyChange(shown, created)).toBe('none');
    shown.forwarders![0]!.options.timeout = '2000';
    expect(classifyChange(created, shown)).toBe('minor');
  });

  it('treats absent, empty and null maps alike', () => {
    const a = definition();
    delete a.annotations;
    const b = definition();
    b.annotations = {};
    expect(classifyChange(a, b)).toBe('none');
    expect(classifyChange(b, { ...a, annotations: null as unknown as Record<string, string> })).toBe('none');
  });

  it('reports which fields changed', () => {
    const next = definition();
    next.maxSurge = 1;
    next.spec.affinity = 'z';
    expect(changedFields(definition(), next)).toEqual(['maxSurge', 'spec']);
  });

  it('tells a minor field that changed with a major one as minor, not as a cause of the major change', () => {
    const next = definition();
    next.forwarders![0]!.address = 'b:2';
    next.roomsReplicas = 3;
    next.spec.containers[0]!.image = 'i:2';
    expect(classifyChange(definition(), next)).toBe('major');
    expect(describeChange(definition(), next)).toBe(`spec; with minor changes to forwarders, roomsReplicas from ${definition().roomsReplicas ?? 0} to 3`);
    next.labels = { l: 'w' };
    expect(describeChange(definition(), next)).toBe(`labels, spec; with minor changes to forwarders, roomsReplicas from ${definition().roomsReplicas ?? 0} to 3`);
    const minorOnly = definition();
    minorOnly.forwarders = [];
    minorOnly.maxSurge = 1;
    expect(describeChange(definition(), minorOnly)).toBe('forwarders, maxSurge');
    const majorOnly = definition();
    majorOnly.portRange = { start: 3000, end: 4000 };
    expect(describeChange(definition(), majorOnly)).toBe('portRange');
    const scaled = definition();
    scaled.roomsReplicas = 7;
    expect(describeChange({ ...definition(), roomsReplicas: 2 }, scaled)).toBe('roomsReplicas from 2 to 7');
  });

  it('does not change its inputs', () => {
    const a = definition();
    const b = definition();
    delete b.autoscaling!.enabled;
    const before = JSON.stringify([a, b]);
    classifyChange(a, b);
    expect(JSON.stringify([a, b])).toBe(before);
  });
});

describe('unusedRoomsReplicas', () => {
  const cases: Array<[string, Change, RegExp | undefined]> = [
    ['roomsReplicas changed, autoscaling enabled', (d) => { d.roomsReplicas = 5; }, /^roomsReplicas 5 does not set the number of rooms while autoscaling is enabled: the autoscaler keeps it between min 1 and max 10; set spec\.autoscaling\.enabled to false to have 5 rooms$/],
    ['max -1 named as the limit', (d) => { d.roomsReplicas = 5; d.autoscaling!.max = -1; }, /between min 1 and max -1 \(the most rooms one scheduler may have\)/],
    ['roomsReplicas changed, autoscaling disabled', (d) => { d.roomsReplicas = 5; d.autoscaling!.enabled = false; }, undefined],
    ['roomsReplicas changed, no autoscaling', (d) => { d.roomsReplicas = 5; delete d.autoscaling; }, undefined],
    ['autoscaling changed, roomsReplicas not', (d) => { d.autoscaling!.max = 20; }, undefined],
  ];
  test.each(cases)('%s', (_name, change, told) => {
    const after = definition();
    change(after);
    const said = unusedRoomsReplicas(definition(), after);
    if (told) expect(said).toMatch(told);
    else expect(said).toBeUndefined();
  });
});
