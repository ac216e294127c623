/**
 * CEL standard functions and the Kubernetes CEL extensions our CRDs use (strings, lists, optionals,
 * regex, durations, timestamps). `callFunction` throws `CelEvalError` for unknown overloads.
 */
import {
  CelDuration,
  CelEvalError,
  CelOptional,
  Quantity,
  CelTimestamp,
  CelType,
  CelUint,
  type CelValue,
  INT64_MAX,
  INT64_MIN,
  UINT64_MAX,
  celCompare,
  formatDuration,
  formatTimestamp,
  noOverload,
  parseDuration,
  parseTimestamp,
  typeName,
} from './cel-values';
import { parseQuantity } from '../../../../../common/src/kube/quantity';
import { compileRe2 } from './re2-regexp';

type Fn = (target: CelValue | undefined, args: CelValue[]) => CelValue;

function str(v: CelValue | undefined, fn: string, all: (CelValue | undefined)[]): string {
  if (typeof v !== 'string') throw noOverload(fn, all.filter((x): x is CelValue => x !== undefined));
  return v;
}

function intArg(v: CelValue | undefined, fn: string): number {
  if (typeof v !== 'bigint') throw noOverload(fn, v === undefined ? [] : [v]);
  return Number(v);
}

/** Receiver-style (`x.f(a)`) or global (`f(x, a)`): returns [subject, remaining args]. */
function subject(target: CelValue | undefined, args: CelValue[]): [CelValue | undefined, CelValue[]] {
  return target !== undefined ? [target, args] : [args[0], args.slice(1)];
}

function codePoints(s: string): string[] {
  return Array.from(s);
}

function toInt(v: CelValue): bigint {
  if (typeof v === 'bigint') return v;
  if (v instanceof CelUint) {
    if (v.value > INT64_MAX) throw new CelEvalError('integer overflow');
    return v.value;
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v >= 2 ** 63 || v < -(2 ** 63)) throw new CelEvalError('integer overflow');
    return BigInt(Math.trunc(v));
  }
  if (typeof v === 'string') {
    if (!/^[-+]?\d+$/.test(v)) throw new CelEvalError(`type conversion error from 'string' to 'int'`);
    const n = BigInt(v);
    if (n > INT64_MAX || n < INT64_MIN) throw new CelEvalError('integer overflow');
    return n;
  }
  if (v instanceof CelTimestamp) return v.nanos / 1000000000n;
  if (v instanceof CelDuration) return v.nanos;
  throw noOverload('int', [v]);
}

function toDouble(v: CelValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof CelUint) return Number(v.value);
  if (typeof v === 'string') {
    const n = Number(v.trim());
    if (v.trim() === '' || Number.isNaN(n)) {
      if (/^[-+]?(nan|inf(inity)?)$/i.test(v)) return /nan/i.test(v) ? NaN : v.startsWith('-') ? -Infinity : Infinity;
      throw new CelEvalError(`type conversion error from 'string' to 'double'`);
    }
    return n;
  }
  throw noOverload('double', [v]);
}

function celToString(v: CelValue): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return String(v);
  if (v instanceof CelUint) return String(v.value);
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v instanceof CelDuration) return formatDuration(v);
  if (v instanceof CelTimestamp) return formatTimestamp(v);
  if (v instanceof CelType) return v.name;
  throw noOverload('string', [v]);
}

function sizeOf(v: CelValue | undefined): bigint {
  if (typeof v === 'string') return BigInt(codePoints(v).length);
  if (Array.isArray(v)) return BigInt(v.length);
  if (v instanceof Map) return BigInt(v.size);
  if (v instanceof Uint8Array) return BigInt(v.length);
  throw noOverload('size', v === undefined ? [] : [v]);
}

function list(v: CelValue | undefined, fn: string): CelValue[] {
  if (!Array.isArray(v)) throw noOverload(fn, v === undefined ? [] : [v]);
  return v;
}

function utcParts(t: CelValue | undefined, fn: string): Date {
  if (!(t instanceof CelTimestamp)) throw noOverload(fn, t === undefined ? [] : [t]);
  return new Date(Number(t.nanos / 1000000n));
}

