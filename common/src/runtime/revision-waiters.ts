/**
 * Callers waiting, each up to its own deadline, for a revision counter (etcd's, the sandbox's) to
 * reach a target: an informer's cache catching up with a write, a read of the sandbox API server
 * naming a resourceVersion its store has not reached.
 */
export class RevisionWaiters {
  private readonly waiting = new Set<{ target: bigint; done: (reached: boolean) => void }>();

  /** Whether anyone waits (so that the owner's hot path can skip `advance`). */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Resolves true when `advance` reaches `target`, false after `timeoutMs` or on `releaseAll`.
   */
  wait(target: bigint, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter = {
        target,
        done: (reached: boolean) => {
          clearTimeout(timer);
          this.waiting.delete(waiter);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      this.waiting.add(waiter);
    });
  }

  /** Releases, with true, the waiters whose target `now` reaches. */
  advance(now: bigint): void {
    for (const w of [...this.waiting]) if (now >= w.target) w.done(true);
  }

  /** Releases every waiter with false (the owner stops). */
  releaseAll(): void {
    for (const w of [...this.waiting]) w.done(false);
  }
}
