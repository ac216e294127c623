/** Runs the CEL twins of a scope over a document and reports each violated rule where Kubernetes would. */
import { celTwins, NotApplicable, type CelScope, type CelTwin } from './cel-rules';
import { joinField, joinIndex, joinRelative } from './field-path';
import type { FieldError } from './result';

interface Located {
  value: unknown;
  /** The matching node of the old document, when there is one (for transition rules). */
  old: unknown;
  field: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every node at a schema location (`spec.containers[].ports[]`) of a document, with its field path. */
export function nodesAt(root: unknown, at: string, oldRoot: unknown, base: string): Located[] {
  let nodes: Located[] = [{ value: root, old: oldRoot, field: base }];
  const steps = at === '' ? [] : at.split('.');
  for (const step of steps) {
    const isList = step.endsWith('[]');
    const property = isList ? step.slice(0, -2) : step;
    const next: Located[] = [];
    for (const node of nodes) {
      if (!isObject(node.value) || node.value[property] === undefined) continue;
      const value = node.value[property];
      const old = isObject(node.old) ? node.old[property] : undefined;
      const field = joinField(node.field, property);
      if (!isList) {
        next.push({ value, old, field });
      } else if (Array.isArray(value)) {
        // Transition rules on list items only apply to map-keyed lists; ours have none, so old is dropped.
        value.forEach((item, i) => next.push({ value: item, old: undefined, field: joinIndex(field, i) }));
      }
    }
    nodes = next;
  }
  return nodes;
}

function check(twin: CelTwin, node: Located, hasOld: boolean): boolean {
  if (twin.transition && (!hasOld || node.old === undefined)) return true;
  try {
    return twin.holds(node.value, node.old);
  } catch (e) {
    if (e instanceof NotApplicable) return true;
    throw e;
  }
}

export interface RunOptions {
  /** The previous version of the document, for transition rules; omit on create. */
  old?: unknown;
  /** Field path of `root` in the reported errors. */
  base?: string;
  /** Only the twins this returns true for (default: all of the scope). */
  filter?: (twin: CelTwin) => boolean;
}

/** The violations of the scope's rules, in table order then document order. */
export function runCelTwins(scope: CelScope, root: unknown, options: RunOptions = {}): FieldError[] {
  const errors: FieldError[] = [];
  const hasOld = options.old !== undefined;
  for (const twin of celTwins) {
    if (twin.scope !== scope || (options.filter && !options.filter(twin))) continue;
    for (const at of twin.at) {
      for (const node of nodesAt(root, at, options.old, options.base ?? '')) {
        if (!check(twin, node, hasOld)) errors.push({ field: joinRelative(node.field, twin.fieldPath), message: twin.message });
      }
    }
  }
  return errors;
}
