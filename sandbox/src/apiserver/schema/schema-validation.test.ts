import { compileSchema } from './compiled-schema';
import type { FieldCause } from './field-cause';

/** Validates `{spec: {x: value}}` against a root schema whose spec.x is `schema`. */
function validateX(schema: Record<string, unknown>, value: unknown): FieldCause[] {
  const compiled = compileSchema({
    type: 'object',
    properties: { spec: { type: 'object', properties: { x: schema } } },
  });
  return compiled.validate({ apiVersion: 'g.example.com/v1', kind: 'K', metadata: { name: 'n' }, spec: { x: value } });
}

interface Row {
  name: string;
  schema: Record<string, unknown>;
  good: unknown[];
  bad: { value: unknown; causes: FieldCause[] }[];
}

const c = (reason: string, message: string, field = 'spec.x'): FieldCause => ({ reason, field, message });

const rows: Row[] = [
  {
    name: 'type integer',
    schema: { type: 'integer' },
    good: [0, -5, 7, 3.0],
    bad: [
      { value: 'string', causes: [c('FieldValueTypeInvalid', 'Invalid value: "string": spec.x in body must be of type integer: "string"')] },
      { value: 1.5, causes: [c('FieldValueTypeInvalid', 'Invalid value: "number": spec.x in body must be of type integer: "number"')] },
      { value: null, causes: [c('FieldValueTypeInvalid', 'Invalid value: "null": spec.x in body must be of type integer: "null"')] },
    ],
  },
  {
    name: 'type number',
    schema: { type: 'number' },
    good: [1, 1.5, -0.25],
    bad: [{ value: true, causes: [c('FieldValueTypeInvalid', 'Invalid value: "boolean": spec.x in body must be of type number: "boolean"')] }],
  },
  {
    name: 'type string',
    schema: { type: 'string' },
    good: ['', 'abc'],
    bad: [{ value: 5, causes: [c('FieldValueTypeInvalid', 'Invalid value: "integer": spec.x in body must be of type string: "integer"')] }],
  },
  {
    name: 'type boolean',
    schema: { type: 'boolean' },
    good: [true, false],
    bad: [{ value: 'true', causes: [c('FieldValueTypeInvalid', 'Invalid value: "string": spec.x in body must be of type boolean: "string"')] }],
  },
  {
    name: 'type array',
    schema: { type: 'array', items: { type: 'string' } },
    good: [[], ['a']],
    bad: [
      { value: {}, causes: [c('FieldValueTypeInvalid', 'Invalid value: "object": spec.x in body must be of type array: "object"')] },
      { value: ['a', 1], causes: [c('FieldValueTypeInvalid', 'Invalid value: "integer": spec.x[1] in body must be of type string: "integer"', 'spec.x[1]')] },
    ],
  },
  {
    name: 'type object',
    schema: { type: 'object', properties: { a: { type: 'integer' } } },
    good: [{}, { a: 1 }],
    bad: [
      { value: [], causes: [c('FieldValueTypeInvalid', 'Invalid value: "array": spec.x in body must be of type object: "array"')] },
      { value: { a: 'z' }, causes: [c('FieldValueTypeInvalid', 'Invalid value: "string": spec.x.a in body must be of type integer: "string"', 'spec.x.a')] },
    ],
  },
  {
    name: 'nullable',
    schema: { type: 'string', nullable: true },
    good: [null, 'a'],
    bad: [],
  },
  {
    name: 'x-kubernetes-int-or-string',
    schema: { 'x-kubernetes-int-or-string': true },
    good: [1, '25%'],
    bad: [
      { value: true, causes: [c('FieldValueTypeInvalid', 'Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"')] },
      { value: 1.5, causes: [c('FieldValueTypeInvalid', 'Invalid value: "number": spec.x in body must be of type integer,string: "number"')] },
      { value: null, causes: [c('FieldValueTypeInvalid', 'Invalid value: "null": spec.x in body must be of type integer,string: "null"')] },
    ],
  },
  {
    name: 'int-or-string as anyOf (structural form)',
    schema: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: '^\\d+%$' },
    good: [3, '10%'],
    bad: [{ value: 'x', causes: [c('FieldValueInvalid', `Invalid value: "x": spec.x in body should match '^\\d+%$'`)] }],
  },
  {
    name: 'required',
    schema: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'string' } } },
    good: [{ a: '', b: '' }],
    bad: [
      {
        value: {},
        causes: [c('FieldValueRequired', 'Required value', 'spec.x.a'), c('FieldValueRequired', 'Required value', 'spec.x.b')],
      },
    ],
  },
  {
    name: 'enum',
    schema: { type: 'string', enum: ['a', 'b'] },
    good: ['a', 'b'],
    bad: [{ value: 'x', causes: [c('FieldValueNotSupported', 'Unsupported value: "x": supported values: "a", "b"')] }],
  },
  {
    name: 'enum of integers',
    schema: { type: 'integer', enum: [1, 2] },
    good: [1],
    bad: [{ value: 3, causes: [c('FieldValueNotSupported', 'Unsupported value: 3: supported values: "1", "2"')] }],
  },
  {
    name: 'pattern',
    schema: { type: 'string', pattern: '^[a-z]+$' },
    good: ['abc'],
    bad: [{ value: 'aB', causes: [c('FieldValueInvalid', `Invalid value: "aB": spec.x in body should match '^[a-z]+$'`)] }],
  },
  {
    name: 'maxLength (counts characters)',
    schema: { type: 'string', maxLength: 3 },
    good: ['abc', 'äöü'],
    bad: [{ value: 'abcd', causes: [c('FieldValueTooLong', 'Too long: may not be more than 3 bytes')] }],
  },
  {
    name: 'maxLength 1 (singular)',
    schema: { type: 'string', maxLength: 1 },
    good: ['a'],
    bad: [{ value: 'ab', causes: [c('FieldValueTooLong', 'Too long: may not be more than 1 byte')] }],
  },
  {
    name: 'minLength',
    schema: { type: 'string', minLength: 2 },
    good: ['ab'],
    bad: [{ value: 'a', causes: [c('FieldValueInvalid', 'Invalid value: "a": spec.x in body should be at least 2 chars long')] }],
  },
  {
    name: 'minimum',
    schema: { type: 'integer', minimum: 1 },
    good: [1, 2],
    bad: [{ value: 0, causes: [c('FieldValueInvalid', 'Invalid value: 0: spec.x in body should be greater than or equal to 1')] }],
  },
  {
    name: 'exclusiveMinimum',
    schema: { type: 'number', minimum: 1, exclusiveMinimum: true },
    good: [1.5],
    bad: [{ value: 1, causes: [c('FieldValueInvalid', 'Invalid value: 1: spec.x in body should be greater than 1')] }],
  },
  {
    name: 'maximum',
    schema: { type: 'integer', maximum: 10 },
    good: [10],
    bad: [{ value: 11, causes: [c('FieldValueInvalid', 'Invalid value: 11: spec.x in body should be less than or equal to 10')] }],
  },
  {
    name: 'exclusiveMaximum',
    schema: { type: 'number', maximum: 10, exclusiveMaximum: true },
    good: [9.5],
    bad: [{ value: 10, causes: [c('FieldValueInvalid', 'Invalid value: 10: spec.x in body should be less than 10')] }],
  },
  {
    name: 'multipleOf',
    schema: { type: 'integer', multipleOf: 5 },
    good: [10],
    bad: [{ value: 7, causes: [c('FieldValueInvalid', 'Invalid value: 7: spec.x in body should be a multiple of 5')] }],
  },
  {
    name: 'minItems',
    schema: { type: 'array', items: { type: 'integer' }, minItems: 1 },
    good: [[1]],
    bad: [{ value: [], causes: [c('FieldValueInvalid', 'Invalid value: 0: spec.x in body should have at least 1 items')] }],
  },
  {
    name: 'maxItems',
    schema: { type: 'array', items: { type: 'integer' }, maxItems: 2 },
    good: [[1, 2]],
    bad: [{ value: [1, 2, 3], causes: [c('FieldValueTooMany', 'Too many: 3: must have at most 2 items')] }],
  },
  {
    name: 'minProperties',
    schema: { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1 },
    good: [{ a: 'b' }],
    bad: [{ value: {}, causes: [c('FieldValueInvalid', 'Invalid value: 0: spec.x in body should have at least 1 properties')] }],
  },
  {
    name: 'maxProperties',
    schema: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 },
    good: [{ a: 'b' }],
    bad: [{ value: { a: 'b', c: 'd' }, causes: [c('FieldValueTooMany', 'Too many: 2: must have at most 1 item')] }],
  },
  {
    name: 'additionalProperties schema (map keys in brackets)',
    schema: { type: 'object', additionalProperties: { type: 'string', maxLength: 2 } },
    good: [{ a: 'b' }],
    bad: [{ value: { 'k.io/x': 'long' }, causes: [c('FieldValueTooLong', 'Too long: may not be more than 2 bytes', 'spec.x[k.io/x]')] }],
  },
  {
    name: 'additionalProperties false',
    schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
    good: [{ a: 'b' }],
    bad: [{ value: { b: 1 }, causes: [c('FieldValueInvalid', 'Invalid value: "b": spec.x.b in body is a forbidden property', 'spec.x.b')] }],
  },
  {
    name: 'format date-time',
    schema: { type: 'string', format: 'date-time' },
    good: ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.123+02:00'],
    bad: [{ value: 'yesterday', causes: [c('FieldValueTypeInvalid', 'Invalid value: "yesterday": spec.x in body must be of type date-time: "yesterday"')] }],
  },
  {
    name: 'format byte',
    schema: { type: 'string', format: 'byte' },
    good: ['aGVsbG8=', ''],
    bad: [{ value: 'not base64!', causes: [c('FieldValueTypeInvalid', 'Invalid value: "not base64!": spec.x in body must be of type byte: "not base64!"')] }],
  },
  {
    name: 'format int32/int64 on integers is not checked',
    schema: { type: 'integer', format: 'int32' },
    good: [5, 2 ** 40],
    bad: [],
  },
  {
    name: 'format uuid, ipv4, hostname',
    schema: { type: 'object', properties: { u: { type: 'string', format: 'uuid' }, ip: { type: 'string', format: 'ipv4' }, h: { type: 'string', format: 'hostname' } } },
    good: [{ u: '123e4567-e89b-12d3-a456-426614174000', ip: '10.0.0.1', h: 'a.example.com' }],
    bad: [
      {
        value: { u: 'nope', ip: '300.1.1.1', h: '-bad-' },
        causes: [
          c('FieldValueTypeInvalid', 'Invalid value: "nope": spec.x.u in body must be of type uuid: "nope"', 'spec.x.u'),
          c('FieldValueTypeInvalid', 'Invalid value: "300.1.1.1": spec.x.ip in body must be of type ipv4: "300.1.1.1"', 'spec.x.ip'),
          c('FieldValueTypeInvalid', 'Invalid value: "-bad-": spec.x.h in body must be of type hostname: "-bad-"', 'spec.x.h'),
        ],
      },
    ],
  },
  {
    name: 'list-type set',
    schema: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    good: [['a', 'b']],
    bad: [{ value: ['a', 'b', 'a'], causes: [c('FieldValueDuplicate', 'Duplicate value: "a"', 'spec.x[2]')] }],
  },
  {
    name: 'list-type map',
    schema: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name', 'protocol'],
      items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' }, port: { type: 'integer' } } },
    },
    good: [[{ name: 'a', protocol: 'TCP' }, { name: 'a', protocol: 'UDP' }]],
    bad: [
      {
        value: [{ name: 'a', port: 1 }, { name: 'b' }, { name: 'a', protocol: 'TCP', port: 2 }],
        causes: [c('FieldValueDuplicate', 'Duplicate value: map[string]interface {}{"name":"a", "protocol":"TCP"}', 'spec.x[2]')],
      },
    ],
  },
  {
    name: 'allOf',
    schema: { type: 'integer', allOf: [{ minimum: 1 }, { maximum: 5 }] },
    good: [3],
    bad: [
      {
        value: 9,
        causes: [
          c('FieldValueInvalid', 'Invalid value: 9: spec.x in body should be less than or equal to 5'),
          c('FieldValueInvalid', 'Invalid value: 9: spec.x in body must validate all the schemas (allOf)'),
        ],
      },
    ],
  },
  {
    name: 'anyOf',
    schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] },
    good: [{ a: 'x' }, { b: 'y' }],
    bad: [
      {
        value: {},
        causes: [
          c('FieldValueRequired', 'Required value', 'spec.x.a'),
          c('FieldValueInvalid', 'Invalid value: map[string]interface {}{}: spec.x in body must validate at least one schema (anyOf)'),
        ],
      },
    ],
  },
  {
    name: 'oneOf',
    schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] },
    good: [{ a: 'x' }],
    bad: [
      {
        value: { a: 'x', b: 'y' },
        causes: [c('FieldValueInvalid', 'Invalid value: map[string]interface {}{"a":"x", "b":"y"}: spec.x in body must validate one and only one schema (oneOf)')],
      },
    ],
  },
  {
    name: 'not',
    schema: { type: 'string', not: { enum: ['forbidden'] } },
    good: ['ok'],
    bad: [{ value: 'forbidden', causes: [c('FieldValueInvalid', 'Invalid value: "forbidden": spec.x in body must not validate the schema (not)')] }],
  },
  {
    name: 'preserve-unknown-fields accepts anything inside',
    schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    good: [{}, { any: { deep: [1, 'two'] } }],
    bad: [{ value: 'str', causes: [c('FieldValueTypeInvalid', 'Invalid value: "string": spec.x in body must be of type object: "string"')] }],
  },
  {
    name: 'x-kubernetes-embedded-resource requires apiVersion and kind',
    schema: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    good: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} }, { apiVersion: 'apps/v1', kind: 'Deployment' }],
    bad: [
      {
        value: { spec: {} },
        causes: [c('FieldValueRequired', 'Required value: must not be empty', 'spec.x.apiVersion'), c('FieldValueRequired', 'Required value: must not be empty', 'spec.x.kind')],
      },
      {
        value: { apiVersion: 'a/b/c', kind: 5 },
        causes: [
          c('FieldValueInvalid', 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c', 'spec.x.apiVersion'),
          c('FieldValueInvalid', 'Invalid value: 5: must be a string', 'spec.x.kind'),
        ],
      },
    ],
  },
  {
    name: 'nested arrays of objects report full paths',
    schema: {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string', maxLength: 3 } } } } } },
        },
      },
    },
    good: [{ containers: [{ name: 'a', ports: [{ name: 'abc' }] }] }],
    bad: [
      {
        value: { containers: [{ name: 'a' }, { ports: [{ name: 'ok' }, { name: 'toolong' }] }] },
        causes: [
          c('FieldValueRequired', 'Required value', 'spec.x.containers[1].name'),
          c('FieldValueTooLong', 'Too long: may not be more than 3 bytes', 'spec.x.containers[1].ports[1].name'),
        ],
      },
    ],
  },
];

