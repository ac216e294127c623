import { isOtherMajor } from './version-major';

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
