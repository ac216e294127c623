/**
 * Which rooms have expired and must be removed by id (Maestro §3.4, health controller). The rules,
 * checked in this order, first match wins:
 *  1. status `terminated`: the room said it is done;
 *  2. terminating (being deleted, or pinged `terminating`) for longer than the deletion timeout,
 *     counted from `terminatingSince`, else the last ping, else creation (Maestro counts from the
 *     last ping; we know when the deletion began, which is what the timeout is about);
 *  3. `pending` or `unready` for longer than the initialization timeout, counted from the moment its
 *     pod's containers started. Maestro counts from creation; we do not, because a room whose pod
 *     still waits for the cluster (not scheduled, image pulling, kubelet behind) would be replaced
 *     by a room that waits behind it in the same queue (benchmark 10, 10,000 rooms on a real API
 *     server with the simulated kubelet behind, removed 17,776 rooms as expired while counting
 *     from creation). An unready room (pod ready, no ping)
 *     with no known start counts from creation. A room whose pod never starts is not replaced: it
 *     stays `pending` in the scheduler's counts and its pod's conditions say why (Unschedulable,
 *     for example); image and crash failures make it `error`, which rule 4 and the counts handle.
 *     Only a room that never pinged is still initializing: a room that pinged and turns `pending`
 *     later (its pod's Ready condition dropped: kube-controller-manager marks the pods of a node
 *     NotReady when the node's heartbeats stop reaching the API server, during an API server
 *     outage for one) has initialized, and rule 4 judges it by its pings. Maestro counts from
 *     creation and would remove such a room at once, players and all;
 *  3b. `pending` after it pinged, its pod not ready on a node that is (its kubelet, not a lost
 *     node, says so: a readiness probe that fails, a container that never got ready), for longer
 *     than the initialization timeout, counted from when its pod's Ready condition turned False
 *     (or its start, when later), unless its game server said it has players. Such a room serves
 *     nobody (no one can allocate a pending room), yet it pings, so rule 4 never removed it: it
 *     stayed for good. Maestro removes a pending room once it is older than the timeout;
 *  4. not `pending`, or `pending` after it pinged, and no ping for longer than the ping timeout; a
 *     room that never pinged counts from its pod's start, else its creation (Maestro stores
 *     `lastPingAt = createdAt` at creation).
 * Occupied rooms do expire under rule 4: a room that stopped pinging is presumed dead, and the
 * removal of an expired room is a removal by id (DESIGN.md "Rooms with players are protected").
 * Validation rooms expire like any other, so one leaked by a crashed operation gets cleaned up.
 * Comparisons are strict (`>`), as Maestro's.
 */
import type { RoomTimeouts, RoomView } from './types';
import { isOtherMajor } from './version-major';

export interface ExpiredRoom {
  room: RoomView;
  reason: string;
}

/** The expired rooms among `rooms`, in input order, each with a reason for people. */
export function findExpiredRooms(rooms: readonly RoomView[], now: number, timeouts: RoomTimeouts): ExpiredRoom[] {
  const expired: ExpiredRoom[] = [];
  for (const room of rooms) {
    const reason = expiryReason(room, now, timeouts);
    if (reason !== undefined) expired.push({ room, reason });
  }
  return expired;
}

/** Whether the room's game server last said it has players: pinged occupied, runs matches, or holds an allocation. */
function saidItHasPlayers(r: RoomView): boolean {
  return r.pingStatus === 'occupied' || (r.runningMatches ?? 0) > 0 || r.allocationOpen === true;
}

/** Rooms by creation, newest first (by name among rooms made in the same second). */
export function newestFirst(a: RoomView, b: RoomView): number {
  return b.createdAt - a.createdAt || a.name.localeCompare(b.name);
}

/** How many of a scheduler's rooms in error are kept until their ping timeout (the newest), for their pods' status and logs. */
const ERROR_ROOMS_KEPT = 5;

/**
 * The rooms in error beyond the newest `kept` (by creation) of the active major, and every room in
 * error of another major, which the health check removes at once rather than at their ping
 * timeout. An error room is not available, so the health check replaces it; a scheduler whose rooms
 * all fail (a crashing image) gathered desired × (ping timeout ÷ time to crash) of them, 21 after
 * 25 s for a scheduler of 1 room on the sandbox. Those of another major no rollout would replace:
 * they held the Scheduler's Progressing condition True (rooms of an older major left) for a ping
 * timeout after the rollout to a fixed version had ended (Maestro's rolling update removes rooms in
 * error first). Rooms being deleted and validation rooms are left out, and so are rooms whose game
 * server last said it has players (pinged occupied, runs matches, or holds an allocation): with its
 * pod in error it is most likely gone, but only its ping timeout says so (DESIGN.md, "Rooms with
 * players are protected"). No ping decides this, so the expiry brake holds none.
 */
export function surplusErrorRooms(rooms: readonly RoomView[], active: { activeVersion: string; activeMajor?: number }, kept = ERROR_ROOMS_KEPT): ExpiredRoom[] {
  const errors = rooms.filter((r) => r.status === 'error' && !r.terminating && !r.validation && !saidItHasPlayers(r)).sort(newestFirst);
  const why = "its GameRoom's status.reason says why it failed";
  const other: RoomView[] = [];
  const current: RoomView[] = [];
  for (const r of errors) (isOtherMajor(r.version, active) ? other : current).push(r);
  return [
    ...other.map((room) => ({
      room,
      reason: `in error, and of ${room.version}, another major than the active version ${active.activeVersion}: no room of it is kept (${why})`,
    })),
    ...current.slice(kept).map((room) => ({
      room,
      reason: `in error, and ${kept} newer rooms in error are kept for their pods' status and logs (${why})`,
    })),
  ];
}

