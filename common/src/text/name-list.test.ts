import { nameList } from './name-list';

describe('nameList', () => {
  test.each<[string, string[], { max?: number; total?: number }, string]>([
    ['no names', [], {}, ''],
    ['one name', ['a'], {}, 'a'],
    ['all names when none is counted', ['a', 'b', 'c'], {}, 'a, b, c'],
    ['as many names as the cap', ['a', 'b'], { max: 2 }, 'a, b'],
    ['names beyond the cap counted', ['a', 'b', 'c', 'd'], { max: 2 }, 'a, b and 2 more'],
    ['a total beyond the names given counted', ['a', 'b'], { total: 5 }, 'a, b and 3 more'],
    ['both: the cap, then the total', ['a', 'b', 'c'], { max: 1, total: 4 }, 'a and 3 more'],
    ['a total below the names shown counts nothing', ['a', 'b'], { total: 1 }, 'a, b'],
  ])('%s', (_name, names, options, text) => {
    expect(nameList(names, options)).toBe(text);
  });
});