describe('schema validation keywords', () => {
  for (const row of rows) {
    describe(row.name, () => {
      it.each(row.good.map((v) => [JSON.stringify(v), v]))('accepts %s', (_label, value) => {
        expect(validateX(row.schema, value)).toEqual([]);
      });
      if (row.bad.length > 0) {
        it.each(row.bad.map((b) => [JSON.stringify(b.value), b]))('rejects %s', (_label, b) => {
          expect(validateX(row.schema, b.value)).toEqual(b.causes);
        });
      }
    });
  }
});

describe('root and metadata', () => {
  const schema = compileSchema({
    type: 'object',
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } } },
      spec: { type: 'object' },
    },
  });

  it('reports a missing required top-level field', () => {
    expect(schema.validate({ apiVersion: 'v', kind: 'K', metadata: { name: 'a' } })).toEqual([{ reason: 'FieldValueRequired', field: 'spec', message: 'Required value' }]);
  });

  it('validates the metadata.name restriction but ignores other ObjectMeta fields', () => {
    expect(schema.validate({ metadata: { name: 'toolong', labels: { a: 'b' }, uid: 'x' }, spec: {} })).toEqual([
      { reason: 'FieldValueTooLong', field: 'metadata.name', message: 'Too long: may not be more than 5 bytes' },
    ]);
  });

  it('reports a non-object root at <nil>', () => {
    const causes = schema.validate('nope' as unknown as Record<string, unknown>);
    expect(causes).toEqual([{ reason: 'FieldValueTypeInvalid', field: '<nil>', message: 'Invalid value: "string": in body must be of type object: "string"' }]);
  });
});

