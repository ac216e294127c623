import { captureLogs } from '../../../test/support/log-capture';
import { AFTER_PAUSE_MS, afterPauseField, PAUSE_MS, PauseWatch } from './pauses';

describe('PauseWatch', () => {
  it('takes a timer turn more than PAUSE_MS late for a pause, logged once; a late turn within it for none', () => {
    const logs = captureLogs('info');
    let now = 1_000_000;
    const watch = new PauseWatch({ logger: logs.logger, now: () => now });
    now += 1_000 + PAUSE_MS;
    watch.tick();
    expect(watch.recent()).toBeUndefined();
    now += 1_000 + PAUSE_MS + 1;
    watch.tick();
    expect(watch.recent()).toEqual({ endedAt: now, lastedMs: 1_000 + PAUSE_MS + 1 });
    now += 1_000;
    watch.tick();
    expect(logs.lines.map((l) => [l.level, l.pausedForMs])).toEqual([['warn', 1_000 + PAUSE_MS + 1]]);
  });

  it('tells a pause for AFTER_PAUSE_MS after it ended, then no more', () => {
    let now = 0;
    const watch = new PauseWatch({ now: () => now });
    now += 40_000;
    watch.tick();
    expect(afterPauseField(watch).afterPause).toMatch(/^this process did not run for 40\.0s until 1970-01-01T00:00:40\.000Z \(it was stopped: SIGSTOP/);
    now += AFTER_PAUSE_MS;
    expect(afterPauseField(watch).afterPause).toBeDefined();
    now += 1;
    expect(afterPauseField(watch)).toEqual({});
    expect(afterPauseField(undefined)).toEqual({});
  });
});
