import { agreeing, counted } from './counted';

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

describe('agreeing', () => {
  test('one thing, and any other count', () => {
    const line = (n: number) => { const w = agreeing(n); return `${n} ${n === 1 ? 'room' : 'rooms'}: ${w.it} ping${w.s} until ${w.its} timeout; the ${w.one} kept ${w.is} ready, ${w.it} ${w.was} chosen, keep ${w.them}`; };
    expect(line(1)).toBe('1 room: it pings until its timeout; the one kept is ready, it was chosen, keep it');
    expect(line(0)).toBe('0 rooms: they ping until their timeout; the ones kept are ready, they were chosen, keep them');
    expect(line(3)).toBe('3 rooms: they ping until their timeout; the ones kept are ready, they were chosen, keep them');
  });
});
