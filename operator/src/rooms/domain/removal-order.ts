/**
 * Which rooms a removal by amount (scale-down, `remove-rooms` with an amount, rolling replacement)
 * takes, in Maestro's deletion priority (`ListRoomsWithDeletionPriority`, maestro-behaviour.md §2.3):
 *   error -> expired (no ping for longer than the ping timeout) -> pending/unready -> ready.
 * A room marked silent and not heard since (silence-marks.ts) goes with the expired ones: the
 * allocate API offers it no more, and its game server may hang.
 * Within each class, rooms of another major than the active version go first (Maestro puts them
 * ahead of the active-major pool), then the oldest, then by name, so the choice is deterministic.
 *
 * Never chosen:
 *  - occupied rooms: rooms with players are protected (DESIGN.md); only a removal by id deletes one;
 *  - rooms whose game server says players are in them (`hasPlayers`), although their pod is not
 *    ready: kube-controller-manager marks every pod of a node NotReady when the node stops
 *    reporting (across an API server outage, for one), which composes `pending`, and the match
 *    goes on;
 *  - rooms already being deleted, or that pinged `terminating`/`terminated` (expiry handles them;
 *    Maestro re-appends them, we do not need to, since a deletion in Kubernetes is not lost);
 *  - validation rooms, which belong to the version operation that made them.
 */
import { standsSilent } from './silence-marks';
import { isOtherMajor } from './version-major';
import type { RoomView } from './types';

export interface RemovalOptions {
  /** A room that is not pending and has not pinged for this long counts as expired. */
  pingTimeoutMs: number;
  /** The active version's major; rooms of other majors go first. Without it no room is "old". */
  activeMajor?: number;
  /** The active version (used when `activeMajor` is not given). */
  activeVersion?: string;
  /** Take only rooms of another major (rolling replacement must not remove new rooms). */
  otherMajorOnly?: boolean;
}

export interface RemovalChoice {
  /** The rooms to remove, in priority order. */
  remove: RoomView[];
  /** How many of the amount asked could not be chosen (too few removable rooms). */
  shortBy: number;
}

/** Priority classes, lowest first. */
const RemovalClass = { Error: 0, Expired: 1, NotReady: 2, Ready: 3 } as const;
type RemovalClass = (typeof RemovalClass)[keyof typeof RemovalClass];

/** Pick up to `amount` rooms to remove, in deletion priority. */
export function chooseRoomsToRemove(
  rooms: readonly RoomView[],
  amount: number,
  now: number,
  options: RemovalOptions,
): RemovalChoice {
  const wanted = Number.isFinite(amount) ? Math.max(0, Math.floor(amount)) : 0;
  const old = (room: RoomView): boolean =>
    (options.activeMajor !== undefined || options.activeVersion !== undefined) &&
    isOtherMajor(room.version, { activeMajor: options.activeMajor, activeVersion: options.activeVersion });

  const candidates: { room: RoomView; cls: RemovalClass; old: boolean }[] = [];
  for (const room of rooms) {
    const cls = removalClass(room, now, options.pingTimeoutMs);
    if (cls === undefined) continue;
    const isOld = old(room);
    if (options.otherMajorOnly && !isOld) continue;
    candidates.push({ room, cls, old: isOld });
  }
  candidates.sort((a, b) =>
    a.cls - b.cls ||
    Number(b.old) - Number(a.old) ||
    a.room.createdAt - b.room.createdAt ||
    (a.room.name < b.room.name ? -1 : a.room.name > b.room.name ? 1 : 0));

  const remove = candidates.slice(0, wanted).map((c) => c.room);
  return { remove, shortBy: wanted - remove.length };
}

/** Whether a removal by amount may take this room at all. */
export function isRemovable(room: RoomView): boolean {
  return !room.validation && !room.terminating &&
    (room.status === 'error' || room.status === 'pending' || room.status === 'unready' || room.status === 'ready');
}

/**
 * Whether the room's game server says players are in it, whatever its composed status: its last
 * ping, heard within the ping timeout, reported `occupied` or running matches, or a matchmaker's
 * allocation of it has not ended. A room in error is over, whatever it said before.
 */
export function hasPlayers(room: RoomView, now: number, pingTimeoutMs: number): boolean {
  if (room.status === 'error') return false;
  if (room.allocationOpen === true) return true;
  const said = room.pingStatus === 'occupied' || (room.runningMatches ?? 0) > 0;
  return said && room.lastPingAt !== undefined && now - room.lastPingAt <= pingTimeoutMs;
}

/** Whether neither players nor a matchmaker hold the room: its status says none, and so does a fresh ping. */
export function isFree(room: RoomView, now: number, pingTimeoutMs: number): boolean {
  return room.status !== 'occupied' && room.status !== 'allocated' && room.status !== 'active' && !hasPlayers(room, now, pingTimeoutMs);
}

function removalClass(room: RoomView, now: number, pingTimeoutMs: number): RemovalClass | undefined {
  if (!isRemovable(room) || hasPlayers(room, now, pingTimeoutMs)) return undefined;
  if (room.status === 'error') return RemovalClass.Error;
  // The ping rule applies to pending rooms only once they have pinged (expiry.ts rule 4).
  if ((room.status !== 'pending' || room.lastPingAt !== undefined) && now - (room.lastPingAt ?? room.createdAt) > pingTimeoutMs) return RemovalClass.Expired;
  if (standsSilent(room)) return RemovalClass.Expired;
  if (room.status === 'pending' || room.status === 'unready') return RemovalClass.NotReady;
  return RemovalClass.Ready;
}
