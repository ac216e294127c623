/**
 * Records pings with a bounded number of API writes (DESIGN.md "Pings never cost one API write
 * each"):
 * - a ping that changes the room's ping status or running matches is written to the GameRoom's
 *   status at once (one merge patch of the status subresource). When the status it composes is
 *   `ready` or `allocated` (which depend on the room's allocation), the patch carries the
 *   resourceVersion of the cached room it was composed from: a room that changed since (an
 *   allocation, the operator's write, another replica's write of an earlier ping) refuses it with
 *   409, and the write is retried on the room as the cache shows it then. A stale cache never
 *   writes `ready` over an allocation it had not seen;
 * - a ping of a room whose deletion has begun is written only when it says `terminated`: the
 *   room reads `terminating` until it is gone whatever else it reports, and the operator writes
 *   that (a write per ping there only raced the operator's, seen as about three status writes
 *   per room when 450 rooms were deleted);
 * - any other ping only updates an in-memory map room -> last ping time; every flush interval the
 *   map of each scheduler heard from is written as ONE PingDigest (see `common/src/rooms/ping-digest.ts`).
 * So 10,000 rooms pinging every 5 s with a 30 s flush cost about one write per scheduler per 30 s.
 * Where the API server refuses a scheduler's PingDigest (a ResourceQuota on
 * count/pingdigests.roomkeeper.io, an admission policy), the gateway answered its rooms' pings and
 * the operator never saw them: it removed every room as silent at its ping timeout, occupied ones
 * included (trial M, 2026-12-06). Then each room's last ping is written on its GameRoom
 * (`status.lastPingAt`, which the operator reads beside the digests) about every
 * `lastPingEveryMs`, a write per room instead of one per scheduler, and a warning says what
 * refuses the digest and what to do, until the digest is written again.
 *
 * An answered ping is a promise: a status change whose write fails (API server down, 429, 5xx,
 * a timeout) stays pending here and is retried with capped exponential backoff and full jitter
 * until a write succeeds, coalesced per room (the latest report wins), each try composed from the
 * room as the cache shows it at that moment. Only the room's deletion (404, or the room gone from
 * the cache) ends it unwritten, and a cache that shows the report written already (by another
 * replica) ends it without a write. Pending writes are bounded (oldest dropped first, counted). A replica
 * that dies loses its pending writes; the room's next ping, to any replica, carries its status
 * again and is written then (every ping that differs from the stored status is written). After
 * `terminated` no ping follows: room-reports.ts answers it success only once written (`pending`
 * here), so the room sends it again until then.
 */
import { apiErrorFields, apiStatus, describeApiError, isConflict, isNotFound } from '../../../common/src/kube/clients';
import { forEachConcurrent } from '../../../common/src/runtime/concurrent';
import type { Logger } from '../../../common/src/logger';
import type { MetricsRegistry } from '../../../common/src/metrics';
import type { GameRoom, GameRoomStatusAllocation, PingStatus } from '../../../common/src/generated/resources';
import { pingedRoomStatus, roomsMaxMatches } from '../../../common/src/rooms/room-status';
import { openAllocation, reportTakes } from '../../../common/src/rooms/allocation';
import { cachedVersions, type PingDigestWriter, type RoomStore } from '../store-ports';
import { encodePingDigest, GATEWAY_REPLICA_LABEL, PING_DIGEST_LABEL, PING_DIGEST_RETENTION_MS, pingDigestName, sanitizeReplicaId } from '../../../common/src/rooms/ping-digest';
import { SCHEDULER_LABEL } from '../../../common/src/resources/labels';
import type { Clock } from '../../../common/src/runtime/clock';

export interface PingRecorderOptions {
  /** Milliseconds since the epoch. */
  now: Clock;
  /**
   * `findScheduler` and `findVersion`: the active version's maxMatches (cache reads) composes a multi-match room's status (ready, active,
   * occupied); `findRoom`: the room as the cache shows it when a pending write is retried.
   */
  rooms: Pick<RoomStore, 'patchRoomStatus' | 'findScheduler' | 'findVersion' | 'findRoom'>;
  digests: PingDigestWriter;
  /** This gateway replica (ROOMKEEPER_POD_NAME or hostname). */
  replicaId: string;
  logger: Logger;
  retentionMs?: number;
  /**
   * A room whose previous ping to this replica is older than this (half the ping timeout, by
   * main.ts) has come back from a silence: its scheduler's digest is written within
   * `revivalFlushDelayMs`, not at the next flush, so the operator does not expire a room that
   * pings again. Undefined: no early write.
   */
  reviveAfterMs?: number;
  /** How long an early write waits to gather other rooms of the scheduler that came back (default 1 s). */
  revivalFlushDelayMs?: number;
  metrics?: MetricsRegistry;
  /** Most status writes kept pending (default 50,000); past it the oldest is dropped and counted. */
  maxPending?: number;
  /** First retry delay and its cap (defaults 250 ms and 10 s); each delay is drawn in [0, backoff). */
  retryBaseMs?: number;
  retryCapMs?: number;
  /** Least time between two log lines of first failed writes (default 10 s): an outage fails a whole fleet's writes at once. */
  failureLogIntervalMs?: number;
  /**
   * Where a scheduler's PingDigest is refused, how often each room's last ping is written on its
   * GameRoom instead (default 60 s; the gateway passes a quarter of ROOMKEEPER_ROOM_PING_TIMEOUT).
   */
  lastPingEveryMs?: number;
  /** For tests: the random source of the jitter. */
  random?: () => number;
  /**
   * How long a ping's answer waits for its status write (default 1 s). A throttled write takes
   * longer (the client waits out each 429's Retry-After): the ping is answered `pending` then,
   * and the write still under way decides whether it is retried.
   */
  inlineWriteMs?: number;
}

