import { CoalescingQueue } from './coalescing-queue';

describe('CoalescingQueue', () => {
  test('is FIFO and drops the oldest item when full', () => {
    const q = new CoalescingQueue<number>(3);
    expect([q.push('a', 1), q.push('b', 2), q.push('c', 3)]).toEqual([undefined, undefined, undefined]);
    expect(q.push('d', 4)).toEqual({ reason: 'dropped', item: 1 });
    expect(q.push('e', 5)).toEqual({ reason: 'dropped', item: 2 });
    expect(q.length).toBe(3);
    expect(q.shift()).toBe(3);
    q.push('f', 6);
    expect(q.take(10)).toEqual([4, 5, 6]);
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  test('a newer item under a waiting key takes its place and turn; the older one is coalesced, not dropped', () => {
    const q = new CoalescingQueue<string>(2);
    q.push('room-1', 'r1 ready');
    q.push('room-2', 'r2 ready');
    expect(q.push('room-1', 'r1 occupied')).toEqual({ reason: 'coalesced', item: 'r1 ready' });
    // Full, but the key waits: nothing is dropped.
    expect(q.push('room-2', 'r2 occupied')).toEqual({ reason: 'coalesced', item: 'r2 ready' });
    expect(q.length).toBe(2);
    expect(q.shift()).toBe('r1 occupied');
    // Once taken, the key is new again.
    expect(q.push('room-1', 'r1 ready again')).toBeUndefined();
    expect(q.clear()).toEqual(['r2 occupied', 'r1 ready again']);
    expect(q.length).toBe(0);
  });

  test('stays in order and bounded over many pushes and shifts', () => {
    const q = new CoalescingQueue<number>(4);
    const out: number[] = [];
    let dropped = 0;
    for (let i = 0; i < 100; i++) {
      if (q.push(`k${i}`, i)?.reason === 'dropped') dropped++;
      if (i % 3 === 0) out.push(q.shift() as number);
      expect(q.length).toBeLessThanOrEqual(4);
    }
    out.push(...q.take(100));
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(out.length + dropped).toBe(100);
    expect(q.length).toBe(0);
  });

  test.each([0, -1, 1.5])('refuses capacity %p', (c) => {
    expect(() => new CoalescingQueue(c)).toThrow(RangeError);
  });
});
