import { compileSchema } from './compiled-schema';
import type { FieldCause } from './field-cause';

function fleetSchema(specRules: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return compileSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': specRules,
        properties: {
          replicas: { type: 'integer' },
          minReplicas: { type: 'integer' },
          name: { type: 'string' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, port: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'port is immutable' }] } },
            },
          },
          ...extra,
        },
      },
    },
  });
}

const obj = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'g.example.com/v1', kind: 'Fleet', metadata: { name: 'f' }, spec });
const cause = (reason: string, field: string, message: string): FieldCause => ({ reason, field, message });

describe('x-kubernetes-validations', () => {
  const rows: { name: string; rule: Record<string, unknown>; spec: Record<string, unknown>; expected: FieldCause[] }[] = [
    {
      name: 'passing rule',
      rule: { rule: 'self.minReplicas <= self.replicas' },
      spec: { replicas: 3, minReplicas: 1 },
      expected: [],
    },
    {
      name: 'failing rule without message',
      rule: { rule: 'self.minReplicas <= self.replicas' },
      spec: { replicas: 1, minReplicas: 3 },
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": failed rule: self.minReplicas <= self.replicas')],
    },
    {
      name: 'failing rule with message',
      rule: { rule: 'self.minReplicas <= self.replicas', message: 'minReplicas must not exceed replicas' },
      spec: { replicas: 1, minReplicas: 3 },
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": minReplicas must not exceed replicas')],
    },
    {
      name: 'messageExpression wins over message',
      rule: { rule: 'self.minReplicas <= self.replicas', message: 'static', messageExpression: "'minReplicas ' + string(self.minReplicas) + ' > replicas ' + string(self.replicas)" },
      spec: { replicas: 1, minReplicas: 3 },
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": minReplicas 3 > replicas 1')],
    },
    {
      name: 'messageExpression that errors falls back to message',
      rule: { rule: 'self.replicas > 5', message: 'static', messageExpression: "'x' + self.nope" },
      spec: { replicas: 1 },
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": static')],
    },
    {
      name: 'fieldPath and reason',
      rule: { rule: 'self.replicas >= 0', message: 'must be non-negative', fieldPath: '.replicas', reason: 'FieldValueForbidden' },
      spec: { replicas: -1 },
      expected: [cause('FieldValueForbidden', 'spec.replicas', 'Forbidden: must be non-negative')],
    },
    {
      name: 'fieldPath into a map key',
      rule: { rule: "self.labels['app'] != ''", message: 'app label must not be empty', fieldPath: '.labels.app' },
      spec: { labels: { app: '' } },
      expected: [cause('FieldValueInvalid', 'spec.labels[app]', 'Invalid value: "object": app label must not be empty')],
    },
    {
      name: 'reason FieldValueRequired',
      rule: { rule: 'has(self.name)', message: 'name is required when ...', reason: 'FieldValueRequired' },
      spec: {},
      expected: [cause('FieldValueRequired', 'spec', 'Required value: name is required when ...')],
    },
    {
      name: 'reason FieldValueDuplicate',
      rule: { rule: 'false', reason: 'FieldValueDuplicate' },
      spec: {},
      expected: [cause('FieldValueDuplicate', 'spec', 'Duplicate value: "object"')],
    },
    {
      name: 'evaluation error becomes a cause',
      rule: { rule: 'self.name.startsWith("a")' },
      spec: {},
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": no such key: name evaluating rule: self.name.startsWith("a")')],
    },
    {
      name: 'evaluation error names the message when the rule has one',
      rule: { rule: 'self.name.startsWith("a")', message: 'name must start with a' },
      spec: {},
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": no such key: name evaluating rule: name must start with a')],
    },
    {
      name: 'runtime overload error',
      rule: { rule: 'self.name + 1 == "x"' },
      spec: { name: 'n' },
      expected: [
        cause(
          'FieldValueInvalid',
          'spec',
          `Invalid value: "object": 'no such overload: _+_(string, int)': call arguments did not match a supported operator, function or macro signature for rule: self.name + 1 == "x"`,
        ),
      ],
    },
    {
      name: 'messageExpression result is trimmed; empty result falls back',
      rule: { rule: 'false', messageExpression: "'  spaced  '" },
      spec: {},
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": spaced')],
    },
    {
      name: 'messageExpression returning a non-string falls back to failed rule',
      rule: { rule: 'false', messageExpression: '1' },
      spec: {},
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": failed rule: false')],
    },
    {
      name: 'non-boolean result becomes a cause',
      rule: { rule: 'self.replicas' },
      spec: { replicas: 1 },
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": rule did not evaluate to a boolean: self.replicas')],
    },
    {
      name: 'rule that fails to compile is reported, not thrown',
      rule: { rule: 'self.replicas >' },
      spec: { replicas: 1 },
      expected: [cause('FieldValueInvalid', 'spec', 'Invalid value: "object": rule compile error: unexpected end of expression at position 15')],
    },
  ];

  it.each(rows.map((r) => [r.name, r]))('%s', (_name, row) => {
    expect(fleetSchema([row.rule]).validate(obj(row.spec))).toEqual(row.expected);
  });

  it('evaluates rules on scalars with self bound to the value', () => {
    const schema = fleetSchema([], { image: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.contains(':')", message: 'image needs a tag' }] } });
    expect(schema.validate(obj({ image: 'nginx:1' }))).toEqual([]);
    expect(schema.validate(obj({ image: 'nginx' }))).toEqual([cause('FieldValueInvalid', 'spec.image', 'Invalid value: "string": image needs a tag')]);
  });

  it('sees int-or-string values as int or string', () => {
    const rule = { rule: "type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]*|[0-9]+%)$')", message: 'bad maxSurge' };
    const schema = fleetSchema([], { maxSurge: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [rule] } });
    expect(schema.validate(obj({ maxSurge: 2 }))).toEqual([]);
    expect(schema.validate(obj({ maxSurge: '25%' }))).toEqual([]);
    expect(schema.validate(obj({ maxSurge: 0 }))).toEqual([cause('FieldValueInvalid', 'spec.maxSurge', 'Invalid value: "": bad maxSurge')]);
    expect(schema.validate(obj({ maxSurge: 'x' }))).toEqual([cause('FieldValueInvalid', 'spec.maxSurge', 'Invalid value: "": bad maxSurge')]);
  });

  it('evaluates rules inside list items and map values with their paths', () => {
    const schema = fleetSchema([], {
      rooms: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.n > 0' }] } },
      quotas: { type: 'object', additionalProperties: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self <= 10' }] } },
    });
    expect(schema.validate(obj({ rooms: [{ n: 1 }, { n: 0 }], quotas: { cpu: 5, mem: 20 } }))).toEqual([
      cause('FieldValueInvalid', 'spec.rooms[1]', 'Invalid value: "object": failed rule: self.n > 0'),
      cause('FieldValueInvalid', 'spec.quotas[mem]', 'Invalid value: "integer": failed rule: self <= 10'),
    ]);
  });

  it('stops evaluating when the cost budget is exhausted', () => {
    const schema = fleetSchema([{ rule: 'self.items.all(a, self.items.all(b, a >= 0 && b >= 0))' }, { rule: 'false' }], {
      items: { type: 'array', items: { type: 'integer' } },
    });
    const causes = schema.validate(obj({ items: Array.from({ length: 1200 }, (_, i) => i) }));
    expect(causes).toEqual([
      cause(
        'FieldValueInvalid',
        'spec',
        `Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.items.all(a, self.items.all(b, a >= 0 && b >= 0))`,
      ),
    ]);
  });

  it('skips rules when schema validation found a required-field error', () => {
    const schema = compileSchema({
      type: 'object',
      properties: { spec: { type: 'object', required: ['a'], properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'false' }] } },
    });
    expect(schema.validate(obj({}))).toEqual([
      cause('FieldValueRequired', 'spec.a', 'Required value'),
      cause('FieldValueInvalid', '<nil>', 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'),
    ]);
  });

  it('skips rules when schema validation already found type errors', () => {
    const schema = fleetSchema([{ rule: 'self.replicas > 100' }]);
    expect(schema.validate(obj({ replicas: 'many' }))).toEqual([
      cause('FieldValueTypeInvalid', 'spec.replicas', 'Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
      cause('FieldValueInvalid', '<nil>', 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'),
    ]);
  });

  it('evaluates a rule at the root with field <nil>', () => {
    const schema = compileSchema({ type: 'object', 'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('room-')" }], properties: { spec: { type: 'object' } } });
    expect(schema.validate({ metadata: { name: 'room-a' }, spec: {} })).toEqual([]);
    expect(schema.validate({ metadata: { name: 'x' }, spec: {} })).toEqual([
      cause('FieldValueInvalid', '<nil>', `Invalid value: "object": failed rule: self.metadata.name.startsWith('room-')`),
    ]);
  });
});

describe('transition rules (oldSelf)', () => {
  const schema = fleetSchema([{ rule: 'self.replicas >= oldSelf.replicas', message: 'replicas may not shrink' }]);

  it('are skipped on create', () => {
    expect(schema.validate(obj({ replicas: 1 }))).toEqual([]);
  });

  it('compare against the old object on update', () => {
    expect(schema.validate(obj({ replicas: 3 }), obj({ replicas: 2 }))).toEqual([]);
    expect(schema.validate(obj({ replicas: 1 }), obj({ replicas: 2 }))).toEqual([cause('FieldValueInvalid', 'spec', 'Invalid value: "object": replicas may not shrink')]);
  });

  it('are skipped when the old value did not exist', () => {
    expect(schema.validate(obj({ replicas: 1 }), { metadata: { name: 'f' } })).toEqual([]);
  });

  it('correlate list-type=map items by key', () => {
    const schema = fleetSchema([]);
    const old = obj({ ports: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] });
    expect(schema.validate(obj({ ports: [{ name: 'b', port: 2 }, { name: 'a', port: 1 }, { name: 'c', port: 9 }] }), old)).toEqual([]);
    expect(schema.validate(obj({ ports: [{ name: 'b', port: 3 }] }), old)).toEqual([cause('FieldValueInvalid', 'spec.ports[0].port', 'Invalid value: "integer": port is immutable')]);
  });

  it('with optionalOldSelf run on create with oldSelf = optional.none()', () => {
    const s = fleetSchema([{ rule: 'oldSelf.hasValue() ? self.name == oldSelf.value().name : self.name.startsWith("f")', optionalOldSelf: true, message: 'bad name' }]);
    expect(s.validate(obj({ name: 'fleet' }))).toEqual([]);
    expect(s.validate(obj({ name: 'x' }))).toEqual([cause('FieldValueInvalid', 'spec', 'Invalid value: "object": bad name')]);
    expect(s.validate(obj({ name: 'x' }), obj({ name: 'x' }))).toEqual([]);
    expect(s.validate(obj({ name: 'y' }), obj({ name: 'x' }))).toEqual([cause('FieldValueInvalid', 'spec', 'Invalid value: "object": bad name')]);
  });

  it('immutability via self == oldSelf on a scalar field', () => {
    const s = fleetSchema([], { region: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'region is immutable' }] } });
    expect(s.validate(obj({ region: 'eu' }), obj({ region: 'eu' }))).toEqual([]);
    expect(s.validate(obj({ region: 'us' }), obj({ region: 'eu' }))).toEqual([cause('FieldValueInvalid', 'spec.region', 'Invalid value: "string": region is immutable')]);
  });
});
