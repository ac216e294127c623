import { waitFor } from '../../../test/support/wait';
import { WorkQueue } from './work-queue';

describe('WorkQueue', () => {
  it('merges adds of a queued key and reprocesses a key that changed while running', async () => {
    const runs: string[] = [];
    let release: (() => void) | undefined;
    const queue = new WorkQueue({
      concurrency: 1,
      handler: async (key) => {
        runs.push(key);
        if (key === 'a' && runs.length === 1) await new Promise<void>((r) => { release = r; });
      },
    });
    queue.add('a');
    await waitFor(() => release);
    queue.add('a'); // dirty while running
    queue.add('b');
    queue.add('b'); // merged
    release?.();
    await waitFor(() => runs.length >= 3 && queue.length === 0 && queue.inFlight === 0);
    expect(runs.sort()).toEqual(['a', 'a', 'b']);
    await queue.shutDown();
  });

  it('never runs more than `concurrency` handlers at once', async () => {
    let active = 0;
    let maxActive = 0;
    let done = 0;
    const queue = new WorkQueue({
      concurrency: 3,
      handler: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setImmediate(r));
        active--;
        done++;
      },
    });
    for (let i = 0; i < 20; i++) queue.add(`k${i}`);
    await waitFor(() => done === 20);
    expect(maxActive).toBe(3);
    await queue.shutDown();
  });

  it('retries a failing key with doubling back-off up to the cap, resets it on success, and honours requeueAfterMs', async () => {
    const calls = new Map<string, number>();
    /** How many more runs of 'flaky' fail. */
    let failing = 4;
    const retries: [string, number][] = [];
    const queue = new WorkQueue({
      concurrency: 2,
      baseBackoffMs: 1,
      maxBackoffMs: 4,
      handler: (key) => {
        const n = (calls.get(key) ?? 0) + 1;
        calls.set(key, n);
        if (key === 'flaky' && failing > 0) {
          failing--;
          return Promise.reject(new Error('boom'));
        }
        if (key === 'later' && n === 1) return Promise.resolve({ requeueAfterMs: 5 });
        return Promise.resolve(undefined);
      },
      onError: (key, _err, retryInMs) => retries.push([key, retryInMs]),
    });
    queue.add('flaky');
    queue.add('later');
    await waitFor(() => calls.get('flaky') === 5 && calls.get('later') === 2);
    expect(retries).toEqual([['flaky', 1], ['flaky', 2], ['flaky', 4], ['flaky', 4]]);
    // After a success the next failure starts from the base delay again.
    failing = 1;
    queue.add('flaky');
    await waitFor(() => calls.get('flaky') === 7);
    expect(retries.slice(4)).toEqual([['flaky', 1]]);
    await queue.shutDown();
  });

  it('wakes a key asked for beyond the longest timer Node keeps (24.8 days) after that long, not after 1 ms', async () => {
    // A lease or an allocation written with kubectl to expire in year 9999 asks for a wake-up
    // about 2.5e14 ms away; Node fires such a timer after 1 ms, and the key ran 1,000 times a second.
    jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    let runs = 0;
    const queue = new WorkQueue({
      concurrency: 1,
      handler: () => {
        runs++;
        return Promise.resolve({ requeueAfterMs: Date.parse('9999-12-31T23:59:59Z') - Date.now() });
      },
    });
    try {
      queue.add('far');
      await jest.advanceTimersByTimeAsync(1_000);
      expect(runs).toBe(1);
      // Decided again once the longest timer has run: a level-based reconcile asks anew.
      await jest.advanceTimersByTimeAsync(2 ** 31 - 1);
      expect(runs).toBe(2);
    } finally {
      await queue.shutDown();
      jest.useRealTimers();
    }
  });

  it('shutDown clears pending timers and waits for running handlers', async () => {
    let finished = false;
    let started = false;
    const queue = new WorkQueue({
      concurrency: 1,
      handler: async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 10));
        finished = true;
      },
    });
    queue.addAfter('x', 60_000);
    queue.add('y');
    await waitFor(() => started);
    await queue.shutDown();
    expect(finished).toBe(true);
  });
});