describe('validation ratcheting on update (CRDValidationRatcheting)', () => {
  const BLOCKED = 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
  const schema = compileSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          name: { type: 'string', maxLength: 3 },
          other: { type: 'string' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer', maximum: 100 } } },
          },
          tags: { type: 'array', items: { type: 'string', maxLength: 2 } },
        },
        'x-kubernetes-validations': [{ rule: "self.other != 'bad'", message: 'other must not be bad' }],
      },
    },
  });
  const obj = (spec: Record<string, unknown>): Record<string, unknown> => ({ metadata: { name: 'a' }, spec });

  it('does not report errors on values that did not change', () => {
    const old = obj({ name: 'toolong', other: 'x', ports: [{ name: 'p', port: 500 }] });
    expect(schema.validate(obj({ name: 'toolong', other: 'y', ports: [{ name: 'q', port: 1 }, { name: 'p', port: 500 }] }), old)).toEqual([]);
  });

  it('reports errors on values that changed', () => {
    const old = obj({ name: 'toolong', ports: [{ name: 'p', port: 500 }] });
    expect(schema.validate(obj({ name: 'toolonger', ports: [{ name: 'p', port: 501 }] }), old)).toEqual([
      { reason: 'FieldValueTooLong', field: 'spec.name', message: 'Too long: may not be more than 3 bytes' },
      { reason: 'FieldValueInvalid', field: 'spec.ports[0].port', message: 'Invalid value: 501: spec.ports[0].port in body should be less than or equal to 100' },
      { reason: 'FieldValueInvalid', field: '<nil>', message: BLOCKED },
    ]);
  });

  it('does not correlate items of atomic lists', () => {
    const old = obj({ tags: ['long'] });
    expect(schema.validate(obj({ tags: ['ok', 'long'] }), old)).toEqual([
      { reason: 'FieldValueTooLong', field: 'spec.tags[1]', message: 'Too long: may not be more than 2 bytes' },
      { reason: 'FieldValueInvalid', field: '<nil>', message: BLOCKED },
    ]);
  });

  it('ratchets CEL rules only while the value under the rule is unchanged', () => {
    expect(schema.validate(obj({ other: 'bad' }), obj({ other: 'bad' }))).toEqual([]);
    expect(schema.validate(obj({ other: 'bad', name: 'a' }), obj({ other: 'bad' }))).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": other must not be bad' },
    ]);
  });
});
