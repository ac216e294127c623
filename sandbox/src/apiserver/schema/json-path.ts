/**
 * The kubectl/apiserver JSONPath subset used by CRD `additionalPrinterColumns`:
 * `.status.state`, `{.spec.x}`, `.spec.containers[0].image`, `[*]`, `.*`, `[1:3]`, `..name`,
 * `['a.b']`, `.metadata.labels.example\.com/x`, and filters like `[?(@.type=="Ready")].status`.
 * Never throws: an unparsable path or a missing field yields undefined.
 */
import { isRecord } from '../../../../common/src/json/is-record';

type Segment =
  | { kind: 'field'; name: string }
  | { kind: 'wildcard' }
  | { kind: 'recursive'; name: string | undefined }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start: number | undefined; end: number | undefined; step: number | undefined }
  | { kind: 'filter'; left: string[]; op: string | undefined; right: unknown };

class JsonPathError extends Error {}

const MAX_RESULTS = 10000;

function parseLiteral(text: string): unknown {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'nil' || t === 'null') return null;
  const n = Number(t);
  if (t !== '' && !Number.isNaN(n)) return n;
  throw new JsonPathError(`unrecognized literal ${t}`);
}

function parseAtPath(text: string): string[] {
  const t = text.trim();
  if (t === '@') return [];
  if (!t.startsWith('@.')) throw new JsonPathError(`unrecognized filter operand ${t}`);
  return t.slice(2).split('.').filter((s) => s !== '');
}

function parseFilter(expr: string): Segment {
  const m = /^\s*(@[^=!<>~]*)\s*(==|!=|<=|>=|<|>|=~)?\s*(.*?)\s*$/.exec(expr);
  if (!m) throw new JsonPathError(`invalid filter ${expr}`);
  const op = m[2];
  return { kind: 'filter', left: parseAtPath(m[1] ?? '@'), op, right: op === undefined ? undefined : parseLiteral(m[3] ?? '') };
}

function readName(src: string, i: number): { name: string; end: number } {
  let name = '';
  while (i < src.length) {
    const c = src[i] ?? '';
    if (c === '\\' && i + 1 < src.length) {
      name += src.charAt(i + 1);
      i += 2;
      continue;
    }
    if (c === '.' || c === '[') break;
    name += c;
    i++;
  }
  return { name, end: i };
}

function parseBracket(inner: string): Segment {
  const t = inner.trim();
  if (t === '*') return { kind: 'wildcard' };
  if (t.startsWith('?')) {
    const m = /^\?\s*\((.*)\)$/.exec(t);
    if (!m) throw new JsonPathError(`invalid filter ${t}`);
    return parseFilter(m[1] ?? '');
  }
  if ((t.startsWith("'") && t.endsWith("'")) || (t.startsWith('"') && t.endsWith('"'))) return { kind: 'field', name: t.slice(1, -1) };
  if (/^-?\d+$/.test(t)) return { kind: 'index', index: Number(t) };
  const slice = /^(-?\d+)?\s*:\s*(-?\d+)?\s*(?::\s*(-?\d+))?$/.exec(t);
  if (slice) {
    const n = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s));
    return { kind: 'slice', start: n(slice[1]), end: n(slice[2]), step: n(slice[3]) };
  }
  throw new JsonPathError(`invalid array index ${t}`);
}

