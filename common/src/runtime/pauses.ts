/**
 * Notices when this process did not run for a while: a timer meant to fire every second fires many
 * seconds late when the process was stopped (SIGSTOP, a frozen node or VM, a debugger) or its event
 * loop was blocked. Every request in flight meanwhile times out on this process's own clock, and
 * every watch it held is found broken when it runs again, so it logged that the Kubernetes API
 * server did not answer, once per cache, and sent the on-call engineer to the cluster (trial K,
 * 2026-12-06: a leader resumed after 30 s of SIGSTOP). The pause is logged once, as a warning,
 * and the lines about unanswered requests and broken watches that follow it within
 * `AFTER_PAUSE_MS` say it (`afterPause`).
 */
import type { Logger } from '../logger';
import { systemClock, type Clock } from './clock';

/** How often the timer is meant to fire. */
const TICK_MS = 1_000;
/** How late the timer must fire to count as a pause (well above a garbage collection's stop or a busy turn). */
export const PAUSE_MS = 5_000;
/** How long after a pause a request left unanswered or a broken watch is told with it (a request's timeout is well below). */
export const AFTER_PAUSE_MS = 30_000;

export interface Pause {
  /** When the timer fired again (epoch ms). */
  endedAt: number;
  /** How long the process did not run, about (ms). */
  lastedMs: number;
}

/** The words of a pause, e.g. for a log field. */
function pauseWords(p: Pause): string {
  return `this process did not run for ${(p.lastedMs / 1000).toFixed(1)}s until ${new Date(p.endedAt).toISOString()} `
    + '(it was stopped: SIGSTOP, a frozen node or VM; or its event loop was blocked): requests in flight then timed out on its own clock and its watches broke, which says nothing about the API server';
}

export class PauseWatch {
  private last: number;
  private latest: Pause | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: { logger?: Logger; now?: Clock } = {}) {
    this.last = this.now();
  }

  start(): this {
    if (!this.timer) {
      this.last = this.now();
      this.timer = setInterval(() => this.tick(), TICK_MS);
      this.timer.unref();
    }
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One turn of the timer: a turn far later than meant is a pause. */
  tick(): void {
    const now = this.now();
    const late = now - this.last - TICK_MS;
    this.last = now;
    if (late <= PAUSE_MS) return;
    this.latest = { endedAt: now, lastedMs: late + TICK_MS };
    this.opts.logger?.warn('this process did not run for a while: the request timeouts and broken watches that follow are its own, not the API server\'s', { pausedForMs: this.latest.lastedMs, detail: pauseWords(this.latest) });
  }

  /** The pause that ended within AFTER_PAUSE_MS of now, if any: what an unanswered request or a broken watch is told with. */
  recent(): Pause | undefined {
    const p = this.latest;
    return p && this.now() - p.endedAt <= AFTER_PAUSE_MS ? p : undefined;
  }

  private now(): number {
    return (this.opts.now ?? systemClock)();
  }
}

let processWatch: PauseWatch | undefined;

/** This process's pause watch, started by the first caller (whose logger it logs to). */
export function processPauses(logger?: Logger): PauseWatch {
  processWatch ??= new PauseWatch({ logger }).start();
  return processWatch;
}

/** `{ afterPause: <words> }` when a pause ended lately, for a log line about an unanswered request or a broken watch; else `{}`. */
export function afterPauseField(watch: PauseWatch | undefined): { afterPause?: string } {
  const p = watch?.recent();
  return p ? { afterPause: pauseWords(p) } : {};
}
