/**
 * Rooms that failed, as this replica saw them fail: counted in `roomkeeper_room_failures_total`
 * (by scheduler, cause and stage: whether the game server had pinged, and whether players or a
 * matchmaker held the room), and kept for CHURN_WINDOW_MS per
 * scheduler for the churn rule (domain/room-churn.ts). Three places see a room fail, each once:
 * the room status controller when it writes a room's status `error` (its pod failed, or a
 * container exited with an error) and when it finds a room's pod gone (`pod_deleted`), and the
 * health check when it expires a room for its silence (`expired`). A room is recorded once, by its
 * uid: an expired room already in error is not counted again. Validation rooms are left out.
 *
 * Memory is bounded: per scheduler the failures of the window and at most MAX_KEPT of them, and
 * the uids recorded for at most MAX_UIDS rooms (the oldest forgotten first; a room's deletion
 * forgets it). A new leader starts with none: what the condition says is counted from then on.
 */
import type { GameRoom } from '../../../common/src/generated/resources';
import type { Counter, MetricsRegistry } from '../../../common/src/metrics';
import { toMillis } from '../../../common/src/kube/timestamps';
import { heldPlayers } from './domain/lost-rooms';
import { CHURN_MAX, CHURN_WINDOW_MS, ROOM_FAILURE_CAUSES, type RoomFailure, type RoomFailureCause } from './domain/room-churn';

/** Failures kept per scheduler: enough to reach the churn rule's highest mark. */
const MAX_KEPT = 2 * CHURN_MAX;
const MAX_UIDS = 100_000;
const STAGES = ['before_ping', 'after_ping', 'with_players'] as const;

export class RoomFailures {
  private readonly counter: Counter;
  private readonly recent = new Map<string, RoomFailure[]>();
  private readonly recorded = new Set<string>();
  /** Schedulers whose series show 0 already (zeroFor). */
  private readonly zeroed = new Set<string>();
  /** When this replica began to see failures: it began to lead (before: when it was made). */
  private watchingSince: number;

  constructor(metrics: MetricsRegistry, private readonly now: () => number, private readonly windowMs = CHURN_WINDOW_MS) {
    this.watchingSince = now();
    this.counter = metrics.counter('roomkeeper_room_failures_total', 'Rooms that failed, as the leading operator saw them, by scheduler, cause (error: its pod failed or a container exited with an error; expired: no ping, or no readiness, within its timeout; pod_deleted: its pod went, deleted or with its node) and stage (with_players: its game server had said players or a matchmaker held it, by an occupied ping, a running match or an open allocation; after_ping: it had pinged, without players; before_ping: never). A release whose rooms crash after they start shows here while the room counts look whole (the RoomsChurning condition).', { labelNames: ['cause', 'scheduler', 'stage'] });
  }

  /** This replica began to lead: it starts counting the window afresh. */
  startWatching(): void {
    this.watchingSince = this.now();
    this.recent.clear();
  }

  get since(): number {
    return this.watchingSince;
  }

  /**
   * Records a room's failure once (by uid); false when it was recorded already, or when it is a
   * validation room (the version change it validates tells its failure).
   */
  record(room: GameRoom, cause: RoomFailureCause, why?: string): boolean {
    if (room.spec.validation === true) return false;
    const uid = room.metadata.uid ?? `${room.metadata.namespace as string}/${room.metadata.name as string}`;
    if (this.recorded.has(uid)) return false;
    this.recorded.add(uid);
    if (this.recorded.size > MAX_UIDS) this.recorded.delete(this.recorded.values().next().value as string);
    const scheduler = room.metadata.namespace as string;
    // A room's first ping changes its status, so the gateway writes it to the GameRoom (later ones may go to PingDigests only).
    const pinged = room.status?.lastPingAt !== undefined || (room.status?.pingStatus !== undefined && room.status.pingStatus !== 'unknown');
    const withPlayers = heldPlayers(room);
    const at = this.now();
    this.counter.inc({ scheduler, cause, stage: withPlayers ? 'with_players' : pinged ? 'after_ping' : 'before_ping' });
    const createdAt = toMillis(room.metadata.creationTimestamp) ?? at;
    const list = this.recent.get(scheduler) ?? [];
    list.push({ room: room.metadata.name as string, version: room.spec.version, cause, pinged: pinged || withPlayers, withPlayers, at, createdAt, ...(why ? { why } : {}) });
    this.recent.set(scheduler, this.pruned(list, at));
    return true;
  }

  /** The scheduler's failures within the window, oldest first. */
  of(scheduler: string): readonly RoomFailure[] {
    const list = this.recent.get(scheduler);
    if (!list) return [];
    const kept = this.pruned(list, this.now());
    if (kept.length === 0) this.recent.delete(scheduler);
    else this.recent.set(scheduler, kept);
    return kept;
  }

  /** A room is gone: its uid is no longer needed to tell a second failure from the first. */
  roomGone(room: GameRoom): void {
    if (room.metadata.uid) this.recorded.delete(room.metadata.uid);
  }

  /** A scheduler is gone: its series and failures go too. */
  schedulerGone(scheduler: string): void {
    this.recent.delete(scheduler);
    this.zeroed.delete(scheduler);
    this.counter.remove({ scheduler });
  }

  /** Every cause and stage shows 0 for the scheduler from its first health check, so increase() has a start (once per scheduler). */
  zeroFor(scheduler: string): void {
    if (this.zeroed.has(scheduler)) return;
    this.zeroed.add(scheduler);
    for (const cause of ROOM_FAILURE_CAUSES) for (const stage of STAGES) this.counter.inc({ scheduler, cause, stage }, 0);
  }

  private pruned(list: RoomFailure[], now: number): RoomFailure[] {
    const from = now - this.windowMs;
    const kept = list.filter((f) => f.at >= from);
    return kept.length > MAX_KEPT ? kept.slice(kept.length - MAX_KEPT) : kept;
  }
}
