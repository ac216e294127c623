/**
 * Compiles a CRD schema (translated by ajv-schema.ts) into a validator that prunes unknown fields,
 * applies defaults and reports every violation with a Kubernetes-style field path.
 */
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { jsonText } from '../json/json-text';
import { jsonTypeName } from '../json/json-type';
import type { JsonSchemaProps } from '../resources/json-schema-props';
import { NOT_A_VERSION } from '../resources/scheduler-version';
import { toAjvSchema, type AjvSchema, type TranslateOptions } from './ajv-schema';
import { joinField, joinIndex, joinMapKey } from './field-path';
import type { FieldError } from './result';

export interface SchemaCheck {
  /** A pruned and defaulted deep copy of the input (the input itself is never changed). */
  value: unknown;
  errors: FieldError[];
}

export type SchemaValidator = (data: unknown) => SchemaCheck;

function newAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: true, useDefaults: true, strict: false, coerceTypes: false });
  addFormats(ajv, ['date-time']);
  return ajv;
}

/** A JSON deep copy; undefined when the input is not JSON (cycles, BigInt). */
function jsonCopy(data: unknown): { value: unknown } | undefined {
  if (data === undefined) return { value: undefined };
  try {
    const text = jsonText(data);
    return { value: text === undefined ? undefined : (JSON.parse(text) as unknown) };
  } catch {
    return undefined;
  }
}

function child(schema: AjvSchema | undefined, key: string): AjvSchema | undefined {
  if (!schema) return undefined;
  const properties = schema.properties as Record<string, AjvSchema> | undefined;
  if (properties?.[key]) return properties[key];
  if (typeof schema.additionalProperties === 'object') return schema.additionalProperties as AjvSchema;
  return undefined;
}

/**
 * `/spec/containers/0/name` into `spec.containers[0].name`, walking the data to tell list indexes
 * and the schema to tell map keys (`labels[app]`, as Kubernetes writes them) from properties.
 */
function fieldOf(instancePath: string, data: unknown, schema?: AjvSchema): string {
  if (instancePath === '') return '';
  let field = '';
  let node: unknown = data;
  let nodeSchema = schema;
  for (const raw of instancePath.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^[0-9]+$/.test(segment)) {
      field = joinIndex(field, Number(segment));
      node = node[Number(segment)];
      nodeSchema = nodeSchema?.items as AjvSchema | undefined;
      continue;
    }
    const isMapKey = nodeSchema !== undefined && !(nodeSchema.properties as Record<string, unknown> | undefined)?.[segment] && typeof nodeSchema.additionalProperties === 'object';
    field = isMapKey ? joinMapKey(field, segment) : joinField(field, segment);
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
    nodeSchema = child(nodeSchema, segment);
  }
  return field;
}


/** Friendlier words for the patterns of crds/ (the API server shows the bare pattern). */
const PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$': "must be an RFC 1123 label: lower-case letters, digits or '-', starting and ending with a letter or digit",
  '^([Tt][Cc][Pp]|[Uu][Dd][Pp]|[Ss][Cc][Tt][Pp])$': 'must be TCP, UDP or SCTP (in either case)',
  '^([0-9]{1,7}(\\.[0-9]+)?(ns|us|ms|s|m|h))+$': 'must be a duration with a unit, such as "100s", with at most 7 digits before a unit',
  '^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?[0-9]+))?$':
    'must be a Kubernetes quantity of at least 0, such as "100m", "0.5" or "512Mi"',
  '^[^\\s\\x00-\\x1f\\x7f]([^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$': 'must not begin or end with whitespace, nor hold a control character (such as NUL or a newline)',
  '^[-._a-zA-Z][-._a-zA-Z0-9]*$': "must be an environment variable name: letters, digits, '_', '-' or '.', not starting with a digit",
  "^(metadata\\.(name|namespace|uid)|spec\\.(nodeName|serviceAccountName)|status\\.(hostIP|podIP|podIPs)|metadata\\.(labels|annotations)\\['[^']+'\\])$":
    "must be a Pod field the downward API gives an environment variable: metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, status.hostIP, status.podIP or status.podIPs",
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$': "must be a DNS subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit",
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$': "must be empty or a DNS subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit",
  '^[-._a-zA-Z0-9]+$': "must be a Secret key: letters, digits, '-', '_' or '.'",
  '^[a-z0-9]+(-[a-z0-9]+)*$': "must be an IANA service name: lower-case letters and digits, with single '-' between them",
  '^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$':
    "must be empty or a qualified name (a label key): an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
  '^v[0-9]{1,9}\\.[0-9]{1,9}\\.[0-9]{1,9}$': NOT_A_VERSION,
  '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$': "must be a label value: letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
};

/**
 * Words for fields whose schema says it in several keywords (or in a pattern too long to read):
 * any violation of one of these keywords gets the field's one message.
 */
