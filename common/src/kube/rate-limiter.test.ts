import { TokenBucket } from './rate-limiter';

describe('TokenBucket', () => {
  it('banks up to its burst and refills at its rate', () => {
    let now = 1_000;
    const bucket = new TokenBucket(2, 3, () => now);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
    now += 250;
    expect(bucket.available()).toBeCloseTo(0.5);
    expect(bucket.tryTake()).toBe(false);
    now += 250;
    expect(bucket.tryTake()).toBe(true);
    now += 60_000;
    expect(bucket.available()).toBe(3);
  });

  it('spends what is banked of a token and never goes into debt', () => {
    let now = 0;
    const bucket = new TokenBucket(4, 2, () => now);
    bucket.spend();
    bucket.spend();
    bucket.spend();
    expect(bucket.available()).toBe(0);
    now += 125;
    expect(bucket.available()).toBeCloseTo(0.5);
    bucket.spend();
    expect(bucket.available()).toBe(0);
  });

  it('refills nothing when its clock is set back', () => {
    let now = 10_000;
    const bucket = new TokenBucket(1, 1, () => now);
    expect(bucket.tryTake()).toBe(true);
    now = 5_000;
    expect(bucket.available()).toBe(0);
    now = 5_500;
    expect(bucket.available()).toBeCloseTo(0.5);
  });

  it('gives waiters their tokens in order, and releases them all when drained', async () => {
    const bucket = new TokenBucket(1000, 1);
    const order: number[] = [];
    const all = Promise.all([1, 2, 3].map((n) => bucket.acquire().then(() => order.push(n))));
    await all;
    expect(order).toEqual([1, 2, 3]);
    const slow = new TokenBucket(0.001, 1);
    expect(slow.tryTake()).toBe(true);
    const waiting = slow.acquire();
    slow.drain();
    await expect(waiting).resolves.toBeUndefined();
  });
});
