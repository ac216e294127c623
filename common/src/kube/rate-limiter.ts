/**
 * A token bucket: `qps` tokens per second, at most `burst` banked. `acquire()` resolves when a
 * token is available, in FIFO order. The clock is injected so tests need no waiting.
 */
import { systemClock, type Clock } from '../runtime/clock';

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly qps: number, readonly burst: number, private readonly now: Clock = systemClock) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token at once if one is banked (returns true), else returns false. */
  tryTake(): boolean {
    this.refill();
    if (this.waiters.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Tokens banked now (a fraction while one refills). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** Takes a token, or what is banked of one: a meter of asks, never in debt and never waited on. */
  spend(): void {
    this.refill();
    this.tokens = Math.max(0, this.tokens - 1);
  }

  acquire(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  /** Releases every waiter at once (used at shutdown so nothing hangs). */
  drain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.waiters.splice(0)) w();
  }

  private refill(): void {
    const now = this.now();
    // A clock set back refills nothing for the jump, and the bucket refills from its new time on.
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer) return;
    this.refill();
    while (this.waiters.length > 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.waiters.shift()?.();
    }
    if (this.waiters.length === 0) return;
    const waitMs = Math.max(1, Math.ceil(((1 - this.tokens) / this.qps) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, waitMs);
  }
}