function parse(jsonPath: string): Segment[] {
  let src = jsonPath.trim();
  if (src.startsWith('{') && src.endsWith('}')) src = src.slice(1, -1).trim();
  if (src.startsWith('$')) src = src.slice(1);
  const out: Segment[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '.') {
      if (src[i + 1] === '.') {
        const { name, end } = readName(src, i + 2);
        out.push({ kind: 'recursive', name: name === '' || name === '*' ? undefined : name });
        i = end;
        continue;
      }
      const { name, end } = readName(src, i + 1);
      i = end;
      if (name === '') continue;
      out.push(name === '*' ? { kind: 'wildcard' } : { kind: 'field', name });
    } else if (c === '[') {
      let depth = 0;
      let j = i;
      let quote: string | undefined;
      for (; j < src.length; j++) {
        const ch = src[j];
        if (quote !== undefined) {
          if (ch === quote) quote = undefined;
          continue;
        }
        if (ch === '"' || ch === "'") quote = ch;
        else if (ch === '[') depth++;
        else if (ch === ']' && --depth === 0) break;
      }
      if (j >= src.length) throw new JsonPathError('unterminated [');
      out.push(parseBracket(src.slice(i + 1, j)));
      i = j + 1;
    } else {
      const { name, end } = readName(src, i);
      if (name === '') throw new JsonPathError(`unexpected ${c ?? ''}`);
      out.push({ kind: 'field', name });
      i = end;
    }
  }
  return out;
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isRecord(v)) return Object.keys(v).sort().map((k) => v[k]);
  return [];
}

function descendants(v: unknown, out: unknown[], depth = 0): void {
  if (depth > 100 || out.length > MAX_RESULTS) return;
  out.push(v);
  for (const c of children(v)) descendants(c, out, depth + 1);
}

function lookup(v: unknown, path: string[]): { found: boolean; value: unknown } {
  let cur = v;
  for (const p of path) {
    if (!isRecord(cur) || !Object.prototype.hasOwnProperty.call(cur, p)) return { found: false, value: undefined };
    cur = cur[p];
  }
  return { found: true, value: cur };
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b || (typeof a === 'number' && typeof b === 'number' && a === b) || String(a) === String(b);
    case '!=':
      return !compare(a, '==', b);
    case '=~':
      try {
        return typeof a === 'string' && typeof b === 'string' && new RegExp(b).test(a);
      } catch {
        return false;
      }
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
  }
  if (typeof a === 'string' && typeof b === 'string') {
    return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
  }
  return false;
}

function step(values: unknown[], seg: Segment): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    switch (seg.kind) {
      case 'field':
        if (isRecord(v) && Object.prototype.hasOwnProperty.call(v, seg.name)) out.push(v[seg.name]);
        break;
      case 'wildcard':
        out.push(...children(v));
        break;
      case 'recursive': {
        const all: unknown[] = [];
        descendants(v, all);
        if (seg.name === undefined) out.push(...all);
        else for (const d of all) if (isRecord(d) && Object.prototype.hasOwnProperty.call(d, seg.name)) out.push(d[seg.name]);
        break;
      }
      case 'index':
        if (Array.isArray(v)) {
          const i = seg.index < 0 ? v.length + seg.index : seg.index;
          if (i >= 0 && i < v.length) out.push(v[i]);
        }
        break;
      case 'slice':
        if (Array.isArray(v)) {
          const len = v.length;
          const norm = (x: number | undefined, d: number): number => (x === undefined ? d : Math.min(len, Math.max(0, x < 0 ? len + x : x)));
          const stepBy = seg.step === undefined || seg.step <= 0 ? 1 : seg.step;
          for (let i = norm(seg.start, 0); i < norm(seg.end, len); i += stepBy) out.push(v[i]);
        }
        break;
      case 'filter':
        for (const item of children(v)) {
          const left = lookup(item, seg.left);
          if (!left.found) continue;
          if (seg.op === undefined ? left.value !== undefined && left.value !== null && left.value !== false : compare(left.value, seg.op, seg.right)) {
            out.push(item);
          }
        }
        break;
    }
    if (out.length > MAX_RESULTS) break;
  }
  return out;
}

/**
 * Evaluates a printer-column JSONPath. Returns undefined when nothing matches, the value when
 * exactly one thing matches, and an array of all matches when a wildcard/filter/slice matched several.
 */
export function evaluateJsonPath(obj: unknown, jsonPath: string): unknown {
  let segments: Segment[];
  try {
    segments = parse(typeof jsonPath === 'string' ? jsonPath : '');
  } catch {
    return undefined;
  }
  let values: unknown[] = [obj];
  for (const seg of segments) {
    values = step(values, seg);
    if (values.length === 0) return undefined;
  }
  if (values.length === 1) return values[0];
  return values;
}
