/**
 * A recursive-descent parser for the subset of CEL used by CRD `x-kubernetes-validations` rules.
 * Produces a small AST that `cel-evaluator.ts` walks. Syntax errors throw `CelSyntaxError`.
 */

export class CelSyntaxError extends Error {
  constructor(message: string, readonly position: number) {
    super(`${message} at position ${position}`);
    this.name = 'CelSyntaxError';
  }
}

export type CelAst =
  | { kind: 'literal'; value: CelLiteral }
  | { kind: 'ident'; name: string }
  | { kind: 'select'; operand: CelAst; field: string; optional: boolean }
  | { kind: 'index'; operand: CelAst; index: CelAst; optional: boolean }
  | { kind: 'call'; target: CelAst | undefined; name: string; args: CelAst[] }
  | { kind: 'list'; items: CelAst[] }
  | { kind: 'map'; entries: { key: CelAst; value: CelAst }[] }
  | { kind: 'unary'; op: '!' | '-'; operand: CelAst }
  | { kind: 'binary'; op: BinaryOp; left: CelAst; right: CelAst }
  | { kind: 'and' | 'or'; left: CelAst; right: CelAst }
  | { kind: 'ternary'; cond: CelAst; then: CelAst; otherwise: CelAst };

export type CelLiteral = bigint | number | string | boolean | null | CelUint | Uint8Array;
export type BinaryOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | '+' | '-' | '*' | '/' | '%';

/** An unsigned CEL integer (`1u`). */
export class CelUint {
  constructor(readonly value: bigint) {}
}

type Token =
  | { t: 'int'; v: bigint; pos: number }
  | { t: 'uint'; v: bigint; pos: number }
  | { t: 'double'; v: number; pos: number }
  | { t: 'string'; v: string; pos: number }
  | { t: 'bytes'; v: Uint8Array; pos: number }
  | { t: 'ident'; v: string; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'eof'; pos: number };