type RoomStatusPatch = Parameters<RoomStore['patchRoomStatus']>[3];

interface PendingWrite {
  scheduler: string;
  roomId: string;
  report: PingReport;
  attempts: number;
  dueAt: number;
  /** When the first report of this run of failed writes was answered (ms since the epoch). */
  since: number;
  /** When the latest ping carrying `report` reached this replica (ms since the epoch). */
  reportAt: number;
  /** Why the last try failed (a 409 included), if one has. */
  lastError?: string;
  /**
   * The allocation (its id) that a report coalesced away while this write waited had taken up
   * (`occupied`, one match more): the write of the latest report marks it taken all the same, or an
   * `occupied` then `ready` sent during an API outage left the allocation open until its TTL, ended
   * as expired though its match had started (trial R).
   */
  took?: string;
  /**
   * The fewest running matches of the reports coalesced away while this write waited: a match that
   * ended before the allocated one started lowers the count the allocation's start is judged from
   * (see `allocationTakenUp`), though the latest report shows the count back up.
   */
  fewest?: number;
}

/** One status write answered and not yet written, as `pendingWriteList()` tells it. */
export interface PendingWriteView {
  scheduler: string;
  roomId: string;
  status: PingReport['status'];
  /** Writes tried so far: those that failed, and the one under way if any. */
  attempts: number;
  /** A write of it is under way now (one that outlasted its ping's answer). */
  inFlight: boolean;
  pendingForMs: number;
  lastError?: string;
}

export interface PingReport {
  status: Exclude<PingStatus, 'unknown'>;
  runningMatches: number;
  /** The allocation whose match this ping says has started (its `allocationId`), if it names one. */
  takes?: string;
  /** The ping's `timestamp` (Unix seconds, by the room's clock), if it has one. */
  sentAt?: number;
}

interface Written { pingStatus: PingReport['status']; runningMatches: number }

/**
 * How far (in seconds) a ping's `timestamp` may be behind the newest one taken from the room (by
 * this replica, or written on the GameRoom by any) and still be taken for a ping sent before it
 * (and overtaken on the way): a ping abandoned by its client's timeout can reach a gateway after the
 * next one. Further behind, the room's clock was set back: the ping is taken, and judged from then on.
 */
export const PING_REORDER_WINDOW_S = 60;

/** Whether a ping sent at `sentAt` is further behind `stored` than the window: the room's clock was set back. */
function clockSetBack(sentAt: number | undefined, stored: number | undefined): boolean {
  return sentAt !== undefined && stored !== undefined && stored - sentAt > PING_REORDER_WINDOW_S;
}

/**
 * Whether `report` was sent before a ping whose timestamp is `newest` (Unix seconds), by at most
 * PING_REORDER_WINDOW_S: older news, whose status must not be written over the newer one's.
 * `terminating` and `terminated` never are: a room's ending is taken whatever its clock says.
 */
function isOlderNews(report: PingReport, newest: number | undefined): boolean {
  if (report.sentAt === undefined || newest === undefined || report.status === 'terminating' || report.status === 'terminated') return false;
  const behind = newest - report.sentAt;
  return behind > 0 && behind <= PING_REORDER_WINDOW_S;
}

/**
 * Whether `room` (as the cache shows it) holds a report newer than `report`, which reached this
 * replica at `reportAt` (ms) and waits to be written: one the room sent later (`storedSentAt`, its
 * `status.pingTimestamp`), or one that reached a gateway replica later (its `status.lastPingAt`,
 * written with each status by the replica the ping reached). Says which, or undefined. An ending
 * (`terminating`, `terminated`) is written whatever came since.
 */
function newerReportHeld(room: GameRoom, report: PingReport, reportAt: number, storedSentAt: number | undefined): string | undefined {
  if (report.status === 'terminating' || report.status === 'terminated') return undefined;
  if (isOlderNews(report, storedSentAt)) return 'the room sent later';
  const heldSince = Date.parse(room.status?.lastPingAt ?? '');
  return heldSince > reportAt ? 'of a ping that reached a gateway replica later' : undefined;
}

/**
 * The running matches the start of a multi-match room's open, untaken allocation is judged from:
 * those when it was made, or fewer once the room reported fewer (a match ended before the
 * allocated one started: one match more than that is the allocated match; judged from the count at
 * allocation time, it was never seen, and the allocation ended as expired after its match was
 * played, trial U). `fewest`: of reports coalesced away. Undefined: nothing to lower.
 */
