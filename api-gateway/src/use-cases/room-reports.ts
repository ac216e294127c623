/**
 * The rooms API: pings, room events, player events, the deprecated status report and the
 * address. Lookups come from caches; forwarding goes to the scheduler's forwarders (of its
 * active version). A ping never waits for forwarding.
 */
import { isRecord } from '../../../common/src/json/is-record';
import { apiErrorFields, isNotFound } from '../../../common/src/kube/clients';
import type { Logger } from '../../../common/src/logger';
import type { Counter, MetricsRegistry } from '../../../common/src/metrics';
import type { Forwarder, GameRoom, Scheduler } from '../../../common/src/generated/resources';
import type { ForwardedRoom, ForwardOutcome, PlayerEventName } from '../../../common/src/forwarding/forwarder-types';
import type { PingForwardQueue } from '../../../common/src/forwarding/forwarding-worker';
import { allocationNotice, isAllocationId, type RoomAllocationNotice } from '../../../common/src/rooms/allocation';
import { PING_STATUSES, pingedRoomStatus, pingFollows, roomsMaxMatches, type PingStatus, type ReportedPingStatus } from '../../../common/src/rooms/room-status';
import { jsonTypeName, notAJsonObject } from '../../../common/src/json/json-type';
import { InputError, NotFoundError, ValidationError } from '../errors';
import { bothSpellings } from '../../../common/src/validation/maestro-body';
import type { PingRecorder } from '../pings/ping-recorder';
import { RoomsRefusalReason, type RoomsRefusalLog } from '../http/rooms-refusal-log';
import { cachedVersions, type RoomStore } from '../store-ports';
import { activeDefinition } from '../../../common/src/resources/scheduler-version';

/** What the rooms API needs from the event forwarder (`EventForwarder` satisfies it). */
export interface RoomEventSink {
  forwardPing(forwarders: readonly Forwarder[], room: ForwardedRoom, status: ReportedPingStatus, metadata?: Record<string, unknown>): Promise<ForwardOutcome>;
  forwardStatus(forwarders: readonly Forwarder[], room: ForwardedRoom, status: ReportedPingStatus, metadata?: Record<string, unknown>): Promise<ForwardOutcome>;
  forwardRoomEvent(forwarders: readonly Forwarder[], room: ForwardedRoom, event: string, metadata?: Record<string, unknown>): Promise<ForwardOutcome>;
  forwardPlayerEvent(forwarders: readonly Forwarder[], room: ForwardedRoom, event: PlayerEventName, playerId: string, metadata?: Record<string, unknown>): Promise<ForwardOutcome>;
}

export interface RoomReportsDeps {
  rooms: RoomStore;
  recorder: PingRecorder;
  /** Absent: nothing is forwarded and events succeed (as with a scheduler without forwarders). */
  forwarder?: RoomEventSink;
  /**
   * Given: pings go here (a bounded hand-off to the forwarding worker thread) instead of to
   * `forwarder`, so forwarding them costs the ping path next to nothing. Events still use `forwarder`.
   */
  pingQueue?: PingForwardQueue;
  logger: Logger;
  metrics: MetricsRegistry;
  /**
   * A ping that changes nothing is forwarded at most this often per room; a status change is
   * forwarded at once. 0 forwards every ping, as Maestro does. Default 30 s.
   */
  forwardResyncIntervalMs?: number;
  /**
   * Whether a ping's answer tells the room of its allocation (`allocation`, a field Maestro's
   * answer does not have). Default true; false for game servers whose parser refuses unknown fields.
   */
  answerAllocation?: boolean;
  now?: () => number;
  /** Where calls for unknown rooms and refused transitions are logged (bounded: rooms-refusal-log.ts). */
  refusals?: RoomsRefusalLog;
}

/**
 * Per room: the last status forwarded and when, so unchanged pings are forwarded as resyncs only.
 * `status` is whatever tells a change: the ping's status with the room status it gives (a
 * multi-match room goes ready -> active -> occupied on `runningMatches` alone).
 */
class ForwardThrottle {
  private readonly last = new Map<string, { status: string; at: number }>();
  constructor(private readonly intervalMs: number, private readonly now: () => number) {}

  /** Whether this ping should be forwarded now (and records it when so). */
  take(key: string, status: string): boolean {
    if (this.intervalMs <= 0) return true;
    const now = this.now();
    const prev = this.last.get(key);
    if (prev && prev.status === status && now - prev.at < this.intervalMs) return false;
    if (this.last.size > 200_000) this.sweep(now);
    this.last.set(key, { status, at: now });
    return true;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.last) if (now - v.at >= this.intervalMs) this.last.delete(k);
  }
}

