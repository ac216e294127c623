/**
 * Maestro's management API (protojson) accepts snake_case field names (`rooms_replicas`,
 * `max_surge`, `termination_grace_period`...) as well as camelCase. This renames snake_case keys to
 * their camelCase property, guided by the schema, so free-form maps (annotations, labels,
 * forwarder metadata) are left exactly as sent. A field sent in both spellings is one field sent
 * twice, which protojson refuses (`duplicate field`): each is reported, with its path, to the
 * caller's list; the camelCase value is the one in the copy.
 *
 * protojson also reads a field sent as `null` as not set, and so does kube-apiserver for a CRD
 * field that is not `nullable` (it prunes the null before defaulting): a client that sends `null`
 * for what it leaves out (Go's nil maps, slices and pointers do) gets the field's absence, here as
 * there. Only fields are dropped; a null inside a free-form map is left to the validation.
 *
 * protojson reads an integer field sent as a JSON string of digits (`"roomsReplicas": "5"`) as
 * that integer, for int32 fields as for int64 ones (which Go clients send as strings): so is it
 * read here. Any other string (`"5.0"`, `"five"`) is left to the validation, which refuses it.
 *
 * protojson cannot tell a proto3 string sent as `""` from one not sent, and the management API
 * shows a field left unset with Maestro's zero value: an `imagePullPolicy`, `requests` or `limits`
 * never given is shown as `""`. So in a whole definition (create, new version) a `""` is read as
 * not set where the field is optional, has no default and `""` is no value of it (its enum or
 * pattern refuses it), and a GET answer sent back is taken. A field with a default (a forwarder's
 * `type`) is shown with it, never as `""`: a `""` there is refused, as Maestro refuses it. Not in a PATCH body, whose optional fields have presence in
 * Maestro: a `""` there is a value, which the validation refuses.
 *
 * protojson reads a list sent empty (`"forwarders": []`) as not set too, and Maestro's PATCH leaves
 * a list it did not get as it is. So in a PATCH body an empty list is read as not set: a Go client
 * that emits its empty lists (protojson's EmitUnpopulated) changes only what it sets, and does not
 * drop the forwarders, command, environment or ports it never meant to touch. In a whole definition
 * an empty list is the list, empty.
 */
import { isRecord } from '../json/is-record';
import type { JsonSchemaProps } from '../resources/json-schema-props';
import { joinField, joinIndex } from './field-path';
import type { FieldError } from './result';

/** A JSON string protojson reads as an integer: decimal digits with an optional sign, short enough to stay exact. */
const INTEGER_STRING = /^-?\d{1,15}$/;

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** The property of `schema` a key names, in its camelCase or its snake_case spelling; undefined for a key that names none. */
export function propertyNamed(key: string, schema: JsonSchemaProps): string | undefined {
  const properties = schema.properties ?? {};
  if (key in properties) return key;
  const camelCase = camel(key);
  return camelCase in properties ? camelCase : undefined;
}

export interface MaestroBodyOptions {
  /** Read `""` as not set where the field is optional and `""` is no value of it (a whole definition; not a PATCH body). */
  emptyAsUnset?: boolean;
  /** Read a list sent empty as not set (a PATCH body). */
  emptyListAsUnset?: boolean;
}

const refusesEmptyByPattern = new Map<string, boolean>();

/** Whether `""` is no value of a string field: its enum leaves it out, or its pattern does not match it. */
function refusesEmpty(schema: JsonSchemaProps): boolean {
  if (schema.type !== 'string') return false;
  if (schema.enum && !schema.enum.includes('')) return true;
  const pattern = schema.pattern;
  if (pattern === undefined) return false;
  let refused = refusesEmptyByPattern.get(pattern);
  if (refused === undefined) {
    refused = !new RegExp(pattern, 'u').test('');
    refusesEmptyByPattern.set(pattern, refused);
  }
  return refused;
}

/**
 * Whether a `""` sent for a field is read as not set (in a whole definition): the field is optional,
 * `""` is no value of it, and it has no default. A field with a default is never shown as `""`
 * (GET shows its default), so a `""` there is no GET answer sent back: as Maestro refuses an empty
 * forwarder `type`, so is it refused here (by the validation), not taken as the default.
 */
function readsEmptyAsUnset(field: JsonSchemaProps, name: string, parent: JsonSchemaProps): boolean {
  return !(parent.required ?? []).includes(name) && field.default === undefined && refusesEmpty(field);
}

/**
 * A copy of `data` with snake_case keys renamed wherever the schema names the camelCase property,
 * its null fields dropped (and, with `emptyAsUnset`, its optional fields sent as a `""` they cannot
 * hold; with `emptyListAsUnset`, its lists sent empty) and its integer fields sent as strings of
 * digits read as integers. Each field sent in both spellings is added to `sentTwice`.
 */
export function normaliseMaestroBody(data: unknown, schema: JsonSchemaProps, options: MaestroBodyOptions = {}, sentTwice: FieldError[] = []): unknown {
  return normalise(data, schema, options, sentTwice, '');
}

function normalise(data: unknown, schema: JsonSchemaProps, options: MaestroBodyOptions, sentTwice: FieldError[], path: string): unknown {
  if (Array.isArray(data)) return schema.items ? data.map((item, i) => normalise(item, schema.items as JsonSchemaProps, options, sentTwice, joinIndex(path, i))) : data;
  if (!isRecord(data)) return data;
  const properties = schema.properties;
  if (!properties) return data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const target = propertyNamed(key, schema) ?? key;
    if (target !== key && target in data) {
      sentTwice.push({ field: joinField(path, target), message: bothSpellings(key, target) });
      continue;
    }
    const propSchema = properties[target];
    if (value === null && propSchema && propSchema.nullable !== true) continue;
    if (value === '' && options.emptyAsUnset && propSchema && readsEmptyAsUnset(propSchema, target, schema)) continue;
    if (options.emptyListAsUnset && Array.isArray(value) && value.length === 0 && propSchema?.type === 'array') continue;
    if (typeof value === 'string' && propSchema?.type === 'integer' && INTEGER_STRING.test(value)) {
      out[target] = Number(value);
      continue;
    }
    out[target] = propSchema ? normalise(value, propSchema, options, sentTwice, joinField(path, target)) : value;
  }
  return out;
}

/** What a body that sends one field in both its spellings is told. */
export function bothSpellings(snake: string, camelCase: string): string {
  return `duplicate key: sent as both ${snake} and ${camelCase}, one field in its two spellings, and only one of the values could be kept; send it once (the request was refused and nothing changed)`;
}