function loweredBaseline(open: GameRoomStatusAllocation, report: PingReport | undefined, fewest: number | undefined): number | undefined {
  if (open.runningMatches === undefined || open.takenAt !== undefined) return undefined;
  const low = Math.min(report?.runningMatches ?? Number.POSITIVE_INFINITY, fewest ?? Number.POSITIVE_INFINITY);
  return low < open.runningMatches ? low : undefined;
}

/**
 * The id of the room's open allocation (as `room` shows it) whose match `report` reports started
 * (by its status or running matches, above the count it is judged from, or by naming the
 * allocation), or which `took` names (a report coalesced away took it up), unless the room shows it
 * taken already.
 */
function allocationTakenUp(room: GameRoom, report: PingReport | undefined, took?: string, fewest?: number): string | undefined {
  const open = openAllocation(room.status);
  if (open === undefined || open.takenAt !== undefined) return undefined;
  const from = loweredBaseline(open, undefined, fewest) ?? open.runningMatches;
  const reported = report !== undefined && (reportTakes(report.status, report.runningMatches, { ...open, runningMatches: from }) || report.takes === open.id);
  return reported || took === open.id ? open.id : undefined;
}

/** How long a write may keep meeting 409s before a round's conflicts are logged as a warning. */
const STALE_CONFLICT_WARN_S = 60;

/** Least time between two early writes of one scheduler's digest for rooms that came back from a silence. */
const REVIVAL_FLUSH_EVERY_MS = 5_000;

/** Rooms' last pings written on their GameRooms at once, where a scheduler's PingDigest is refused. */
const LAST_PING_WRITE_CONCURRENCY = 8;
/** Least time between two warnings of one scheduler's PingDigest refused. */
const LAST_PING_TOLD_EVERY_MS = 60_000;

/**
 * A write the API server refused, which the same write will meet again: forbidden (a
 * ResourceQuota's `exceeded quota`, RBAC, an admission webhook) or invalid. Not a conflict, a
 * throttle, a missing object or the server's own failure.
 */
function isRefusal(err: unknown): boolean {
  const status = apiStatus(err);
  return status === 400 || status === 403 || status === 422;
}

/**
 * `pending`: the status change could not be written yet; it is retried until it is. `overtaken`:
 * the ping's `timestamp` is older than one this replica took from the room already, so its report
 * is older news: it counts as a sign of life, and its status is not written.
 */
export type PingOutcome = 'status-written' | 'recorded' | 'pending' | 'overtaken';

export class PingRecorder {
  private readonly lastPings = new Map<string, Map<string, number>>();
  private readonly dirty = new Set<string>();
  /** When each scheduler's digest was last written early for rooms that came back from a silence. */
  private readonly revivalFlushAt = new Map<string, number>();
  /** What this replica last wrote per room ("scheduler/room"), to skip repeats while the cache lags. */
  private readonly written = new Map<string, Written>();
  /** The newest ping `timestamp` (Unix seconds) this replica took per room ("scheduler/room"). */
  private readonly sentAt = new Map<string, number>();
  /**
   * Per room, the `status.pingTimestamp` the cache showed when a ping was taken as the room's clock
   * set back: older news now, left out of the judgement until the GameRoom shows another.
   */
  private readonly setBackFrom = new Map<string, number>();
  private readonly replicaId: string;
  private readonly retentionMs: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<number> | undefined;
  /** Status changes answered but not yet written, by "scheduler/room" (insertion order = age). */
  private readonly pending = new Map<string, PendingWrite>();
  private retryTimer: NodeJS.Timeout | undefined;
  /** When `retryTimer` fires (the earliest `dueAt` when it was set). */
  private retryTimerDue = 0;
  private retrying = false;
  /** First failed writes since the last line that told them, and when that line was written. */
  private untoldFailures = 0;
  private failuresToldAt = Number.NEGATIVE_INFINITY;
  private conflictsToldAt = Number.NEGATIVE_INFINITY;
  private stopped = false;
  /**
   * Schedulers whose PingDigest the API server refuses: since when, and when that was last logged;
   * per room, the ping time last written on its GameRoom instead.
   */
  private readonly refusedDigests = new Map<string, { since: number; toldAt: number; written: Map<string, number> }>();
  private readonly pendingDropped: { inc(by?: number): void };
  private readonly pendingRetries: { inc(by?: number): void };
  private readonly conflicts: { inc(by?: number): void };

  constructor(private readonly options: PingRecorderOptions) {
    this.replicaId = sanitizeReplicaId(options.replicaId);
    this.retentionMs = options.retentionMs ?? PING_DIGEST_RETENTION_MS;
    const metrics = options.metrics;
    metrics?.gauge('roomkeeper_ping_status_writes_pending', 'Room status changes answered but not yet written to the API server (retried until written).', () => {
      metrics.gauge('roomkeeper_ping_status_writes_pending', '').set(this.pending.size);
    });
    metrics?.gauge('roomkeeper_ping_status_write_oldest_pending_seconds', 'How long the oldest room status change answered and not yet written has waited (0: none pending). Growing past an outage means writes keep failing: see the gateway\'s "pending room status writes failed again" log lines.', () => {
      metrics.gauge('roomkeeper_ping_status_write_oldest_pending_seconds', '').set(this.oldestPendingMs() / 1000);
    });
    this.pendingDropped = metrics?.counter('roomkeeper_ping_status_writes_dropped_total', 'Pending room status writes dropped because more than the pending limit were waiting.').bind({}) ?? { inc: () => undefined };
    this.pendingRetries = metrics?.counter('roomkeeper_ping_status_write_retries_total', 'Retries of pending room status writes.').bind({}) ?? { inc: () => undefined };
    this.conflicts = metrics?.counter('roomkeeper_ping_status_write_conflicts_total', 'Room status writes refused because the room had changed since the cached version they were composed from (retried on the newer version).').bind({}) ?? { inc: () => undefined };
  }

