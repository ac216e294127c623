import { expiryBrake, type ExpiryBrakeInput } from './expiry-brake';

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
