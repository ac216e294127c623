/** The names of scheduler versions, `v<major>.<minor>.<patch>`, as Maestro numbers them. */
import type { Scheduler, SchedulerSpec, SchedulerVersion } from '../generated/resources';

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
}

const VERSION = /^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;

/** The greatest number of a version: the CRDs admit at most 9 digits a number. */
export const MAX_VERSION_NUMBER = 999_999_999;

/** What a text that is no version is told. */
export const NOT_A_VERSION = 'must be a version such as "v1.2.0", each number of at most 9 digits';

/** Parses `v1.2.3`; undefined when it is not a version, or a number of it has more than 9 digits (no SchedulerVersion holds one). */
export function parseVersion(version: string): ParsedVersion | undefined {
  const m = VERSION.exec(version);
  if (!m) return undefined;
  const parsed = { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
  return Object.values(parsed).every((n) => n <= MAX_VERSION_NUMBER) ? parsed : undefined;
}

/**
 * The major number of `v1.2.0` / `1.2.0` / `v3`, or undefined when the text is not a version. Rooms
 * of a version whose major differs from the active one are replaced by a rolling update; rooms of
 * another minor are kept, because a minor change does not affect rooms (DESIGN.md "Versions",
 * Maestro §7). Lenient where parseVersion is strict: a room's or a caller's version text is read
 * the same way by the operator and the gateway.
 */
export function majorOf(version: string): number | undefined {
  const match = /^v?(\d+)(?:\.\d+){0,2}$/.exec(version.trim());
  if (!match?.[1]) return undefined;
  const major = Number(match[1]);
  return Number.isSafeInteger(major) ? major : undefined;
}

/**
 * Whether two versions run the same rooms: the same major (a minor change touches no room, so
 * every version of one major runs its rooms' definition). Text that is not a version matches only itself.
 */
export function sameRooms(a: string, b: string): boolean {
  const x = majorOf(a);
  const y = majorOf(b);
  return x !== undefined && y !== undefined ? x === y : a === b;
}

/** The SchedulerVersion object of a scheduler's version: `<scheduler>-<version>`. */
export function versionObjectName(schedulerName: string, version: string): string {
  return `${schedulerName}-${version}`;
}

/** Finds a scheduler's version object (from a cache: no API call), undefined when it holds none. */
export type FindVersion = (schedulerName: string, version: string) => SchedulerVersion | undefined;

/**
 * The definition a scheduler's rooms run with: its active version's. The spec may hold a change
 * that is no version yet (being validated) or never will be (refused), so it is read only as the
 * fallback: before the first version exists (`status.version` unset: no room runs yet, and the
 * first version is made from the spec), or while the cache does not hold the active version's
 * object yet (just after a switch).
 */
export function activeDefinition(scheduler: Scheduler, findVersion: FindVersion): SchedulerSpec {
  const name = scheduler.metadata.name ?? '';
  const active = scheduler.status?.version ? findVersion(name, scheduler.status.version) : undefined;
  return active?.spec.definition ?? scheduler.spec;
}

/**
 * The versions of a scheduler whose SchedulerVersion says `status.active: true` (not being
 * deleted): the operator's own record of what is active. Only the create, a switch_active_version
 * and the rebuild of a deleted active version write that flag, and a switch writes the flags
 * before status.version.
 */
export function flaggedActive(versions: readonly SchedulerVersion[]): string[] {
  return versions.filter((v) => v.status?.active === true && !v.metadata.deletionTimestamp).map((v) => v.spec.version);
}

/**
 * The version a scheduler's rooms are made of, checked against that record: status.version alone
 * proves nothing, as `kubectl patch --subresource=status` writes it too.
 *  - `named` (status.version) when its SchedulerVersion says it is active, or when none of the
 *    scheduler's does (no record to check against: a deleted active version is rebuilt as `named`).
 *  - Otherwise the one version flagged active (status.version was edited, or a switch stands
 *    between its flags and status.version), or undefined when several are.
 */
export function recordedActiveVersion(named: string | undefined, versions: readonly SchedulerVersion[]): string | undefined {
  const flagged = flaggedActive(versions);
  if (named !== undefined && (flagged.length === 0 || versions.some((v) => v.spec.version === named && v.status?.active === true))) return named;
  return flagged.length === 1 ? flagged[0] : undefined;
}
