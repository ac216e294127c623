/**
 * Maestro's management API (protojson) accepts snake_case field names (`rooms_replicas`,
 * `max_surge`, `termination_grace_period`...) as well as camelCase. This renames snake_case keys to
 * their camelCase property, guided by the schema, so free-form maps (annotations, labels,
 * forwarder metadata) are left exactly as sent. When both spellings are present, camelCase wins.
 *
 * protojson also reads a field sent as `null` as not set, and so does kube-apiserver for a CRD
 * field that is not `nullable` (it prunes the null before defaulting): a client that sends `null`
 * for what it leaves out (Go's nil maps, slices and pointers do) gets the field's absence, here as
 * there. Only fields are dropped; a null inside a free-form map is left to the validation.
 *
 * protojson reads an integer field sent as a JSON string of digits (`"roomsReplicas": "5"`) as
 * that integer, for int32 fields as for int64 ones (which Go clients send as strings): so is it
 * read here. Any other string (`"5.0"`, `"five"`) is left to the validation, which refuses it.
 */
import { isRecord } from '../json/is-record';
import type { JsonSchemaProps } from '../resources/json-schema-props';

/** A JSON string protojson reads as an integer: decimal digits with an optional sign, short enough to stay exact. */
const INTEGER_STRING = /^-?\d{1,15}$/;

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}


/** A copy of `data` with snake_case keys renamed wherever the schema names the camelCase property, its null fields dropped and its integer fields sent as strings of digits read as integers. */
export function normaliseMaestroBody(data: unknown, schema: JsonSchemaProps): unknown {
  if (Array.isArray(data)) return schema.items ? data.map((item) => normaliseMaestroBody(item, schema.items as JsonSchemaProps)) : data;
  if (!isRecord(data)) return data;
  const properties = schema.properties;
  if (!properties) return data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const target = key in properties || !(camel(key) in properties) ? key : camel(key);
    if (target !== key && target in data) continue;
    const propSchema = properties[target];
    if (value === null && propSchema && propSchema.nullable !== true) continue;
    if (typeof value === 'string' && propSchema?.type === 'integer' && INTEGER_STRING.test(value)) {
      out[target] = Number(value);
      continue;
    }
    out[target] = propSchema ? normaliseMaestroBody(value, propSchema) : value;
  }
  return out;
}
