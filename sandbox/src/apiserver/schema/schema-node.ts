/**
 * The compiled form of one openAPIV3Schema node: keywords read and checked once, sub-schemas
 * compiled recursively, CEL rules parsed. Every walker (validation, defaulting, pruning, CEL)
 * works on these nodes instead of the raw JSON.
 */
import { type CelAst, parseCel, referencesIdent } from './cel/cel-parser';
import type { CelSchemaShape } from './cel/cel-values';
import { isRecord } from '../../../../common/src/json/is-record';

export interface CompiledRule {
  rule: string;
  ast: CelAst | undefined;
  compileError: string | undefined;
  message: string | undefined;
  messageExpression: CelAst | undefined;
  messageExpressionSource: string | undefined;
  fieldPath: string | undefined;
  reason: string | undefined;
  optionalOldSelf: boolean;
  /** References `oldSelf`: only evaluated on update when the old value exists (unless optionalOldSelf). */
  isTransition: boolean;
}

export interface SchemaNode {
  type: string | undefined;
  format: string | undefined;
  nullable: boolean;
  intOrString: boolean;
  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  properties: Map<string, SchemaNode> | undefined;
  /** A schema, `true` (anything allowed) or `false` (no extra properties), or undefined. */
  additionalProperties: SchemaNode | boolean | undefined;
  items: SchemaNode | undefined;
  required: string[];
  enumValues: unknown[] | undefined;
  pattern: RegExp | undefined;
  patternSource: string | undefined;
  minLength: number | undefined;
  maxLength: number | undefined;
  minimum: number | undefined;
  maximum: number | undefined;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf: number | undefined;
  minItems: number | undefined;
  maxItems: number | undefined;
  uniqueItems: boolean;
  minProperties: number | undefined;
  maxProperties: number | undefined;
  allOf: SchemaNode[];
  anyOf: SchemaNode[];
  oneOf: SchemaNode[];
  not: SchemaNode | undefined;
  listType: string | undefined;
  listMapKeys: string[];
  mapType: string | undefined;
  hasDefault: boolean;
  defaultValue: unknown;
  rules: CompiledRule[];
  /** True when this node or any descendant carries CEL rules (lets the CEL walk skip subtrees). */
  hasRulesBelow: boolean;
  /** True when this node or a descendant has a default (lets defaulting skip subtrees). */
  hasDefaultsBelow: boolean;
  celShape: CelSchemaShape;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

const MAX_SCHEMA_DEPTH = 64;

/** Translates an ECMA-262-ish OpenAPI pattern; returns undefined when JS cannot compile it. */
function compilePattern(p: string | undefined): RegExp | undefined {
  if (p === undefined) return undefined;
  try {
    return new RegExp(p, 'u');
  } catch {
    try {
      return new RegExp(p);
    } catch {
      return undefined;
    }
  }
}

function compileRule(raw: unknown): CompiledRule | undefined {
  if (!isRecord(raw)) return undefined;
  const rule = str(raw.rule) ?? '';
  let ast: CelAst | undefined;
  let compileError: string | undefined;
  try {
    ast = parseCel(rule);
  } catch (e) {
    compileError = e instanceof Error ? e.message : String(e);
  }
  let messageExpression: CelAst | undefined;
  const messageExpressionSource = str(raw.messageExpression);
  if (messageExpressionSource !== undefined) {
    try {
      messageExpression = parseCel(messageExpressionSource);
    } catch {
      messageExpression = undefined;
    }
  }
  return {
    rule,
    ast,
    compileError,
    message: str(raw.message),
    messageExpression,
    messageExpressionSource,
    fieldPath: str(raw.fieldPath),
    reason: str(raw.reason),
    optionalOldSelf: raw.optionalOldSelf === true,
    isTransition: ast !== undefined && referencesIdent(ast, 'oldSelf'),
  };
}

export function compileNode(raw: unknown, depth = 0): SchemaNode {
  const s = isRecord(raw) ? raw : {};
  const deeper = depth < MAX_SCHEMA_DEPTH;
  const sub = (v: unknown): SchemaNode | undefined => (deeper && isRecord(v) ? compileNode(v, depth + 1) : undefined);
  const subs = (v: unknown): SchemaNode[] => (deeper && Array.isArray(v) ? v.filter(isRecord).map((x) => compileNode(x, depth + 1)) : []);

  let properties: Map<string, SchemaNode> | undefined;
  if (isRecord(s.properties)) {
    properties = new Map();
    for (const [k, v] of Object.entries(s.properties)) {
      const n = sub(v);
      if (n !== undefined) properties.set(k, n);
    }
  }
  let additionalProperties: SchemaNode | boolean | undefined;
  if (typeof s.additionalProperties === 'boolean') additionalProperties = s.additionalProperties;
  else additionalProperties = sub(s.additionalProperties);
  const itemsRaw: unknown = Array.isArray(s.items) ? s.items[0] : s.items;
  const items = sub(itemsRaw);
  const rules = Array.isArray(s['x-kubernetes-validations'])
    ? s['x-kubernetes-validations'].map(compileRule).filter((r): r is CompiledRule => r !== undefined)
    : [];
  const children: SchemaNode[] = [...(properties?.values() ?? []), ...(typeof additionalProperties === 'object' ? [additionalProperties] : []), ...(items ? [items] : [])];
  const patternSource = str(s.pattern);
  const type = str(s.type);
  const format = str(s.format);
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const celShape: CelSchemaShape = {
    type: intOrString ? undefined : type,
    format,
    intOrString,
    properties: properties ? new Map([...properties].map(([k, v]) => [k, v.celShape])) : undefined,
    additionalProperties: typeof additionalProperties === 'object' ? additionalProperties.celShape : undefined,
    items: items?.celShape,
  };
  const hasDefault = Object.prototype.hasOwnProperty.call(s, 'default');
  return {
    type,
    format,
    nullable: s.nullable === true,
    intOrString,
    preserveUnknownFields: s['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: s['x-kubernetes-embedded-resource'] === true,
    properties,
    additionalProperties,
    items,
    required: Array.isArray(s.required) ? s.required.filter((x): x is string => typeof x === 'string') : [],
    enumValues: Array.isArray(s.enum) ? s.enum : undefined,
    pattern: compilePattern(patternSource),
    patternSource,
    minLength: num(s.minLength),
    maxLength: num(s.maxLength),
    minimum: num(s.minimum),
    maximum: num(s.maximum),
    exclusiveMinimum: s.exclusiveMinimum === true,
    exclusiveMaximum: s.exclusiveMaximum === true,
    multipleOf: num(s.multipleOf),
    minItems: num(s.minItems),
    maxItems: num(s.maxItems),
    uniqueItems: s.uniqueItems === true,
    minProperties: num(s.minProperties),
    maxProperties: num(s.maxProperties),
    allOf: subs(s.allOf),
    anyOf: subs(s.anyOf),
    oneOf: subs(s.oneOf),
    not: sub(s.not),
    listType: str(s['x-kubernetes-list-type']),
    listMapKeys: Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'].filter((x): x is string => typeof x === 'string') : [],
    mapType: str(s['x-kubernetes-map-type']),
    hasDefault,
    defaultValue: hasDefault ? s.default : undefined,
    rules,
    hasRulesBelow: rules.length > 0 || children.some((c) => c.hasRulesBelow),
    hasDefaultsBelow: children.some((c) => c.hasDefault || c.hasDefaultsBelow),
    celShape,
  };
}
