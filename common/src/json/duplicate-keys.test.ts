import { findDuplicateKeys } from './duplicate-keys';

describe('findDuplicateKeys', () => {
  test.each<[string, string, string[]]>([
    ['a body with each key once', '{"name":"a","game":"g","spec":{"name":"x"}}', []],
    ['the same key in sibling objects', '{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}', []],
    ['a top-level duplicate', '{"name":"a","name":"b"}', ['name']],
    ['a duplicate of the third key', '{"a":1,"b":2,"c":3,"b":4}', ['b']],
    ['a nested duplicate, by list index', '{"spec":{"containers":[{"name":"c","env":[{"name":"A"},{"name":"B","name":"C"}]}]}}', ['spec.containers[0].env[1].name']],
    ['a duplicate after nested arrays', '{"a":[[1,2],[3,[4,{"x":1,"x":2}]]]}', ['a[1][1][1].x']],
    ['a duplicate whose values are containers', '{"spec":{"a":1},"spec":[{"b":2}]}', ['spec']],
    ['a duplicate in an object inside a top-level array', '[{"a":1},{"b":1,"b":2}]', ['[1].b']],
    ['"a" and "\\u0061", which are one key', '{"a":1,"\\u0061":2}', ['a']],
    ['"é" and "\\u00e9"', '{"é":1,"\\u00e9":2}', ['["é"]']],
    ['a surrogate pair, escaped and not', '{"😀":1,"\\ud83d\\ude00":2}', ['["😀"]']],
    ['escaped quotes inside keys', '{"a\\"b":1,"a\\u0022b":2}', ['["a\\"b"]']],
    ['escaped backslashes before a closing quote', '{"a\\\\":1,"a\\u005c":2,"b":"\\\\"}', ['["a\\\\"]']],
    ['a key spelt like another only with an escaped quote in a value', '{"k":"x\\",\\"k\\":1","j":1}', []],
    ['keys that differ only in case', '{"Name":1,"name":2}', []],
    ['the empty key twice', '{"":1,"":2}', ['[""]']],
    ['a key with a dot', '{"labels":{"a.b":"1","a.b":"2"}}', ['labels["a.b"]']],
    ['string values equal to a key', '{"a":"a","b":"a"}', []],
    ['every duplicate, in order', '{"a":1,"a":2,"b":{"c":1,"c":2},"a":3}', ['a', 'b.c', 'a']],
    ['whitespace between tokens', ' { "a" : 1 ,\n\t"a" : 2 } ', ['a']],
  ])('%s', (_name, text, paths) => {
    expect(findDuplicateKeys(text)).toEqual({ paths, total: paths.length });
  });

  test('names the first duplicates up to the limit and counts them all', () => {
    const text = `{${Array.from({ length: 50 }, () => '"a":1').join(',')},"b":{"c":1,"c":2}}`;
    expect(findDuplicateKeys(text, 3)).toEqual({ paths: ['a', 'a', 'a'], total: 50 });
    expect(findDuplicateKeys(text, 100)).toEqual({ paths: [...Array.from({ length: 49 }, () => 'a'), 'b.c'], total: 50 });
  });

  test('agrees with JSON.parse on what one key is, for every escape of each character of a key', () => {
    const key = 'k"\\/\b\f\n\r\té€😀';
    const escaped = key.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const text = `{${JSON.stringify(key)}:1,"${escaped}":2}`;
    expect(Object.keys(JSON.parse(text) as object)).toEqual([key]);
    expect(findDuplicateKeys(text).paths).toEqual([`[${JSON.stringify(key)}]`]);
  });

  test('reads text nested half a million levels deep without recursion', () => {
    const depth = 500_000;
    expect(findDuplicateKeys('['.repeat(depth) + ']'.repeat(depth)).paths).toEqual([]);
    const deepObject = '{"a":'.repeat(100_000) + '{"x":1,"x":2}' + '}'.repeat(100_000);
    const found = findDuplicateKeys(deepObject).paths;
    expect(found).toHaveLength(1);
    expect(found[0]).toBe(`${'a.'.repeat(100_000)}x`);
  });

  test('ends on text that is not JSON', () => {
    for (const text of ['{"a":1,"a', '{"a', '"', '}}]]{"a":1,"a":2', '{"a\\"', '\\"a\\":1', '{,,"a":1,,"a":2', ':::', '']) {
      expect(Array.isArray(findDuplicateKeys(text).paths)).toBe(true);
    }
  });

  test('finds a duplicate in a body the size of the management API limit', () => {
    const containers = Array.from({ length: 6000 }, (_, i) => ({ name: `c${i}`, image: 'nginx:1.27', env: [{ name: 'A', value: 'x'.repeat(40) }] }));
    const text = JSON.stringify({ name: 'big', spec: { containers } }).replace('"value":"x', '"value":"y","value":"x');
    expect(text.length).toBeGreaterThan(500_000);
    expect(findDuplicateKeys(text)).toEqual({ paths: ['spec.containers[0].env[0].value'], total: 1 });
  });
});
