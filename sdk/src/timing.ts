/** Pure timing rules of the ping loop: jittered intervals and capped exponential backoff. */

/** The gap to the next regular ping: the interval ±10 %, `random` in [0, 1). */
export function jitteredInterval(intervalMs: number, random: number): number {
  return Math.max(1, Math.round(intervalMs * (0.9 + 0.2 * random)));
}

export interface BackoffPolicy {
  /** Ceiling of the first retry delay. */
  baseMs: number;
  /** No retry delay ceiling exceeds this. */
  capMs: number;
}

/**
 * The cap is two default ping intervals. What it bounds is the wait, after the rooms API is back
 * (a gateway restart, a rollout), before a room that failed for a while pings again: its allocation
 * is told in that answer, and its `healthy` comes then. At 30 s (the former cap, +10 % jitter) a
 * room heard of its allocation up to 33 s after the gateway returned, where a healthy one hears
 * within one interval; at 10 s it is 11 s. Liveness allows either: a room is expired after
 * ROOMKEEPER_ROOM_PING_TIMEOUT (240 s by default) without a ping, and pings change nothing more
 * than a cap's worth of that. A longer cap would only spare a rooms API that is down pings it
 * cannot answer; a failing room never pings more often than a healthy one anyway (the floor).
 */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 10_000 };

/**
 * The wait before the next try after the n-th consecutive failed ping (n ≥ 1). The first failure
 * gets one quick retry, random in [0, base] (a dropped connection, a gateway replica restarting).
 * From the second on, the wait is the ping interval or base·2^(n-1) capped at `capMs`, whichever
 * is longer, ±10 %: a failing room never pings more often than a healthy one, so a rooms API that
 * is slow to answer is not sent more pings by the rooms it fails. Retries never stop.
 */
export function backoffDelay(consecutiveFailures: number, policy: BackoffPolicy, intervalMs: number, random: number): number {
  if (consecutiveFailures <= 1) return Math.round(policy.baseMs * random);
  const exponent = Math.min(consecutiveFailures - 1, 30);
  const grown = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return jitteredInterval(Math.max(intervalMs, grown), random);
}

/**
 * A `Retry-After` header (RFC 9110: delay seconds or an HTTP date) in ms from `nowMs`; undefined
 * when absent or unreadable. Never negative.
 */
export function retryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its day and month; Date.parse would also read "-5" as a year.
  const at = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The default shutdown budget: under Kubernetes' default 30 s termination grace period. */
export const DEFAULT_SHUTDOWN_BUDGET_MS = 25_000;

/**
 * The drain hook's share of a shutdown budget: the budget less what is kept for the last ping,
 * one request deadline (so the `terminated` ping sent when the drain ends can be answered), at
 * most a fifth of the budget. The default 25 s with 5 s requests: 20 s of drain.
 */
export function drainShare(budgetMs: number, requestTimeoutMs: number): number {
  const kept = Math.min(requestTimeoutMs, Math.floor(budgetMs / 5));
  return Math.max(0, budgetMs - kept);
}
