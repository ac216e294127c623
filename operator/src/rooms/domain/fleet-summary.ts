/**
 * What the health controller sees in a scheduler's rooms (Maestro §3.4 steps 3-4): which rooms have
 * expired, which are available, and the counts the autoscaler and the Scheduler status need.
 * Available = part of the fleet (not a validation room), not being deleted, not `error`,
 * `terminating` or `terminated`, and not expired. Error rooms do not count toward the desired
 * count, so replacements get made while they wait for their expiry.
 */
import { isServing, roomFreeSlots, roomMatchCount } from '../../../../common/src/rooms/room-status';
import { findExpiredRooms, type ExpiredRoom } from './expiry';
import type { RoomTimeouts, RoomView } from './types';

export interface FleetCounts {
  /** Available rooms by status. */
  pending: number;
  unready: number;
  ready: number;
  occupied: number;
  /** Ready rooms held by an allocation (not yet ended by the operator). */
  allocated: number;
  /** Multi-match rooms running at least one match and fewer than maxMatches. */
  active: number;
  /**
   * Running matches of the available rooms, each room's capped at maxMatches (an occupied
   * single-match room is one), plus one per open allocation: Maestro's autoscaling input, with
   * `allocated` counted as running.
   */
  matches: number;
  /** Match capacity: the serving rooms (ready, allocated, active, occupied) times maxMatches. */
  matchSlots: number;
  /**
   * The slots the allocate API may offer now (`roomFreeSlots`): matchSlots less the running
   * matches and open allocations, and less the slots a room holds back behind its open allocation.
   */
  freeSlots: number;
  /** Fleet rooms being deleted, or that pinged terminating/terminated. */
  terminating: number;
  /** Fleet rooms in error (expired or not). */
  error: number;
}

export interface FleetSummary {
  /** Every expired room, validation rooms included. */
  expired: ExpiredRoom[];
  /** The available rooms, in input order. */
  available: RoomView[];
  counts: FleetCounts;
}

export function summarizeFleet(rooms: readonly RoomView[], now: number, timeouts: RoomTimeouts, maxMatches = 1): FleetSummary {
  const expired = findExpiredRooms(rooms, now, timeouts);
  const expiredNames = new Set(expired.map((e) => e.room.name));
  const counts: FleetCounts = {
    pending: 0, unready: 0, ready: 0, occupied: 0, allocated: 0, active: 0, terminating: 0, error: 0, matches: 0, matchSlots: 0, freeSlots: 0,
  };
  const available: RoomView[] = [];
  for (const room of rooms) {
    if (room.validation) continue;
    if (room.terminating || room.status === 'terminating' || room.status === 'terminated') {
      counts.terminating++;
      continue;
    }
    if (room.status === 'error') {
      counts.error++;
      continue;
    }
    if (expiredNames.has(room.name)) continue;
    counts[room.status]++;
    counts.matches += roomMatchCount(room, maxMatches);
    if (isServing(room.status)) counts.matchSlots += maxMatches;
    counts.freeSlots += roomFreeSlots(room, maxMatches);
    available.push(room);
  }
  return { expired, available, counts };
}
