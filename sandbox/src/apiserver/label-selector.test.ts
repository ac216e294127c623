import { labelSelectorFromObject, labelSelectorToString, parseLabelSelector } from './label-selector';

describe('parseLabelSelector', () => {
  const labels = { app: 'web', tier: 'front', version: '3' };

  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web, db)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['missing notin (db)', true],
    ['tier', true],
    ['missing', false],
    ['!missing', true],
    ['!tier', false],
    ['version>2', true],
    ['version<2', false],
    ['app=web,tier in (front),!missing', true],
    ['app=web,tier=back', false],
  ])('%s -> %s', (selector, expected) => {
    expect(parseLabelSelector(selector)(labels)).toBe(expected);
  });

  it('treats missing labels as empty', () => {
    expect(parseLabelSelector('app')(undefined)).toBe(false);
    expect(parseLabelSelector('!app')(undefined)).toBe(true);
  });

  it('throws a 400 on bad syntax', () => {
    expect(() => parseLabelSelector('a in b')).toThrow(expect.objectContaining({ code: 400 }) as Error);
  });
});

describe('structured label selectors', () => {
  const sel = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }, { key: 'x', operator: 'DoesNotExist' }] };

  it('matches like the string form', () => {
    expect(labelSelectorFromObject(sel)({ app: 'web', tier: 'a' })).toBe(true);
    expect(labelSelectorFromObject(sel)({ app: 'web', tier: 'a', x: '1' })).toBe(false);
    expect(labelSelectorToString(sel)).toBe('app=web,tier in (a,b),!x');
    expect(parseLabelSelector(labelSelectorToString(sel))({ app: 'web', tier: 'b' })).toBe(true);
  });
});
