/**
 * Scheduler versions, numbered as Maestro does (maestro-behaviour.md section 7). Which change is
 * major or minor is common/src/resources/scheduler-change.ts. Pure: no I/O.
 */
import { parseVersion, type ParsedVersion } from '../../../common/src/resources/scheduler-version';

export const INITIAL_VERSION = 'v1.0.0';

export class InvalidVersionError extends Error {
  constructor(readonly version: string) {
    super(`invalid scheduler version "${version}": expected v<major>.<minor>.<patch>`);
    this.name = 'InvalidVersionError';
  }
}

function formatVersion(v: ParsedVersion): string {
  return `v${v.major}.${v.minor}.${v.patch}`;
}

function mustParse(version: string): ParsedVersion {
  const parsed = parseVersion(version);
  if (!parsed) throw new InvalidVersionError(version);
  return parsed;
}

/** Orders versions numerically (v1.10.0 after v1.9.0); usable with Array.prototype.sort. Throws on a non-version. */
export function compareVersions(a: string, b: string): number {
  const x = mustParse(a);
  const y = mustParse(b);
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}

/**
 * The number of the version made from `active` by a change. Minor: the greatest minor among the
 * versions that share the active's major, plus one. Major: the greatest major of all, plus one.
 * Entries of `existing` that are not versions are ignored; `active` must be a version.
 */
export function nextVersion(existing: readonly string[], active: string, change: 'major' | 'minor'): string {
  const current = mustParse(active);
  const all = [...existing, active].map(parseVersion).filter((v): v is ParsedVersion => v !== undefined);
  if (change === 'major') {
    const major = Math.max(...all.map((v) => v.major));
    return formatVersion({ major: major + 1, minor: 0, patch: 0 });
  }
  const minor = Math.max(...all.filter((v) => v.major === current.major).map((v) => v.minor));
  return formatVersion({ major: current.major, minor: minor + 1, patch: 0 });
}
