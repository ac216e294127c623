/**
 * Per-room ping tokens. The operator gives each room `ROOMKEEPER_ROOM_TOKEN`, an HMAC of the
 * scheduler and room id under a secret that only Roomkeeper holds; the gateway accepts a ping or
 * event only when the token names that very room. Nothing is stored per room.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function roomToken(secret: string, schedulerName: string, roomId: string): string {
  return createHmac('sha256', secret).update(`${schedulerName}/${roomId}`).digest('base64url');
}

/** Constant-time check of a presented token against the one the room should hold. */
export function verifyRoomToken(secret: string, schedulerName: string, roomId: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(roomToken(secret, schedulerName, roomId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
