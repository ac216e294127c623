/**
 * Evaluates `x-kubernetes-validations` CEL rules over an object (and its old version on update),
 * as apiextensions' cel validator does: `self` is the node's value, `oldSelf` the correlated old
 * value; transition rules run only when the old value exists; failures become field causes.
 */
import { type Activation, CostBudget, evaluate } from './cel/cel-evaluator';
import { CelOptional, type CelValue, jsonToCel } from './cel/cel-values';
import { type FieldCause, duplicate, forbidden, invalid, required } from './field-cause';
import type { CompiledRule, SchemaNode } from './schema-node';
import { childPath, indexPath, keyPath, listMapKey } from './schema-validation';
import { isRecord } from '../../../../common/src/json/is-record';
import { jsonEqual } from '../../../../common/src/json/json-equal';

const ABSENT = Symbol('absent');
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;
/** A value, or ABSENT for a field that is not there (the union reads as `unknown`, which ABSENT is part of). */
type Maybe = unknown;

/** Comprehension steps one validate() call may spend on CEL rules before giving up. */
const CEL_STEP_BUDGET = 1_000_000;

class RuleActivation implements Activation {
  constructor(
    private readonly self: CelValue,
    private readonly oldSelf: CelValue | undefined,
    private readonly budget: CostBudget,
  ) {}
  charge(steps: number): void {
    this.budget.charge(steps);
  }
  lookup(name: string): CelValue | undefined {
    if (name === 'self') return this.self;
    if (name === 'oldSelf') return this.oldSelf;
    return undefined;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The real server's ruleErrorString: the message when set, else the rule text. */
function ruleText(rule: CompiledRule): string {
  const message = rule.message?.trim() ?? '';
  return message !== '' ? message : rule.rule.trim();
}

/** Resolves a rule's relative `fieldPath` (`.spec.x`, `['key']`) against the node's path. */
function appendFieldPath(node: SchemaNode, path: string, fieldPath: string): string {
  let p = path;
  let n: SchemaNode | undefined = node;
  const re = /\.([A-Za-z_$][\w$-]*)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[(\d+)\]/gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(fieldPath)) !== null) {
    consumed = re.lastIndex;
    if (m[4] !== undefined) {
      p = indexPath(p, Number(m[4]));
      n = n?.items;
      continue;
    }
    const key = m[1] ?? m[2] ?? m[3] ?? '';
    // as ValidFieldPath: a named field when the schema has properties, a map key under additionalProperties
    if (n?.properties !== undefined || typeof n?.additionalProperties !== 'object') {
      p = childPath(p, key);
      n = n?.properties?.get(key);
    } else {
      p = keyPath(p, key);
      n = typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined;
    }
  }
  return consumed === fieldPath.length ? p : childPath(path, fieldPath.replace(/^\./, ''));
}

function failure(node: SchemaNode, rule: CompiledRule, path: string, message: string): FieldCause {
  const field = rule.fieldPath !== undefined && rule.fieldPath !== '' ? appendFieldPath(node, path, rule.fieldPath) : path;
  const typeName = node.type ?? '';
  switch (rule.reason) {
    case 'FieldValueForbidden':
      return forbidden(field, message);
    case 'FieldValueRequired':
      return required(field, message);
    case 'FieldValueDuplicate':
      return duplicate(field, typeName);
    default:
      return invalid(field, typeName, message);
  }
}

function failureMessage(rule: CompiledRule, act: Activation): string {
  if (rule.messageExpression !== undefined) {
    try {
      const m = evaluate(rule.messageExpression, act);
      const trimmed = typeof m === 'string' ? m.trim() : '';
      if (trimmed !== '' && !trimmed.includes('\n') && trimmed.length <= MAX_MESSAGE_EXPRESSION_BYTES) return trimmed;
    } catch {
      // fall back to message / default text, as the real server does
    }
  }
  if (rule.message !== undefined && rule.message.trim() !== '') return rule.message.trim();
  return `failed rule: ${ruleText(rule)}`;
}

