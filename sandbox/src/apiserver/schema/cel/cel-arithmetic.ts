/**
 * CEL arithmetic: int64 with overflow errors, uint64, double, string/list/bytes concatenation,
 * and timestamp/duration arithmetic.
 */
import { CelDuration, CelEvalError, CelTimestamp, CelUint, type CelValue, UINT64_MAX, checkInt, noOverload } from './cel-values';

function checkUint(v: bigint): CelUint {
  if (v < 0n || v > UINT64_MAX) throw new CelEvalError('unsigned integer overflow');
  return new CelUint(v);
}

export function negate(v: CelValue): CelValue {
  if (typeof v === 'bigint') return checkInt(-v);
  if (typeof v === 'number') return -v;
  if (v instanceof CelDuration) return new CelDuration(-v.nanos);
  throw noOverload('-_', [v]);
}

export function add(l: CelValue, r: CelValue): CelValue {
  if (typeof l === 'bigint' && typeof r === 'bigint') return checkInt(l + r);
  if (typeof l === 'number' && typeof r === 'number') return l + r;
  if (l instanceof CelUint && r instanceof CelUint) return checkUint(l.value + r.value);
  if (typeof l === 'string' && typeof r === 'string') return l + r;
  if (Array.isArray(l) && Array.isArray(r)) return [...l, ...r];
  if (l instanceof Uint8Array && r instanceof Uint8Array) {
    const out = new Uint8Array(l.length + r.length);
    out.set(l);
    out.set(r, l.length);
    return out;
  }
  if (l instanceof CelDuration && r instanceof CelDuration) return new CelDuration(l.nanos + r.nanos);
  if (l instanceof CelTimestamp && r instanceof CelDuration) return new CelTimestamp(l.nanos + r.nanos);
  if (l instanceof CelDuration && r instanceof CelTimestamp) return new CelTimestamp(l.nanos + r.nanos);
  throw noOverload('_+_', [l, r]);
}

export function subtract(l: CelValue, r: CelValue): CelValue {
  if (typeof l === 'bigint' && typeof r === 'bigint') return checkInt(l - r);
  if (typeof l === 'number' && typeof r === 'number') return l - r;
  if (l instanceof CelUint && r instanceof CelUint) return checkUint(l.value - r.value);
  if (l instanceof CelDuration && r instanceof CelDuration) return new CelDuration(l.nanos - r.nanos);
  if (l instanceof CelTimestamp && r instanceof CelDuration) return new CelTimestamp(l.nanos - r.nanos);
  if (l instanceof CelTimestamp && r instanceof CelTimestamp) return new CelDuration(l.nanos - r.nanos);
  throw noOverload('_-_', [l, r]);
}

export function multiply(l: CelValue, r: CelValue): CelValue {
  if (typeof l === 'bigint' && typeof r === 'bigint') return checkInt(l * r);
  if (typeof l === 'number' && typeof r === 'number') return l * r;
  if (l instanceof CelUint && r instanceof CelUint) return checkUint(l.value * r.value);
  throw noOverload('_*_', [l, r]);
}

export function divide(l: CelValue, r: CelValue): CelValue {
  if (typeof l === 'bigint' && typeof r === 'bigint') {
    if (r === 0n) throw new CelEvalError('division by zero');
    return checkInt(l / r);
  }
  if (typeof l === 'number' && typeof r === 'number') return l / r;
  if (l instanceof CelUint && r instanceof CelUint) {
    if (r.value === 0n) throw new CelEvalError('division by zero');
    return new CelUint(l.value / r.value);
  }
  throw noOverload('_/_', [l, r]);
}

export function modulo(l: CelValue, r: CelValue): CelValue {
  if (typeof l === 'bigint' && typeof r === 'bigint') {
    if (r === 0n) throw new CelEvalError('modulus by zero');
    return l % r;
  }
  if (l instanceof CelUint && r instanceof CelUint) {
    if (r.value === 0n) throw new CelEvalError('modulus by zero');
    return new CelUint(l.value % r.value);
  }
  throw noOverload('_%_', [l, r]);
}
