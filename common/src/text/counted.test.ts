import { counted } from './counted';

describe('counted', () => {
  test.each<[number, string, string | undefined, string]>([
    [1, 'room', undefined, '1 room'],
    [0, 'room', undefined, '0 rooms'],
    [2, 'room', undefined, '2 rooms'],
    [1000, 'room id', undefined, '1000 room ids'],
    [1, "room's", "rooms'", "1 room's"],
    [3, "room's", "rooms'", "3 rooms'"],
  ])('%d %s', (n, singular, plural, expected) => {
    expect(counted(n, singular, plural)).toBe(expected);
  });
});
