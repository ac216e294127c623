/**
 * The rooms whose GameRoom this gateway saw deleted lately (its rooms cache's delete events), and
 * when. A room that pings after its GameRoom is gone (its pod still within its grace period: the
 * GameRoom deleted by kubectl without waiting for the pod, or the ping already on its way) is
 * then told it was deleted and to exit, not to ping again in case the cache is behind. A room made
 * again under the same name (`add`) is no longer one. Bounded: the latest MAX_TOMBSTONES
 * deletions, each for KEEP_MS; a gateway that restarted knows none.
 */
import type { Clock } from '../../../common/src/runtime/clock';

/** About 100 bytes each: at most half a megabyte of the gateway's heap. */
const MAX_TOMBSTONES = 5_000;
/** Longer than a room's grace period usually is: a room still pinging after it is told nothing new. */
const KEEP_MS = 60 * 60_000;

export class RoomTombstones {
  /** `namespace/name` -> when the deletion was seen; in the order seen (the oldest first). */
  private readonly deleted = new Map<string, number>();

  constructor(private readonly now: Clock = Date.now, private readonly max = MAX_TOMBSTONES) {}

  /**
   * Told each change of the rooms cache: on its hot path (every room's update), so an update, or an
   * add while nothing was seen deleted, costs no key.
   */
  observe(type: 'add' | 'update' | 'delete', namespace: string, name: string): void {
    if (type === 'update' || (type === 'add' && this.deleted.size === 0)) return;
    const key = `${namespace}/${name}`;
    this.deleted.delete(key); // an add: made again; a delete: re-inserted last, so the order stays the order seen
    if (type === 'add') return;
    this.deleted.set(key, this.now());
    if (this.deleted.size > this.max) {
      const oldest = this.deleted.keys().next();
      if (!oldest.done) this.deleted.delete(oldest.value);
    }
  }

  /** When the room's GameRoom was seen deleted, within the last KEEP_MS; undefined otherwise. */
  deletedAt(namespace: string, name: string): number | undefined {
    const key = `${namespace}/${name}`;
    const at = this.deleted.get(key);
    if (at === undefined) return undefined;
    if (this.now() - at > KEEP_MS) {
      this.deleted.delete(key);
      return undefined;
    }
    return at;
  }
}
