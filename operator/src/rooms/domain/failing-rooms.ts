/**
 * Rooms of the active version that fail before their game server ever pings are made one at a time
 * (pure). A crashing image, an image that cannot be pulled or a missing setting fails every room
 * the same way; replacing each failed room at once, every health check, let a scheduler of 100
 * rooms start up to 100 pods every 10 s for as long as nobody fixed it (a Fleet of Agones does the same;
 * Thundernetes stops a build after `crashesToMarkUnhealthy` crashes).
 *
 * Level-based, from the rooms alone, so a new leader reads the same story. Of the fleet rooms of
 * the active major (validation rooms and rooms being deleted left out), when at least one is in
 * error and none has ever pinged (or serves), the version is failing. Then the health check adds
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
import { formatMs, newestFirst } from './expiry';
import { isOtherMajor } from './version-major';
import type { RoomView } from './types';

const PROBE_EVERY_CHECKS = 6;

export function probeIntervalMs(healthIntervalMs: number, pingTimeoutMs: number): number {
  return Math.max(1, Math.min(PROBE_EVERY_CHECKS * healthIntervalMs, Math.floor(pingTimeoutMs / 2)));
}

export interface FailingRooms {
  /** Rooms of the active major in error that never pinged, newest first. */
  failed: RoomView[];
  /** Rooms of the active major still starting (pending or unready). */
  starting: number;
  /** When the next probe may be made (epoch ms): the newest room of the active major's creation plus the interval (and a second). */
  probeAt: number;
  probeIntervalMs: number;
}

const pinged = (r: RoomView): boolean => r.lastPingAt !== undefined || r.pingStatus !== undefined || isServing(r.status);

/**
 * The active version's failing rooms, or undefined when its rooms are not failing (see above). One
 * pass that stops at the first room of the active major that pinged: a serving fleet costs little.
 */
export function failingRooms(rooms: readonly RoomView[], active: { activeVersion: string; activeMajor?: number }, intervalMs: number): FailingRooms | undefined {
  const failed: RoomView[] = [];
  let starting = 0;
  let newest = Number.NEGATIVE_INFINITY;
  for (const r of rooms) {
    if (r.validation || r.terminating || isOtherMajor(r.version, active)) continue;
    if (pinged(r)) return undefined;
    if (r.status === 'error') failed.push(r);
    else if (r.status === 'pending' || r.status === 'unready') starting += 1;
    newest = Math.max(newest, r.createdAt);
  }
  if (failed.length === 0) return undefined;
  failed.sort(newestFirst);
  // Creation times have a second's precision (metadata.creationTimestamp): a second more keeps the interval.
  return { failed, starting, probeAt: newest + 1000 + intervalMs, probeIntervalMs: intervalMs };
}

/** The rooms the health check adds instead of `planned`: one when a probe is due, else none. */
export function probeAmount(planned: number, failing: FailingRooms, now: number): number {
  if (planned <= 0 || failing.starting > 0 || now < failing.probeAt) return 0;
  return 1;
}

/** What fails, e.g. `rooms of v1.0.0 fail before their game server pings: 3 in error and none has pinged (newest r-1: pod phase Failed: …)`. */
function failureWords(failing: FailingRooms, activeVersion: string): string {
  const newest = failing.failed[0] as RoomView;
  const why = newest.reason ? `: ${newest.reason}` : '';
  return `rooms of ${activeVersion} fail before their game server pings: ${failing.failed.length} in error and none has pinged (newest ${newest.name}${why})`;
}

const oneAtATime = (failing: FailingRooms): string => `one room at a time, at most one every ${formatMs(failing.probeIntervalMs)}`;

/**
 * What holds the active version's rooms and what to do about it, for the HealingHeld condition, the
 * RoomsFailing Event and the log.
 */
export function describeFailingRooms(failing: FailingRooms, schedulerName: string, activeVersion: string): string {
  const next = failing.starting > 0
    ? `${counted(failing.starting, 'room')} of it still starting`
    : `the next one at ${new Date(failing.probeAt).toISOString()}`;
  return `${failureWords(failing, activeVersion)}; the health check makes ${oneAtATime(failing)} (${next}), instead of replacing every failed room, `
    + `and makes the missing rooms once one pings. Fix the game server in a new version of the scheduler (POST /schedulers/${schedulerName} with the fixed definition, PATCH /schedulers/${schedulerName}, or kubectl edit scheduler ${schedulerName}): a new major version is validated on one room, then rolled out`;
}

/** Why an add_rooms makes one room (a probe), for its history. */
export function probeWords(failing: FailingRooms, activeVersion: string): string {
  return `one room, to see whether rooms of ${activeVersion} start again (${oneAtATime(failing)} until one pings): ${failureWords(failing, activeVersion)}`;
}
