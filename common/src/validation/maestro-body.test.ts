import { normaliseMaestroBody } from './maestro-body';
import { schedulerCreateBodySchema } from './scheduler-validator';

describe('normaliseMaestroBody', () => {
  const schema = schedulerCreateBodySchema();

  it('renames snake_case keys the schema knows, at any depth', () => {
    expect(normaliseMaestroBody({ rooms_replicas: 1, spec: { termination_grace_period: '1s', containers: [{ image_pull_policy: 'Never' }] } }, schema)).toEqual({
      roomsReplicas: 1,
      spec: { terminationGracePeriod: '1s', containers: [{ imagePullPolicy: 'Never' }] },
    });
  });

  it('reports each field sent in both spellings, by its path, as protojson refuses one field sent twice; the copy keeps the camelCase value', () => {
    const sentTwice: { field: string; message: string }[] = [];
    const body = { max_surge: '1', maxSurge: '2', spec: { containers: [{}, { imagePullPolicy: 'Never', image_pull_policy: 'Always' }] }, annotations: { a_b: '1', aB: '2' } };
    expect(normaliseMaestroBody(body, schema, {}, sentTwice)).toEqual({ maxSurge: '2', spec: { containers: [{}, { imagePullPolicy: 'Never' }] }, annotations: { a_b: '1', aB: '2' } });
    expect(sentTwice).toEqual([
      { field: 'maxSurge', message: 'duplicate key: sent as both max_surge and maxSurge, one field in its two spellings, and only one of the values could be kept; send it once (the request was refused and nothing changed)' },
      { field: 'spec.containers[1].imagePullPolicy', message: expect.stringMatching(/^duplicate key: sent as both image_pull_policy and imagePullPolicy, /) as unknown },
    ]);
  });

  it('leaves free-form maps and unknown keys alone', () => {
    const body = { annotations: { some_key: 'v' }, labels: { a_b: 'c' }, forwarders: [{ options: { metadata: { room_type: 'x' } } }], not_a_field: 1 };
    expect(normaliseMaestroBody(body, schema)).toEqual(body);
  });

  it('drops a field sent as null, as protojson and kube-apiserver (a CRD field not nullable) read it: not set', () => {
    const body = {
      name: 'a', autoscaling: null, match_allocation: null, forwarders: [{ name: 'f', options: { timeout: null, metadata: { kept: null } } }],
      spec: { toleration: null, containers: [{ name: 'c', command: null, environment: [{ name: 'E', value: 'v', value_from: null }], ports: [{ name: 'p', host_port_range: null }] }] },
      annotations: { kept: null },
    };
    expect(normaliseMaestroBody(body, schema)).toEqual({
      name: 'a', forwarders: [{ name: 'f', options: { metadata: { kept: null } } }],
      spec: { containers: [{ name: 'c', environment: [{ name: 'E', value: 'v' }], ports: [{ name: 'p' }] }] },
      annotations: { kept: null },
    });
  });

  it('reads an integer field sent as a string of digits as that integer, as protojson does; other strings are left for the validation', () => {
    const body = { rooms_replicas: '5', portRange: { start: '40000', end: '40010' }, spec: { containers: [{ ports: [{ port: '7777' }] }] }, maxSurge: '10%', annotations: { n: '5' } };
    expect(normaliseMaestroBody(body, schema)).toEqual({ roomsReplicas: 5, portRange: { start: 40000, end: 40010 }, spec: { containers: [{ ports: [{ port: 7777 }] }] }, maxSurge: '10%', annotations: { n: '5' } });
    expect(normaliseMaestroBody({ roomsReplicas: '5.0', portRange: { start: 'five', end: ' 1' } }, schema)).toEqual({ roomsReplicas: '5.0', portRange: { start: 'five', end: ' 1' } });
  });

  it('with emptyAsUnset, reads "" as not set where the field is optional, has no default and "" is no value of it (Maestro\'s zero value of imagePullPolicy, requests, limits); a "" a field may hold, a required field\'s, or a defaulted one\'s (a forwarder\'s type, which Maestro refuses empty) is kept for the validation', () => {
    const body = {
      name: '', game: 'g',
      forwarders: [{ name: 'f', type: '', address: 'a:1' }],
      spec: { toleration: '', affinity: '', containers: [{ name: 'c', image: '', image_pull_policy: '', requests: { memory: '', cpu: '' }, limits: { memory: '1Gi', cpu: '' }, environment: [{ name: 'E', value: '' }] }] },
    };
    expect(normaliseMaestroBody(body, schema, { emptyAsUnset: true })).toEqual({
      name: '', game: 'g',
      forwarders: [{ name: 'f', type: '', address: 'a:1' }],
      spec: { toleration: '', affinity: '', containers: [{ name: 'c', image: '', requests: {}, limits: { memory: '1Gi' }, environment: [{ name: 'E', value: '' }] }] },
    });
    // Without it (a PATCH body, whose fields have presence), a "" is a value, left to the validation.
    expect(normaliseMaestroBody({ spec: { containers: [{ imagePullPolicy: '' }] } }, schema)).toEqual({ spec: { containers: [{ imagePullPolicy: '' }] } });
  });

  it.each([null, 1, 'x', [1]])('returns %p unchanged', (v) => {
    expect(normaliseMaestroBody(v, schema)).toEqual(v);
  });
});
