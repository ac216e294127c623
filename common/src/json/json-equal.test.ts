import { jsonEqual } from './json-equal';

describe('jsonEqual', () => {
  test.each<[string, unknown, unknown, boolean]>([
    ['key order does not matter', { a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    ['an undefined member is an absent one', { a: 1, b: undefined }, { a: 1 }, true],
    ['array order matters', [1, 2], [2, 1], false],
    ['an array is not an object', [], {}, false],
    ['null is not an empty object', null, {}, false],
    ['a different leaf', { a: { b: 1 } }, { a: { b: '1' } }, false],
    ['a missing key', { a: 1, b: 2 }, { a: 1, c: 2 }, false],
  ])('%s', (_name, a, b, equal) => {
    expect(jsonEqual(a, b)).toBe(equal);
    expect(jsonEqual(b, a)).toBe(equal);
  });

  test('values from another realm (structuredClone) compare by content', () => {
    const value = { spec: { containers: [{ name: 'c', ports: [{ port: 80 }] }] } };
    expect(jsonEqual(structuredClone(value), value)).toBe(true);
  });
});
