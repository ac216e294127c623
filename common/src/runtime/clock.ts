/**
 * The clock every component takes injected (STYLE.md principle 8): milliseconds since the epoch.
 * Production passes `systemClock`; tests pass a function over a variable they move.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
