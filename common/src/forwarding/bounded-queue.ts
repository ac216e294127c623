/**
 * A FIFO with a fixed capacity that drops its oldest element to make room (a ring buffer, so
 * push and shift are O(1) however long it is). Forwarding uses it to bound memory while a
 * receiver is slow or down: the newest state of a room matters more than an old one.
 */
export class BoundedQueue<T> {
  private readonly slots: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.slots = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  /** Appends `item`; returns the element dropped to make room, if the queue was full. */
  push(item: T): T | undefined {
    let dropped: T | undefined;
    if (this.count === this.capacity) dropped = this.shift();
    this.slots[(this.head + this.count) % this.capacity] = item;
    this.count++;
    return dropped;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    return item;
  }

  /** Removes and returns up to `max` elements, oldest first. */
  take(max: number): T[] {
    const out: T[] = [];
    while (out.length < max && this.count > 0) out.push(this.shift() as T);
    return out;
  }
}
