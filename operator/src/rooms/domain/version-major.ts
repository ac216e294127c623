/**
 * Rooms of another major than the active version's are replaced by a rolling update (majorOf, in
 * common, reads a version's major for the operator and the gateway alike).
 */
import { majorOf } from '../../../../common/src/resources/scheduler-version';

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
