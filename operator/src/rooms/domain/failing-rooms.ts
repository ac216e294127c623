/**
 * Rooms of the active version that fail before their game server ever pings are made one at a time
 * (pure). A crashing image, an image that cannot be pulled or a missing setting fails every room
 * the same way; replacing each failed room at once, every health check, let a scheduler of 100
 * rooms start up to 100 pods every 10 s for as long as nobody fixed it (a Fleet of Agones does the same;
 * Thundernetes stops a build after `crashesToMarkUnhealthy` crashes).
 *
 * A game server that never pings (it lacks the SDK's pings, pings a wrong rooms API URL, or the
 * gateway refuses its room token: a room-token secret the gateway and the operator do not share)
 * fails the same way without an error: its rooms stay unready until the initialization timeout
 * expires them, and each one was replaced at once, the whole fleet every initialization timeout
 * (trial K, 2026-12-06). Such a room (`silent`: expired by the initialization timeout, never
 * pinged) counts as failed too, and the newest of them is kept (`keptSilentRooms`), as the newest
 * rooms in error are, so the next health check, and a new leader, read the same story: it goes
 * when a newer one fails the same way, or, once a room of the version pings, as any silent room.
 *
 * Level-based, from the rooms alone. Of the fleet rooms of the active major (validation rooms and
 * rooms being deleted left out), when at least one failed (in error, or silent) and none has ever
 * pinged (or serves), the version is failing. Then the health check adds
 * one room, a probe, only when none of them is still starting and the newest was made one probe
 * interval ago. A probe that pings ends the hold and the missing rooms follow at once; so does a
 * new major version, whose rooms are judged on their own. A room that pinged and failed later
 * (a crash during a match) holds nothing: the version worked.
 *
 * The probe interval is six health checks, and never more than half the room ping timeout: a
 * failed room expires at its ping timeout, and the next probe must fail before the last one
 * expires, or the hold would lapse and every missing room be made at once.
 */
import { isServing } from '../../../../common/src/rooms/room-status';
import { counted } from '../../../../common/src/text/counted';
import { expiryReason, formatMs, isInitExpired, newestFirst } from './expiry';
import { isOtherMajor } from './version-major';
import type { RoomTimeouts, RoomView } from './types';

const PROBE_EVERY_CHECKS = 6;

export function probeIntervalMs(healthIntervalMs: number, pingTimeoutMs: number): number {
  return Math.max(1, Math.min(PROBE_EVERY_CHECKS * healthIntervalMs, Math.floor(pingTimeoutMs / 2)));
}

/**
 * How many silent rooms of a failing version are kept: the newest, as the health check's evidence
 * and for its game server's log. One, not the five rooms in error kept (expiry.ts): a silent
 * room's pod runs, and holds what it asked of its node.
 */
export const SILENT_ROOMS_KEPT = 1;

export interface FailedRoom {
  room: RoomView;
  /** Why it failed, for people: its GameRoom's status.reason when in error, its expiry reason when silent. */
  why?: string;
  silent: boolean;
}

export interface FailingRooms {
  /** Rooms of the active major that failed (in error, or silent) and never pinged, newest first. */
  failed: FailedRoom[];
  /** Rooms of the active major still starting (pending or unready). */
  starting: number;
  /** When the next probe may be made (epoch ms): the newest room of the active major's creation plus the interval (and a second). */
  probeAt: number;
  probeIntervalMs: number;
}

const pinged = (r: RoomView): boolean => r.lastPingAt !== undefined || r.pingStatus !== undefined || isServing(r.status);

/** The silent rooms among `rooms` (expired at `now` by the initialization timeout, never pinged), each with its expiry reason: `failingRooms`' `silent`. */
export function silentRooms(rooms: readonly RoomView[], now: number, timeouts: RoomTimeouts): Map<string, string> {
  const silent = new Map<string, string>();
  for (const r of rooms) {
    if (r.validation || r.terminating || !isInitExpired(r, now, timeouts)) continue;
    silent.set(r.name, expiryReason(r, now, timeouts) ?? 'no ping recorded within the initialization timeout');
  }
  return silent;
}

/**
 * The active version's failing rooms, or undefined when its rooms are not failing (see above). One
 * pass that stops at the first room of the active major that pinged: a serving fleet costs little.
 * `silent`: the rooms the health check expires now by the initialization timeout (never pinged),
 * each with its expiry reason.
 */
