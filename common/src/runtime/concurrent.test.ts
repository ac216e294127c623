import { forEachConcurrent } from './concurrent';

describe('forEachConcurrent', () => {
  it('runs every item, never more than the limit at once', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await forEachConcurrent([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setImmediate(r));
      done.push(n);
      inFlight--;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('starts no item once stop says so, and lets those in flight finish', async () => {
    const started: number[] = [];
    let stopped = false;
    await forEachConcurrent([0, 1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      if (n === 1) stopped = true;
      await new Promise((r) => setImmediate(r));
    }, () => stopped);
    expect(started).toEqual([0, 1]);
  });

  it('throws the first error after the calls in flight settle, and starts nothing after it', async () => {
    const settled: number[] = [];
    await expect(forEachConcurrent([0, 1, 2, 3], 2, async (n) => {
      if (n === 0) throw new Error('boom');
      await new Promise((r) => setImmediate(r));
      settled.push(n);
    })).rejects.toThrow('boom');
    expect(settled).toEqual([1]);
  });
});
