import type { ExecutionContext } from '../execution';
import { waitUntil } from './shared';

const MINUTE = 60_000;

/** An operation's context whose clock moves a minute at each look (the wait polls with no pause). */
function minutePerLook() {
  let clock = 0;
  const ctx = { checkpoint: () => undefined, deps: { now: () => clock } } as unknown as ExecutionContext;
  return { ctx, tick: () => { clock += MINUTE; }, elapsed: () => clock };
}

describe('waitUntil with what is left to wait for: a stall limit', () => {
  it('gives up once nothing went for the limit', async () => {
    const t = minutePerLook();
    const got = await waitUntil(t.ctx, (): string | undefined => { t.tick(); return undefined; }, 10 * MINUTE, { intervalMs: 0, remaining: () => 3 });
    expect(got).toBeUndefined();
    expect(t.elapsed()).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(t.elapsed()).toBeLessThanOrEqual(12 * MINUTE);
  });

  it('waits past the limit for as long as less and less is left', async () => {
    const t = minutePerLook();
    let left = 10;
    const got = await waitUntil(t.ctx, () => {
      t.tick();
      if (t.elapsed() % (5 * MINUTE) === 0) left--; // one gone every 5 minutes: 50 minutes in all
      return left === 0 ? 'gone' : undefined;
    }, 10 * MINUTE, { intervalMs: 0, remaining: () => left });
    expect(got).toBe('gone');
    expect(t.elapsed()).toBe(50 * MINUTE);
  });

  it('without it, gives up at the deadline', async () => {
    const t = minutePerLook();
    const got = await waitUntil(t.ctx, (): string | undefined => { t.tick(); return undefined; }, 10 * MINUTE, { intervalMs: 0 });
    expect(got).toBeUndefined();
    expect(t.elapsed()).toBeLessThanOrEqual(11 * MINUTE);
  });
});
