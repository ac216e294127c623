/**
 * A read that must start after its caller asked, shared by every caller that asked before it
 * started. Callers that arrive while a read runs wait for the next one (the running read may have
 * begun before their reason to read existed); all callers that arrive before that next read starts
 * share it. So at most one read per key runs and one waits, however many callers there are: an
 * expensive read (a full list from the API server) costs one per read's duration, not one per
 * caller, and its memory is bounded by two reads, not by the number of callers.
 */
export class FreshReads<T> {
  private readonly slots = new Map<string, { running?: Promise<T>; queued?: Promise<T> }>();

  constructor(private readonly read: (key: string) => Promise<T>) {}

  /** A result of a read of `key` that started after this call. */
  get(key: string): Promise<T> {
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = {}));
    if (slot.queued) return slot.queued;
    if (!slot.running) return this.begin(key, slot);
    const owner = slot;
    const after = slot.running.then(() => undefined, () => undefined);
    slot.queued = after.then(() => {
      owner.queued = undefined;
      return this.begin(key, owner);
    });
    return slot.queued;
  }

  /** Reads in flight or waiting, for tests and metrics. */
  get pending(): number {
    let n = 0;
    for (const s of this.slots.values()) n += (s.running ? 1 : 0) + (s.queued ? 1 : 0);
    return n;
  }

  private begin(key: string, slot: { running?: Promise<T>; queued?: Promise<T> }): Promise<T> {
    const running = this.read(key);
    slot.running = running;
    const settle = (): void => {
      if (slot.running !== running) return;
      slot.running = undefined;
      if (!slot.queued) this.slots.delete(key);
    };
    running.then(settle, settle);
    return running;
  }
}