  /** The ping status this replica last accepted for the room: pending, else written (undefined: none). */
  lastReported(scheduler: string, roomId: string): PingStatus | undefined {
    const key = `${scheduler}/${roomId}`;
    return this.pending.get(key)?.report.status ?? this.written.get(key)?.pingStatus;
  }

  /** Status changes answered and not yet written. */
  get pendingWrites(): number {
    return this.pending.size;
  }

  /** Each status change answered and not yet written, oldest first: what it is, how long it waited, and why its last try failed. */
  pendingWriteList(): PendingWriteView[] {
    const now = this.options.now();
    return [...this.pending.values()].sort((a, b) => a.since - b.since).map((w) => ({
      scheduler: w.scheduler, roomId: w.roomId, status: w.report.status, attempts: w.attempts,
      inFlight: w.dueAt === Number.POSITIVE_INFINITY, pendingForMs: now - w.since, ...(w.lastError !== undefined ? { lastError: w.lastError } : {}),
    }));
  }

  private oldestPendingMs(): number {
    let since = Number.POSITIVE_INFINITY;
    for (const w of this.pending.values()) since = Math.min(since, w.since);
    return since === Number.POSITIVE_INFINITY ? 0 : Math.max(0, this.options.now() - since);
  }

  /**
   * Records one ping of a room known to exist (`room` from the cache). Writes the status at once
   * when it changes; throws when that write fails (the room may be gone).
   */
  async record(room: GameRoom, ping: PingReport): Promise<PingOutcome> {
    const scheduler = room.metadata.namespace ?? room.spec.scheduler;
    const roomId = room.metadata.name ?? '';
    const now = this.options.now();
    const previous = this.lastPings.get(scheduler)?.get(roomId);
    this.remember(scheduler, roomId, now);
    const revive = this.options.reviveAfterMs;
    // Back from a silence: by this replica's pings, or as the operator saw it (it marked the room
    // silent, and allocates it again once a ping after the mark reaches it in a digest).
    if ((revive !== undefined && previous !== undefined && now - previous > revive) || room.status?.silentSince !== undefined) this.flushSoon(scheduler, now);
    const key = `${scheduler}/${roomId}`;
    if (this.overtaken(key, room, ping)) return 'overtaken';
    const waiting = this.pending.get(key);
    if (waiting) {
      // Coalesced: the retry writes the latest report; no extra request per ping. A repeat of the
      // same report keeps the one under way, so a write of it that succeeds ends the entry.
      if (waiting.report.status !== ping.status || waiting.report.runningMatches !== ping.runningMatches || ping.takes !== undefined) {
        waiting.took = allocationTakenUp(room, waiting.report, undefined, waiting.fewest) ?? waiting.took;
        waiting.fewest = Math.min(waiting.fewest ?? Number.POSITIVE_INFINITY, waiting.report.runningMatches);
        waiting.report = ping;
      }
      waiting.reportAt = now;
      return 'pending';
    }
    if (!this.needsWrite(key, room, ping)) return 'recorded';
    const write = this.writeStatus(scheduler, roomId, room, ping, now)
      .then(() => ({ ok: true as const }), (err: unknown) => ({ ok: false as const, err }));
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<'slow'>((resolve) => {
      timer = setTimeout(() => resolve('slow'), this.options.inlineWriteMs ?? 1000);
      timer.unref();
    });
    const result = await Promise.race([write, slow]);
    clearTimeout(timer);
    if (result === 'slow') {
      // Pending, and not retried while this write is under way (an older write landing after a
      // newer one would undo it): its outcome settles the entry.
      const entry = this.addPending(key, { scheduler, roomId, report: ping, attempts: 1, since: now, reportAt: now }, Number.POSITIVE_INFINITY);
      void write.then((r) => this.settleSlowWrite(key, entry, ping, r.ok ? undefined : r.err));
      return 'pending';
    }
    if (!result.ok) {
      if (isNotFound(result.err)) throw result.err;
      this.addPending(key, { scheduler, roomId, report: ping, attempts: 1, since: now, reportAt: now, lastError: describeApiError(result.err) });
      this.tellFailedWrite(scheduler, roomId, ping, result.err);
      return 'pending';
    }
    this.written.set(key, { pingStatus: ping.status, runningMatches: ping.runningMatches });
    return 'status-written';
  }

