import { silentLogger } from '../../../common/src/logger';
import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';
import { TerminalError, WorkQueue } from './work-queue';

describe('work queue', () => {
  test('a key added many times while queued is reconciled once; an add during processing runs it again', async () => {
    const seen: string[] = [];
    let release: (() => void) | undefined;
    const q = new WorkQueue({
      name: 't', logger: silentLogger(), concurrency: 2,
      reconcile: async (key) => {
        seen.push(key);
        if (key === 'a' && seen.filter((k) => k === 'a').length === 1) await new Promise<void>((r) => (release = r));
      },
    });
    q.add('a');
    q.add('a');
    q.start();
    await waitFor(() => release !== undefined);
    q.add('a'); // while processing: marked dirty
    q.add('a');
    release?.();
    await waitFor(() => seen.filter((k) => k === 'a').length === 2);
    await q.stop();
    expect(seen).toEqual(['a', 'a']);
  });

  test('a key is never processed by two workers at once', async () => {
    let running = 0;
    let max = 0;
    const q = new WorkQueue({
      name: 't', logger: silentLogger(), concurrency: 4,
      reconcile: async () => {
        running++;
        max = Math.max(max, running);
        await new Promise((r) => setImmediate(r));
        running--;
      },
    });
    q.start();
    for (let i = 0; i < 50; i++) q.add('same');
    await waitFor(() => running === 0 && q.length === 0);
    await q.stop();
    expect(max).toBe(1);
  });

  test('errors retry with per-key backoff doubling up to the cap; success resets it; terminal errors are not retried', async () => {
    const { logger, lines } = captureLogs('debug');
    const calls = new Map<string, number>();
    /** How many more runs of each key fail. */
    const failing = new Map<string, number>([['conflicted', 4], ['erring', 1]]);
    const q = new WorkQueue({
      name: 't', logger, baseDelayMs: 1, maxDelayMs: 4,
      reconcile: (key) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        if (key === 'broken') return Promise.reject(new TerminalError('cannot be fixed by retrying'));
        const left = failing.get(key) ?? 0;
        if (left === 0) return Promise.resolve(undefined);
        failing.set(key, left - 1);
        return Promise.reject(key === 'conflicted' ? Object.assign(new Error('conflict'), { code: 409 }) : Object.assign(new Error('unavailable'), { code: 503 }));
      },
    });
    /** The retry delays the queue announced for a key, in order (a conflict at debug, other errors at warn). */
    const delays = (key: string, message: string): unknown[] => lines.filter((l) => l.key === key && l.message === message).map((l) => l.requeueAfterMs);
    q.start();
    q.add('conflicted');
    q.add('erring');
    q.add('broken');
    await waitFor(() => calls.get('conflicted') === 5 && delays('conflicted', 'conflict, requeueing').length === 4);
    expect(delays('conflicted', 'conflict, requeueing')).toEqual([1, 2, 4, 4]);
    await waitFor(() => calls.get('erring') === 2 && delays('erring', 'reconcile failed, retrying').length === 1);
    expect(delays('erring', 'reconcile failed, retrying')).toEqual([1]);

    // After a success the next failure starts from the base delay again, not from the cap.
    failing.set('conflicted', 1);
    q.add('conflicted');
    await waitFor(() => calls.get('conflicted') === 7 && delays('conflicted', 'conflict, requeueing').length === 5);
    expect(delays('conflicted', 'conflict, requeueing')).toEqual([1, 2, 4, 4, 1]);

    await waitFor(() => lines.some((l) => l.key === 'broken' && l.message === 'reconcile failed, not retrying'));
    await q.stop();
    expect(calls.get('broken')).toBe(1);
    expect(calls.get('conflicted')).toBe(7);
  });

  test('requeueAfterMs asks for another pass later', async () => {
    let n = 0;
    const q = new WorkQueue({ name: 't', logger: silentLogger(), reconcile: () => Promise.resolve(++n < 3 ? { requeueAfterMs: 1 } : {}) });
    q.start();
    q.add('k');
    await waitFor(() => n === 3);
    await q.stop();
    expect(n).toBe(3);
  });
});
