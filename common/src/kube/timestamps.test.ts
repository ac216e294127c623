import { rfc3339, toIsoString, toMillis } from './timestamps';

describe('Kubernetes timestamps', () => {
  test.each([
    ['an RFC 3339 string', '2026-11-26T21:52:30Z', 1_795_729_950_000],
    ['a Date (client-node typed objects)', new Date('2026-11-26T21:52:30.250Z'), 1_795_729_950_250],
    ['epoch milliseconds', 1_795_729_950_000, 1_795_729_950_000],
  ])('toMillis reads %s', (_what, value, ms) => {
    expect(toMillis(value)).toBe(ms);
  });

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string that is no time', 'yesterday'],
    ['an invalid Date (it would throw in toISOString)', new Date(Number.NaN)],
    ['an infinite number', Number.POSITIVE_INFINITY],
    ['an object', { at: 1 }],
  ])('toMillis of %s is undefined, never a throw', (_what, value) => {
    expect(toMillis(value)).toBeUndefined();
  });

  test('rfc3339 writes second precision with Z, as kube-apiserver does (milliseconds dropped, not rounded)', () => {
    expect(rfc3339(1_795_729_950_999)).toBe('2026-11-26T21:52:30Z');
    expect(rfc3339(0)).toBe('1970-01-01T00:00:00Z');
    expect(toMillis(rfc3339(1_795_729_950_999))).toBe(1_795_729_950_000);
  });

  test('toIsoString keeps strings and Dates, and is empty for anything else', () => {
    expect(toIsoString('2026-11-26T21:52:30Z')).toBe('2026-11-26T21:52:30Z');
    expect(toIsoString(new Date(0))).toBe('1970-01-01T00:00:00.000Z');
    expect(toIsoString(42)).toBe('');
  });
});
