/**
 * Translates a Kubernetes structural schema (a CRD's openAPIV3Schema) into a JSON Schema that ajv
 * validates the way the API server does:
 * - `x-kubernetes-int-or-string` becomes `type: [integer, string]`;
 * - `nullable` adds `null` to the type;
 * - an object with `properties` and no `x-kubernetes-preserve-unknown-fields` gets
 *   `additionalProperties: false`, which ajv's `removeAdditional` turns into pruning;
 * - OpenAPI v3.0 boolean `exclusiveMinimum/Maximum` become draft-07 numbers;
 * - formats other than `date-time` (int32, int64, double...) are dropped, but an integer of format
 *   int32 or int64, and an int-or-string's integer (an int32), are held to that type's range;
 * - `x-kubernetes-validations` (CEL) are dropped: the API server evaluates them on write; other
 *   `x-kubernetes-*` keys only matter to the API server and are dropped.
 */
import type { JsonSchemaProps } from '../resources/json-schema-props';

export type AjvSchema = Record<string, unknown>;

export interface TranslateOptions {
  /** Drop every `required` (for patch bodies, where any field may be left out). */
  dropRequired?: boolean;
  /** Drop every `default` (for patch bodies: an absent field must stay absent). */
  dropDefaults?: boolean;
}

const KEPT_FORMATS = new Set(['date-time']);
const INT_BOUNDS: Readonly<Record<string, readonly [number, number]>> = { int32: [-(2 ** 31), 2 ** 31 - 1], int64: [-(2 ** 63), 2 ** 63 - 1] };

export function toAjvSchema(schema: JsonSchemaProps, options: TranslateOptions = {}): AjvSchema {
  const out: AjvSchema = {};
  const types: string[] = [];
  if (schema['x-kubernetes-int-or-string']) types.push('integer', 'string');
  else if (schema.type) types.push(schema.type);
  if (schema.nullable && types.length > 0) types.push('null');
  if (types.length === 1) out.type = types[0];
  else if (types.length > 1) out.type = types;

  if (schema.format && KEPT_FORMATS.has(schema.format)) out.format = schema.format;
  if (schema.enum) out.enum = schema.enum;
  if (schema.default !== undefined && !options.dropDefaults) out.default = schema.default;
  if (schema.pattern !== undefined) out.pattern = schema.pattern;
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const) {
    if (schema[key] !== undefined) out[key] = schema[key];
  }
  if (schema.minimum !== undefined) out[schema.exclusiveMinimum ? 'exclusiveMinimum' : 'minimum'] = schema.minimum;
  if (schema.maximum !== undefined) out[schema.exclusiveMaximum ? 'exclusiveMaximum' : 'maximum'] = schema.maximum;
  // What the API server's Go types hold: an int-or-string's integer is an int32, and an integer of
  // format int32 or int64 is that; a larger number is refused there, whatever else the schema says.
  const bounds = schema['x-kubernetes-int-or-string'] ? INT_BOUNDS.int32 : schema.type === 'integer' && schema.format ? INT_BOUNDS[schema.format] : undefined;
  if (bounds) {
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = bounds[0];
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = bounds[1];
  }
  if (schema.required && schema.required.length > 0 && !options.dropRequired) out.required = schema.required;

  if (schema.properties) {
    const properties: Record<string, AjvSchema> = {};
    for (const [name, prop] of Object.entries(schema.properties)) properties[name] = toAjvSchema(prop, options);
    out.properties = properties;
  }
  if (typeof schema.additionalProperties === 'object') {
    out.additionalProperties = toAjvSchema(schema.additionalProperties, options);
  } else if (schema.properties && !schema['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  if (schema.items) out.items = toAjvSchema(schema.items, options);
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    const list = schema[key];
    if (list) out[key] = list.map((s) => toAjvSchema(s, options));
  }
  return out;
}
