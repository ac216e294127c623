/**
 * Scheduler versions, numbered as Maestro does (maestro-behaviour.md section 7), and the rule that
 * tells a major change from a minor one (DESIGN.md, Versions). Pure: no I/O.
 *
 * Major (affects rooms, so switching to it replaces them): `spec`, `portRange`, `annotations` and
 * `labels` (labels are put on the room pods).
 * Minor (switching replaces no room): `maxSurge`, `forwarders`, `autoscaling`, `roomsReplicas`,
 * `matchAllocation` and `allocation` (read by the gateway and the operator, not by the rooms), and
 * `game`, which names the game for lookups and does not reach the rooms.
 * Any other field (a future one) counts as major, the safe side.
 */
import type { SchedulerSpec } from '../../../common/src/generated/resources';
import { parseVersion, type ParsedVersion } from '../../../common/src/resources/scheduler-version';
import { forwarderTimeoutMs } from '../../../common/src/forwarding/forwarder-options';

export type VersionChange = 'major' | 'minor' | 'none';

export const INITIAL_VERSION = 'v1.0.0';

/** Fields whose change does not affect rooms. */
const MINOR_FIELDS: ReadonlySet<string> = new Set(['maxSurge', 'forwarders', 'autoscaling', 'roomsReplicas', 'game', 'matchAllocation', 'allocation']);

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

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A canonical form for comparison: key order ignored; absent, null, empty string, empty list and
 * empty map are the same; protocols compared case-insensitively; numeric strings of maxSurge equal
 * to their numbers (defaults, forwarder timeouts included, are applied by `withDefaults`).
 */
function canonical(value: unknown, path: string): Json | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (Array.isArray(value)) {
    const items = value.map((v) => canonical(v, `${path}[]`) ?? null);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const out: { [key: string]: Json } = {};
    for (const key of Object.keys(value).sort()) {
      const c = canonical((value as Record<string, unknown>)[key], path === '' ? key : `${path}.${key}`);
      if (c !== undefined) out[key] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  if (typeof value === 'string') {
    if (path.endsWith('.ports[].protocol')) return value.toUpperCase();
    if (path === 'maxSurge' && /^[0-9]+$/.test(value)) return Number(value);
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return undefined;
}

const DEFAULTS: ReadonlyArray<{ path: string[]; value: Json }> = [
  { path: ['autoscaling', 'policy', 'parameters', 'roomOccupancy', 'downThreshold'], value: 0.99 },
  { path: ['autoscaling', 'enabled'], value: false },
  { path: ['autoscaling', 'cooldown'], value: 0 },
  { path: ['roomsReplicas'], value: 0 },
];

/**
 * The definition with its defaults applied. A forwarder's timeout is the deadline that applies
 * (`forwarderTimeoutMs`): absent, 1000 and "1000" are the same, so the forwarder GET shows with
 * `options: {timeout: "1000", metadata: {}}`, POSTed back unchanged, is no change of one created
 * without options.
 */
function withDefaults(def: SchedulerSpec): Record<string, unknown> {
  const copy = structuredClone(def) as unknown as Record<string, unknown>;
  for (const f of (copy as unknown as SchedulerSpec).forwarders ?? []) {
    f.options = { ...f.options, timeout: forwarderTimeoutMs(f) };
  }
  for (const { path, value } of DEFAULTS) {
    let node: unknown = copy;
    for (const step of path.slice(0, -1)) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[step] : undefined;
    const last = path[path.length - 1] as string;
    if (typeof node === 'object' && node !== null && (node as Record<string, unknown>)[last] === undefined) {
      (node as Record<string, unknown>)[last] = value;
    }
  }
  return copy;
}

/** The fields of the definition that differ, compared canonically. */
export function changedFields(oldDef: SchedulerSpec, newDef: SchedulerSpec): string[] {
  const a = withDefaults(oldDef);
  const b = withDefaults(newDef);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((k) => JSON.stringify(canonical(a[k], k)) !== JSON.stringify(canonical(b[k], k)));
}

/** Whether a new definition is a major change of the old one, a minor one, or no change. */
export function classifyChange(oldDef: SchedulerSpec, newDef: SchedulerSpec): VersionChange {
  const changed = changedFields(oldDef, newDef);
  if (changed.length === 0) return 'none';
  return changed.some((f) => !MINOR_FIELDS.has(f)) ? 'major' : 'minor';
}