const OPERATORS = ['.?', '[?', '==', '!=', '<=', '>=', '&&', '||', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '.', ',', '(', ')', '[', ']', '{', '}'];
const RESERVED = new Set(['as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

function isIdentStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}
function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const start = i;
    if (isDigit(c) || (c === '.' && isDigit(src[i + 1] ?? ''))) {
      i = readNumber(src, i, out);
      continue;
    }
    // string/bytes literals with optional r/b prefixes
    const prefixMatch = /^([rRbB]{0,2})(['"])/.exec(src.slice(i, i + 4));
    if (prefixMatch && (prefixMatch[1] ?? '').length <= 2 && (c === '"' || c === "'" || /^[rRbB]/.test(c))) {
      const prefix = (prefixMatch[1] ?? '').toLowerCase();
      if (!/^(r|b|rb|br)?$/.test(prefix)) throw new CelSyntaxError('invalid string prefix', i);
      i += prefix.length;
      const { value, end } = readString(src, i, prefix.includes('r'));
      i = end;
      if (prefix.includes('b')) out.push({ t: 'bytes', v: new TextEncoder().encode(value), pos: start });
      else out.push({ t: 'string', v: value, pos: start });
      continue;
    }
    if (isIdentStart(c)) {
      while (i < src.length && (isIdentStart(src[i] ?? '') || isDigit(src[i] ?? ''))) i++;
      out.push({ t: 'ident', v: src.slice(start, i), pos: start });
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (op === undefined) throw new CelSyntaxError(`unexpected character '${c}'`, i);
    // `.?` only when followed by an identifier (so `x.?y`), `[?` only when used as optional index.
    out.push({ t: 'op', v: op, pos: start });
    i += op.length;
  }
  out.push({ t: 'eof', pos: src.length });
  return out;
}

function readNumber(src: string, i: number, out: Token[]): number {
  const start = i;
  if (src[i] === '0' && (src[i + 1] === 'x' || src[i + 1] === 'X')) {
    i += 2;
    while (/[0-9a-fA-F]/.test(src[i] ?? '')) i++;
    const v = BigInt(src.slice(start, i));
    if (src[i] === 'u' || src[i] === 'U') {
      out.push({ t: 'uint', v, pos: start });
      return i + 1;
    }
    out.push({ t: 'int', v, pos: start });
    return i;
  }
  while (isDigit(src[i] ?? '')) i++;
  let isDouble = false;
  if (src[i] === '.' && isDigit(src[i + 1] ?? '')) {
    isDouble = true;
    i++;
    while (isDigit(src[i] ?? '')) i++;
  }
  if ((src[i] === 'e' || src[i] === 'E') && /[0-9+-]/.test(src[i + 1] ?? '')) {
    isDouble = true;
    i += 2;
    while (isDigit(src[i] ?? '')) i++;
  }
  const text = src.slice(start, i);
  if (isDouble) {
    out.push({ t: 'double', v: Number(text), pos: start });
    return i;
  }
  if (src[i] === 'u' || src[i] === 'U') {
    out.push({ t: 'uint', v: BigInt(text), pos: start });
    return i + 1;
  }
  out.push({ t: 'int', v: BigInt(text), pos: start });
  return i;
}

function readString(src: string, i: number, raw: boolean): { value: string; end: number } {
  const quote = src[i] ?? '"';
  const triple = src.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  let j = i + close.length;
  let value = '';
  while (j < src.length) {
    if (src.startsWith(close, j)) return { value, end: j + close.length };
    const c = src[j] ?? '';
    if (!triple && (c === '\n' || c === '\r')) break;
    if (c === '\\' && !raw) {
      const e = src[j + 1] ?? '';
      j += 2;
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'a': value += '\x07'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\\': case '"': case "'": case '`': case '?': value += e; break;
        case 'x': case 'X': value += String.fromCodePoint(parseInt(src.slice(j, j + 2), 16)); j += 2; break;
        case 'u': value += String.fromCodePoint(parseInt(src.slice(j, j + 4), 16)); j += 4; break;
        case 'U': value += String.fromCodePoint(parseInt(src.slice(j, j + 8), 16)); j += 8; break;
        default:
          if (/[0-3]/.test(e)) {
            value += String.fromCodePoint(parseInt(src.slice(j - 1, j + 2), 8));
            j += 2;
          } else {
            throw new CelSyntaxError(`invalid escape sequence '\\${e}'`, j - 2);
          }
      }
      continue;
    }
    value += c;
    j++;
  }
  throw new CelSyntaxError('unterminated string literal', i);
}

const MAX_DEPTH = 200;

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): CelAst {
    const e = this.expr();
    const t = this.peek();
    if (t.t !== 'eof') throw new CelSyntaxError(`unexpected token '${tokenText(t)}'`, t.pos);
    return e;
  }

  private peek(): Token {
    return this.tokens[this.pos] ?? { t: 'eof', pos: 0 };
  }
  private next(): Token {
    const t = this.peek();
    this.pos++;
    return t;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private eatOp(v: string): boolean {
    if (this.isOp(v)) {
      this.pos++;
      return true;
    }
    return false;
  }
  private expectOp(v: string): void {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) throw new CelSyntaxError(`expected '${v}' but found '${tokenText(t)}'`, t.pos);
  }

  private expr(): CelAst {
    if (++this.depth > MAX_DEPTH) throw new CelSyntaxError('expression nested too deeply', this.peek().pos);
    try {
      const cond = this.or();
      if (this.eatOp('?')) {
        const then = this.or();
        this.expectOp(':');
        const otherwise = this.expr();
        return { kind: 'ternary', cond, then, otherwise };
      }
      return cond;
    } finally {
      this.depth--;
    }
  }

  private or(): CelAst {
    let left = this.and();
    while (this.eatOp('||')) left = { kind: 'or', left, right: this.and() };
    return left;
  }

  private and(): CelAst {
    let left = this.relation();
    while (this.eatOp('&&')) left = { kind: 'and', left, right: this.relation() };
    return left;
  }

  private relation(): CelAst {
    let left = this.addition();
    for (;;) {
      const t = this.peek();
      let op: BinaryOp | undefined;
      if (t.t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.v)) op = t.v as BinaryOp;
      else if (t.t === 'ident' && t.v === 'in') op = 'in';
      if (op === undefined) return left;
      this.pos++;
      left = { kind: 'binary', op, left, right: this.addition() };
    }
  }

  private addition(): CelAst {
    let left = this.multiplication();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && (t.v === '+' || t.v === '-')) {
        this.pos++;
        left = { kind: 'binary', op: t.v, left, right: this.multiplication() };
      } else {
        return left;
      }
    }
  }

  private multiplication(): CelAst {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && (t.v === '*' || t.v === '/' || t.v === '%')) {
        this.pos++;
        left = { kind: 'binary', op: t.v, left, right: this.unary() };
      } else {
        return left;
      }
    }
  }

  private unary(): CelAst {
    if (++this.depth > MAX_DEPTH) throw new CelSyntaxError('expression nested too deeply', this.peek().pos);
    try {
      if (this.eatOp('!')) return { kind: 'unary', op: '!', operand: this.unary() };
      if (this.isOp('-')) {
        this.pos++;
        const t = this.peek();
        // fold negative literals so that -9223372036854775808 parses
        if (t.t === 'int' || t.t === 'double') {
          const following = this.tokens[this.pos + 1];
          const postfix = following?.t === 'op' && (following.v === '.' || following.v === '[' || following.v === '.?' || following.v === '[?');
          if (!postfix) {
            this.pos++;
            if (t.t === 'int' && t.v > 9223372036854775808n) throw new CelSyntaxError('integer literal out of range', t.pos);
            return { kind: 'literal', value: t.t === 'int' ? -t.v : -t.v };
          }
        }
        return { kind: 'unary', op: '-', operand: this.unary() };
      }
      return this.member();
    } finally {
      this.depth--;
    }
  }

  private member(): CelAst {
    let e = this.primary();
    for (;;) {
      if (this.isOp('.') || this.isOp('.?')) {
        const optional = (this.next() as { v: string }).v === '.?';
        const id = this.next();
        if (id.t !== 'ident') throw new CelSyntaxError(`expected field name but found '${tokenText(id)}'`, id.pos);
        if (!optional && this.isOp('(')) {
          this.pos++;
          e = { kind: 'call', target: e, name: id.v, args: this.args(')') };
        } else {
          e = { kind: 'select', operand: e, field: id.v, optional };
        }
      } else if (this.isOp('[') || this.isOp('[?')) {
        const optional = (this.next() as { v: string }).v === '[?';
        const index = this.expr();
        this.expectOp(']');
        e = { kind: 'index', operand: e, index, optional };
      } else {
        return e;
      }
    }
  }

  private args(close: string): CelAst[] {
    const args: CelAst[] = [];
    if (this.eatOp(close)) return args;
    for (;;) {
      args.push(this.expr());
      if (this.eatOp(close)) return args;
      this.expectOp(',');
      if (this.eatOp(close)) return args; // trailing comma
    }
  }

  private primary(): CelAst {
    const t = this.next();
    switch (t.t) {
      case 'int':
        if (t.v > 9223372036854775807n) throw new CelSyntaxError('integer literal out of range', t.pos);
        return { kind: 'literal', value: t.v };
      case 'uint':
        return { kind: 'literal', value: new CelUint(t.v) };
      case 'double':
      case 'string':
      case 'bytes':
        return { kind: 'literal', value: t.v };
      case 'ident': {
        if (t.v === 'true') return { kind: 'literal', value: true };
        if (t.v === 'false') return { kind: 'literal', value: false };
        if (t.v === 'null') return { kind: 'literal', value: null };
        if (RESERVED.has(t.v) || t.v === 'in') throw new CelSyntaxError(`reserved identifier '${t.v}'`, t.pos);
        if (this.eatOp('(')) return { kind: 'call', target: undefined, name: t.v, args: this.args(')') };
        return { kind: 'ident', name: t.v };
      }
      case 'op':
        if (t.v === '(') {
          const e = this.expr();
          this.expectOp(')');
          return e;
        }
        if (t.v === '[') return { kind: 'list', items: this.args(']') };
        if (t.v === '{') return this.mapLiteral();
        if (t.v === '.') {
          // leading-dot qualified identifier, e.g. `.self`
          const id = this.next();
          if (id.t !== 'ident') throw new CelSyntaxError('expected identifier', id.pos);
          return { kind: 'ident', name: id.v };
        }
        throw new CelSyntaxError(`unexpected token '${t.v}'`, t.pos);
      case 'eof':
        throw new CelSyntaxError('unexpected end of expression', t.pos);
    }
  }

  private mapLiteral(): CelAst {
    const entries: { key: CelAst; value: CelAst }[] = [];
    if (this.eatOp('}')) return { kind: 'map', entries };
    for (;;) {
      const key = this.expr();
      this.expectOp(':');
      const value = this.expr();
      entries.push({ key, value });
      if (this.eatOp('}')) return { kind: 'map', entries };
      this.expectOp(',');
      if (this.eatOp('}')) return { kind: 'map', entries };
    }
  }
}

function tokenText(t: Token): string {
  switch (t.t) {
    case 'eof':
      return '<EOF>';
    case 'bytes':
      return 'b"..."';
    default:
      return String(t.v);
  }
}

/** Parses a CEL expression; throws `CelSyntaxError` on bad syntax. */
export function parseCel(source: string): CelAst {
  return new Parser(tokenize(source)).parse();
}

/** True when the expression mentions the identifier (used to detect transition rules on `oldSelf`). */
export function referencesIdent(ast: CelAst, name: string): boolean {
  switch (ast.kind) {
    case 'literal':
      return false;
    case 'ident':
      return ast.name === name;
    case 'select':
      return referencesIdent(ast.operand, name);
    case 'index':
      return referencesIdent(ast.operand, name) || referencesIdent(ast.index, name);
    case 'call':
      return (ast.target !== undefined && referencesIdent(ast.target, name)) || ast.args.some((a) => referencesIdent(a, name));
    case 'list':
      return ast.items.some((a) => referencesIdent(a, name));
    case 'map':
      return ast.entries.some((e) => referencesIdent(e.key, name) || referencesIdent(e.value, name));
    case 'unary':
      return referencesIdent(ast.operand, name);
    case 'binary':
    case 'and':
    case 'or':
      return referencesIdent(ast.left, name) || referencesIdent(ast.right, name);
    case 'ternary':
      return referencesIdent(ast.cond, name) || referencesIdent(ast.then, name) || referencesIdent(ast.otherwise, name);
  }
}
