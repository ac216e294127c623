/**
 * Whether a scheduler definition changes another, and how: a major change (affects rooms, so
 * switching to it replaces them), a minor one, or none. The operator numbers the version of a
 * change by it; the gateway answers an unchanged definition 409 by it, so a GET answer POSTed back
 * is no change for both (DESIGN.md, Versions). Pure: no I/O.
 *
 * Major: `spec`, `portRange`, `annotations` and `labels` (labels are put on the room pods).
 * Minor (switching replaces no room): `maxSurge`, `forwarders`, `autoscaling`, `roomsReplicas`,
 * `matchAllocation` and `allocation` (read by the gateway and the operator, not by the rooms), and
 * `game`, which names the game for lookups and does not reach the rooms.
 * Any other field (a future one) counts as major, the safe side.
 */
import type { SchedulerSpec } from '../generated/resources';
import { forwarderTimeoutMs } from '../forwarding/forwarder-options';
import { DEFAULT_ALLOCATION_TTL_SECONDS } from '../rooms/allocation';
import { counted } from '../text/counted';

export type VersionChange = 'major' | 'minor' | 'none';

/** Fields whose change does not affect rooms. */
const MINOR_FIELDS: ReadonlySet<string> = new Set(['maxSurge', 'forwarders', 'autoscaling', 'roomsReplicas', 'game', 'matchAllocation', 'allocation']);

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
  { path: ['matchAllocation', 'maxMatches'], value: 1 },
  { path: ['allocation', 'maxTtlSeconds'], value: DEFAULT_ALLOCATION_TTL_SECONDS },
];

/**
 * The definition with its defaults applied. A forwarder's timeout is the deadline that applies
 * (`forwarderTimeoutMs`): absent, 1000 and "1000" are the same, so the forwarder GET shows with
 * `options: {timeout: "1000", metadata: {}}`, POSTed back unchanged, is no change of one created
 * without options. `matchAllocation` and `allocation` absent are their defaults (one match per
 * room, a 300 s TTL cap), as `{}` is once the API server fills it in: sending either is no change.
 */
function withDefaults(def: SchedulerSpec): Record<string, unknown> {
  const copy = structuredClone(def) as unknown as Record<string, unknown>;
  copy.matchAllocation ??= {};
  copy.allocation ??= {};
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

/**
 * The changed fields as an operation's history tells them: for a major change, the fields that
 * made it major first, then any minor field that changed with them, marked as such, so that a
 * minor field (forwarders, roomsReplicas…) never reads as the cause of a major version.
 */
export function describeChange(oldDef: SchedulerSpec, newDef: SchedulerSpec): string {
  const changed = changedFields(oldDef, newDef);
  // The count says how it moved: a kubectl scale's version tells it, as an add-rooms' line does.
  const told = (fields: string[]) => fields.map((f) => (f === 'roomsReplicas' ? `roomsReplicas from ${oldDef.roomsReplicas ?? 0} to ${newDef.roomsReplicas ?? 0}` : f)).join(', ');
  const major = changed.filter((f) => !MINOR_FIELDS.has(f));
  const minor = changed.filter((f) => MINOR_FIELDS.has(f));
  if (major.length === 0 || minor.length === 0) return told(changed);
  return `${told(major)}; with minor changes to ${told(minor)}`;
}

/** Whether a new definition is a major change of the old one, a minor one, or no change. */
export function classifyChange(oldDef: SchedulerSpec, newDef: SchedulerSpec): VersionChange {
  const changed = changedFields(oldDef, newDef);
  if (changed.length === 0) return 'none';
  return changed.some((f) => !MINOR_FIELDS.has(f)) ? 'major' : 'minor';
}

/**
 * A roomsReplicas changed while autoscaling is enabled sets no count: the autoscaler decides it
 * (Maestro's GetDesiredNumberOfRooms), and the value waits for autoscaling to be turned off. The
 * sentence that tells so (for the change's history and Event), or undefined when it does not apply.
 */
export function unusedRoomsReplicas(oldDef: SchedulerSpec, newDef: SchedulerSpec): string | undefined {
  const autoscaling = newDef.autoscaling;
  if (autoscaling?.enabled !== true || !changedFields(oldDef, newDef).includes('roomsReplicas')) return undefined;
  const replicas = newDef.roomsReplicas ?? 0;
  const max = autoscaling.max === -1 ? '-1 (the most rooms one scheduler may have)' : String(autoscaling.max);
  return `roomsReplicas ${replicas} does not set the number of rooms while autoscaling is enabled: the autoscaler keeps it between min ${autoscaling.min} and max ${max}; `
    + `set spec.autoscaling.enabled to false to have ${counted(replicas, 'room')}`;
}
