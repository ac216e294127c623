import { isRecord } from './is-record';

/**
 * The JSON merge patch (RFC 7386) that turns object `before` into object `after`: a member of
 * `before` that `after` lacks is null (removed), a member that is an object on both sides is the
 * patch between the two, any other member is `after`'s value. A merge patch merges objects member
 * by member, so writing `after` itself over `before` would keep `before`'s other members.
 * (A null inside `after` cannot survive any merge patch: it removes the member.)
 */
export function mergePatchBetween(before: unknown, after: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(before)) return after;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) patch[key] = isRecord(value) ? mergePatchBetween(before[key], value) : value;
  return patch;
}
