/**
 * The clock every component takes injected (STYLE.md principle 8): milliseconds since the epoch.
 * Production passes `systemClock`; tests pass a function over a variable they move.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/**
 * How far the clocks of two replicas may run apart for a time one wrote to count for another: a
 * time further ahead than this (plus what the writer adds to its own clock) was not written by
 * a replica's clock (a digest or a lease written by hand to expire in year 2100).
 */
export const MAX_CLOCK_SKEW_MS = 60_000;
