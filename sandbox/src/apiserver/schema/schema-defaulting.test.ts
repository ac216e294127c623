import { compileSchema } from './compiled-schema';

const schema = compileSchema({
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        strategy: {
          type: 'object',
          default: {},
          properties: { type: { type: 'string', default: 'RollingUpdate' }, maxSurge: { 'x-kubernetes-int-or-string': true, default: '25%' } },
        },
        template: {
          type: 'object',
          properties: { image: { type: 'string', default: 'game:latest' }, ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'UDP' } } } } },
        },
        note: { type: 'string', nullable: true, default: 'n' },
        optional: { type: 'string' },
        limits: { type: 'object', additionalProperties: { type: 'integer', default: 7 } },
        tags: { type: 'array', items: { type: 'string', default: 'x' } },
        extra: { type: 'object', properties: { a: { type: 'string' }, list: { type: 'array', items: { type: 'object', properties: { b: { type: 'string' } } } }, map: { type: 'object', additionalProperties: { type: 'object', properties: { c: { type: 'string' } } } } } },
      },
    },
  },
});

function defaulted(spec: unknown): unknown {
  const obj: Record<string, unknown> = { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, spec };
  schema.applyDefaults(obj);
  return obj.spec;
}

describe('structural defaulting', () => {
  const rows: [string, unknown, unknown][] = [
    [
      'absent fields get defaults; a defaulted object is defaulted inside',
      {},
      { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n' },
    ],
    ['present values are kept', { replicas: 5, strategy: { type: 'Recreate' } }, { replicas: 5, strategy: { type: 'Recreate', maxSurge: '25%' }, note: 'n' }],
    [
      'nested objects are defaulted only when present',
      { template: {} },
      { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n', template: { image: 'game:latest' } },
    ],
    [
      'array items are defaulted',
      { template: { image: 'i', ports: [{}, { protocol: 'TCP' }] } },
      { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n', template: { image: 'i', ports: [{ protocol: 'UDP' }, { protocol: 'TCP' }] } },
    ],
    ['null in a non-nullable field with a default is replaced', { replicas: null }, { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n' }],
    ['null in a nullable field is kept', { note: null }, { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: null }],
    ['null in a non-nullable field without default is dropped', { optional: null }, { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n' }],
    [
      'a null deep under an object with no default below is dropped too, in list items and map values (kube-apiserver prunes the whole object)',
      { extra: { a: null, list: [{ b: null }], map: { k: { c: null } } } },
      { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n', extra: { list: [{}], map: { k: {} } } },
    ],
    [
      'map values and list items: null replaced by the default',
      { limits: { cpu: null, mem: 3 }, tags: [null, 'y'] },
      { replicas: 1, strategy: { type: 'RollingUpdate', maxSurge: '25%' }, note: 'n', limits: { cpu: 7, mem: 3 }, tags: ['x', 'y'] },
    ],
  ];

  it.each(rows)('%s', (_name, input, expected) => {
    expect(defaulted(input)).toEqual(expected);
  });

  it('copies defaults so objects never share them', () => {
    const a = defaulted({}) as { strategy: { type: string } };
    a.strategy.type = 'changed';
    expect((defaulted({}) as { strategy: { type: string } }).strategy.type).toBe('RollingUpdate');
  });

  it('does not create a missing parent object', () => {
    const obj: Record<string, unknown> = { metadata: { name: 'a' } };
    schema.applyDefaults(obj);
    expect(obj).toEqual({ metadata: { name: 'a' } });
  });

  it('ignores values of the wrong type', () => {
    const obj: Record<string, unknown> = { spec: 'not-an-object' };
    schema.applyDefaults(obj);
    expect(obj).toEqual({ spec: 'not-an-object' });
  });
});
