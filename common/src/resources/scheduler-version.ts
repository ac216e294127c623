/** The names of scheduler versions, `v<major>.<minor>.<patch>`, as Maestro numbers them. */

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
}

const VERSION = /^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;

/**
 * Parses `v1.2.3`; undefined when it is not a version, or a number of it is too large to count
 * exactly (no version made by adding one to another reaches it).
 */
export function parseVersion(version: string): ParsedVersion | undefined {
  const m = VERSION.exec(version);
  if (!m) return undefined;
  const parsed = { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
  return Object.values(parsed).every(Number.isSafeInteger) ? parsed : undefined;
}

/**
 * Whether two versions run the same rooms: the same major (a minor change touches no room, so
 * every version of one major runs its rooms' definition). Text that is not a version matches only itself.
 */
export function sameRooms(a: string, b: string): boolean {
  const x = parseVersion(a);
  const y = parseVersion(b);
  return x && y ? x.major === y.major : a === b;
}
