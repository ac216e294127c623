/**
 * Room expectations, as the ReplicaSet controller keeps them: the rooms this operator created or
 * deleted that its cache has not shown yet. The health check decides on counts, so it waits
 * until they are seen: otherwise, on an API server whose watch is a moment behind, a decision
 * made on a cache without the last batch adds that batch again (a rollout above desired +
 * maxSurge), or removes rooms it believes are still serving. An expectation not met within the
 * TTL is dropped (a room created and deleted before the cache saw it, a lost watch event).
 * Callers record an expectation before their request (the watch event may come before the
 * answer) and cancel it when the request fails.
 *
 * A lost room recorded in the Scheduler's status (`status.lostRooms`) is expected the same way: the
 * room's deletion and the Scheduler's update come on separate watches, and a health check that saw
 * the room gone but not yet the record would replace it with an add_rooms that never names it.
 *
 * It also remembers which deletions this replica asked for, until the cache shows them begin, so
 * that a room deleted by anyone else (kubectl) is told apart (outside-deletions.ts).
 */
import type { GameRoom, Scheduler } from '../../../common/src/generated/resources';
import type { Clock } from '../../../common/src/runtime/clock';

/**
 * How long a deletion this replica asked for is remembered as its own, for telling deletions
 * outside Roomkeeper apart: far longer than the expectations' TTL, since a watch minutes behind
 * (an outage, a loaded 10,000-room fleet) must not turn the operator's own deletions into someone
 * else's. At most the rooms deleted in that time (a few MB for a 10,000-room rollout).
 */
const OWN_DELETION_MEMORY_MS = 10 * 60_000;

/** `change`: the room changed on the server (a deletion was refused 409) since the version the cache shows. */
type Expected = 'add' | 'delete' | 'change';

export class RoomExpectations {
  /** scheduler -> room -> what is expected and since when. */
  private readonly pending = new Map<string, Map<string, { what: Expected; at: number }>>();
  /** scheduler -> lost room recorded in its status -> since when. */
  private readonly records = new Map<string, Map<string, number>>();
  /** `scheduler/room` -> when this replica asked for its deletion (oldest first). */
  private readonly ownDeletions = new Map<string, number>();

  constructor(private readonly now: Clock, private readonly ttlMs = 30_000) {}

  expectAdd(scheduler: string, room: string): void {
    this.roomsOf(scheduler).set(room, { what: 'add', at: this.now() });
  }

  expectDelete(scheduler: string, room: string): void {
    this.noteOwnDeletion(scheduler, room);
    const rooms = this.roomsOf(scheduler);
    // Created and deleted before the cache saw either: nothing is left to see.
    if (rooms.get(room)?.what === 'add') rooms.delete(room);
    else rooms.set(room, { what: 'delete', at: this.now() });
  }

  /**
   * The server has a newer version of the room than the cache (a deletion with its
   * resourceVersion was refused): the cache's next event of the room shows it. Deciding before
   * would choose the same room on the same stale view again.
   */
  expectChange(scheduler: string, room: string): void {
    const rooms = this.roomsOf(scheduler);
    if (!rooms.has(room)) rooms.set(room, { what: 'change', at: this.now() });
  }

  /**
   * The write expected did not happen (the request failed): nothing to wait for. A deletion asked
   * for stays noted as this replica's: a request that failed on a timeout may have landed, and a
   * room wrongly said to be deleted outside Roomkeeper is worse than one such deletion not told.
   */
  cancel(scheduler: string, room: string): void {
    forget(this.pending, scheduler, room);
  }

  /**
   * Before a deletion of `room` this replica asks for, one the health check need not wait for
   * (expectDelete notes it too): its deletion is then not taken for one made outside Roomkeeper.
   */
  noteOwnDeletion(scheduler: string, room: string): void {
    const key = `${scheduler}/${room}`;
    const now = this.now();
    this.ownDeletions.delete(key); // most recent last
    this.ownDeletions.set(key, now);
    for (const [k, at] of this.ownDeletions) {
      if (at >= now - OWN_DELETION_MEMORY_MS) break;
      this.ownDeletions.delete(k); // its deletion never showed (refused, or gone unseen)
    }
  }

