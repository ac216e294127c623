/**
 * The openAPIV3Schema part of custom resource validation (what kube-openapi's SchemaValidator
 * and apiextensions' error conversion do), plus x-kubernetes-list-type set/map invariants.
 * Messages follow the real server: `spec.x in body must be of type integer: "string"`.
 */
import {
  type FieldCause,
  duplicate,
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
} from './field-cause';
import { isValidFormat } from './string-formats';
import type { SchemaNode } from './schema-node';
import { isRecord } from '../../../../common/src/json/is-record';
import { jsonEqual } from '../../../../common/src/json/json-equal';

export function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

export function indexPath(path: string, i: number): string {
  return `${path}[${i}]`;
}

export function keyPath(path: string, key: string): string {
  return `${path}[${key}]`;
}

function inBody(path: string): string {
  return path === '' ? 'in body' : `${path} in body`;
}

/** The OpenAPI type name of a decoded JSON value, as kube-openapi reports it. */
function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'object':
      return 'object';
    default:
      return typeof v;
  }
}

function typeMatches(type: string, actual: string): boolean {
  if (type === actual) return true;
  return type === 'number' && actual === 'integer';
}

function runeLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Marks "no correlated old value" (create, or a value that did not exist before). */
export const NO_OLD: unique symbol = Symbol('no old value');

/** The identity of a list-type=map item: its key values, JSON-encoded. */
export function listMapKey(node: SchemaNode, item: unknown): string | undefined {
  if (!isRecord(item)) return undefined;
  return JSON.stringify(node.listMapKeys.map((k) => item[k] ?? null));
}

/**
 * Validates `value` at `path` against `node`, appending causes; never throws on odd data.
 * With a correlated `old` value (update), an unchanged value is not re-validated: this is the
 * CRDValidationRatcheting behaviour (beta, on by default since v1.30).
 */
export function validateValue(node: SchemaNode, value: unknown, path: string, errs: FieldCause[], isRoot = false, old: unknown = NO_OLD): void {
  if (old !== NO_OLD && jsonEqual(value, old)) return;
  const actual = jsonTypeName(value);
  if (value === null || value === undefined) {
    if (node.nullable) return;
    if (node.intOrString) {
      errs.push(typeInvalid(path, 'null', `${inBody(path)} must be of type integer,string: "null"`));
      return;
    }
    if (node.type !== undefined) {
      errs.push(typeInvalid(path, 'null', `${inBody(path)} must be of type ${node.type}: "null"`));
      return;
    }
  } else if (node.intOrString) {
    if (actual !== 'integer' && actual !== 'string') {
      errs.push(typeInvalid(path, actual, `${inBody(path)} must be of type integer,string: ${JSON.stringify(actual)}`));
      return;
    }
  } else if (node.type !== undefined && node.type !== '' && !typeMatches(node.type, actual)) {
    errs.push(typeInvalid(path, actual, `${inBody(path)} must be of type ${node.type}: ${JSON.stringify(actual)}`));
    return;
  }

  if (node.enumValues !== undefined && !node.enumValues.some((e) => jsonEqual(e, value))) {
    errs.push(notSupported(path, value, node.enumValues));
  }

  switch (actual) {
    case 'string':
      validateString(node, value as string, path, errs);
      break;
    case 'integer':
    case 'number':
      validateNumber(node, value as number, path, errs);
      break;
    case 'array':
      validateArray(node, value as unknown[], path, errs, old);
      break;
    case 'object':
      validateObject(node, value as Record<string, unknown>, path, errs, isRoot, old);
      break;
  }

  if (node.allOf.length > 0 || node.anyOf.length > 0 || node.oneOf.length > 0 || node.not !== undefined) {
    validateComposition(node, value, path, errs);
  }
}

function validateString(node: SchemaNode, s: string, path: string, errs: FieldCause[]): void {
  if (node.maxLength !== undefined || node.minLength !== undefined) {
    const len = runeLength(s);
    if (node.maxLength !== undefined && len > node.maxLength) errs.push(tooLong(path, node.maxLength));
    if (node.minLength !== undefined && len < node.minLength) {
      errs.push(invalid(path, s, `${inBody(path)} should be at least ${node.minLength} chars long`));
    }
  }
  if (node.pattern !== undefined && !node.pattern.test(s)) {
    errs.push(invalid(path, s, `${inBody(path)} should match '${node.patternSource ?? ''}'`));
  }
  if (node.format !== undefined && !isValidFormat(node.format, s)) {
    errs.push(typeInvalid(path, s, `${inBody(path)} must be of type ${node.format}: ${JSON.stringify(s)}`));
  }
}

