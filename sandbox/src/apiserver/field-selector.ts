/**
 * Field selectors: `path=value`, `path==value`, `path!=value`, comma-separated. Paths are dotted
 * JSON paths (`metadata.name`, `status.phase`, `spec.nodeName`, `involvedObject.uid`); a missing
 * field compares as the empty string, as the real server's field sets do.
 */
import { badRequest } from './api-error';

export type FieldMatcher = (obj: Record<string, unknown>) => boolean;

interface FieldRequirement {
  path: string[];
  value: string;
  negate: boolean;
}

const MATCH_ALL: FieldMatcher = () => true;

export function fieldValue(obj: Record<string, unknown>, path: readonly string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

export function parseFieldSelector(selector: string | undefined | null): FieldMatcher {
  if (!selector || selector.trim() === '') return MATCH_ALL;
  const requirements: FieldRequirement[] = [];
  for (const raw of selector.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    requirements.push({ path: m[1]!.split('.'), value: m[3]!, negate: m[2] === '!=' });
  }
  return (obj) => requirements.every((r) => (fieldValue(obj, r.path) === r.value) !== r.negate);
}
