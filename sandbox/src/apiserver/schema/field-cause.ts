/**
 * One field-level validation failure, shaped like a Kubernetes `StatusCause`, plus the constructors
 * that render messages the way apimachinery's `field.Error.ErrorBody()` does (kubectl shows them).
 */

import { jsonText } from '../../../../common/src/json/json-text';
import { fieldText } from '../kube-object';

export interface FieldCause {
  /** FieldValueInvalid|FieldValueRequired|FieldValueNotSupported|FieldValueTypeInvalid|FieldValueForbidden|FieldValueDuplicate|FieldValueTooLong|FieldValueTooMany */
  reason: string;
  /** e.g. `spec.portRange.start`, `spec.template.containers[0].ports[1].name`, `metadata.labels[app]`; the root is `<nil>`. */
  field: string;
  /** Kubernetes-style text without the field prefix, e.g. `Required value`. */
  message: string;
}

/** The field string the real server uses for the root of a custom resource (a nil field.Path). */
export const ROOT_FIELD = '<nil>';

/** Renders a bad value as Go's `%v`/`%q`/`%#v` would for JSON-decoded data (field.Error.ErrorBody). */
function formatBadValue(value: unknown): string {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return goSyntax(value, 0);
}

/** Go's `%#v` for decoded JSON (`map[string]interface {}{"a":1}`, `[]interface {}{"x"}`). */
function goSyntax(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value !== 'object') return fieldText(value);
  if (depth > 20) return '...';
  if (Array.isArray(value)) return `[]interface {}{${value.map((v) => goSyntax(v, depth + 1)).join(', ')}}`;
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${goSyntax((value as Record<string, unknown>)[k], depth + 1)}`);
  return `map[string]interface {}{${entries.join(', ')}}`;
}

function withDetail(body: string, detail: string): string {
  return detail.length > 0 ? `${body}: ${detail}` : body;
}

function fieldName(path: string): string {
  return path === '' ? ROOT_FIELD : path;
}

export function invalid(path: string, value: unknown, detail: string): FieldCause {
  return { reason: 'FieldValueInvalid', field: fieldName(path), message: withDetail(`Invalid value: ${formatBadValue(value)}`, detail) };
}

export function typeInvalid(path: string, value: unknown, detail: string): FieldCause {
  return { reason: 'FieldValueTypeInvalid', field: fieldName(path), message: withDetail(`Invalid value: ${formatBadValue(value)}`, detail) };
}

export function required(path: string, detail = ''): FieldCause {
  return { reason: 'FieldValueRequired', field: fieldName(path), message: withDetail('Required value', detail) };
}

export function forbidden(path: string, detail: string): FieldCause {
  return { reason: 'FieldValueForbidden', field: fieldName(path), message: withDetail('Forbidden', detail) };
}

export function duplicate(path: string, value: unknown): FieldCause {
  return { reason: 'FieldValueDuplicate', field: fieldName(path), message: `Duplicate value: ${formatBadValue(value)}` };
}

export function notSupported(path: string, value: unknown, supported: readonly unknown[]): FieldCause {
  const quoted = supported.map((v) => JSON.stringify(typeof v === 'string' ? v : formatPlain(v)));
  const detail = quoted.length > 0 ? `supported values: ${quoted.join(', ')}` : '';
  return { reason: 'FieldValueNotSupported', field: fieldName(path), message: withDetail(`Unsupported value: ${formatBadValue(value)}`, detail) };
}

export function tooLong(path: string, maxLength: number): FieldCause {
  const detail = maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return { reason: 'FieldValueTooLong', field: fieldName(path), message: `Too long: ${detail}` };
}

export function tooMany(path: string, actual: number, max: number): FieldCause {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items';
  const body = actual >= 0 ? `Too many: ${actual}` : 'Too many';
  return { reason: 'FieldValueTooMany', field: fieldName(path), message: `${body}: ${detail}` };
}

function formatPlain(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return jsonText(value) ?? String(value);
  } catch {
    return String(value);
  }
}
