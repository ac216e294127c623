/**
 * Label selectors as the API server parses them: equality (`=`, `==`, `!=`), set-based
 * (`in`, `notin`), existence (`key`, `!key`) and `>`/`<`.
 */
import { badRequest } from './api-error';

type Operator = 'exists' | 'notexists' | 'eq' | 'neq' | 'in' | 'notin' | 'gt' | 'lt';

interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

const MATCH_ALL: LabelMatcher = () => true;

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function parseRequirement(text: string): Requirement {
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(text);
  if (setMatch) {
    const [, key = '', op, list = ''] = setMatch;
    const values = list.split(',').map((v) => v.trim()).filter((v) => v !== '');
    return { key, op: op as 'in' | 'notin', values };
  }
  if (text.startsWith('!')) return { key: text.slice(1).trim(), op: 'notexists', values: [] };
  const opMatch = /^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$/.exec(text);
  if (opMatch) {
    const [, key = '', symbol, value = ''] = opMatch;
    const op = symbol === '!=' ? 'neq' : symbol === '>' ? 'gt' : symbol === '<' ? 'lt' : 'eq';
    return { key, op, values: [value.trim()] };
  }
  if (/^[A-Za-z0-9._/-]+$/.test(text)) return { key: text, op: 'exists', values: [] };
  throw badRequest(`unable to parse requirement: found '${text}', expected: in, notin, =, ==, !=, gt, lt`);
}

function matches(r: Requirement, labels: Record<string, string> | undefined): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.op) {
    case 'exists': return has;
    case 'notexists': return !has;
    case 'eq': return has && value === r.values[0];
    case 'neq': return !has || value !== r.values[0];
    case 'in': return has && r.values.includes(value as string);
    case 'notin': return !has || !r.values.includes(value as string);
    case 'gt': return has && Number(value) > Number(r.values[0]);
    case 'lt': return has && Number(value) < Number(r.values[0]);
  }
}

/** Parses a selector string; an empty or missing selector matches everything. Throws 400 on bad syntax. */
export function parseLabelSelector(selector: string | undefined | null): LabelMatcher {
  if (!selector || selector.trim() === '') return MATCH_ALL;
  const requirements = splitTopLevel(selector).map(parseRequirement);
  return (labels) => requirements.every((r) => matches(r, labels));
}

/** matchExpressions operators; any other is ignored. */
const MATCH_EXPRESSION_OPS: Readonly<Partial<Record<string, Operator>>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: 'notexists' };

/** Turns a structured `LabelSelector` (matchLabels/matchExpressions) into a matcher. */
export function labelSelectorFromObject(sel: unknown): LabelMatcher {
  if (sel === null || typeof sel !== 'object') return MATCH_ALL;
  const { matchLabels, matchExpressions } = sel as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const requirements: Requirement[] = [];
  for (const [key, value] of Object.entries(matchLabels ?? {})) requirements.push({ key, op: 'eq', values: [value] });
  for (const e of matchExpressions ?? []) {
    const op = MATCH_EXPRESSION_OPS[e.operator];
    if (op) requirements.push({ key: e.key, op, values: e.values ?? [] });
  }
  return (labels) => requirements.every((r) => matches(r, labels));
}

/** The string form of a structured selector (for scale subresources' `status.selector`). */
export function labelSelectorToString(sel: unknown): string {
  if (sel === null || typeof sel !== 'object') return '';
  const { matchLabels, matchExpressions } = sel as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const parts = Object.entries(matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}