const PLAYER_EVENTS: readonly PlayerEventName[] = ['playerJoin', 'playerLeft'];
export const MAX_RUNNING_MATCHES = 1_000_000;
/** Most characters of a failed event's message (a scheduler has at most 16 forwarders). */
const MAX_EVENT_MESSAGE_CHARS = 1000;

/**
 * Why a room the gateway's cache does not hold is refused, and what the room can do: exit, when
 * its scheduler is being deleted or no longer exists (a room cannot start before its scheduler),
 * or when the cache saw its GameRoom deleted (`deletedAt`): `gone`, nothing of the room is ever
 * recorded again; otherwise try again, as the room may be newer than the cache.
 */
function unknownRoom(scheduler: Scheduler | undefined, schedulerName: string, roomId: string, consequence: string, retry: string, deletedAt: number | undefined, pinged?: ReportedPingStatus): UnknownRoom {
  const head = `room ${roomId} not found in scheduler ${schedulerName}${consequence}`;
  // Nothing of the room is recorded again, `terminated` included: there is nothing left to end.
  const leave = pinged === 'terminated' ? 'stop pinging and exit' : 'finish or hand over its matches, stop pinging (terminated included: there is nothing left to end) and exit';
  if (scheduler?.metadata.deletionTimestamp) return { gone: true, message: `${head}: scheduler ${schedulerName} is being deleted, and its rooms with it; ${leave}` };
  if (!scheduler) return { gone: true, message: `${head}: no scheduler ${schedulerName} exists (it was deleted, or ROOMKEEPER_SCHEDULER_NAME is wrong); a deleted scheduler's rooms go with it: ${leave}` };
  if (deletedAt !== undefined) {
    return { gone: true, message: `${head}: its GameRoom is gone (deleted by its scheduler or by a user; this gateway saw it go at ${new Date(deletedAt).toISOString()}), and its pod is deleted with it; `
      + 'no ping brings the room back: finish or hand over its matches and exit' };
  }
  return { gone: false, message: `${head}: the gateway does not know this room (yet: one created a moment ago may not be in its cache; or it was deleted); ${retry} in a moment, and check ROOMKEEPER_SCHEDULER_NAME and ROOMKEEPER_ROOM_ID` };
}

interface UnknownRoom {
  message: string;
  /** Nothing of this room is ever recorded again: its answer says `roomGone: true`. */
  gone: boolean;
}

/** A `{success: false}` answer about a room that is gone for good: `roomGone` tells a game server (and the SDK) to stop pinging and exit. */
type RefusedAnswer = { success: false; message: string; roomGone?: true };

function refusedAnswer(unknown: UnknownRoom): RefusedAnswer {
  return { success: false, message: unknown.message, ...(unknown.gone ? { roomGone: true as const } : {}) };
}

/**
 * Why a ping was refused for following `terminating` or `terminated` (Maestro answers a bare
 * `{success:false}`; the room is told why, and what to send instead).
 */
function refusedTransition(roomId: string, previous: PingStatus, status: ReportedPingStatus): string {
  if (previous === 'terminated') {
    return `room ${roomId} already reported terminated, so this ${status} ping was not recorded: nothing follows terminated; stop pinging and exit (the room is removed and replaced)`;
  }
  return `room ${roomId} reported terminating, so this ${status} ping was not recorded: a terminating room accepts no new players and only terminated follows; finish or hand over its matches, ping terminated and exit (keep pinging terminating meanwhile)`;
}

function bodyObject(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new InputError(notAJsonObject(body) ?? 'the body must be a JSON object');
  return body;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Maestro's `timestamp` is an int64 (protojson: a number or a numeric string); a fraction, or a
 * value past int64, is refused as it refuses them, naming the field. Returns it as a number (a
 * value beyond 2^53 rounded), undefined when absent.
 */
function checkTimestamp(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && BigInt(value) >= INT64_MIN && BigInt(value) <= INT64_MAX) return value;
  if (typeof value === 'string' && /^-?\d{1,19}$/.test(value) && BigInt(value) >= INT64_MIN && BigInt(value) <= INT64_MAX) return Number(value);
  throw new ValidationError([{ field: 'timestamp', message: `must be an integer (Unix seconds, as a number or a numeric string) within int64; ${timestampFault(value)}` }]);
}