/** Runs the node's rules; returns false when evaluation must stop (cost limit exceeded). */
function runRules(node: SchemaNode, value: unknown, old: Maybe, path: string, errs: FieldCause[], budget: CostBudget): boolean {
  let self: CelValue | undefined;
  let oldSelf: CelValue | undefined;
  // Ratcheting: errors of non-transition rules on an unchanged value are not reported.
  const unchanged = old !== ABSENT && jsonEqual(value, old);
  for (const rule of node.rules) {
    if (unchanged && !rule.isTransition) continue;
    if (rule.ast === undefined) {
      errs.push(invalid(path, node.type ?? '', `rule compile error: ${rule.compileError ?? 'invalid rule'}`));
      continue;
    }
    if (rule.isTransition && old === ABSENT && !rule.optionalOldSelf) continue;
    self ??= jsonToCel(value, node.celShape);
    let oldBinding: CelValue | undefined;
    if (rule.isTransition || rule.optionalOldSelf) {
      if (old !== ABSENT) oldSelf ??= jsonToCel(old, node.celShape);
      oldBinding = rule.optionalOldSelf ? (old === ABSENT ? CelOptional.none() : CelOptional.of(oldSelf as CelValue)) : oldSelf;
    }
    const act = new RuleActivation(self, oldBinding, budget);
    let result: CelValue;
    try {
      result = evaluate(rule.ast, act);
    } catch (e) {
      const text = errorText(e);
      if (text.startsWith('no such overload')) {
        errs.push(invalid(path, node.type ?? '', `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(rule)}`));
      } else if (text.startsWith('operation cancelled: actual cost limit exceeded')) {
        errs.push(invalid(path, node.type ?? '', `'${text}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(rule)}`));
        return false;
      } else {
        errs.push(invalid(path, node.type ?? '', `${text} evaluating rule: ${ruleText(rule)}`));
      }
      continue;
    }
    if (result === true) continue;
    if (result !== false) {
      errs.push(invalid(path, node.type ?? '', `rule did not evaluate to a boolean: ${ruleText(rule)}`));
      continue;
    }
    errs.push(failure(node, rule, path, failureMessage(rule, act)));
  }
  return true;
}


/** Walks `value` (and the correlated `old`) and evaluates every rule in the schema. */
export function validateCelRules(node: SchemaNode, value: unknown, old: Maybe, path: string, errs: FieldCause[]): void {
  walk(node, value, old, path, errs, new CostBudget(CEL_STEP_BUDGET));
}

/** Returns false once evaluation must stop (budget exhausted). */
function walk(node: SchemaNode, value: unknown, old: Maybe, path: string, errs: FieldCause[], budget: CostBudget): boolean {
  if (!node.hasRulesBelow || value === null || value === undefined) return true;
  if (node.rules.length > 0 && !runRules(node, value, old, path, errs, budget)) return false;
  if (Array.isArray(value)) {
    const items = node.items;
    if (items === undefined || !items.hasRulesBelow) return true;
    let oldByKey: Map<string, unknown> | undefined;
    if (node.listType === 'map' && Array.isArray(old)) {
      oldByKey = new Map();
      for (const o of old) {
        const k = listMapKey(node, o);
        if (k !== undefined) oldByKey.set(k, o);
      }
    }
    for (let i = 0; i < value.length; i++) {
      let oldItem: Maybe = ABSENT;
      if (oldByKey !== undefined) {
        const k = listMapKey(node, value[i]);
        if (k !== undefined && oldByKey.has(k)) oldItem = oldByKey.get(k);
      }
      if (!walk(items, value[i], oldItem, indexPath(path, i), errs, budget)) return false;
    }
    return true;
  }
  if (!isRecord(value)) return true;
  const oldObj = isRecord(old) ? old : undefined;
  const additional = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  for (const [k, v] of Object.entries(value)) {
    const prop = node.properties?.get(k);
    const oldChild: Maybe = oldObj !== undefined && Object.prototype.hasOwnProperty.call(oldObj, k) ? oldObj[k] : ABSENT;
    const child = prop ?? additional;
    if (child === undefined || !child.hasRulesBelow) continue;
    if (!walk(child, v, oldChild, prop !== undefined ? childPath(path, k) : keyPath(path, k), errs, budget)) return false;
  }
  return true;
}

export { ABSENT };
