/**
 * Walks a CEL AST against an activation (`self`, `oldSelf`, macro variables). Errors raise
 * `CelEvalError`; `&&`, `||`, `all` and `exists` absorb errors the way CEL specifies.
 */
import type { CelAst } from './cel-parser';
import { callFunction } from './cel-functions';
import {
  CelEvalError,
  CelOptional,
  CelType,
  CelUint,
  type CelMap,
  type CelValue,
  celCompare,
  celEquals,
  keyText,
  mapGet,
  noOverload,
  toMapKey,
  typeName,
} from './cel-values';
import { add, divide, modulo, multiply, negate, subtract } from './cel-arithmetic';

export interface Activation {
  lookup(name: string): CelValue | undefined;
  /** Charges comprehension steps against a cost budget; throws CelEvalError when exhausted. */
  charge?(steps: number): void;
}

class ScopedActivation implements Activation {
  constructor(private readonly parent: Activation, private readonly name: string, private readonly value: CelValue) {}
  lookup(name: string): CelValue | undefined {
    return name === this.name ? this.value : this.parent.lookup(name);
  }
  charge(steps: number): void {
    this.parent.charge?.(steps);
  }
}

/** A step budget shared by all rules of one validate() call, like the apiserver's runtime cost budget. */
export class CostBudget {
  constructor(private remaining: number) {}
  charge(steps: number): void {
    this.remaining -= steps;
    if (this.remaining < 0) throw new CelEvalError('operation cancelled: actual cost limit exceeded');
  }
}

const TYPE_IDENTS = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type']);
const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** Upper bound on elements produced by one comprehension, to keep a hostile rule cheap. */
const MAX_COMPREHENSION_ITEMS = 100000;

export function evaluate(ast: CelAst, act: Activation): CelValue {
  switch (ast.kind) {
    case 'literal':
      return ast.value;
    case 'ident': {
      const v = act.lookup(ast.name);
      if (v !== undefined) return v;
      if (TYPE_IDENTS.has(ast.name)) return new CelType(ast.name);
      throw new CelEvalError(`undeclared reference to '${ast.name}'`);
    }
    case 'select':
      return select(evaluate(ast.operand, act), ast.field, ast.optional);
    case 'index':
      return index(evaluate(ast.operand, act), evaluate(ast.index, act), ast.optional);
    case 'list':
      return ast.items.map((i) => evaluate(i, act));
    case 'map': {
      const m: CelMap = new Map();
      for (const e of ast.entries) {
        const key = toMapKey(evaluate(e.key, act));
        if (m.has(key)) throw new CelEvalError(`Failed with repeated key: ${keyText(key)}`);
        m.set(key, evaluate(e.value, act));
      }
      return m;
    }
    case 'unary': {
      const v = evaluate(ast.operand, act);
      if (ast.op === '!') {
        if (typeof v !== 'boolean') throw noOverload('!_', [v]);
        return !v;
      }
      return negate(v);
    }
    case 'and':
    case 'or':
      return logical(ast.kind, ast.left, ast.right, act);
    case 'ternary': {
      const c = evaluate(ast.cond, act);
      if (typeof c !== 'boolean') throw noOverload('_?_:_', [c]);
      return c ? evaluate(ast.then, act) : evaluate(ast.otherwise, act);
    }
    case 'binary':
      return binary(ast.op, evaluate(ast.left, act), evaluate(ast.right, act));
    case 'call':
      return call(ast, act);
  }
}

/** What an evaluation threw, as an Error to throw again later (it throws only Errors; anything else is wrapped). */
function asError(e: unknown): Error {
  return e instanceof Error ? e : new CelEvalError(String(e));
}

function logical(kind: 'and' | 'or', left: CelAst, right: CelAst, act: Activation): CelValue {
  const shortCircuit = kind === 'or';
  let leftError: Error | undefined;
  try {
    const l = evaluate(left, act);
    if (typeof l !== 'boolean') throw noOverload(kind === 'and' ? '_&&_' : '_||_', [l]);
    if (l === shortCircuit) return shortCircuit;
  } catch (e) {
    leftError = asError(e);
  }
  const r = evaluate(right, act);
  if (typeof r !== 'boolean') throw noOverload(kind === 'and' ? '_&&_' : '_||_', [r]);
  if (r === shortCircuit) return shortCircuit;
  if (leftError !== undefined) throw leftError;
  return !shortCircuit;
}

function select(operand: CelValue, field: string, optional: boolean): CelValue {
  if (operand instanceof CelOptional) {
    // selecting through an optional keeps the result optional
    return operand.present ? select(operand.inner, field, true) : operand;
  }
  if (!(operand instanceof Map)) throw new CelEvalError(`type '${typeName(operand)}' does not support field selection`);
  const v = operand.get(field);
  if (optional) return v === undefined ? CelOptional.none() : CelOptional.of(v);
  if (v === undefined) throw new CelEvalError(`no such key: ${field}`);
  return v;
}

function index(operand: CelValue, idx: CelValue, optional: boolean): CelValue {
  if (operand instanceof CelOptional) {
    if (!operand.present) return operand;
    return index(operand.inner, idx, true);
  }
  if (Array.isArray(operand)) {
    let i: number;
    if (typeof idx === 'bigint') i = Number(idx);
    else if (idx instanceof CelUint) i = Number(idx.value);
    else if (typeof idx === 'number' && Number.isInteger(idx)) i = idx;
    else throw noOverload('_[_]', [operand, idx]);
    if (i < 0 || i >= operand.length) {
      if (optional) return CelOptional.none();
      throw new CelEvalError(`index out of bounds: ${i}`);
    }
    const v = operand[i] as CelValue;
    return optional ? CelOptional.of(v) : v;
  }
  if (operand instanceof Map) {
    const v = mapGet(operand, idx);
    if (optional) return v === undefined ? CelOptional.none() : CelOptional.of(v);
    if (v === undefined) throw new CelEvalError(`no such key: ${keyText(idx)}`);
    return v;
  }
  throw noOverload('_[_]', [operand, idx]);
}

