/**
 * Which room a refused room token belongs to, to tell a room why its token was refused. A token is
 * an HMAC of the scheduler and room id (common/src/rooms/room-token.ts): nothing in it says whose
 * it is or under which secret it was made. So, for a token refused on a room the gateway knows,
 * the tokens of the scheduler's rooms under the secrets the gateway holds are made and looked up:
 * found, it is another room's token; not found, no room of that scheduler holds it under those
 * secrets, so it was made under another secret (one the gateway no longer holds, as after a
 * rotation that did not keep the previous secret).
 *
 * Only refusals pay for it, and little: the index of a scheduler is made at most once per
 * `maxAgeMs` (one HMAC per room and secret held), for at most `maxSchedulers` of them, and no more
 * than `tokensPerAge` tokens are made per `maxAgeMs` in all, so refusals (which need no credentials)
 * never stall the event loop for long: past it, a refused token is `unknown` (a scheduler of more
 * than 10,000 rooms with two secrets held always is), and its answer names both causes.
 */
import { roomToken } from '../../common/src/rooms/room-token';
import type { Clock } from '../../common/src/runtime/clock';
import type { RoomStore } from './store-ports';

export interface RoomTokenOwnersOptions {
  /** The secrets whose tokens the gateway accepts (current, then previous). */
  secrets: readonly string[];
  rooms: Pick<RoomStore, 'findRoom' | 'listRooms'>;
  now: Clock;
  /** A scheduler's index is made again when older than this (default 10 s): rooms come and go. */
  maxAgeMs?: number;
  /** Indexes kept at most (default 64), the least recently used dropped first. */
  maxSchedulers?: number;
  /** Room tokens made at most per `maxAgeMs`, over every index (default 20,000: about 40 ms of CPU, in one go at most). */
  tokensPerAge?: number;
}

/** What a refused token is, as far as the gateway can tell. */
export type RefusedTokenKind = 'other-room' | 'unheld-secret' | 'unknown';

/** The shape of every room token: 32 bytes of HMAC-SHA256 in base64url. */
const ROOM_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class RoomTokenOwners {
  private readonly indexes = new Map<string, { builtAt: number; owners: Map<string, string> }>();
  /** Tokens made since `spentSince`, for `tokensPerAge`. */
  private spent = 0;
  private spentSince = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: RoomTokenOwnersOptions) {}

  /**
   * A token refused for room `roomId` of `schedulerName`: `other-room` when it is the token of
   * another room of that scheduler; `unheld-secret` when the room is known and the token has a
   * room token's shape but no room of the scheduler holds it under the secrets held; else `unknown`
   * (a room the gateway does not know, or no room token at all).
   */
  kindOf(schedulerName: string, roomId: string, token: string): RefusedTokenKind {
    if (!ROOM_TOKEN_SHAPE.test(token) || this.opts.rooms.findRoom(schedulerName, roomId) === undefined) return 'unknown';
    const index = this.index(schedulerName);
    if (index === undefined) return 'unknown';
    const owner = index.get(token);
    return owner !== undefined && owner !== roomId ? 'other-room' : 'unheld-secret';
  }

  /** The scheduler's tokens and their rooms; undefined when making them would pass `tokensPerAge`. */
  private index(schedulerName: string): Map<string, string> | undefined {
    const now = this.opts.now();
    const maxAge = this.opts.maxAgeMs ?? 10_000;
    // Indexes past their age go: the tokens held are then at most those made within maxAgeMs,
    // tokensPerAge in all, whatever the schedulers refused tokens name.
    for (const [name, index] of this.indexes) if (now - index.builtAt >= maxAge) this.indexes.delete(name);
    const kept = this.indexes.get(schedulerName);
    if (kept && now - kept.builtAt < maxAge) {
      this.indexes.delete(schedulerName);
      this.indexes.set(schedulerName, kept);
      return kept.owners;
    }
    const rooms = this.opts.rooms.listRooms(schedulerName);
    if (now - this.spentSince >= maxAge) {
      this.spent = 0;
      this.spentSince = now;
    }
    const cost = rooms.length * this.opts.secrets.length;
    if (this.spent + cost > (this.opts.tokensPerAge ?? 20_000)) return undefined;
    this.spent += cost;
    this.indexes.delete(schedulerName);
    const owners = new Map<string, string>();
    for (const room of rooms) {
      const name = room.metadata.name;
      if (name === undefined) continue;
      for (const secret of this.opts.secrets) owners.set(roomToken(secret, schedulerName, name), name);
    }
    this.indexes.set(schedulerName, { builtAt: now, owners });
    if (this.indexes.size > (this.opts.maxSchedulers ?? 64)) {
      const oldest = this.indexes.keys().next();
      if (!oldest.done) this.indexes.delete(oldest.value);
    }
    return owners;
  }
}
