/**
 * What the rooms API refused, in the log without flooding it. A room refused once is refused at
 * every ping (every few seconds), and a fleet of them makes thousands of refusals a minute
 * (a room-token secret rotated wrongly refuses every room): each reason is logged at once when it
 * first comes, then at most once per interval, each line with the count since the line before,
 * the schedulers involved, a few rooms for example, the answer they were given and what to do.
 * No line holds a token: the refusals recorded carry names and the answer's words only, and the
 * answers never echo a token.
 */
import type { Logger } from '../../../common/src/logger';
import type { Clock } from '../../../common/src/runtime/clock';
import { ROOM_TOKEN_KEY_LABEL } from '../../../common/src/rooms/room-token';

export const RoomsRefusalReason = {
  MissingToken: 'missing-room-token',
  OtherRoomToken: 'token-of-another-room',
  UnheldSecretToken: 'token-under-unheld-secret',
  InvalidToken: 'invalid-room-token',
  UnknownRoom: 'unknown-room',
  DeletedRoom: 'deleted-room',
  RefusedTransition: 'refused-transition',
  BadRequest: 'bad-request',
} as const;
export type RoomsRefusalReason = (typeof RoomsRefusalReason)[keyof typeof RoomsRefusalReason];

export interface RoomsRefusal {
  reason: RoomsRefusalReason;
  schedulerName: string;
  roomId: string;
  /** The message the room was answered with (never a token). */
  answer?: string;
}

export interface RoomsRefusalLogOptions {
  logger: Logger;
  now: Clock;
  /** At most one line per reason this often (default DEFAULT_INTERVAL_MS). */
  intervalMs?: number;
  /** The key ids (`roomTokenKeyId`) of the room-token secrets this gateway holds, for the remedy of tokens under another. */
  heldKeyIds?: readonly string[];
}

/** One line per reason a minute at most. */
const DEFAULT_INTERVAL_MS = 60_000;
/** Rooms named per line, for example. */
const EXAMPLE_ROOMS = 5;
/** Schedulers counted per line (the rest are summed under `others`). */
const SCHEDULERS_NAMED = 10;
/** Schedulers counted apart between two lines at most: the memory a flood of made-up names may take. */
const SCHEDULERS_COUNTED = 1_000;
/** The key of the schedulers not named. */
const OTHERS = '(others)';

interface Pending {
  count: number;
  schedulers: Map<string, number>;
  rooms: Set<string>;
  answer?: string;
  /** When the last line of this reason was logged. */
  loggedAt?: number;
  timer?: NodeJS.Timeout;
}

/**
 * What the line says happened, and what to do about it; `info` for what follows from the system's
 * own work (a warning otherwise).
 */
function wordsOf(reason: RoomsRefusalReason, heldKeyIds: readonly string[]): { said: string; remedy: string; info?: true } {
  switch (reason) {
    case RoomsRefusalReason.MissingToken:
      return {
        said: 'rooms API requests refused (401): no room token',
        remedy: 'the game servers send no Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN: make them send it; Maestro game servers that cannot send one need ping authentication off (gateway.pingAuth=false) and the rooms port reachable from game servers only',
      };
    case RoomsRefusalReason.OtherRoomToken:
      return {
        said: "rooms API requests refused (401): the token of another room of the scheduler",
        remedy: 'a game server sends the token of another room or calls the path of another room: each must send its own ROOMKEEPER_ROOM_TOKEN on the path of its own ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID',
      };
    case RoomsRefusalReason.UnheldSecretToken: {
      const held = heldKeyIds.join(',');
      return {
        said: 'rooms API requests refused (401): a room token of no room of that scheduler under the room-token secrets this gateway holds (made under a secret it does not hold, or the token of a room of another scheduler)',
        remedy: 'either the room-token secret was changed without keeping the old one as the previous secret (rooms made before the change hold tokens this gateway cannot check: '
          + 'give the gateway the old secret back as roomToken.previousSecret, ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET, SECURITY.md "Rotation", and restart it), '
          + "or the operator and the gateway hold different secrets (every room made since gets this answer, and its replacements too: give both the same secret and restart them); until then these rooms' pings are not recorded, and the operator replaces them as silent. "
          + "If no secret changed, a game server sends another scheduler's room's token: its URL and its token must come from one room pod's environment"
          + (held ? `; kubectl get pods -n <scheduler> -l '${ROOM_TOKEN_KEY_LABEL} notin (${held})' lists the room pods whose token is under another secret than this gateway's (key ids ${held})` : ''),
      };
    }
    case RoomsRefusalReason.InvalidToken:
      return {
        said: 'rooms API requests refused (401): a token that is not the room\'s, for a room this gateway does not know or of no room token\'s form',
        remedy: 'the path names a room this gateway has no GameRoom for (deleted, or of another cluster), or what is sent as the token is not a ROOMKEEPER_ROOM_TOKEN: check the game servers sending them',
      };
    case RoomsRefusalReason.UnknownRoom:
      return {
        said: 'rooms API requests for rooms this gateway does not know (answered success: false, not recorded)',
        remedy: 'their pods outlived their GameRoom (the operator deletes such pods after operator.rooms.orphanedPodGrace; an OrphanedRoomPodsDeleted Event on the Scheduler names them), or they call the path of a room of another scheduler or cluster',
      };
    case RoomsRefusalReason.DeletedRoom:
      return {
        said: 'rooms API requests for rooms whose GameRoom was deleted (by their scheduler, as a validation room is once validated or a room removed by a scale-down, or by a user), from game servers still running while their pods stop (answered success: false and roomGone: true, not recorded)',
        remedy: 'nothing, after rooms were removed: each game server is told to stop pinging and exit, and its pod is deleted with its GameRoom. Pings that keep coming for the same rooms come from game servers that ignore roomGone: make them exit on it (the SDK does)',
        info: true,
      };
    case RoomsRefusalReason.RefusedTransition:
      return {
        said: 'pings refused: a status that may not follow the room\'s (answered success: false, not recorded)',
        remedy: 'the game servers report ready or occupied after terminating, or anything after terminated: once terminating, a game server pings terminated and exits',
      };
    case RoomsRefusalReason.BadRequest:
      return {
        said: 'rooms API requests refused (4xx) for what they sent',
        remedy: 'the game servers send a body or a request the rooms API does not take: the answer given says what (docs/rooms-api.md lists what each call takes)',
      };
  }
}