function validateNumber(node: SchemaNode, n: number, path: string, errs: FieldCause[]): void {
  if (node.minimum !== undefined) {
    if (node.exclusiveMinimum ? n <= node.minimum : n < node.minimum) {
      const op = node.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      errs.push(invalid(path, n, `${inBody(path)} should be ${op} ${node.minimum}`));
    }
  }
  if (node.maximum !== undefined) {
    if (node.exclusiveMaximum ? n >= node.maximum : n > node.maximum) {
      const op = node.exclusiveMaximum ? 'less than' : 'less than or equal to';
      errs.push(invalid(path, n, `${inBody(path)} should be ${op} ${node.maximum}`));
    }
  }
  if (node.multipleOf !== undefined && node.multipleOf > 0) {
    const q = n / node.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) errs.push(invalid(path, n, `${inBody(path)} should be a multiple of ${node.multipleOf}`));
  }
}

function validateArray(node: SchemaNode, arr: unknown[], path: string, errs: FieldCause[], old: unknown): void {
  if (node.minItems !== undefined && arr.length < node.minItems) {
    errs.push(invalid(path, arr.length, `${inBody(path)} should have at least ${node.minItems} items`));
  }
  if (node.maxItems !== undefined && arr.length > node.maxItems) errs.push(tooMany(path, arr.length, node.maxItems));
  if (node.uniqueItems) {
    for (let i = 1; i < arr.length; i++) {
      if (arr.slice(0, i).some((x) => jsonEqual(x, arr[i]))) {
        errs.push(invalid(path, arr, `${inBody(path)} shouldn't contain duplicates`));
        break;
      }
    }
  }
  const items = node.items;
  if (items !== undefined) {
    const correlate = oldItemFinder(node, old);
    for (let i = 0; i < arr.length; i++) validateValue(items, arr[i], indexPath(path, i), errs, false, correlate(arr[i]));
  }
  if (node.listType === 'set') validateSet(arr, path, errs);
  else if (node.listType === 'map') validateListMap(node, arr, path, errs);
}

/** Correlates new list items with old ones: by key for list-type=map, by value for sets, not at all for atomic lists. */
function oldItemFinder(node: SchemaNode, old: unknown): (item: unknown) => unknown {
  if (!Array.isArray(old) || old.length === 0) return () => NO_OLD;
  if (node.listType === 'map') {
    const byKey = new Map<string, unknown>();
    for (const o of old) {
      const k = listMapKey(node, o);
      if (k !== undefined) byKey.set(k, o);
    }
    return (item) => {
      const k = listMapKey(node, item);
      return k !== undefined && byKey.has(k) ? byKey.get(k) : NO_OLD;
    };
  }
  if (node.listType === 'set') return (item) => (old.some((o) => jsonEqual(o, item)) ? item : NO_OLD);
  return () => NO_OLD;
}

function validateSet(arr: unknown[], path: string, errs: FieldCause[]): void {
  const seen = new Map<string, number>();
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    const key = typeof v === 'object' && v !== null ? JSON.stringify(v) : `${typeof v}:${String(v)}`;
    if (seen.has(key)) errs.push(duplicate(indexPath(path, i), v));
    else seen.set(key, i);
  }
}

function validateListMap(node: SchemaNode, arr: unknown[], path: string, errs: FieldCause[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < arr.length; i++) {
    const item = arr[i];
    if (!isRecord(item)) continue;
    const keyValues: Record<string, unknown> = {};
    for (const k of node.listMapKeys) {
      let v = item[k];
      if (v === undefined) {
        const keySchema = node.items?.properties?.get(k);
        if (keySchema?.hasDefault) v = keySchema.defaultValue;
      }
      if (v !== undefined) keyValues[k] = v;
    }
    const key = JSON.stringify(node.listMapKeys.map((k) => keyValues[k] ?? null));
    if (seen.has(key)) errs.push(duplicate(indexPath(path, i), keyValues));
    else seen.add(key);
  }
}

const OBJECT_META_KEYS = new Set(['name', 'generateName']);