const FUNCTIONS: Record<string, Fn> = {
  size: (t, a) => sizeOf(subject(t, a)[0]),
  int: (_t, a) => toInt(a[0] ?? null),
  uint: (_t, a) => {
    const v = a[0] ?? null;
    if (v instanceof CelUint) return v;
    const n = typeof v === 'number' ? BigInt(Math.trunc(v)) : typeof v === 'string' && /^\d+$/.test(v) ? BigInt(v) : typeof v === 'bigint' ? v : undefined;
    if (n === undefined) throw noOverload('uint', [v]);
    if (n < 0n || n > UINT64_MAX) throw new CelEvalError('unsigned integer overflow');
    return new CelUint(n);
  },
  double: (_t, a) => toDouble(a[0] ?? null),
  string: (_t, a) => celToString(a[0] ?? null),
  bool: (_t, a) => {
    const v = a[0] ?? null;
    if (typeof v === 'boolean') return v;
    if (typeof v === 'string') {
      if (['true', 'True', 'TRUE', 't', '1'].includes(v)) return true;
      if (['false', 'False', 'FALSE', 'f', '0'].includes(v)) return false;
      throw new CelEvalError(`type conversion error from 'string' to 'bool'`);
    }
    throw noOverload('bool', [v]);
  },
  bytes: (_t, a) => {
    const v = a[0] ?? null;
    if (v instanceof Uint8Array) return v;
    if (typeof v === 'string') return new TextEncoder().encode(v);
    throw noOverload('bytes', [v]);
  },
  dyn: (_t, a) => a[0] ?? null,
  type: (_t, a) => new CelType(typeName(a[0] ?? null)),
  duration: (_t, a) => {
    const v = a[0] ?? null;
    if (v instanceof CelDuration) return v;
    const d = typeof v === 'string' ? parseDuration(v) : undefined;
    if (d === undefined) throw new CelEvalError(`type conversion error from 'string' to 'google.protobuf.Duration'`);
    return d;
  },
  timestamp: (_t, a) => {
    const v = a[0] ?? null;
    if (v instanceof CelTimestamp) return v;
    if (typeof v === 'bigint') return new CelTimestamp(v * 1000000000n);
    const ts = typeof v === 'string' ? parseTimestamp(v) : undefined;
    if (ts === undefined) throw new CelEvalError(`type conversion error from 'string' to 'google.protobuf.Timestamp'`);
    return ts;
  },
  matches: (t, a) => {
    const [s, rest] = subject(t, a);
    return compileRe2(str(rest[0], 'matches', [s, ...rest])).test(str(s, 'matches', [s, ...rest]));
  },
  startsWith: (t, a) => str(t, 'startsWith', [t, ...a]).startsWith(str(a[0], 'startsWith', [t, ...a])),
  endsWith: (t, a) => str(t, 'endsWith', [t, ...a]).endsWith(str(a[0], 'endsWith', [t, ...a])),
  contains: (t, a) => str(t, 'contains', [t, ...a]).includes(str(a[0], 'contains', [t, ...a])),
  lowerAscii: (t, a) => str(t, 'lowerAscii', [t, ...a]).replace(/[A-Z]/g, (c) => c.toLowerCase()),
  upperAscii: (t, a) => str(t, 'upperAscii', [t, ...a]).replace(/[a-z]/g, (c) => c.toUpperCase()),
  trim: (t, a) => str(t, 'trim', [t, ...a]).trim(),
  split: (t, a) => {
    const s = str(t, 'split', [t, ...a]);
    const sep = str(a[0], 'split', [t, ...a]);
    const parts = s.split(sep);
    if (a.length > 1) {
      const n = intArg(a[1], 'split');
      if (n === 0) return [];
      if (n > 0 && parts.length > n) return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
    }
    return parts;
  },
  join: (t, a) => {
    const items = list(t, 'join');
    const sep = a.length > 0 ? str(a[0], 'join', [t, ...a]) : '';
    return items.map((i) => str(i, 'join', [t, ...a])).join(sep);
  },
  replace: (t, a) => {
    const s = str(t, 'replace', [t, ...a]);
    const from = str(a[0], 'replace', [t, ...a]);
    const to = str(a[1], 'replace', [t, ...a]);
    if (a.length > 2) {
      let n = intArg(a[2], 'replace');
      if (n < 0) return s.split(from).join(to);
      let out = s;
      let pos = 0;
      while (n-- > 0) {
        const i = out.indexOf(from, pos);
        if (i < 0) break;
        out = out.slice(0, i) + to + out.slice(i + from.length);
        pos = i + to.length;
      }
      return out;
    }
    return s.split(from).join(to);
  },
  indexOf: (t, a) => {
    if (Array.isArray(t)) return BigInt(t.findIndex((x) => celCompareSafe(x, a[0] ?? null)));
    const cps = codePoints(str(t, 'indexOf', [t, ...a]));
    const needle = codePoints(str(a[0], 'indexOf', [t, ...a])).join('');
    const from = a.length > 1 ? intArg(a[1], 'indexOf') : 0;
    if (from < 0 || from > cps.length) throw new CelEvalError(`index out of range: ${from}`);
    for (let i = from; i + codePoints(needle).length <= cps.length; i++) if (cps.slice(i).join('').startsWith(needle)) return BigInt(i);
    return -1n;
  },
  lastIndexOf: (t, a) => {
    if (Array.isArray(t)) {
      for (let i = t.length - 1; i >= 0; i--) if (celCompareSafe(t[i] as CelValue, a[0] ?? null)) return BigInt(i);
      return -1n;
    }
    const cps = codePoints(str(t, 'lastIndexOf', [t, ...a]));
    const needle = str(a[0], 'lastIndexOf', [t, ...a]);
    for (let i = cps.length - codePoints(needle).length; i >= 0; i--) if (cps.slice(i).join('').startsWith(needle)) return BigInt(i);
    return -1n;
  },
  substring: (t, a) => {
    const cps = codePoints(str(t, 'substring', [t, ...a]));
    const start = intArg(a[0], 'substring');
    const end = a.length > 1 ? intArg(a[1], 'substring') : cps.length;
    if (start < 0 || start > cps.length || end < start || end > cps.length) throw new CelEvalError(`index out of range: ${start}`);
    return cps.slice(start, end).join('');
  },
  charAt: (t, a) => {
    const cps = codePoints(str(t, 'charAt', [t, ...a]));
    const i = intArg(a[0], 'charAt');
    if (i < 0 || i > cps.length) throw new CelEvalError(`index out of range: ${i}`);
    return cps[i] ?? '';
  },
  isSorted: (t) => {
    const items = list(t, 'isSorted');
    for (let i = 1; i < items.length; i++) if (celCompare(items[i - 1] as CelValue, items[i] as CelValue) > 0) return false;
    return true;
  },
  sum: (t) => {
    const items = list(t, 'sum');
    if (items.length === 0) return 0n;
    return items.slice(1).reduce<CelValue>((acc, x) => {
      if (typeof acc === 'bigint' && typeof x === 'bigint') return acc + x;
      if (typeof acc === 'number' && typeof x === 'number') return acc + x;
      if (acc instanceof CelDuration && x instanceof CelDuration) return new CelDuration(acc.nanos + x.nanos);
      throw noOverload('sum', [acc, x]);
    }, items[0] as CelValue);
  },
  min: (t, a) => extreme(t !== undefined ? t : a.length === 1 ? (a[0] ?? null) : a, -1),
  max: (t, a) => extreme(t !== undefined ? t : a.length === 1 ? (a[0] ?? null) : a, 1),
  hasValue: (t) => {
    if (!(t instanceof CelOptional)) throw noOverload('hasValue', t === undefined ? [] : [t]);
    return t.present;
  },
  value: (t) => {
    if (!(t instanceof CelOptional)) throw noOverload('value', t === undefined ? [] : [t]);
    if (!t.present) throw new CelEvalError('optional.none() dereference');
    return t.inner;
  },
  getFullYear: (t) => BigInt(utcParts(t, 'getFullYear').getUTCFullYear()),
  getMonth: (t) => BigInt(utcParts(t, 'getMonth').getUTCMonth()),
  getDate: (t) => BigInt(utcParts(t, 'getDate').getUTCDate()),
  getDayOfMonth: (t) => BigInt(utcParts(t, 'getDayOfMonth').getUTCDate() - 1),
  getDayOfWeek: (t) => BigInt(utcParts(t, 'getDayOfWeek').getUTCDay()),
  getHours: (t) => (t instanceof CelDuration ? t.nanos / 3600000000000n : BigInt(utcParts(t, 'getHours').getUTCHours())),
  getMinutes: (t) => (t instanceof CelDuration ? t.nanos / 60000000000n : BigInt(utcParts(t, 'getMinutes').getUTCMinutes())),
  getSeconds: (t) => (t instanceof CelDuration ? t.nanos / 1000000000n : BigInt(utcParts(t, 'getSeconds').getUTCSeconds())),
  getMilliseconds: (t) => (t instanceof CelDuration ? t.nanos / 1000000n : BigInt(utcParts(t, 'getMilliseconds').getUTCMilliseconds())),
};

