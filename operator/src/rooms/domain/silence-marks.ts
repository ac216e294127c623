/**
 * Rooms not heard from for the silence timeout (ROOMKEEPER_ROOM_SILENCE_TIMEOUT) are marked
 * silent on their GameRoom (`status.silentSince`: the time of the last ping any gateway replica
 * recorded), and the gateways allocate them no more until a later ping is seen. A game server
 * that hangs stops pinging while its room still reads `ready`; until the ping timeout replaces it
 * (4 min by default) every matchmaker given that room lost a match. Agones' health checks take a
 * hung game server out of allocation within seconds; Maestro allocates it until it expires.
 *
 * Level-based, from the views at each health check: a room is marked when its last ping is older
 * than the timeout and cleared once a ping after the mark is seen (the gateway flushes a marked
 * room's ping within about a second), or whenever it is not silent (a mark written by hand). A room that never pinged is the init timeout's, and one
 * that is going away needs no mark.
 */
import type { RoomView } from './types';

export interface SilenceMarks {
  /** Rooms to mark, each with its last ping (epoch ms). */
  mark: { name: string; since: number }[];
  /** Marked rooms heard since their mark or not silent (a mark written by hand; every mark while marks are turned off, timeout 0). */
  clear: string[];
  /** Rooms silent past the timeout, marked already or not (for the brake's "how wide"). */
  silent: number;
}

export function silenceMarks(rooms: readonly RoomView[], now: number, silenceMs: number): SilenceMarks {
  const marks: SilenceMarks = { mark: [], clear: [], silent: 0 };
  for (const room of rooms) {
    if (room.validation || room.terminating) continue;
    const heard = room.lastPingAt;
    const silent = silenceMs > 0 && heard !== undefined && now - heard > silenceMs;
    if (silent) marks.silent++;
    if (room.silentSince !== undefined) {
      // Heard since its mark, or not silent at all (a mark written by hand with kubectl).
      if (!silent || heard > room.silentSince) marks.clear.push(room.name);
    } else if (silent) {
      marks.mark.push({ name: room.name, since: heard });
    }
  }
  return marks;
}

/**
 * Whether the room is marked silent and has not been heard since its mark: the allocate API does
 * not offer it, so the health check makes a room in its place (health-plan.ts `silentStandIns`)
 * and a removal by amount takes it first among the rooms that ping (removal-order.ts). A mark whose
 * room has pinged since is cleared at the next look; the room counts as heard from then on.
 */
export function standsSilent(room: RoomView): boolean {
  if (room.silentSince === undefined || room.terminating || room.validation) return false;
  return room.lastPingAt === undefined || room.lastPingAt <= room.silentSince;
}
