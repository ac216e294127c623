import { majorOf, sameRooms } from './scheduler-version';

describe('majorOf', () => {
  it.each([
    ['v1.0.0', 1],
    ['v12.3.4', 12],
    ['2.1.0', 2],
    ['v3', 3],
    [' v4.0.0 ', 4],
    ['', undefined],
    ['latest', undefined],
    ['v1.2.3.4', undefined],
    ['v-1.0.0', undefined],
  ])('%j -> %j', (version, expected) => {
    expect(majorOf(version)).toBe(expected);
  });
});

describe('sameRooms', () => {
  it.each([
    ['v1.0.0', 'v1.3.0', true],
    ['v1.0.0', 'v2.0.0', false],
    ['v2', 'v2.1.0', true],
    ['custom', 'custom', true],
    ['custom', 'v1.0.0', false],
  ])('%j and %j -> %j', (a, b, expected) => {
    expect(sameRooms(a, b)).toBe(expected);
  });
});