/** The rule (1 to 4 above) by which a room has expired, and how long it has been in that state. */
interface Expiry {
  rule: 'terminated' | 'deletion' | 'init' | 'not-ready' | 'ping';
  elapsedMs: number;
}

/** By which rule `room` has expired at `now`, or undefined when it has not. */
function expiryOf(room: RoomView, now: number, timeouts: RoomTimeouts): Expiry | undefined {
  // A room that reported terminated is removed once; while that removal runs (its deletion
  // started), only the deletion timeout applies, as to any room being deleted.
  if (room.status === 'terminated' && room.terminatingSince === undefined) return { rule: 'terminated', elapsedMs: 0 };

  if (room.terminating || room.status === 'terminating') {
    const elapsedMs = now - (room.terminatingSince ?? room.lastPingAt ?? room.createdAt);
    return elapsedMs > timeouts.deletionTimeoutMs ? { rule: 'deletion', elapsedMs } : undefined;
  }

  if ((room.status === 'pending' || room.status === 'unready') && room.lastPingAt === undefined) {
    const since = room.startedAt ?? (room.status === 'unready' ? room.createdAt : undefined);
    const elapsedMs = since === undefined ? 0 : now - since;
    if (elapsedMs > timeouts.initTimeoutMs) return { rule: 'init', elapsedMs };
  }

  if (room.status === 'pending' && room.lastPingAt !== undefined && room.notReadySince !== undefined && !saidItHasPlayers(room)) {
    const elapsedMs = now - Math.max(room.notReadySince, room.startedAt ?? 0);
    if (elapsedMs > timeouts.initTimeoutMs) return { rule: 'not-ready', elapsedMs };
  }

  if (room.status !== 'pending' || room.lastPingAt !== undefined) {
    const elapsedMs = now - (room.lastPingAt ?? room.startedAt ?? room.createdAt);
    if (elapsedMs > timeouts.pingTimeoutMs) return { rule: 'ping', elapsedMs };
  }
  return undefined;
}

/** Whether `room` has expired at `now` on the initialization timeout: it never pinged, and is still pending or unready (rule 3). */
export function isInitExpired(room: RoomView, now: number, timeouts: RoomTimeouts): boolean {
  return expiryOf(room, now, timeouts)?.rule === 'init';
}

/** Whether `room` has expired at `now` on the init or ping timeout: it has not been heard from. */
export function isSilent(room: RoomView, now: number, timeouts: RoomTimeouts): boolean {
  const rule = expiryOf(room, now, timeouts)?.rule;
  return rule === 'init' || rule === 'ping';
}

/** Why `room` has expired at `now`, for people, or undefined when it has not. */
/** Pings the gateway refused are never recorded: a room whose pings were all refused is expired as silent. */
const REFUSED_PINGS = 'pings the gateway refused (a 401 for the room token, say) are not recorded: see the gateway\'s warnings';

export function expiryReason(room: RoomView, now: number, timeouts: RoomTimeouts): string | undefined {
  const expiry = expiryOf(room, now, timeouts);
  if (expiry === undefined) return undefined;
  const elapsed = formatMs(expiry.elapsedMs);
  switch (expiry.rule) {
    case 'terminated':
      return 'room reported terminated';
    case 'deletion':
      return `terminating for ${elapsed} (timeout ${formatMs(timeouts.deletionTimeoutMs)})`;
    case 'init': {
      const from = room.startedAt === undefined ? 'creation' : 'its pod started';
      // What the game server's developer does about it: the room never pinged.
      const fix = room.status === 'unready'
        ? `no ping of its game server was recorded: make it ping the rooms API (ROOMKEEPER_ROOMS_API_URL) within that time of its start; ${REFUSED_PINGS}`
        : 'its pod never became ready and no ping of its game server was recorded: see the pod\'s conditions and its game server\'s log';
      return `${room.status} ${elapsed} after ${from} (initialization timeout ${formatMs(timeouts.initTimeoutMs)}); ${fix}`;
    }
    case 'not-ready':
      // Its game server pings, so what the developer looks at is the pod's readiness.
      return `pending ${elapsed} with its pod not ready (initialization timeout ${formatMs(timeouts.initTimeoutMs)}), though its game server pings: `
        + 'see the pod\'s conditions and its readiness probe (kubectl describe pod)';
    case 'ping': {
      const what = room.lastPingAt !== undefined ? 'no ping recorded' : room.startedAt !== undefined ? 'no ping recorded since its pod started' : 'no ping recorded since creation';
      const fix = room.lastPingAt !== undefined
        ? 'its game server stopped pinging (hung or crashed: see its log), or the gateway refused its pings (see the gateway\'s warnings)'
        : 'see its game server\'s log, and the gateway\'s warnings for refused pings';
      return `${what} for ${elapsed} (timeout ${formatMs(timeouts.pingTimeoutMs)}); ${fix}`;
    }
  }
}

/** Milliseconds for people: whole seconds as `245s`, anything else as `1500ms`. */
export function formatMs(ms: number): string {
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  if (ms >= 10_000) return `${Math.floor(ms / 1000)}s`;
  return `${ms}ms`;
}