function validateObject(node: SchemaNode, obj: Record<string, unknown>, path: string, errs: FieldCause[], isRoot: boolean, old: unknown): void {
  const oldObj = isRecord(old) ? old : undefined;
  const oldOf = (k: string): unknown => (oldObj !== undefined && Object.prototype.hasOwnProperty.call(oldObj, k) ? oldObj[k] : NO_OLD);
  const keys = Object.keys(obj);
  if (node.minProperties !== undefined && keys.length < node.minProperties) {
    errs.push(invalid(path, keys.length, `${inBody(path)} should have at least ${node.minProperties} properties`));
  }
  if (node.maxProperties !== undefined && keys.length > node.maxProperties) errs.push(tooMany(path, keys.length, node.maxProperties));
  for (const r of node.required) {
    if (!Object.prototype.hasOwnProperty.call(obj, r) || obj[r] === undefined) errs.push(required(childPath(path, r)));
  }
  if (node.embeddedResource && !isRoot) validateEmbeddedResource(obj, path, errs);
  const props = node.properties;
  const additional = node.additionalProperties;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    const prop = props?.get(k);
    if (prop !== undefined) {
      if (isRoot && k === 'metadata') {
        validateRootMetadata(prop, v, errs);
        continue;
      }
      validateValue(prop, v, childPath(path, k), errs, false, oldOf(k));
    } else if (typeof additional === 'object') {
      validateValue(additional, v, keyPath(path, k), errs, false, oldOf(k));
    } else if (additional === false && !(isRoot && (k === 'apiVersion' || k === 'kind' || k === 'metadata'))) {
      const p = childPath(path, k);
      errs.push(invalid(p, k, `${inBody(p)} is a forbidden property`));
    }
  }
}

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** x-kubernetes-embedded-resource objects need apiVersion and kind (objectmeta.validateEmbeddedResource). */
function validateEmbeddedResource(obj: Record<string, unknown>, path: string, errs: FieldCause[]): void {
  for (const k of ['apiVersion', 'kind']) {
    const p = childPath(path, k);
    const v = obj[k];
    if (v === undefined) errs.push(required(p, 'must not be empty'));
    else if (typeof v !== 'string') errs.push(invalid(p, v, 'must be a string'));
    else if (v === '') errs.push(invalid(p, v, 'must not be empty'));
    else if (k === 'apiVersion' && (v.split('/').length > 2 || v.startsWith('/') || v.endsWith('/'))) {
      errs.push(invalid(p, v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind' && (v.length > 63 || !DNS1035_LABEL.test(v.toLowerCase()))) {
      errs.push(
        invalid(
          p,
          v,
          "may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
      );
    }
  }
  const meta = obj.metadata;
  if (meta !== undefined && !isRecord(meta)) errs.push(invalid(childPath(path, 'metadata'), meta, 'must be an object'));
}

/** At the root, a CRD schema may only constrain metadata.name and metadata.generateName. */
function validateRootMetadata(node: SchemaNode, value: unknown, errs: FieldCause[]): void {
  if (!isRecord(value) || node.properties === undefined) return;
  for (const [k, prop] of node.properties) {
    if (!OBJECT_META_KEYS.has(k)) continue;
    const v = value[k];
    if (v !== undefined) validateValue(prop, v, `metadata.${k}`, errs);
  }
}

function validateComposition(node: SchemaNode, value: unknown, path: string, errs: FieldCause[]): void {
  const check = (n: SchemaNode): FieldCause[] => {
    const sub: FieldCause[] = [];
    validateValue(n, value, path, sub);
    return sub;
  };
  if (node.allOf.length > 0) {
    const sub = node.allOf.flatMap(check);
    if (sub.length > 0) {
      errs.push(...sub);
      errs.push(invalid(path, value, `${inBody(path)} must validate all the schemas (allOf)`));
    }
  }
  if (node.anyOf.length > 0) {
    const results = node.anyOf.map(check);
    if (!results.some((r) => r.length === 0)) {
      errs.push(...(results[0] ?? []));
      errs.push(invalid(path, value, `${inBody(path)} must validate at least one schema (anyOf)`));
    }
  }
  if (node.oneOf.length > 0) {
    const results = node.oneOf.map(check);
    const passing = results.filter((r) => r.length === 0).length;
    if (passing !== 1) {
      if (passing === 0) errs.push(...(results[0] ?? []));
      errs.push(invalid(path, value, `${inBody(path)} must validate one and only one schema (oneOf)`));
    }
  }
  if (node.not !== undefined && check(node.not).length === 0) {
    errs.push(invalid(path, value, `${inBody(path)} must not validate the schema (not)`));
  }
}
