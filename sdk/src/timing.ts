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

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 30_000 };

/**
 * "Full jitter" backoff: after the n-th consecutive failure (n ≥ 1) wait a uniformly random time
 * in [0, min(cap, base·2^(n-1))]. Retries never stop.
 */
export function backoffDelay(consecutiveFailures: number, policy: BackoffPolicy, random: number): number {
  const exponent = Math.min(Math.max(consecutiveFailures - 1, 0), 30);
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling * random);
}
