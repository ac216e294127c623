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
 */
import { isRecord } from '../json/is-record';
import type { JsonSchemaProps } from '../resources/json-schema-props';

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}


/** A copy of `data` with snake_case keys renamed wherever the schema names the camelCase property, and its null fields dropped. */
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
    out[target] = propSchema ? normaliseMaestroBody(value, propSchema) : value;
  }
  return out;
}
