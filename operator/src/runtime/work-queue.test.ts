import { silentLogger } from '../../../common/src/logger';
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

  test('errors retry with per-key backoff; success resets it; terminal errors are not retried', async () => {
    const calls = new Map<string, number>();
    const q = new WorkQueue({
      name: 't', logger: silentLogger(), baseDelayMs: 1, maxDelayMs: 4,
      reconcile: async (key) => {
        const n = (calls.get(key) ?? 0) + 1;
        calls.set(key, n);
        if (key === 'flaky' && n < 3) throw Object.assign(new Error('conflict'), { code: 409 });
        if (key === 'broken') throw new TerminalError('cannot be fixed by retrying');
      },
    });
    q.start();
    q.add('flaky');
    q.add('broken');
    await waitFor(() => calls.get('flaky') === 3);
    await q.stop();
    expect(calls.get('broken')).toBe(1);
  });

  test('requeueAfterMs asks for another pass later', async () => {
    let n = 0;
    const q = new WorkQueue({ name: 't', logger: silentLogger(), reconcile: async () => (++n < 3 ? { requeueAfterMs: 1 } : {}) });
    q.start();
    q.add('k');
    await waitFor(() => n === 3);
    await q.stop();
    expect(n).toBe(3);
  });
});