function quantityArg(v: CelValue | undefined, fn: string): Quantity {
  if (v instanceof Quantity) return v;
  if (typeof v === 'bigint') return new Quantity(v, 0, v.toString());
  throw noOverload(fn, v === undefined ? [] : [v]);
}

const QUANTITY_FUNCTIONS: Record<string, Fn> = {
  quantity: (_t, a) => {
    const v = a[0] ?? null;
    const q = typeof v === 'string' ? parseQuantity(v) : undefined;
    if (q === undefined) throw new CelEvalError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    return q;
  },
  isQuantity: (_t, a) => typeof a[0] === 'string' && parseQuantity(a[0]) !== undefined,
  compareTo: (t, a) => BigInt(quantityArg(t, 'compareTo').compare(quantityArg(a[0], 'compareTo'))),
  isGreaterThan: (t, a) => quantityArg(t, 'isGreaterThan').compare(quantityArg(a[0], 'isGreaterThan')) > 0,
  isLessThan: (t, a) => quantityArg(t, 'isLessThan').compare(quantityArg(a[0], 'isLessThan')) < 0,
  isInteger: (t) => quantityArg(t, 'isInteger').isInteger(),
  asInteger: (t) => {
    const n = quantityArg(t, 'asInteger').asInteger();
    if (n === undefined || n > INT64_MAX || n < INT64_MIN) throw new CelEvalError('cannot convert value to integer');
    return n;
  },
  asApproximateFloat: (t) => quantityArg(t, 'asApproximateFloat').asApproximateFloat(),
  sign: (t) => quantityArg(t, 'sign').sign(),
  add: (t, a) => quantityArg(t, 'add').add(quantityArg(a[0], 'add'), 1n),
  sub: (t, a) => quantityArg(t, 'sub').add(quantityArg(a[0], 'sub'), -1n),
};

function celCompareSafe(a: CelValue, b: CelValue): boolean {
  try {
    return celCompare(a, b) === 0;
  } catch {
    return false;
  }
}

function extreme(v: CelValue, sign: number): CelValue {
  const items = Array.isArray(v) ? v : [v];
  if (items.length === 0) throw new CelEvalError('min/max called on an empty list');
  let best = items[0] as CelValue;
  for (const x of items.slice(1)) if (celCompare(x, best) * sign > 0) best = x;
  return best;
}

export function callFunction(name: string, target: CelValue | undefined, args: CelValue[]): CelValue {
  const fn = Object.prototype.hasOwnProperty.call(FUNCTIONS, name)
    ? FUNCTIONS[name]
    : Object.prototype.hasOwnProperty.call(QUANTITY_FUNCTIONS, name)
      ? QUANTITY_FUNCTIONS[name]
      : undefined;
  if (fn === undefined) throw new CelEvalError(`undeclared reference to '${name}'`);
  return fn(target, args);
}
