import { validateCrdSchema } from './crd-validation';
import type { FieldCause } from './field-cause';

function crd(overrides: { spec?: Record<string, unknown>; metadata?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'fleets.roomkeeper.io', ...overrides.metadata },
    spec: {
      group: 'roomkeeper.io',
      scope: 'Namespaced',
      names: { plural: 'fleets', singular: 'fleet', kind: 'Fleet', listKind: 'FleetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a > 0' }], properties: { a: { type: 'integer' } } } },
            },
          },
        },
      ],
      ...overrides.spec,
    },
  };
}

const c = (reason: string, field: string, message: string): FieldCause => ({ reason, field, message });
const schemaOf = (openAPIV3Schema: unknown) => ({ versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } }] });

describe('validateCrdSchema', () => {
  it('accepts a well-formed CRD', () => {
    expect(validateCrdSchema(crd())).toEqual([]);
  });

  const rows: [string, Record<string, unknown>, FieldCause[]][] = [
    ['missing group', crd({ spec: { group: '' } }), [c('FieldValueRequired', 'spec.group', 'Required value')]],
    [
      'name not plural.group',
      crd({ metadata: { name: 'wrong.roomkeeper.io' } }),
      [c('FieldValueInvalid', 'metadata.name', 'Invalid value: "wrong.roomkeeper.io": must be spec.names.plural+"."+spec.group')],
    ],
    ['missing names', crd({ spec: { names: {} } }), [c('FieldValueRequired', 'spec.names.plural', 'Required value'), c('FieldValueRequired', 'spec.names.kind', 'Required value')]],
    ['bad scope', crd({ spec: { scope: 'Global' } }), [c('FieldValueNotSupported', 'spec.scope', 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"')]],
    [
      'no storage version',
      crd({ spec: { versions: [{ name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } }] } }),
      [c('FieldValueInvalid', 'spec.versions', 'Invalid value: []interface {}{"v1"}: must have exactly one version marked as storage version')],
    ],
    [
      'duplicate version names and two storage versions',
      crd({
        spec: {
          versions: [
            { name: 'v1', storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
            { name: 'v1', storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          ],
        },
      }),
      [
        c('FieldValueDuplicate', 'spec.versions[1].name', 'Duplicate value: "v1"'),
        c('FieldValueInvalid', 'spec.versions', 'Invalid value: []interface {}{"v1", "v1"}: must have exactly one version marked as storage version'),
      ],
    ],
    [
      'missing schema',
      crd({ spec: { versions: [{ name: 'v1', storage: true }] } }),
      [c('FieldValueRequired', 'spec.versions[0].schema.openAPIV3Schema', 'Required value: schemas are required')],
    ],
    [
      'root schema not an object',
      crd({ spec: schemaOf({ type: 'string' }) }),
      [c('FieldValueInvalid', 'spec.versions[0].schema.openAPIV3Schema.type', 'Invalid value: "string": must be object at the root')],
    ],
    [
      'missing type on a property',
      crd({ spec: schemaOf({ type: 'object', properties: { spec: { properties: { x: { type: 'string' } } } } }) }),
      [c('FieldValueRequired', 'spec.versions[0].schema.openAPIV3Schema.properties[spec].type', 'Required value: must not be empty for specified object fields')],
    ],
    [
      'default that does not match its schema',
      crd({ spec: schemaOf({ type: 'object', properties: { replicas: { type: 'integer', default: 'three' }, mode: { type: 'string', enum: ['a'], default: 'b' } } }) }),
      [
        c(
          'FieldValueTypeInvalid',
          'spec.versions[0].schema.openAPIV3Schema.properties[replicas].default',
          'Invalid value: "string": in body must be of type integer: "string"',
        ),
        c('FieldValueNotSupported', 'spec.versions[0].schema.openAPIV3Schema.properties[mode].default', 'Unsupported value: "b": supported values: "a"'),
      ],
    ],
    [
      'default with unknown fields',
      crd({ spec: schemaOf({ type: 'object', properties: { s: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } } } }) }),
      [c('FieldValueInvalid', 'spec.versions[0].schema.openAPIV3Schema.properties[s].default', 'Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields: b')],
    ],
    [
      'CEL rule that does not compile',
      crd({ spec: schemaOf({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a >' }] }) }),
      [
        c(
          'FieldValueInvalid',
          'spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule',
          'Invalid value: "self.a >": compilation failed: unexpected end of expression at position 8',
        ),
      ],
    ],
  ];

  it.each(rows)('%s', (_name, input, expected) => {
    expect(validateCrdSchema(input)).toEqual(expected);
  });

  it.each([null, 1, 'x', [], { spec: [] }, { spec: { versions: 'x', names: 5 } }])('never throws on garbage %p', (input) => {
    expect(validateCrdSchema(input).length).toBeGreaterThan(0);
  });
});
