import { clipped } from './clipped';

describe('clipped', () => {
  test.each<[string, string, number | undefined, string]>([
    ['a text within the limit whole', 'space-arena', undefined, 'space-arena'],
    ['a text of exactly the limit whole', 'n'.repeat(64), undefined, 'n'.repeat(64)],
    ['a longer text by its start and its length', 'a'.repeat(5000), undefined, `${'a'.repeat(64)}… (5000 characters)`],
    ['another limit', 'abcdef', 3, 'abc… (6 characters)'],
  ])('%s', (_name, text, max, expected) => {
    expect(clipped(text, max)).toBe(expected);
  });
});
