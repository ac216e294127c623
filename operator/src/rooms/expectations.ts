/**
 * Room expectations, as the ReplicaSet controller keeps them: the rooms this operator created or
 * deleted that its cache has not shown yet. The health check decides on counts, so it waits
 * until they are seen: otherwise, on an API server whose watch is a moment behind, a decision
 * made on a cache without the last batch adds that batch again (a rollout above desired +
 * maxSurge), or removes rooms it believes are still serving. An expectation not met within the
 * TTL is dropped (a room created and deleted before the cache saw it, a lost watch event).
 * Callers record an expectation before their request (the watch event may come before the
 * answer) and cancel it when the request fails.
 */
import type { GameRoom } from '../../../common/src/generated/resources';
import type { Clock } from '../../../common/src/runtime/clock';

/** `change`: the room changed on the server (a deletion was refused 409) since the version the cache shows. */
type Expected = 'add' | 'delete' | 'change';

export class RoomExpectations {
  /** scheduler -> room -> what is expected and since when. */
  private readonly pending = new Map<string, Map<string, { what: Expected; at: number }>>();

  constructor(private readonly now: Clock, private readonly ttlMs = 30_000) {}

  expectAdd(scheduler: string, room: string): void {
    this.roomsOf(scheduler).set(room, { what: 'add', at: this.now() });
  }

  expectDelete(scheduler: string, room: string): void {
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

  /** The write expected did not happen (the request failed): nothing to wait for. */
  cancel(scheduler: string, room: string): void {
    const rooms = this.pending.get(scheduler);
    rooms?.delete(room);
    if (rooms?.size === 0) this.pending.delete(scheduler);
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

  /** Whether the cache shows every room write of the scheduler (expired expectations dropped). */
  satisfied(scheduler: string): boolean {
    const rooms = this.pending.get(scheduler);
    if (!rooms) return true;
    const now = this.now();
    for (const [name, e] of rooms) if (now - e.at > this.ttlMs) rooms.delete(name);
    if (rooms.size === 0) this.pending.delete(scheduler);
    return rooms.size === 0;
  }

  private roomsOf(scheduler: string): Map<string, { what: Expected; at: number }> {
    let rooms = this.pending.get(scheduler);
    if (!rooms) this.pending.set(scheduler, (rooms = new Map<string, { what: Expected; at: number }>()));
    return rooms;
  }
}