  /** A deletion this replica asked for that is known not to have landed (refused on its preconditions). */
  forgetOwnDeletion(scheduler: string, room: string): void {
    this.ownDeletions.delete(`${scheduler}/${room}`);
  }

  /**
   * Whether this replica asked for the deletion of `room` within OWN_DELETION_MEMORY_MS; forgets
   * it. Asked once, when the cache first shows the room's deletion.
   */
  takeOwnDeletion(scheduler: string, room: string): boolean {
    const key = `${scheduler}/${room}`;
    const at = this.ownDeletions.get(key);
    this.ownDeletions.delete(key);
    return at !== undefined && at >= this.now() - OWN_DELETION_MEMORY_MS;
  }

  /** Informer hook: an add or update shows a created room; a delete or a deletionTimestamp a deleted one. */
  observe(type: string, room: GameRoom): void {
    const scheduler = room.metadata.namespace ?? '';
    const rooms = this.pending.get(scheduler);
    const entry = rooms?.get(room.metadata.name ?? '');
    if (!rooms || !entry) return;
    const gone = type === 'delete' || room.metadata.deletionTimestamp !== undefined;
    if (entry.what !== 'delete' || gone) rooms.delete(room.metadata.name ?? '');
    if (rooms.size === 0) this.pending.delete(scheduler);
  }

  /** Before the status patch that records `room` in the Scheduler's `status.lostRooms`. */
  expectLossRecorded(scheduler: string, room: string): void {
    let rooms = this.records.get(scheduler);
    if (!rooms) this.records.set(scheduler, (rooms = new Map<string, number>()));
    rooms.set(room, this.now());
  }

  /** Whether this replica recorded the room's loss and its cache does not show the record yet. */
  lossRecordPending(scheduler: string, room: string): boolean {
    return this.records.get(scheduler)?.has(room) ?? false;
  }

  /** The record's patch failed: nothing to wait for. */
  cancelLossRecord(scheduler: string, room: string): void {
    forget(this.records, scheduler, room);
  }

  /** Informer hook: a Scheduler's event shows the lost rooms its status records (none once it is deleted). */
  observeScheduler(type: string, s: Scheduler): void {
    const scheduler = s.metadata.name ?? '';
    const rooms = this.records.get(scheduler);
    if (!rooms) return;
    if (type === 'delete') {
      this.records.delete(scheduler);
      return;
    }
    for (const e of s.status?.lostRooms ?? []) rooms.delete(e.name);
    if (rooms.size === 0) this.records.delete(scheduler);
  }

  /** Whether the cache shows every room write of the scheduler and every loss recorded (expired expectations dropped). */
  satisfied(scheduler: string): boolean {
    const since = this.now() - this.ttlMs;
    dropExpired(this.pending, scheduler, (e) => e.at < since);
    dropExpired(this.records, scheduler, (at) => at < since);
    return !this.pending.has(scheduler) && !this.records.has(scheduler);
  }

  private roomsOf(scheduler: string): Map<string, { what: Expected; at: number }> {
    let rooms = this.pending.get(scheduler);
    if (!rooms) this.pending.set(scheduler, (rooms = new Map<string, { what: Expected; at: number }>()));
    return rooms;
  }
}

/** Removes one room's expectation, and the scheduler's entry once it holds none. */
function forget<T>(byScheduler: Map<string, Map<string, T>>, scheduler: string, room: string): void {
  const rooms = byScheduler.get(scheduler);
  rooms?.delete(room);
  if (rooms?.size === 0) byScheduler.delete(scheduler);
}

/** Removes a scheduler's expectations that `expired` says are over, and its entry once it holds none. */
function dropExpired<T>(byScheduler: Map<string, Map<string, T>>, scheduler: string, expired: (e: T) => boolean): void {
  const rooms = byScheduler.get(scheduler);
  if (!rooms) return;
  for (const [name, e] of rooms) if (expired(e)) rooms.delete(name);
  if (rooms.size === 0) byScheduler.delete(scheduler);
}
