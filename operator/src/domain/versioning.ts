/**
 * Scheduler versions, numbered as Maestro does (maestro-behaviour.md section 7). Which change is
 * major or minor is common/src/resources/scheduler-change.ts. Pure: no I/O.
 */
import { MAX_VERSION_NUMBER, parseVersion, type ParsedVersion } from '../../../common/src/resources/scheduler-version';

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
    if (major >= MAX_VERSION_NUMBER) throw new VersionsExhaustedError(all.find((v) => v.major === major) as ParsedVersion, 'major');
    return formatVersion({ major: major + 1, minor: 0, patch: 0 });
  }
  const minor = Math.max(...all.filter((v) => v.major === current.major).map((v) => v.minor));
  if (minor >= MAX_VERSION_NUMBER) throw new VersionsExhaustedError({ major: current.major, minor, patch: 0 }, 'minor');
  return formatVersion({ major: current.major, minor: minor + 1, patch: 0 });
}

/** No version can be numbered after the greatest one: a SchedulerVersion made by hand took the last number. */
export class VersionsExhaustedError extends Error {
  constructor(readonly greatest: ParsedVersion, readonly change: 'major' | 'minor') {
    super(`no ${change} version can be numbered after ${formatVersion(greatest)}: a version number has at most 9 digits (SchedulerVersion objects made by hand can take the last one); `
      + `delete that SchedulerVersion (kubectl get schedulerversions lists them) if no room runs it, then send the change again`);
    this.name = 'VersionsExhaustedError';
  }
}
