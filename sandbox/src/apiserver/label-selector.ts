/**
 * Label selectors as the API server parses them: equality (`=`, `==`, `!=`), set-based
 * (`in`, `notin`), existence (`key`, `!key`) and `>`/`<`.
 */
import { badRequest } from './api-error';
import { isLabelValue, LABEL_VALUE_MESSAGE, labelKeyProblems } from '../../../common/src/kube/label-syntax';

type Operator = 'exists' | 'notexists' | 'eq' | 'neq' | 'in' | 'notin' | 'gt' | 'lt';

interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

const MATCH_ALL: LabelMatcher = () => true;

type TokenKind = 'identifier' | 'in' | 'notin' | '!' | '!=' | '=' | '==' | '>' | '<' | '(' | ')' | ',' | 'end';

interface Token {
  kind: TokenKind;
  /** The text as written ('' at the end), as kube-apiserver quotes it in its messages. */
  text: string;
}

const SYMBOLS: readonly string[] = ['!', '!=', '=', '==', '>', '<', '(', ')', ','];
const SYMBOL_CHARS = new Set('!=<>(),');

/** The tokens of a selector, split as k8s.io/apimachinery's labels lexer splits them (longest symbol first). */
function tokenize(selector: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < selector.length) {
    const ch = selector[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (SYMBOL_CHARS.has(ch)) {
      let text = ch;
      while (i + text.length < selector.length && SYMBOLS.includes(text + (selector[i + text.length] as string))) text += selector[i + text.length] as string;
      tokens.push({ kind: text as TokenKind, text });
      i += text.length;
    } else {
      let text = '';
      while (i < selector.length && !/\s/.test(selector[i] as string) && !SYMBOL_CHARS.has(selector[i] as string)) text += selector[i++] as string;
      tokens.push({ kind: text === 'in' || text === 'notin' ? text : 'identifier', text });
    }
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

/**
 * A parser of selector strings with kube-apiserver's grammar and messages (k8s.io/apimachinery
 * labels.Parse): a syntax error is a 400 that says what was found and what was expected, the
 * errors inside one requirement prefixed `unable to parse requirement: `.
 */
class SelectorParser {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.at] ?? { kind: 'end', text: '' };
  }

  private next(): Token {
    const t = this.peek();
    if (this.at < this.tokens.length) this.at++;
    return t;
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'end') return requirements;
      if (t.kind !== 'identifier' && t.kind !== '!') throw badRequest(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      try {
        requirements.push(this.requirement());
      } catch (err) {
        throw err instanceof Error ? badRequest(`unable to parse requirement: ${err.message}`) : err;
      }
      const after = this.next();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') throw badRequest(`found '${after.text}', expected: ',' or 'end of string'`);
      const following = this.peek();
      if (following.kind !== 'identifier' && following.kind !== '!') throw badRequest(`found '${following.text}', expected: identifier after ','`);
    }
  }

  /** One requirement, its key and values checked as label keys and values. */
  private requirement(): Requirement {
    const r = this.requirementSyntax();
    const keyProblems = labelKeyProblems(r.key);
    // kube-apiserver names no field for the key (Go prints its nil path) and counts values in sorted order.
    if (keyProblems.length > 0) throw new Error(`<nil>: Invalid value: ${JSON.stringify(r.key)}: ${keyProblems.join('; ')}`);
    [...r.values].sort().forEach((v, i) => {
      const problem = v.length > 63 ? 'must be no more than 63 characters' : isLabelValue(v) ? undefined : LABEL_VALUE_MESSAGE;
      if (problem) throw new Error(`values[${i}][${r.key}]: Invalid value: ${JSON.stringify(v)}: ${problem}`);
    });
    return r;
  }

  /** One requirement as written; its errors are plain Errors, worded as kube-apiserver words them. */
  private requirementSyntax(): Requirement {
    let t = this.next();
    const negated = t.kind === '!';
    if (negated) t = this.next();
    if (t.kind !== 'identifier') throw new Error(`found '${t.text}', expected: identifier`);
    const key = t.text;
    if (negated) return { key, op: 'notexists', values: [] };
    if (this.peek().kind === 'end' || this.peek().kind === ',') return { key, op: 'exists', values: [] };
    const op = this.next();
    switch (op.kind) {
      case 'in':
      case 'notin':
        return { key, op: op.kind, values: this.valueSet() };
      case '=':
      case '==':
      case '!=':
        return { key, op: op.kind === '!=' ? 'neq' : 'eq', values: [this.exactValue()] };
      case '>':
      case '<': {
        const value = this.exactValue();
        if (!/^[+-]?[0-9]+$/.test(value)) throw new Error(`values[0]: Invalid value: ${JSON.stringify(value)}: for 'Gt', 'Lt' operators, the value must be an integer`);
        return { key, op: op.kind === '>' ? 'gt' : 'lt', values: [value] };
      }
      default:
        throw new Error(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private exactValue(): string {
    const t = this.peek();
    if (t.kind === 'end' || t.kind === ',') return '';
    this.next();
    if (t.kind !== 'identifier') throw new Error(`found '${t.text}', expected: identifier`);
    return t.text;
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw new Error(`found '${open.text}' expected: '('`);
    const first = this.peek();
    if (first.kind === ')') {
      this.next();
      return [];
    }
    if (first.kind !== 'identifier' && first.kind !== ',') throw new Error(`found '${first.text}', expected: ',', ')' or identifier`);
    const values: string[] = [];
    for (;;) {
      const t = this.next();
      if (t.kind === 'identifier') {
        values.push(t.text);
        const after = this.peek();
        if (after.kind === ')') break;
        if (after.kind !== ',') throw new Error(`found '${after.text}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        if (values.length === 0) values.push('');
        const after = this.peek();
        if (after.kind === ')') {
          values.push('');
          break;
        }
        if (after.kind === ',') {
          this.next();
          values.push('');
        }
      } else {
        throw new Error(`found '${t.text}', expected: ',', or identifier`);
      }
    }
    const close = this.next();
    if (close.kind !== ')') throw new Error(`found '${close.text}', expected: ')'`);
    return values;
  }
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
  const requirements = new SelectorParser(tokenize(selector)).parse();
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
