/**
 * CEL runtime values and the operations every part of the evaluator shares: type names,
 * equality, ordering, and the conversion of JSON data (guided by the structural schema) to CEL.
 *
 * Representation: int = bigint, uint = CelUint, double = number, string, bool, null, bytes = Uint8Array,
 * list = CelValue[], map/object = Map, plus the classes below.
 */
import { CelUint } from './cel-parser';
import { Quantity } from '../../../../../common/src/kube/quantity';

export { Quantity, CelUint };

export class CelEvalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelEvalError';
  }
}

export class CelDuration {
  constructor(readonly nanos: bigint) {}
}

export class CelTimestamp {
  constructor(readonly nanos: bigint) {}
}

export class CelType {
  constructor(readonly name: string) {}
}

export class CelOptional {
  private static readonly NONE = new CelOptional(false, null);
  private constructor(readonly present: boolean, readonly inner: CelValue) {}
  static of(v: CelValue): CelOptional {
    return new CelOptional(true, v);
  }
  static none(): CelOptional {
    return CelOptional.NONE;
  }
}

export type CelMap = Map<CelMapKey, CelValue>;
export type CelMapKey = string | bigint | boolean | CelUint;
export type CelValue =
  | bigint
  | number
  | string
  | boolean
  | null
  | CelUint
  | Uint8Array
  | CelValue[]
  | CelMap
  | CelDuration
  | CelTimestamp
  | CelType
  | CelOptional
  | Quantity;

export const INT64_MAX = 9223372036854775807n;
export const INT64_MIN = -9223372036854775808n;
export const UINT64_MAX = 18446744073709551615n;

export function checkInt(v: bigint): bigint {
  if (v > INT64_MAX || v < INT64_MIN) throw new CelEvalError('integer overflow');
  return v;
}

export function typeName(v: CelValue): string {
  if (v === null) return 'null_type';
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (v instanceof CelUint) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'map';
  if (v instanceof CelDuration) return 'google.protobuf.Duration';
  if (v instanceof CelTimestamp) return 'google.protobuf.Timestamp';
  if (v instanceof CelType) return 'type';
  if (v instanceof Quantity) return 'kubernetes.Quantity';
  return 'optional_type';
}

function numericValue(v: CelValue): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof CelUint) return v.value;
  return undefined;
}

function compareNumeric(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** CEL heterogeneous equality: values of different kinds are unequal, numbers compare by value. */
export function celEquals(a: CelValue, b: CelValue): boolean {
  const na = numericValue(a);
  const nb = numericValue(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && compareNumeric(na, nb) === 0;
  if (a === null || b === null) return a === b;
  if (typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => celEquals(x, b[i] as CelValue));
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) {
      const other = mapGet(b, k);
      if (other === undefined || !celEquals(v, other)) return false;
    }
    return true;
  }
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof CelDuration) return b instanceof CelDuration && a.nanos === b.nanos;
  if (a instanceof CelTimestamp) return b instanceof CelTimestamp && a.nanos === b.nanos;
  if (a instanceof CelType) return b instanceof CelType && a.name === b.name;
  if (a instanceof Quantity) return b instanceof Quantity && a.compare(b) === 0;
  if (a instanceof CelOptional) {
    return b instanceof CelOptional && a.present === b.present && (!a.present || celEquals(a.inner, b.inner));
  }
  return false;
}

/** Ordering for `<`, `<=`, `>`, `>=`; throws for unordered kinds. */
export function celCompare(a: CelValue, b: CelValue): number {
  const na = numericValue(a);
  const nb = numericValue(b);
  if (na !== undefined && nb !== undefined) return compareNumeric(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof CelDuration && b instanceof CelDuration) return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
  if (a instanceof CelTimestamp && b instanceof CelTimestamp) return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = (a[i] ?? 0) - (b[i] ?? 0);
      if (d !== 0) return d;
    }
    return a.length - b.length;
  }
  throw noOverload('_<_', [a, b]);
}

export function noOverload(fn: string, args: CelValue[]): CelEvalError {
  return new CelEvalError(`no such overload: ${fn}(${args.map(typeName).join(', ')})`);
}