function binary(op: string, l: CelValue, r: CelValue): CelValue {
  switch (op) {
    case '==':
      return celEquals(l, r);
    case '!=':
      return !celEquals(l, r);
    case '<':
      return celCompare(l, r) < 0;
    case '<=':
      return celCompare(l, r) <= 0;
    case '>':
      return celCompare(l, r) > 0;
    case '>=':
      return celCompare(l, r) >= 0;
    case 'in':
      if (Array.isArray(r)) return r.some((x) => celEquals(x, l));
      if (r instanceof Map) return mapGet(r, l) !== undefined;
      throw noOverload('@in', [l, r]);
    case '+':
      return add(l, r);
    case '-':
      return subtract(l, r);
    case '*':
      return multiply(l, r);
    case '/':
      return divide(l, r);
    case '%':
      return modulo(l, r);
    default:
      throw new CelEvalError(`unknown operator ${op}`);
  }
}

function call(ast: Extract<CelAst, { kind: 'call' }>, act: Activation): CelValue {
  if (ast.target === undefined && ast.name === 'has') return has(ast.args, act);
  if (ast.target !== undefined && MACROS.has(ast.name) && (ast.args.length === 2 || ast.args.length === 3) && ast.args[0]?.kind === 'ident') {
    return comprehension(ast.name, evaluate(ast.target, act), ast.args[0].name, ast.args.slice(1), act);
  }
  if (ast.target?.kind === 'ident' && ast.target.name === 'optional' && act.lookup('optional') === undefined) {
    if (ast.name === 'none' && ast.args.length === 0) return CelOptional.none();
    if (ast.name === 'of' && ast.args.length === 1) return CelOptional.of(evaluate(ast.args[0] as CelAst, act));
    if (ast.name === 'ofNonZeroValue' && ast.args.length === 1) {
      const v = evaluate(ast.args[0] as CelAst, act);
      return isZeroValue(v) ? CelOptional.none() : CelOptional.of(v);
    }
    throw new CelEvalError(`undeclared reference to 'optional.${ast.name}'`);
  }
  const target = ast.target === undefined ? undefined : evaluate(ast.target, act);
  // optional.orValue(x) must not evaluate its argument eagerly when a value is present
  if (target instanceof CelOptional && ast.args.length === 1 && (ast.name === 'orValue' || ast.name === 'or')) {
    if (target.present) return ast.name === 'orValue' ? target.inner : target;
    return evaluate(ast.args[0] as CelAst, act);
  }
  const args = ast.args.map((a) => evaluate(a, act));
  return callFunction(ast.name, target, args);
}

function isZeroValue(v: CelValue): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  return false;
}

function has(args: CelAst[], act: Activation): CelValue {
  const arg = args[0];
  if (args.length !== 1 || arg === undefined || arg.kind !== 'select') throw new CelEvalError('invalid argument to has() macro');
  const operand = evaluate(arg.operand, act);
  if (operand instanceof Map) return operand.has(arg.field);
  if (operand instanceof CelOptional) return operand.present && operand.inner instanceof Map && operand.inner.has(arg.field);
  throw new CelEvalError(`invalid type for field selection: ${typeName(operand)}`);
}

function comprehension(name: string, range: CelValue, varName: string, body: CelAst[], act: Activation): CelValue {
  let items: CelValue[];
  if (Array.isArray(range)) items = range;
  else if (range instanceof Map) items = [...range.keys()];
  else throw noOverload(name, [range]);
  if (items.length > MAX_COMPREHENSION_ITEMS) throw new CelEvalError('operation cancelled: actual cost limit exceeded');
  act.charge?.(items.length);
  const predicate = body[0] as CelAst;
  const scoped = (v: CelValue): Activation => new ScopedActivation(act, varName, v);
  switch (name) {
    case 'all':
    case 'exists': {
      const want = name === 'exists';
      let firstError: Error | undefined;
      for (const item of items) {
        try {
          const r = evaluate(predicate, scoped(item));
          if (typeof r !== 'boolean') throw noOverload(name, [r]);
          if (r === want) return want;
        } catch (e) {
          firstError ??= asError(e);
        }
      }
      if (firstError !== undefined) throw firstError;
      return !want;
    }
    case 'exists_one': {
      let count = 0;
      for (const item of items) {
        const r = evaluate(predicate, scoped(item));
        if (typeof r !== 'boolean') throw noOverload(name, [r]);
        if (r) count++;
      }
      return count === 1;
    }
    case 'filter': {
      const out: CelValue[] = [];
      for (const item of items) {
        const r = evaluate(predicate, scoped(item));
        if (typeof r !== 'boolean') throw noOverload(name, [r]);
        if (r) out.push(item);
      }
      return out;
    }
    case 'map': {
      const out: CelValue[] = [];
      for (const item of items) {
        const a = scoped(item);
        if (body.length === 2) {
          const keep = evaluate(predicate, a);
          if (typeof keep !== 'boolean') throw noOverload(name, [keep]);
          if (!keep) continue;
          out.push(evaluate(body[1] as CelAst, a));
        } else {
          out.push(evaluate(predicate, a));
        }
      }
      return out;
    }
    default:
      throw new CelEvalError(`unknown macro ${name}`);
  }
}