const FIELD_MESSAGES: ReadonlyArray<{ field: RegExp; keywords: ReadonlySet<string>; message: string }> = [
  {
    field: /(^|\.)forwarders\[\d+\]\.address$/,
    keywords: new Set(['pattern']),
    message: 'must be host:port: a DNS name, an IPv4 address or a bracketed IPv6 address, then ":" and a port from 1 to 65535, such as "matchmaker.games.svc:9000" (no scheme such as unix: or dns:)',
  },
  {
    field: /(^|\.)forwarders\[\d+\]\.options\.timeout$/,
    keywords: new Set(['pattern', 'minimum', 'maximum', 'maxLength', 'type']),
    message: 'must be a whole number of milliseconds from 1 to 3600000: an integer such as 1000, or a string of digits such as "1000"; leave it out for 1000',
  },
];

function fieldMessage(field: string, keyword: string): string | undefined {
  return FIELD_MESSAGES.find((m) => m.keywords.has(keyword) && m.field.test(field))?.message;
}

function describe(value: unknown): string {
  const text = jsonText(value);
  return text === undefined ? String(value) : text.length > 64 ? `${text.slice(0, 61)}...` : text;
}

/** The value a type error got, by its JSON type and, for a scalar, its text: `string "5"`, `number 1.5`, `an array`. */
function gotValue(data: unknown): string {
  return data === null || typeof data === 'object' ? jsonTypeName(data) : `${jsonTypeName(data)} ${describe(data)}`;
}

function messageOf(error: ErrorObject, data: unknown): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'Required value';
    case 'type':
      return `must be of type ${Array.isArray(p.type) ? p.type.join(' or ') : String(p.type)}; got ${gotValue(data)}`;
    case 'enum':
      return `Unsupported value: ${describe(data)}: supported values: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern':
      return PATTERN_MESSAGES[String(p.pattern)] ?? `should match '${String(p.pattern)}'`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `should be at least ${String(p.limit)} chars long`;
    case 'maxLength':
      return `Too long: may not be longer than ${String(p.limit)}`;
    case 'minimum':
      return `should be greater than or equal to ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `should be greater than ${String(p.limit)}`;
    case 'maximum':
      return `should be less than or equal to ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `should be less than ${String(p.limit)}`;
    case 'minItems':
      return p.limit === 1 ? 'must not be empty' : `should have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `Too many: must have at most ${String(p.limit)} items`;
    case 'minProperties':
      return `should have at least ${String(p.limit)} properties`;
    case 'maxProperties':
      return `Too many: must have at most ${String(p.limit)} properties`;
    case 'format':
      return p.format === 'date-time' ? 'must be an RFC 3339 date-time' : `must be a valid ${String(p.format)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function valueAt(root: unknown, instancePath: string): unknown {
  let node = root;
  if (instancePath === '') return node;
  for (const raw of instancePath.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return node;
}

/**
 * How many violations a refusal names. A body of tens of thousands of bad labels must not cost a
 * second of CPU and a response of megabytes (ajv still finds them all, in a few milliseconds).
 */
export const VIOLATIONS_NAMED = 50;

/** Compiles once; the returned function is safe to call with anything. */
export function compileSchemaValidator(schema: JsonSchemaProps, options: TranslateOptions = {}): SchemaValidator {
  const ajvSchema = toAjvSchema(schema, options);
  const validate = newAjv().compile(ajvSchema);
  return (data) => {
    const copy = jsonCopy(data);
    if (!copy) return { value: undefined, errors: [{ field: '', message: 'must be a JSON document' }] };
    const value = copy.value;
    if (validate(value)) return { value, errors: [] };
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    const found = validate.errors ?? [];
    // An empty string that must not be empty is told so; that it also fails the field's pattern says nothing more.
    const empty = new Set(found.filter((e) => e.keyword === 'minLength' && valueAt(value, e.instancePath) === '').map((e) => e.instancePath));
    let read = 0;
    for (const error of found) {
      if (errors.length === VIOLATIONS_NAMED) break;
      read += 1;
      if (error.keyword === 'pattern' && empty.has(error.instancePath)) continue;
      const base = fieldOf(error.instancePath, value, ajvSchema);
      const field = error.keyword === 'required' ? joinField(base, (error.params as { missingProperty: string }).missingProperty) : base;
      const message = fieldMessage(field, error.keyword) ?? messageOf(error, valueAt(value, error.instancePath));
      const key = `${field}\u0000${message}`;
      if (!seen.has(key)) {
        seen.add(key);
        errors.push({ field, message });
      }
    }
    const more = found.length - read;
    if (more > 0) errors.push({ field: '(body)', message: `and ${more} more ${more === 1 ? 'violation' : 'violations'}, not named here (only the first ${VIOLATIONS_NAMED} are); mend these and send it again` });
    return { value, errors };
  };
}
