/**
 * Major numbers of scheduler versions (`v1.2.0` -> 1). Rooms of a version whose major differs from
 * the active one are replaced by a rolling update; rooms of another minor are kept, because a minor
 * change does not affect rooms (DESIGN.md "Versions", Maestro §7).
 */

/** The major number of `v1.2.0` / `1.2.0` / `v3`, or undefined when the text is not a version. */
export function majorOf(version: string): number | undefined {
  const match = /^v?(\d+)(?:\.\d+){0,2}$/.exec(version.trim());
  if (!match?.[1]) return undefined;
  const major = Number(match[1]);
  return Number.isSafeInteger(major) ? major : undefined;
}

/**
 * Whether a room of `roomVersion` belongs to another major than the active version. When the
 * active version has no readable major, only the exact version counts as current; a room whose
 * version cannot be read is treated as another major (it is replaced rather than kept forever).
 */
export function isOtherMajor(roomVersion: string, active: { activeVersion?: string; activeMajor?: number }): boolean {
  const activeMajor = active.activeMajor ?? (active.activeVersion === undefined ? undefined : majorOf(active.activeVersion));
  if (activeMajor === undefined) return active.activeVersion !== undefined && roomVersion !== active.activeVersion;
  return majorOf(roomVersion) !== activeMajor;
}
