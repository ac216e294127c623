/**
 * Which SchedulerVersions a scheduler no longer keeps (ROOMKEEPER_VERSION_HISTORY_LIMIT), as a
 * Deployment keeps `revisionHistoryLimit` ReplicaSets: every version is a stored object the
 * operator caches, so a scheduler changed every hour for a year must not hold 8,760 of them. Pure.
 *
 * Kept whatever the limit: the versions in `keep` (the active one, one an operation names, one a
 * room runs) and the greatest version of each major, so the next version's number (Maestro's
 * numbering: greatest minor of the active major plus one, greatest major plus one) is never one a
 * deleted version had.
 */
import { parseVersion } from '../../../common/src/resources/scheduler-version';
import { compareVersions } from './versioning';

export interface StoredVersion {
  version: string;
  /** metadata.creationTimestamp (RFC 3339, whole seconds). */
  createdAt: string | undefined;
}

/** The versions beyond the newest `limit` that nothing keeps, oldest number first. */
export function versionsBeyondHistory(versions: readonly StoredVersion[], opts: { limit: number; keep: ReadonlySet<string> }): string[] {
  const valid = versions.filter((v) => parseVersion(v.version) !== undefined);
  const newestFirst = [...valid].sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '') || compareVersions(b.version, a.version));
  const kept = new Set<string>([...opts.keep, ...newestFirst.slice(0, Math.max(0, opts.limit)).map((v) => v.version)]);
  const greatestOfMajor = new Map<number, string>();
  for (const { version } of valid) {
    const major = (parseVersion(version) as { major: number }).major;
    const best = greatestOfMajor.get(major);
    if (best === undefined || compareVersions(version, best) > 0) greatestOfMajor.set(major, version);
  }
  for (const version of greatestOfMajor.values()) kept.add(version);
  return valid.map((v) => v.version).filter((v) => !kept.has(v)).sort(compareVersions);
}
