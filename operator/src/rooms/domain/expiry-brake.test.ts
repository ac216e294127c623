import { expiryBrake, PingFlow, type ExpiryBrakeInput } from './expiry-brake';

const base: ExpiryBrakeInput = { expiring: 1, silent: 1, fleet: 20, now: 1_000_000, sightSince: 0, sightImpaired: false, graceMs: 240_000, share: 0.5, min: 5 };

describe('expiryBrake', () => {
  it.each<[string, Partial<ExpiryBrakeInput>, false | string]>([
    ['nothing expiring', { expiring: 0, sightImpaired: true }, false],
    ['one dead room, long-fresh sight', {}, false],
    ['a cache failing right now', { sightImpaired: true }, 'sight-impaired'],
    ['leadership gained 10 s ago', { sightSince: 1_000_000 - 10_000 }, 'fresh-sight'],
    ['sight fresh for exactly the grace', { sightSince: 1_000_000 - 240_000 }, false],
    ['all 20 rooms at once', { expiring: 20, silent: 20 }, 'mass-expiry'],
    ['half the fleet is not more than half', { expiring: 10, silent: 10 }, false],
    ['11 of 20', { expiring: 11, silent: 11 }, 'mass-expiry'],
    ['a small fleet losing all of its 5 rooms (not more than min)', { expiring: 5, silent: 5, fleet: 5 }, false],
    ['6 of 6', { expiring: 6, silent: 6, fleet: 6 }, 'mass-expiry'],
    ['2 expiring while 11 of 20 are long silent (a silence spread over several checks)', { expiring: 2, silent: 11 }, 'mass-expiry'],
    ['2 expiring, 10 of 20 long silent', { expiring: 2, silent: 10 }, false],
    ['nothing expiring yet, all silent: nothing to hold', { expiring: 0, silent: 20 }, false],
    ['all 20, pings seen reaching the operator for a whole ping timeout, the other schedulers\' rooms heard: they hang themselves', { expiring: 20, silent: 20, pingsFlowingSince: 1_000_000 - 240_000, pingTimeoutMs: 240_000, othersHeardShare: () => 0.9 }, false],
    ['all 20, pings flowing, but most of the other schedulers\' rooms silent too (a gateway too busy to hear them)', { expiring: 20, silent: 20, pingsFlowingSince: 1_000_000 - 240_000, pingTimeoutMs: 240_000, othersHeardShare: () => 0.4 }, 'mass-expiry'],
    ['all 20, pings flowing, no other scheduler\'s rooms to compare with', { expiring: 20, silent: 20, pingsFlowingSince: 1_000_000 - 240_000, pingTimeoutMs: 240_000, othersHeardShare: () => undefined }, 'mass-expiry'],
    ['all 20, pings seen flowing again for less than a ping timeout (gateways back from an outage)', { expiring: 20, silent: 20, pingsFlowingSince: 1_000_000 - 239_000, pingTimeoutMs: 240_000, othersHeardShare: () => 1 }, 'mass-expiry'],
    ['all 20, pings not seen flowing now', { expiring: 20, silent: 20, pingTimeoutMs: 240_000 }, 'mass-expiry'],
  ])('%s', (_what, change, expected) => {
    const result = expiryBrake({ ...base, ...change });
    expect(result.hold ? result.reason : false).toBe(expected);
  });

  it('says how long the fresh-sight hold lasts', () => {
    const r = expiryBrake({ ...base, sightSince: 1_000_000 - 40_000 });
    expect(r).toMatchObject({ hold: true, retryAfterMs: 200_000 });
    expect(r.hold && r.message).toMatch(/waits 200 s more/);
  });
});

describe('PingFlow', () => {
  it('says since when digests have been flushed within half the ping timeout at every look, and forgets at a look that finds none', () => {
    const flow = new PingFlow();
    expect(flow.look(1_000, undefined, 240_000)).toBeUndefined();
    expect(flow.look(2_000, 1_500, 240_000)).toBe(2_000);
    expect(flow.look(100_000, 90_000, 240_000)).toBe(2_000);
    // The last flush 121 s old (more than half the timeout): not flowing, and the run starts again.
    expect(flow.look(211_000, 90_000, 240_000)).toBeUndefined();
    expect(flow.look(212_000, 211_500, 240_000)).toBe(212_000);
  });
});
