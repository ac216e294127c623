/**
 * The fields of a request that validation dropped (unknown to the schema, so pruned as Maestro's
 * protojson discards them): the member paths of `sent` that `kept` no longer has. Pure.
 */
import { joinIndex, memberPath } from './field-path';

/** At most this many are named; the count of the rest follows. */
const MAX_NAMED = 10;

/** Each member of `sent` missing from `kept`, as a field path, in the order sent (at most `limit`, then `(N more)`). */
export function droppedFields(sent: unknown, kept: unknown, limit = MAX_NAMED): string[] {
  const found: string[] = [];
  let more = 0;
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (Array.isArray(a) && Array.isArray(b)) {
      a.forEach((item, i) => walk(item, b[i], joinIndex(path, i)));
      return;
    }
    if (!isObject(a) || !isObject(b)) return;
    for (const key of Object.keys(a)) {
      const field = memberPath(path, key);
      if (!Object.prototype.hasOwnProperty.call(b, key)) {
        if (found.length < limit) found.push(field);
        else more++;
      } else walk(a[key], b[key], field);
    }
  };
  walk(sent, kept, '');
  return more > 0 ? [...found, `(${more} more)`] : found;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