  /**
   * Whether the ping was sent before one taken from the room already (its `timestamp` is older, by
   * at most PING_REORDER_WINDOW_S, than the newest this replica took or the GameRoom's
   * `status.pingTimestamp`, which any replica's status write sets), so that writing its report
   * would undo a newer one: a `ready` sent before an `occupied` and delivered after it made an
   * occupied room allocatable, and a second match was sent to it (trial R). With two gateway
   * replicas, the two pings may reach different ones. Pings in the same second, or without a
   * timestamp, are taken in the order they arrive. `terminating` and `terminated` are always taken.
   */
  private overtaken(key: string, room: GameRoom, ping: PingReport): boolean {
    const sentAt = ping.sentAt;
    if (sentAt === undefined || !Number.isFinite(sentAt)) return false;
    const mine = this.sentAt.get(key);
    const stored = this.storedSentAt(key, room);
    const newest = Math.max(mine ?? Number.NEGATIVE_INFINITY, stored ?? Number.NEGATIVE_INFINITY);
    if (!isOlderNews(ping, newest)) {
      // Taken. Far behind what the GameRoom shows: the room's clock was set back, and what it shows
      // is left out of the judgement until the GameRoom shows another (needsWrite writes it).
      if (stored !== undefined && clockSetBack(sentAt, stored)) this.setBackFrom.set(key, stored);
      this.sentAt.set(key, sentAt);
      return false;
    }
    this.options.logger.debug('ping sent before one already taken from the room (its timestamp is older); counted as a sign of life, its status not written', {
      scheduler: room.metadata.namespace, roomId: room.metadata.name, status: ping.status, timestamp: sentAt, newestTimestamp: newest,
    });
    return true;
  }

  /** The GameRoom's `status.pingTimestamp` as the cache shows it, unless a clock set back made it older news. */
  private storedSentAt(key: string, room: GameRoom): number | undefined {
    const stored = room.status?.pingTimestamp;
    if (stored === undefined) return undefined;
    const setBack = this.setBackFrom.get(key);
    if (setBack === undefined) return stored;
    if (setBack === stored) return undefined;
    this.setBackFrom.delete(key); // the GameRoom shows a newer write
    return stored;
  }

  /** A room this replica no longer hears from, or whose scheduler is gone: what it kept of it goes. */
  private forgetRoom(key: string): void {
    this.written.delete(key);
    this.sentAt.delete(key);
    this.setBackFrom.delete(key);
  }

  /** A write that outlasted its ping's answer has ended: written, gone, or retried as any pending one. */
  private settleSlowWrite(key: string, entry: PendingWrite, report: PingReport, err: unknown): void {
    if (err === undefined) this.written.set(key, { pingStatus: report.status, runningMatches: report.runningMatches });
    if (this.pending.get(key) !== entry) return; // dropped (too many pending) or flushed meanwhile
    if (err === undefined && entry.report === report) {
      this.pending.delete(key);
    } else if (err !== undefined && isNotFound(err)) {
      this.pending.delete(key);
    } else {
      // Failed, or a newer report came meanwhile: the retries write the latest one.
      if (err !== undefined) {
        entry.lastError = describeApiError(err);
        this.tellFailedWrite(entry.scheduler, entry.roomId, report, err);
      }
      entry.dueAt = this.options.now() + (err === undefined ? 0 : this.backoffMs(entry.attempts));
    }
    this.scheduleRetry();
  }

  /**
   * Whether `ping` changes what `room` (as the cache shows it) or this replica's last write of it
   * says. A room whose deletion has begun takes only `terminated` (the operator writes terminating).
   */
  private needsWrite(key: string, room: GameRoom, ping: PingReport): boolean {
    if (room.metadata.deletionTimestamp !== undefined && ping.status !== 'terminated') return false;
    const cached = room.status;
    const mine = this.written.get(key);
    const differsFromCache = cached?.pingStatus !== ping.status || (cached.runningMatches ?? 0) !== ping.runningMatches;
    const differsFromMine = mine !== undefined && (mine.pingStatus !== ping.status || mine.runningMatches !== ping.runningMatches);
    const open = openAllocation(cached);
    const namesOpenAllocation = ping.takes !== undefined && open?.id === ping.takes && open.takenAt === undefined;
    // The room's clock was set back past the window: the GameRoom's pingTimestamp is written anew,
    // or every other replica would take the room's next minute of status changes for older news.
    return differsFromCache || differsFromMine || namesOpenAllocation || clockSetBack(ping.sentAt, cached.pingTimestamp);
  }