export class RoomsRefusalLog {
  private readonly pending = new Map<RoomsRefusalReason, Pending>();
  private readonly intervalMs: number;

  constructor(private readonly opts: RoomsRefusalLogOptions) {
    this.intervalMs = opts.intervalMs ?? DEFAULT_INTERVAL_MS;
  }

  record(refusal: RoomsRefusal): void {
    let p = this.pending.get(refusal.reason);
    if (!p) this.pending.set(refusal.reason, (p = { count: 0, schedulers: new Map(), rooms: new Set() }));
    p.count++;
    // Names come from request paths, anyone's: past SCHEDULERS_COUNTED, new ones are summed under one key.
    const key = p.schedulers.has(refusal.schedulerName) || p.schedulers.size < SCHEDULERS_COUNTED ? refusal.schedulerName : OTHERS;
    p.schedulers.set(key, (p.schedulers.get(key) ?? 0) + 1);
    if (p.rooms.size < EXAMPLE_ROOMS) p.rooms.add(`${refusal.schedulerName}/${refusal.roomId}`);
    p.answer ??= refusal.answer;
    // The first refusal after a quiet interval is said at once; the next ones when the interval is over.
    if (p.timer === undefined && (p.loggedAt === undefined || this.opts.now() - p.loggedAt >= this.intervalMs)) this.logNow(refusal.reason, p);
  }

  /** Logs every reason with refusals not logged yet (at shutdown, and for tests), and stops the timers. */
  flush(): void {
    for (const [reason, p] of this.pending) {
      clearTimeout(p.timer);
      p.timer = undefined;
      if (p.count > 0) this.logNow(reason, p, false);
    }
  }

  private logNow(reason: RoomsRefusalReason, p: Pending, schedule = true): void {
    const now = this.opts.now();
    const words = wordsOf(reason, this.opts.heldKeyIds ?? []);
    const ranked = [...p.schedulers].filter(([name]) => name !== OTHERS).sort((a, b) => b[1] - a[1]);
    const schedulers = Object.fromEntries(ranked.slice(0, SCHEDULERS_NAMED));
    const others = ranked.slice(SCHEDULERS_NAMED).reduce((sum, [, n]) => sum + n, p.schedulers.get(OTHERS) ?? 0);
    this.opts.logger[words.info ? 'info' : 'warn'](words.said, {
      reason,
      refused: p.count,
      ...(p.loggedAt !== undefined ? { sinceSeconds: Math.round((now - p.loggedAt) / 1000) } : {}),
      schedulers: others > 0 ? { ...schedulers, [OTHERS]: others } : schedulers,
      exampleRooms: [...p.rooms],
      ...(p.answer !== undefined ? { answer: p.answer.slice(0, 600) } : {}),
      remedy: words.remedy,
    });
    p.loggedAt = now;
    p.count = 0;
    p.schedulers.clear();
    p.rooms.clear();
    p.answer = undefined;
    if (!schedule) return;
    // The refusals of the next interval are said when it ends, if any came; a quiet interval ends the timer.
    p.timer = setTimeout(() => {
      p.timer = undefined;
      if (p.count > 0) this.logNow(reason, p);
    }, this.intervalMs);
    p.timer.unref();
  }
}