export function failingRooms(
  rooms: readonly RoomView[],
  active: { activeVersion: string; activeMajor?: number },
  intervalMs: number,
  silent: ReadonlyMap<string, string> = new Map(),
): FailingRooms | undefined {
  const failed: FailedRoom[] = [];
  let starting = 0;
  let newest = Number.NEGATIVE_INFINITY;
  for (const r of rooms) {
    if (r.validation || r.terminating || isOtherMajor(r.version, active)) continue;
    if (pinged(r)) return undefined;
    const silence = silent.get(r.name);
    if (r.status === 'error') failed.push({ room: r, why: r.reason, silent: false });
    else if (silence !== undefined) failed.push({ room: r, why: silence, silent: true });
    else if (r.status === 'pending' || r.status === 'unready') starting += 1;
    newest = Math.max(newest, r.createdAt);
  }
  if (failed.length === 0) return undefined;
  failed.sort((a, b) => newestFirst(a.room, b.room));
  // Creation times have a second's precision (metadata.creationTimestamp): a second more keeps the interval.
  return { failed, starting, probeAt: newest + 1000 + intervalMs, probeIntervalMs: intervalMs };
}

/** The silent rooms of a failing version the health check keeps rather than expires: the newest SILENT_ROOMS_KEPT. */
export function keptSilentRooms(failing: FailingRooms | undefined): ReadonlySet<string> {
  if (!failing) return new Set();
  return new Set(failing.failed.filter((f) => f.silent).slice(0, SILENT_ROOMS_KEPT).map((f) => f.room.name));
}

/** The rooms the health check adds instead of `planned`: one when a probe is due, else none. */
export function probeAmount(planned: number, failing: FailingRooms, now: number): number {
  if (planned <= 0 || failing.starting > 0 || now < failing.probeAt) return 0;
  return 1;
}

/**
 * What fails, e.g. `rooms of v1.0.0 fail before their game server pings: 3 in error and none has
 * pinged (newest r-1: pod phase Failed: …)`, or `… 2 still unready or pending at the initialization
 * timeout with no ping recorded and none has pinged (newest r-2: unready 121s after its pod started …)`.
 */
function failureWords(failing: FailingRooms, activeVersion: string): string {
  const newest = failing.failed[0] as FailedRoom;
  const why = newest.why ? `: ${newest.why}` : '';
  const silent = failing.failed.filter((f) => f.silent).length;
  const inError = failing.failed.length - silent;
  const parts = [
    ...(inError > 0 ? [`${inError} in error`] : []),
    ...(silent > 0 ? [`${silent} still unready or pending at the initialization timeout with no ping recorded`] : []),
  ];
  return `rooms of ${activeVersion} fail before their game server pings: ${parts.join(', ')}${parts.length > 1 ? ',' : ''} and none has pinged (newest ${newest.room.name}${why})`;
}

const oneAtATime = (failing: FailingRooms): string => `one room at a time, at most one every ${formatMs(failing.probeIntervalMs)}`;

/**
 * What holds the active version's rooms and what to do about it, for the HealingHeld condition, the
 * RoomsFailing Event and the log.
 */
export function describeFailingRooms(failing: FailingRooms, schedulerName: string, activeVersion: string, now: number): string {
  // A probe past due (the operator restarted, or the health check was held) is made at the next check.
  const next = failing.starting > 0
    ? `${counted(failing.starting, 'room')} of it still starting`
    : failing.probeAt > now ? `the next one at ${new Date(failing.probeAt).toISOString()}` : 'the next one at the next health check';
  const newVersion = `a new version of the scheduler (POST /schedulers/${schedulerName} with the fixed definition, PATCH /schedulers/${schedulerName}, or kubectl edit scheduler ${schedulerName}): a new major version is validated on one room, then rolled out`;
  const fix = failing.failed[0]?.why?.startsWith(`${CONFIG_ERROR}:`) === true
    ? `Create what the rooms' environment reads in their namespace ${schedulerName} (kubectl -n ${schedulerName} create secret generic <name> --from-literal=<key>=<value>): `
      + `the kubelet creates the waiting rooms' containers once it is there. Or drop the reference in ${newVersion}`
    : `Fix the game server in ${newVersion}`;
  return `${failureWords(failing, activeVersion)}; the health check makes ${oneAtATime(failing)} (${next}), instead of replacing every failed room, `
    + `and makes the missing rooms once one pings. ${fix}`;
}

/** The kubelet's waiting reason for a container whose Secret or ConfigMap (or a key of it) is missing. */
export const CONFIG_ERROR = 'CreateContainerConfigError';

/** Why an add_rooms makes one room (a probe), for its history. */
export function probeWords(failing: FailingRooms, activeVersion: string): string {
  return `one room, to see whether rooms of ${activeVersion} start again (${oneAtATime(failing)} until one pings): ${failureWords(failing, activeVersion)}`;
}