  /**
   * Writes the status `ping` gives `room`, composed from the room as the cache shows it: its
   * instance status, its deletion, and its allocation (a ready ping of an allocated room keeps it
   * `allocated`; the operator ends allocations). A `ready` or `allocated` status depends on the
   * allocation, which the cache may not show yet: that write names the cached resourceVersion, and
   * a room that changed since refuses it (409). Any other status (occupied, terminating,
   * terminated, ...) is what the ping says whatever the allocation; it is written without one: a
   * condition there protects nothing and would add a 409 and a retry each time the operator wrote
   * the room first (a deletion's terminating); the operator corrects a stale instance status.
   */
  private writeStatus(scheduler: string, roomId: string, room: GameRoom, ping: PingReport, at: number, took?: string, fewest?: number): Promise<void> {
    const status = pingedRoomStatus(room, ping, roomsMaxMatches(this.options.rooms.findScheduler(scheduler), cachedVersions(this.options.rooms)), at);
    // The match of the room's open allocation, reported by this ping or by one coalesced into it, is
    // written with it: on the version the allocation was seen in, as a newer allocation must not take it.
    const takes = allocationTakenUp(room, ping, took, fewest) !== undefined;
    // Otherwise a report of fewer matches than the allocation counts from lowers that count, in
    // the same write (on the version the allocation was seen in): the allocated match's start,
    // one match more, then takes it, also when the operator sees only the GameRoom.
    const open = openAllocation(room.status);
    const lowered = !takes && open !== undefined ? loweredBaseline(open, ping, fewest) : undefined;
    // The ping's timestamp, where the API server can hold it (an int64 JSON carries exactly): a
    // report without one clears the last one, which no longer dates what the GameRoom says.
    const pingTimestamp = ping.sentAt !== undefined && Number.isSafeInteger(ping.sentAt) ? ping.sentAt : null;
    const patch: RoomStatusPatch = {
      pingStatus: ping.status, runningMatches: ping.runningMatches, lastPingAt: new Date(at).toISOString(), pingTimestamp, status,
      ...(takes ? { allocationTakenAt: new Date(at).toISOString() } : {}),
      ...(lowered !== undefined ? { allocationRunningMatches: lowered } : {}),
    };
    const resourceVersion = status === 'ready' || status === 'allocated' || takes || lowered !== undefined ? room.metadata.resourceVersion : undefined;
    return this.options.rooms.patchRoomStatus(scheduler, roomId, resourceVersion, patch);
  }

  /**
   * A 409 is the room having moved on since the cached version (not a failure); anything else is,
   * logged at most once per `failureLogIntervalMs` with the count since the last line.
   */
  private tellFailedWrite(scheduler: string, roomId: string, report: PingReport, err: unknown): void {
    if (isConflict(err)) {
      this.conflicts.inc();
      this.options.logger.debug('room changed since the cached version the status was composed from; retried on the newer version', { scheduler, roomId, status: report.status });
      return;
    }
    // One line per interval, whatever the fleet's size: it names this write's room and counts the
    // first failures since the last line (retries are told per round, in retryDue).
    this.untoldFailures++;
    const now = this.options.now();
    if (now - this.failuresToldAt < (this.options.failureLogIntervalMs ?? 10_000)) return;
    this.options.logger.warn('room status writes failed; each is kept pending and retried until written', {
      failed: this.untoldFailures, scheduler, roomId, status: report.status, ...apiErrorFields(err),
    });
    this.untoldFailures = 0;
    this.failuresToldAt = now;
  }

  private backoffMs(attempts: number): number {
    const base = this.options.retryBaseMs ?? 250;
    const cap = this.options.retryCapMs ?? 10_000;
    const ceiling = Math.min(cap, base * 2 ** Math.min(attempts - 1, 20));
    return Math.floor((this.options.random ?? Math.random)() * ceiling);
  }

