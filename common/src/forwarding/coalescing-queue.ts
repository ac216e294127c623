/**
 * A FIFO of keyed items with a fixed capacity. An item pushed under a key that is still waiting
 * takes the waiting one's place (and turn): the older one is *coalesced*, since the newest state
 * of a room matters more than an old one. When the queue is full, the oldest item is *dropped*
 * to make room. Forwarding uses it to bound memory and work while a receiver (or the forwarding
 * worker) is behind: at most one forward per room waits, however often the room pings.
 *
 * Push, shift and replace are O(1) (a Map keeps insertion order, and replacing a value keeps its
 * position).
 */
export type Evicted<T> = { reason: 'coalesced' | 'dropped'; item: T };

export class CoalescingQueue<T> {
  private readonly items = new Map<string, T>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  get length(): number {
    return this.items.size;
  }

  /**
   * Queues `item` under `key`; returns the item that left the queue for it: the one waiting under
   * the same key (`coalesced`), or the oldest when the queue was full (`dropped`).
   */
  push(key: string, item: T): Evicted<T> | undefined {
    const waiting = this.items.get(key);
    if (waiting !== undefined) {
      this.items.set(key, item);
      return { reason: 'coalesced', item: waiting };
    }
    let evicted: Evicted<T> | undefined;
    if (this.items.size >= this.capacity) {
      const oldest = this.shift();
      if (oldest !== undefined) evicted = { reason: 'dropped', item: oldest };
    }
    this.items.set(key, item);
    return evicted;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    const first = this.items.entries().next();
    if (first.done === true) return undefined;
    this.items.delete(first.value[0]);
    return first.value[1];
  }

  /** Removes and returns up to `max` items, oldest first. */
  take(max: number): T[] {
    const out: T[] = [];
    for (const [key, item] of this.items) {
      if (out.length >= max) break;
      this.items.delete(key);
      out.push(item);
    }
    return out;
  }

  /** Removes and returns every item, oldest first. */
  clear(): T[] {
    const out = [...this.items.values()];
    this.items.clear();
    return out;
  }
}