/**
 * A ping's `allocationId`: the allocation (the id its ping answer told) whose match the game server
 * started, which marks it taken whatever the running matches say (a match of a multi-match room
 * that ended as the allocated one started left the count unchanged, and the allocation expired
 * though its match ran: trial R). Undefined when absent.
 */
function checkTakenAllocation(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (isAllocationId(value)) return value;
  throw new ValidationError([{ field: 'allocationId', message: 'must be the id of an allocation this room was told in a ping answer: 1 to 128 letters, digits, \'.\', \'_\', \':\' or \'-\', starting with a letter or digit' }]);
}

/** What is wrong with a timestamp `checkTimestamp` refuses, in a few words. */
function timestampFault(value: unknown): string {
  // JSON.parse reads a number past a double's range (1e400) as ±Infinity: out of range, not a fraction.
  if (typeof value === 'number') return Number.isInteger(value) || !Number.isFinite(value) ? 'this one is beyond int64' : 'a fraction is refused';
  if (typeof value !== 'string') return `got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`}`;
  return /^-?\d+$/.test(value) ? 'this one is beyond int64' : 'this string is not a whole number';
}

function checkMetadata(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new ValidationError([{ field: 'metadata', message: 'must be an object' }]);
  return value;
}

function parseStatus(value: unknown): ReportedPingStatus {
  if (typeof value === 'string' && (PING_STATUSES as readonly string[]).includes(value)) return value as ReportedPingStatus;
  // Says what came (none, or the value: `"READY"` and `" ready"` show what differs), not only what may.
  const allowed = PING_STATUSES.join(', ');
  const got = typeof value === 'string' ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value) : jsonTypeName(value);
  throw new ValidationError([{ field: 'status', message: value === undefined ? `is a required field: one of ${allowed}` : `must be one of ${allowed} (in lower case); got ${got}` }]);
}

/** `runningMatches` of a body, in either spelling (Maestro's protojson reads both; sent in both, it is refused as the management API refuses it). */
function runningMatchesOf(b: Record<string, unknown>): number | undefined {
  if (b.runningMatches !== undefined && b.running_matches !== undefined) throw new ValidationError([{ field: 'runningMatches', message: bothSpellings('running_matches', 'runningMatches') }]);
  return parseRunningMatches(b.runningMatches ?? b.running_matches);
}

function parseRunningMatches(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_RUNNING_MATCHES) {
    throw new ValidationError([{ field: 'runningMatches', message: `must be an integer between 0 and ${MAX_RUNNING_MATCHES}` }]);
  }
  return n;
}

export class RoomReports {
  private readonly pings: Counter;
  private readonly forwards: Counter;

  private readonly throttle: ForwardThrottle;
  private readonly pingCounters = new Map<string, { inc(): void }>();

  /** Counts a ping (bound counter children: this runs for every ping). */
  private countPing(status: string, result: string): void {
    const key = `${status}|${result}`;
    let c = this.pingCounters.get(key);
    if (!c) this.pingCounters.set(key, (c = this.pings.bind({ status, result })));
    c.inc();
  }

  constructor(private readonly deps: RoomReportsDeps) {
    this.throttle = new ForwardThrottle(deps.forwardResyncIntervalMs ?? 30_000, deps.now ?? Date.now);
    this.pings = deps.metrics.counter('roomkeeper_pings_total', 'Pings received, by reported status (unknown: a body not read) and result (status_written, recorded, write_pending: accepted and retried until written, overtaken: its timestamp is older than a ping already taken from the room, so only counted as a sign of life, unknown_room, rejected: a refused transition or a 4xx for the token or the body, write_failed: the room is gone).');
    this.forwards = deps.metrics.counter('roomkeeper_gateway_forwards_total', 'Forwarding attempts made by the rooms API, by event type and result (ok, failed, skipped; for pings forwarded from the worker thread also coalesced: a newer ping of the room went instead while a receiver was behind, and dropped: dropped, oldest first, while a receiver was behind).', { labelNames: ['result', 'type'] });
    deps.pingQueue?.onPingResults((result, n) => this.forwards.inc({ type: 'ping', result }, n));
  }

  private unknownRoom(schedulerName: string, roomId: string, consequence: string, retry: string, pinged?: ReportedPingStatus): UnknownRoom {
    const scheduler = this.deps.rooms.findScheduler(schedulerName);
    const deletedAt = this.deps.rooms.roomDeletedAt(schedulerName, roomId);
    const unknown = unknownRoom(scheduler, schedulerName, roomId, consequence, retry, deletedAt, pinged);
    // A room seen deleted, or of a scheduler being deleted: its game server pings on while its pod stops.
    const deleted = deletedAt !== undefined || scheduler?.metadata.deletionTimestamp !== undefined;
    this.deps.refusals?.record({ reason: deleted ? RoomsRefusalReason.DeletedRoom : RoomsRefusalReason.UnknownRoom, schedulerName, roomId, answer: unknown.message });
    return unknown;
  }

  /**
   * A ping answered 4xx before it was judged (a bad or missing token, an unreadable body, a bad
   * field): counted `rejected`, under the status its body reports when it reports one it may
   * (else `unknown`), as the alert on rejected pings (RoomkeeperPingErrorRateHigh) reads them.
   */
  rejectedPing(body: unknown): void {
    const status = isRecord(body) && typeof body.status === 'string' && (PING_STATUSES as readonly string[]).includes(body.status) ? body.status : 'unknown';
    this.countPing(status, 'rejected');
  }

  /** PUT /scheduler/{name}/rooms/{id}/ping */
  async ping(schedulerName: string, roomId: string, body: unknown): Promise<{ success: true; allocation?: RoomAllocationNotice } | RefusedAnswer> {
    const b = bodyObject(body);
    const status = parseStatus(b.status);
    const sentAt = checkTimestamp(b.timestamp);
    const takes = checkTakenAllocation(b.allocationId);
    let runningMatches = runningMatchesOf(b) ?? 0;
    const metadata = checkMetadata(b.metadata);
    // Maestro stores an `occupied` ping with no running match as one match.
    if (status === 'occupied' && runningMatches === 0) runningMatches = 1;

    const room = this.deps.rooms.findRoom(schedulerName, roomId);
    if (!room) {
      this.countPing(status, 'unknown_room');
      return refusedAnswer(this.unknownRoom(schedulerName, roomId, ', so the ping was not recorded', 'ping again', status));
    }
    // Only `terminated` follows `terminating` (a terminating room accepts no new players), and
    // nothing follows `terminated`: refused as Maestro refuses an invalid transition. This replica's
    // own last report counts too, as the cache may not show it yet (a write still pending).
    const reported = this.deps.recorder.lastReported(schedulerName, roomId);
    const refusedAfter = !pingFollows(room.status?.pingStatus, status) ? room.status?.pingStatus : !pingFollows(reported, status) ? reported : undefined;
    if (refusedAfter !== undefined) {
      this.countPing(status, 'rejected');
      const message = refusedTransition(roomId, refusedAfter, status);
      this.deps.refusals?.record({ reason: RoomsRefusalReason.RefusedTransition, schedulerName, roomId, answer: message });
      return { success: false, message };
    }
    // Any other status is carried by the room's next ping should this replica lose its pending write
    // (a restart); after terminated none follows, and the room would stay ready, to be allocated.
    // So terminated is answered success only once written, and sent again meanwhile (forwarded as
    // any ping: the forwarding throttle drops the repeats).
    let terminatedPending: boolean;
    try {
      const outcome = await this.deps.recorder.record(room, { status, runningMatches, ...(takes !== undefined ? { takes } : {}), ...(sentAt !== undefined ? { sentAt } : {}) });
      this.countPing(status, outcome === 'status-written' ? 'status_written' : outcome === 'pending' ? 'write_pending' : outcome === 'overtaken' ? 'overtaken' : 'recorded');
      terminatedPending = outcome === 'pending' && status === 'terminated';
    } catch (err) {
      this.countPing(status, 'write_failed');
      // A room deleted after the cache showed it (a scale-down, the scheduler's deletion): nothing
      // to warn about; a large fleet's deletion made dozens of these warnings.
      if (isNotFound(err)) {
        this.deps.logger.debug('ping for a room deleted meanwhile; not recorded', { scheduler: schedulerName, roomId });
        const leave = status === 'terminated' ? 'stop pinging and exit' : 'finish or hand over its matches, stop pinging (terminated included: there is nothing left to end) and exit';
        return { success: false, roomGone: true, message: `room ${roomId} of scheduler ${schedulerName} was deleted while this ping was recorded, so it was not recorded; its game server is (or was) sent SIGTERM: ${leave}` };
      }
      this.deps.logger.warn('ping status write failed', { scheduler: schedulerName, roomId, ...apiErrorFields(err) });
      return { success: false, message: 'the gateway could not record this ping (its write to the Kubernetes API failed; see the gateway log); ping again at the usual interval' };
    }
    // Fire and forget: the answer never waits for forwarding, and forwarding never changes it.
    const target = this.forwardTarget(room);
    // The room status the ping gives (in a multi-match room, runningMatches makes it ready, active
    // or occupied whatever the ping says): a change of it is forwarded at once, and receivers are
    // told it with the running matches, next to Maestro's attributes (statusType stays the ping's).
    const roomStatus = target ? pingedRoomStatus(room, { status, runningMatches }, target.maxMatches, (this.deps.now ?? Date.now)()) : undefined;
    const attributes = { ...metadata, roomStatus, runningMatches };
    if (target && !this.throttle.take(`${schedulerName}/${roomId}`, `${status}/${roomStatus ?? ''}`)) {
      this.forwards.inc({ type: 'ping', result: 'skipped' });
    } else if (target && this.deps.pingQueue) {
      // Every ping is a resync, `terminated` too, as in Maestro: the room's removal is the one
      // SendRoomStatus terminated a receiver gets (a status here made two for every room that ended).
      this.deps.pingQueue.offer({ kind: 'resync', forwarders: target.forwarders, room: target.room, status, metadata: attributes });
    } else if (target) {
      void target.sink.forwardPing(target.forwarders, target.room, status, attributes).then(
        (o) => this.forwards.inc({ type: 'ping', result: o.ok ? 'ok' : 'failed' }),
        () => this.forwards.inc({ type: 'ping', result: 'failed' }),
      );
    }
    if (terminatedPending) {
      return { success: false, message: `room ${roomId} reported terminated, but it is not recorded yet: the Kubernetes API has not taken the write within a second (this gateway retries it); ping terminated again in a few seconds, until it is answered success, then exit` };
    }
    // The room learns it was allocated (and for whom) from the answer to its next ping, whatever it
    // reports: also the ping that takes the allocation up (`occupied`, or one match more), as the
    // players may arrive before it; `room` is the room as the cache showed it before this ping, so
    // that answer carries it too (the operator ends it after). A terminating room is told nothing:
    // it accepts no new players, and a replay of the allocation answers 410.
    // Off (ROOMKEEPER_PING_ANSWER_ALLOCATION=false): Maestro's answer, for parsers that refuse unknown fields.
    const told = this.deps.answerAllocation !== false && status !== 'terminating' && status !== 'terminated';
    const allocation = told ? allocationNotice(room.status, (this.deps.now ?? Date.now)()) : undefined;
    return allocation ? { success: true, allocation } : { success: true };
  }

  /** POST /scheduler/{name}/rooms/{id}/roomevent */
  async roomEvent(schedulerName: string, roomId: string, body: unknown): Promise<{ success: boolean; message: string }> {
    const b = bodyObject(body);
    if (typeof b.event !== 'string' || b.event === '' || b.event.length > 256) {
      throw new ValidationError([{ field: 'event', message: 'is a required string of at most 256 characters' }]);
    }
    checkTimestamp(b.timestamp);
    const metadata = checkMetadata(b.metadata);
    const event = b.event;
    return this.forwardEvent(schedulerName, roomId, 'roomEvent', (t) => t.sink.forwardRoomEvent(t.forwarders, t.room, event, metadata));
  }

  /** POST /scheduler/{name}/rooms/{id}/playerevent */
  async playerEvent(schedulerName: string, roomId: string, body: unknown): Promise<{ success: boolean; message: string }> {
    const b = bodyObject(body);
    if (typeof b.event !== 'string' || !(PLAYER_EVENTS as readonly string[]).includes(b.event)) {
      throw new ValidationError([{ field: 'event', message: `must be one of ${PLAYER_EVENTS.join(', ')}` }]);
    }
    checkTimestamp(b.timestamp);
    const metadata = checkMetadata(b.metadata);
    const playerId = metadata?.playerId;
    if (typeof playerId !== 'string' || playerId === '') {
      throw new ValidationError([{ field: 'metadata.playerId', message: playerId === undefined ? 'is a required field: the id of the player who joined or left' : playerId === '' ? 'must not be empty: send the id of the player who joined or left' : `must be a string; got ${jsonTypeName(playerId)}` }]);
    }
    const event = b.event as PlayerEventName;
    return this.forwardEvent(schedulerName, roomId, 'playerEvent', (t) => t.sink.forwardPlayerEvent(t.forwarders, t.room, event, playerId, metadata));
  }

  /** PUT /scheduler/{name}/rooms/{id}/status (deprecated, Maestro v9): only forwards the status. */
  async status(schedulerName: string, roomId: string, body: unknown): Promise<{ success: boolean; message?: string }> {
    const b = bodyObject(body);
    const status = parseStatus(b.status);
    checkTimestamp(b.timestamp);
    runningMatchesOf(b);
    const metadata = checkMetadata(b.metadata);
    const result = await this.forwardEvent(schedulerName, roomId, 'status', (t) => t.sink.forwardStatus(t.forwarders, t.room, status, metadata));
    // Maestro answers `{success}` only; a failure also says why, as the ping's and the events' do.
    return result.success ? { success: true } : { success: false, message: result.message };
  }

  /** GET /scheduler/{name}/rooms/{id}/address */
  address(schedulerName: string, roomId: string): { ports: { name: string; protocol: string; port: number }[]; host: string; ipv6Label: string } {
    const room = this.deps.rooms.findRoom(schedulerName, roomId);
    if (!room) throw new NotFoundError(this.unknownRoom(schedulerName, roomId, '', 'ask again').message);
    // No host is no address (Maestro answers an error for an instance without one): a 200 with an
    // empty host would read as the room's address.
    const host = room.status?.host ?? '';
    if (host === '') throw new NotFoundError(`room ${roomId} of scheduler ${schedulerName} has no address yet: its pod is not on a node yet, or the operator has not written its host; ask again in a moment`);
    return { ports: portsOf(room), host, ipv6Label: '' };
  }

  private async forwardEvent(
    schedulerName: string,
    roomId: string,
    type: string,
    send: (t: { sink: RoomEventSink; forwarders: readonly Forwarder[]; room: ForwardedRoom }) => Promise<ForwardOutcome>,
  ): Promise<{ success: boolean; message: string }> {
    const room = this.deps.rooms.findRoom(schedulerName, roomId);
    if (!room) return refusedAnswer(this.unknownRoom(schedulerName, roomId, ', so the event was not forwarded', 'send it again'));
    const target = this.forwardTarget(room);
    if (!target) {
      this.forwards.inc({ type, result: 'skipped' });
      return { success: true, message: '' };
    }
    try {
      const outcome = await send(target);
      this.forwards.inc({ type, result: outcome.ok ? 'ok' : 'failed' });
      if (outcome.ok) return { success: true, message: '' };
      // Each failed forwarder with its cause, as a room may be told it (no address; the log line
      // of the forwarder has the rest), the whole bounded.
      const failed = outcome.results.filter((r) => !r.ok).map((r) => `forwarding to ${r.forwarder} failed: ${r.reason ?? r.error ?? 'no cause was given'}`);
      const message = failed.length > 0 ? failed.join('; ') : 'forwarding failed before any forwarder was called; see the gateway log';
      return { success: false, message: message.length > MAX_EVENT_MESSAGE_CHARS ? `${message.slice(0, MAX_EVENT_MESSAGE_CHARS - 3)}...` : message };
    } catch (err) {
      this.forwards.inc({ type, result: 'failed' });
      this.deps.logger.warn('forwarding failed', { scheduler: schedulerName, roomId, type, error: err instanceof Error ? err.message : String(err) });
      return { success: false, message: 'forwarding failed unexpectedly; see the gateway log' };
    }
  }

  /** Where a room's events go, or undefined when nothing is to be forwarded. */
  private forwardTarget(room: GameRoom): { sink: RoomEventSink; forwarders: readonly Forwarder[]; room: ForwardedRoom; maxMatches: number } | undefined {
    const sink = this.deps.forwarder;
    if (!sink || room.spec.validation === true) return undefined;
    const schedulerName = room.metadata.namespace ?? room.spec.scheduler;
    const scheduler = this.deps.rooms.findScheduler(schedulerName);
    if (!scheduler) return undefined;
    const findVersion = cachedVersions(this.deps.rooms);
    const definition = activeDefinition(scheduler, findVersion);
    const forwarders = definition.forwarders ?? [];
    if (forwarders.length === 0) return undefined;
    return {
      sink,
      forwarders,
      maxMatches: roomsMaxMatches(scheduler, findVersion),
      room: {
        game: definition.game,
        schedulerName,
        roomId: room.metadata.name ?? '',
        host: room.status?.host ?? '',
        ports: portsOf(room),
        validation: false,
        terminating: room.status?.instanceStatus === 'terminating',
      },
    };
  }
}

function portsOf(room: GameRoom): { name: string; protocol: string; port: number }[] {
  return (room.status?.ports ?? []).map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? '', port: p.port ?? 0 }));
}