  /** Queues a write for retry, due after one backoff unless `dueAt` says otherwise; returns the entry. */
  private addPending(key: string, fields: Omit<PendingWrite, 'dueAt'>, dueAt = this.options.now() + this.backoffMs(fields.attempts)): PendingWrite {
    const write: PendingWrite = { ...fields, dueAt };
    this.pending.set(key, write);
    const max = this.options.maxPending ?? 50_000;
    while (this.pending.size > max) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.pendingDropped.inc();
      this.options.logger.error('pending room status write dropped: too many pending', { room: oldest, maxPending: max });
    }
    // A retry already due no later than this one needs no new look at every pending write (in an
    // outage of a whole fleet, that look per ping would cost the square of the fleet).
    if (this.retryTimer === undefined || dueAt < this.retryTimerDue) this.scheduleRetry();
    return write;
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retrying || this.pending.size === 0) return;
    const now = this.options.now();
    let due = Infinity;
    for (const w of this.pending.values()) due = Math.min(due, w.dueAt);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (due === Number.POSITIVE_INFINITY) return; // only writes under way: their ends schedule again
    this.retryTimerDue = due;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.retryDue();
    }, Math.max(0, due - now));
    this.retryTimer.unref();
  }

  /** Writes every pending status whose time has come; resolves when that round is done. */
  async retryDue(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    // Failures other than a 409 (the API server down, throttling, a refusal), told once per round:
    // a line per room would flood the log in an outage of a whole fleet.
    let failed = 0;
    let conflicts = 0;
    let firstFailure: unknown;
    // Written this round: told in one line too (after an outage, every room whose status changed
    // in it is written in the first rounds), naming the room that waited longest.
    let writtenNow = 0;
    let longest: { scheduler: string; roomId: string; status: string; tries: number; waitedMs: number } | undefined;
    try {
      const now = this.options.now();
      const due = [...this.pending.entries()].filter(([, w]) => w.dueAt <= now);
      for (const [key, w] of due) {
        // The room's latest ping time: expiry is judged from it.
        const lastPing = this.lastPings.get(w.scheduler)?.get(w.roomId) ?? now;
        const report = w.report;
        // Composed from the room as the cache shows it now: gone from it, the room was deleted;
        // showing the report already (written by another replica), nothing is left to write, unless
        // a report coalesced into it took the allocation the room still shows open.
        const room = this.options.rooms.findRoom(w.scheduler, w.roomId);
        const takeUnwritten = room !== undefined && allocationTakenUp(room, w.fewest !== undefined ? report : undefined, w.took, w.fewest) !== undefined;
        if (!room || (!this.needsWrite(key, room, report) && !takeUnwritten)) {
          this.pending.delete(key);
          continue;
        }
        // Another replica wrote a report the room sent after this one, or one that reached it after
        // this one reached this replica (pings of one second, or without a timestamp, keep their
        // arrival order; a late retry must not reverse it): this one is older news.
        const newer = takeUnwritten ? undefined : newerReportHeld(room, report, w.reportAt, this.storedSentAt(key, room));
        if (newer !== undefined) {
          this.options.logger.debug(`pending room status write dropped: the room's GameRoom holds a report ${newer}`, {
            scheduler: w.scheduler, roomId: w.roomId, status: report.status, timestamp: report.sentAt, newestTimestamp: room.status?.pingTimestamp, lastPingAt: room.status?.lastPingAt,
          });
          this.pending.delete(key);
          continue;
        }
        try {
          this.pendingRetries.inc();
          await this.writeStatus(w.scheduler, w.roomId, room, report, lastPing, w.took, w.fewest);
          this.written.set(key, { pingStatus: report.status, runningMatches: report.runningMatches });
          if (this.pending.get(key) === w && w.report === report) this.pending.delete(key);
          else continue; // a newer report arrived meanwhile: the next round writes it
          writtenNow++;
          const waitedMs = this.options.now() - w.since;
          if (!longest || waitedMs > longest.waitedMs) longest = { scheduler: w.scheduler, roomId: w.roomId, status: report.status, tries: w.attempts + 1, waitedMs };
        } catch (err) {
          if (isNotFound(err)) {
            this.pending.delete(key);
            continue;
          }
          w.lastError = describeApiError(err);
          if (isConflict(err)) {
            conflicts++;
            this.tellFailedWrite(w.scheduler, w.roomId, report, err);
          } else if (failed++ === 0) firstFailure = err;
          w.attempts++;
          w.dueAt = this.options.now() + this.backoffMs(w.attempts);
        }
      }
    } finally {
      this.retrying = false;
      if (longest) {
        this.options.logger.info('pending room status writes written', {
          written: writtenNow, pending: this.pending.size, longestWaitSeconds: Math.round(longest.waitedMs / 1000),
          scheduler: longest.scheduler, roomId: longest.roomId, status: longest.status, tries: longest.tries,
        });
      }
      const oldestPendingSeconds = Math.round(this.oldestPendingMs() / 1000);
      if (failed > 0) {
        this.options.logger.warn('pending room status writes failed again; each is retried with backoff until written', { failed, pending: this.pending.size, oldestPendingSeconds, ...apiErrorFields(firstFailure) });
      } else if (conflicts > 0 && oldestPendingSeconds >= STALE_CONFLICT_WARN_S && this.options.now() - this.conflictsToldAt >= (this.options.failureLogIntervalMs ?? 10_000)) {
        // A 409 is retried on the room as the cache shows it next; one still refused after a minute
        // means this replica's cache of rooms has not shown the room's newer version for that long.
        this.conflictsToldAt = this.options.now();
        this.options.logger.warn('pending room status writes refused again: each room changed since the version this gateway\'s cache shows, and the cache has not caught up; retried with backoff', { conflicts, pending: this.pending.size, oldestPendingSeconds });
      }
      this.scheduleRetry();
    }
  }

  /** Rooms heard from and not yet written, by scheduler (for tests and metrics). */
  get pendingSchedulers(): number {
    return this.dirty.size;
  }

  /** Writes one digest per scheduler heard from since the last flush; returns how many were written. */
  flush(): Promise<number> {
    if (this.flushing) return this.flushing;
    this.flushing = this.doFlush().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /**
   * Writes the scheduler's digest soon (a room of it came back from a silence), at most once per
   * REVIVAL_FLUSH_EVERY_MS per scheduler: after a pause of the whole gateway, every room comes back
   * at once, and that costs one digest write per scheduler, not one per room.
   */
  private flushSoon(scheduler: string, now: number): void {
    const last = this.revivalFlushAt.get(scheduler);
    if (this.stopped || (last !== undefined && now - last < REVIVAL_FLUSH_EVERY_MS)) return;
    this.revivalFlushAt.set(scheduler, now);
    const timer = setTimeout(() => void this.flushEarly(scheduler), this.options.revivalFlushDelayMs ?? 1000);
    timer.unref();
  }

  /** Writes one scheduler's digest now, after any flush under way (which may have written it already). */
  private async flushEarly(scheduler: string): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.stopped || !this.dirty.has(scheduler)) return;
    this.flushing = this.doFlush([scheduler]).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  /** Flushes every `intervalMs` until `stop()`. */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.flush();
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pending.size > 0) {
      for (const w of this.pending.values()) w.dueAt = 0;
      await this.retryDue();
      if (this.pending.size > 0) this.options.logger.warn('stopping with room status writes still pending; the rooms\' next pings carry them to another replica', { pending: this.pending.size });
    }
    await this.flush();
  }

  private forgetScheduler(scheduler: string): void {
    for (const roomId of this.lastPings.get(scheduler)?.keys() ?? []) this.forgetRoom(`${scheduler}/${roomId}`);
    this.lastPings.delete(scheduler);
    this.revivalFlushAt.delete(scheduler);
    this.refusedDigests.delete(scheduler);
  }

  /**
   * The scheduler's PingDigest was refused (`err`): each room whose last ping is `lastPingEveryMs`
   * newer than the one written on its GameRoom gets it written there, a few at a time.
   */
  private async recordOnRooms(scheduler: string, rooms: Map<string, number>, now: number, err: unknown): Promise<number> {
    const every = this.options.lastPingEveryMs ?? 60_000;
    let refused = this.refusedDigests.get(scheduler);
    if (!refused) {
      refused = { since: now, toldAt: Number.NEGATIVE_INFINITY, written: new Map() };
      this.refusedDigests.set(scheduler, refused);
    }
    const { written } = refused;
    for (const roomId of written.keys()) if (!rooms.has(roomId)) written.delete(roomId);
    const due = [...rooms].filter(([roomId, at]) => at - (written.get(roomId) ?? Number.NEGATIVE_INFINITY) >= every);
    let writes = 0;
    let failed: unknown;
    await forEachConcurrent(due, LAST_PING_WRITE_CONCURRENCY, async ([roomId, at]) => {
      try {
        await this.options.digests.writeRoomLastPing(scheduler, roomId, new Date(at).toISOString());
        written.set(roomId, at);
        writes++;
      } catch (e) {
        if (isNotFound(e)) rooms.delete(roomId); // the room is gone: its pings have nowhere to go
        else failed ??= e;
      }
    });
    if (now - refused.toldAt >= LAST_PING_TOLD_EVERY_MS) {
      refused.toldAt = now;
      this.options.logger.warn('the API server refuses this scheduler\'s PingDigest: its rooms\' pings are written on each GameRoom instead', {
        scheduler, ...apiErrorFields(err), refusedSince: new Date(refused.since).toISOString(), roomsWritten: writes, ...(failed === undefined ? {} : { roomWriteError: describeApiError(failed) }),
        whatToDo: `let the gateway create PingDigests in namespace ${scheduler}: a ResourceQuota on count/pingdigests.roomkeeper.io there must allow one per gateway replica (one more while the gateway rolls out), and no admission policy may refuse them. `
          + `Meanwhile each room's last ping is written on its GameRoom about every ${Math.round(every / 1000)}s (a write per room instead of one per scheduler), so the operator still sees the rooms alive`,
      });
    }
    return writes;
  }

  private remember(scheduler: string, roomId: string, now: number): void {
    let rooms = this.lastPings.get(scheduler);
    if (!rooms) {
      rooms = new Map();
      this.lastPings.set(scheduler, rooms);
    }
    rooms.set(roomId, now);
    this.dirty.add(scheduler);
  }

  private async doFlush(only?: readonly string[]): Promise<number> {
    const now = this.options.now();
    const schedulers = only ?? [...this.dirty];
    for (const scheduler of schedulers) this.dirty.delete(scheduler);
    if (only === undefined) {
      for (const [scheduler, at] of this.revivalFlushAt) if (now - at >= REVIVAL_FLUSH_EVERY_MS) this.revivalFlushAt.delete(scheduler);
    }
    let writes = 0;
    for (const scheduler of schedulers) {
      const rooms = this.lastPings.get(scheduler);
      if (!rooms) continue;
      for (const [roomId, at] of rooms) {
        if (now - at > this.retentionMs) {
          rooms.delete(roomId);
          this.forgetRoom(`${scheduler}/${roomId}`);
        }
      }
      if (rooms.size === 0) {
        this.lastPings.delete(scheduler);
        continue;
      }
      try {
        const outcome = await this.options.digests.writeDigest({
          namespace: scheduler,
          name: pingDigestName(this.replicaId),
          labels: { [PING_DIGEST_LABEL]: 'true', [SCHEDULER_LABEL]: scheduler, [GATEWAY_REPLICA_LABEL]: this.replicaId },
          spec: { scheduler, replica: this.replicaId },
          status: encodePingDigest(rooms, now),
        });
        if (this.refusedDigests.delete(scheduler)) {
          this.options.logger.info('this scheduler\'s PingDigest is written again: its rooms\' pings are recorded in it again, not on each GameRoom', { scheduler });
        }
        if (outcome === 'namespace-gone') {
          // The scheduler was deleted: its rooms' pings have nowhere to go, and never will.
          this.forgetScheduler(scheduler);
          this.options.logger.info('scheduler namespace gone or being deleted; its ping digest is dropped', { scheduler });
          continue;
        }
        writes++;
      } catch (err) {
        this.dirty.add(scheduler);
        if (isRefusal(err)) {
          writes += await this.recordOnRooms(scheduler, rooms, now, err);
          continue;
        }
        this.options.logger.warn('ping digest write failed; retrying at the next flush', { scheduler, ...apiErrorFields(err) });
      }
    }
    return writes;
  }
}
