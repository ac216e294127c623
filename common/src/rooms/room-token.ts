/**
 * Per-room ping tokens. The operator gives each room `ROOMKEEPER_ROOM_TOKEN`, an HMAC of the
 * scheduler and room id under a secret that only Roomkeeper holds; the gateway accepts a ping or
 * event only when the token names that very room. Nothing is stored per room.
 *
 * Rotation (issue 12, M3; SECURITY.md): a room's token is baked into its pod's environment, so a
 * new secret cannot reach running rooms. The gateway therefore accepts tokens under two secrets,
 * the current one and the previous one; the operator gives new rooms tokens under the current one
 * and labels each room pod with the key id of the secret its token comes from
 * (`roomkeeper.io/room-token-key`), so `kubectl get pods -A -l roomkeeper.io/room-token-key=<old id>`
 * lists the rooms that still need the previous secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** On room pods: the key id (`roomTokenKeyId`) of the secret the room's token was made with. */
export const ROOM_TOKEN_KEY_LABEL = 'roomkeeper.io/room-token-key';

export function roomToken(secret: string, schedulerName: string, roomId: string): string {
  return createHmac('sha256', secret).update(`${schedulerName}/${roomId}`).digest('base64url');
}

/** The last secret's key id: the operator asks for it for every room it creates. */
let lastKeyId: { secret: string; id: string } | undefined;

/**
 * A short public name of a secret, usable as a label value: 12 hex digits of an HMAC under the
 * secret of a fixed text, so it tells secrets apart and reveals nothing of them.
 */
export function roomTokenKeyId(secret: string): string {
  if (lastKeyId?.secret !== secret) lastKeyId = { secret, id: createHmac('sha256', secret).update('roomkeeper.io/room-token-key').digest('hex').slice(0, 12) };
  return lastKeyId.id;
}

/** The secrets whose tokens the gateway accepts: the current one, then the previous one if any. */
export function acceptedRoomTokenSecrets(current: string, previous: string): string[] {
  return [current, previous].filter((s) => s !== '');
}

/**
 * Constant-time check of a presented token against the one the room should hold under any of
 * `secrets` (every secret is tried, so the time does not tell which one matched).
 */
export function verifyRoomToken(secrets: readonly string[], schedulerName: string, roomId: string, presented: string | undefined): boolean {
  return matchingRoomToken(secrets, schedulerName, roomId, presented) !== undefined;
}

/** The expected token `presented` equals, under any of `secrets`; undefined when none does. */
export function matchingRoomToken(secrets: readonly string[], schedulerName: string, roomId: string, presented: string | undefined): string | undefined {
  if (!presented) return undefined;
  const given = Buffer.from(presented);
  let match: string | undefined;
  for (const secret of secrets) {
    const expected = roomToken(secret, schedulerName, roomId);
    const bytes = Buffer.from(expected);
    if (given.length === bytes.length && timingSafeEqual(given, bytes)) match = expected;
  }
  return match;
}