/** A map key as an error message shows it: a scalar printed (a uint as its number), any other value by its type. */
export function keyText(v: CelValue): string {
  if (typeof v === 'string' || typeof v === 'bigint' || typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (v instanceof CelUint) return String(v.value);
  return typeName(v);
}

export function toMapKey(v: CelValue): CelMapKey {
  if (typeof v === 'string' || typeof v === 'bigint' || typeof v === 'boolean' || v instanceof CelUint) return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new CelEvalError(`unsupported map key type: ${typeName(v)}`);
}

/** Map lookup with numeric key equivalence (1 == 1u). */
export function mapGet(m: CelMap, key: CelValue): CelValue | undefined {
  if (typeof key === 'string' || typeof key === 'boolean') return m.get(key);
  const n = numericValue(key);
  if (n === undefined) return undefined;
  if (typeof n === 'number' && !Number.isInteger(n)) return undefined;
  const big = BigInt(n);
  const direct = m.get(big);
  if (direct !== undefined) return direct;
  for (const [k, v] of m) if (k instanceof CelUint && k.value === big) return v;
  return undefined;
}

/** What conversion needs to know about a schema node. */
export interface CelSchemaShape {
  type?: string;
  format?: string;
  intOrString: boolean;
  properties?: Map<string, CelSchemaShape>;
  additionalProperties?: CelSchemaShape;
  items?: CelSchemaShape;
}

/** Converts decoded JSON to a CEL value following the schema (integers to int, date-time strings to timestamps...). */
export function jsonToCel(value: unknown, shape: CelSchemaShape | undefined): CelValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
      if (shape?.format === 'date-time' || shape?.format === 'datetime') {
        const ts = parseTimestamp(value);
        if (ts !== undefined) return ts;
      } else if (shape?.format === 'duration') {
        const d = parseDuration(value);
        if (d !== undefined) return d;
      }
      return value;
    case 'boolean':
      return value;
    case 'number':
      if (shape?.type === 'number') return value;
      return Number.isInteger(value) && Number.isSafeInteger(value) ? BigInt(value) : value;
    case 'object':
      if (Array.isArray(value)) return value.map((v) => jsonToCel(v, shape?.items));
      {
        const m: CelMap = new Map();
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          m.set(k, jsonToCel(v, shape?.properties?.get(k) ?? shape?.additionalProperties));
        }
        return m;
      }
    default:
      return null;
  }
}

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  'µs': 1000n,
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n,
};

/** Parses a Go duration string (`1h30m`, `1.5s`, `-10ms`). */
export function parseDuration(text: string): CelDuration | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(text);
  if (!m) return text === '0' ? new CelDuration(0n) : undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  let total = 0n;
  for (const part of text.slice((m[1] ?? '').length).matchAll(/(\d*)(?:\.(\d*))?(ns|us|µs|ms|s|m|h)/g)) {
    const unit = DURATION_UNITS[part[3] ?? 's'] ?? 1n;
    const whole = BigInt(part[1] || '0');
    const frac = part[2] ?? '';
    let fracNanos = 0n;
    if (frac.length > 0) fracNanos = (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += whole * unit + fracNanos;
  }
  return new CelDuration(sign * total);
}

export function formatDuration(d: CelDuration): string {
  const nanos = d.nanos;
  const secs = Number(nanos) / 1e9;
  return `${secs}s`;
}

/** Parses an RFC 3339 timestamp. */
export function parseTimestamp(text: string): CelTimestamp | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return undefined;
  const [, year = '', month = '', day = '', hour = '', minute = '', second = '', , zone = 'Z'] = m;
  const ms = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${zone.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  const frac = (m[7] ?? '').padEnd(9, '0');
  return new CelTimestamp(BigInt(ms) * 1000000n + BigInt(frac || '0'));
}

export function formatTimestamp(t: CelTimestamp): string {
  const ms = Number(t.nanos / 1000000n);
  const nanos = t.nanos % 1000000000n;
  const base = new Date(ms).toISOString().slice(0, 19);
  if (nanos === 0n) return `${base}Z`;
  return `${base}.${nanos.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}
