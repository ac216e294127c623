import { isOtherMajor, majorOf } from './version-major';

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

describe('isOtherMajor', () => {
  it.each([
    { room: 'v1.0.0', active: { activeVersion: 'v1.2.0' }, expected: false },
    { room: 'v2.0.0', active: { activeVersion: 'v1.2.0' }, expected: true },
    { room: 'v2.0.0', active: { activeMajor: 2 }, expected: false },
    { room: 'v2.0.0', active: { activeVersion: 'v9.9.9', activeMajor: 2 }, expected: false },
    { room: 'junk', active: { activeVersion: 'v1.0.0' }, expected: true },
    { room: 'custom', active: { activeVersion: 'custom' }, expected: false },
    { room: 'other', active: { activeVersion: 'custom' }, expected: true },
    { room: 'v1.0.0', active: {}, expected: false },
  ])('room $room against $active -> $expected', ({ room, active, expected }) => {
    expect(isOtherMajor(room, active)).toBe(expected);
  });
});
