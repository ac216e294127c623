import { BoundedQueue } from './bounded-queue';

describe('BoundedQueue', () => {
  test('is FIFO and drops the oldest element when full', () => {
    const q = new BoundedQueue<number>(3);
    expect([q.push(1), q.push(2), q.push(3)]).toEqual([undefined, undefined, undefined]);
    expect(q.push(4)).toBe(1);
    expect(q.push(5)).toBe(2);
    expect(q.length).toBe(3);
    expect(q.shift()).toBe(3);
    q.push(6);
    expect(q.take(10)).toEqual([4, 5, 6]);
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  test('wraps around many times without losing order', () => {
    const q = new BoundedQueue<number>(4);
    const out: number[] = [];
    for (let i = 0; i < 100; i++) {
      q.push(i);
      if (i % 3 === 0) out.push(q.shift() as number);
    }
    out.push(...q.take(100));
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(q.length).toBe(0);
  });

  test.each([0, -1, 1.5])('refuses capacity %p', (c) => {
    expect(() => new BoundedQueue(c)).toThrow(RangeError);
  });
});
