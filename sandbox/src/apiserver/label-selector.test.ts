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

  // Each message as kube-apiserver v1.28 sends it (test/real-apiserver/differential.test.ts compares the two).
  it.each([
    ['a===b', "unable to parse requirement: found '=', expected: identifier"],
    ['!!a', "unable to parse requirement: found '!', expected: identifier"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a==b c', "found 'c', expected: ',' or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    ['x,,y', "found ',', expected: identifier after ','"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['A B', "unable to parse requirement: found 'B', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in ((b))', "unable to parse requirement: found '(', expected: ',', ')' or identifier"],
    ['a in (b))', "found ')', expected: ',' or 'end of string'"],
    ['a>x', 'unable to parse requirement: values[0]: Invalid value: "x": for \'Gt\', \'Lt\' operators, the value must be an integer'],
    ['a in (b,-c)', 'unable to parse requirement: values[0][a]: Invalid value: "-c": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyValue\',  or \'my_value\',  or \'12345\', regex used for validation is \'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\')'],
    ['_a', 'unable to parse requirement: <nil>: Invalid value: "_a": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')'],
  ])('refuses %j with 400: %s', (selector, message) => {
    expect(() => parseLabelSelector(selector)).toThrow(expect.objectContaining({ code: 400, message }) as Error);
  });

  it.each([
    ['a=', { a: '' }, true],
    ['a!=', { a: 'x' }, true],
    ['a notin ()', {}, true],
    ['a in (b,,c)', { a: '' }, true],
    ['a in (,b)', { a: 'b' }, true],
    ['a   =   b', { a: 'b' }, true],
    ['example.com/a=b', { 'example.com/a': 'b' }, true],
  ])('reads %j as kube-apiserver does', (selector, labels, expected) => {
    expect(parseLabelSelector(selector)(labels)).toBe(expected);
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
