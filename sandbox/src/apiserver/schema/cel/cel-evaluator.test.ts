import { evaluate } from './cel-evaluator';
import { CelSyntaxError, parseCel } from './cel-parser';
import { CelEvalError, type CelValue, jsonToCel } from './cel-values';

const SELF = {
  name: 'room-1',
  replicas: 3,
  ratio: 0.5,
  tags: ['a', 'b', 'c'],
  labels: { app: 'game', tier: 'web' },
  ports: [
    { name: 'http', port: 80 },
    { name: 'grpc', port: 9090 },
  ],
  created: '2024-01-02T03:04:05Z',
  timeout: '1m30s',
};
const SHAPE = {
  intOrString: false,
  properties: new Map([
    ['ratio', { type: 'number', intOrString: false }],
    ['created', { type: 'string', format: 'date-time', intOrString: false }],
    ['timeout', { type: 'string', format: 'duration', intOrString: false }],
  ]),
};

function run(expr: string): CelValue {
  const self = jsonToCel(SELF, SHAPE);
  return evaluate(parseCel(expr), { lookup: (n) => (n === 'self' ? self : undefined) });
}

const truths: string[] = [
  // literals and arithmetic
  '1 + 2 * 3 == 7',
  '(1 + 2) * 3 == 9',
  '7 / 2 == 3',
  '7 % 3 == 1',
  '-7 / 2 == -3',
  '1.5 + 1.5 == 3.0',
  '2 == 2.0',
  '1u + 2u == 3u',
  "'ab' + 'cd' == 'abcd'",
  '[1, 2] + [3] == [1, 2, 3]',
  '-(-3) == 3',
  '0x10 == 16',
  '"\\x41\\u0042" == "AB"',
  "r'\\d' == '\\\\d'",
  "'''multi\nline''' == 'multi\\nline'",
  // comparison
  '1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2',
  "'abc' < 'abd'",
  '1 < 2.5',
  'false < true',
  // logic, ternary
  '!false',
  'true || false',
  'self.replicas > 1 ? true : false',
  '(self.replicas > 5 ? "big" : "small") == "small"',
  // error absorption
  '!(false && self.missing == 1)',
  '!(self.missing == 1 && false)',
  'true || self.missing == 1',
  'self.missing == 1 || true',
  // field selection, has, optional
  "self.name == 'room-1'",
  'has(self.name)',
  '!has(self.missing)',
  'has(self.labels.app)',
  "self.labels['tier'] == 'web'",
  "self.?missing.orValue('dflt') == 'dflt'",
  "self.?name.orValue('dflt') == 'room-1'",
  'self.?missing.hasValue() == false',
  "self.labels[?'app'].value() == 'game'",
  'optional.of(1).hasValue() && !optional.none().hasValue()',
  'self.ports[1].port == 9090',
  // size and in
  'size(self.tags) == 3',
  'self.tags.size() == 3',
  "size('héllo') == 5",
  'size(self.labels) == 2',
  "'b' in self.tags",
  "'app' in self.labels",
  "!('zzz' in self.labels)",
  '2 in [1, 2, 3]',
  // macros
  "self.tags.all(t, t.size() == 1)",
  "self.tags.exists(t, t == 'b')",
  "self.tags.exists_one(t, t == 'b')",
  "!self.tags.exists_one(t, t != 'b')",
  "self.ports.map(p, p.port) == [80, 9090]",
  "self.ports.map(p, p.port > 100, p.name) == ['grpc']",
  "self.ports.filter(p, p.port < 100).size() == 1",
  "self.labels.all(k, k.size() > 2)",
  "self.labels.exists(k, self.labels[k] == 'web')",
  "self.ports.all(p, self.ports.exists_one(q, q.name == p.name))",
  // list and map literals
  "{'a': 1, 'b': 2}['b'] == 2",
  "{'a': 1} == {'a': 1}",
  '[1, [2, 3]] == [1, [2, 3]]',
  "size({}) == 0",
  // strings
  "self.name.matches('^room-[0-9]+$')",
  "matches(self.name, 'room')",
  "'ABC'.matches('(?i)^abc$')",
  "self.name.startsWith('room')",
  "self.name.endsWith('-1')",
  "self.name.contains('om-')",
  "'Hello'.lowerAscii() == 'hello'",
  "'hello'.upperAscii() == 'HELLO'",
  "'  x '.trim() == 'x'",
  "'a,b,c'.split(',') == ['a', 'b', 'c']",
  "['a', 'b'].join('-') == 'a-b'",
  "'aXbX'.replace('X', '.') == 'a.b.'",
  "'hello'.indexOf('l') == 2",
  "'hello'.lastIndexOf('l') == 3",
  "'hello'.substring(1, 3) == 'el'",
  "'hello'.charAt(1) == 'e'",
  // conversions and types
  "int('42') == 42",
  'int(3.9) == 3',
  "string(42) == '42'",
  "string(true) == 'true'",
  'double(3) == 3.0',
  "double('1.5') == 1.5",
  "uint(3) == 3u",
  'type(1) == int',
  'type(1.0) == double',
  "type('a') == string",
  'type([]) == list',
  'type({}) == map',
  'type(null) == null_type',
  'type(self.replicas) == int',
  'type(self.ratio) == double',
  "bool('true')",
  'dyn(1) == 1',
  // durations and timestamps
  "duration('1m30s') == duration('90s')",
  "self.timeout == duration('90s')",
  "duration('1h') > duration('59m')",
  "self.created < timestamp('2025-01-01T00:00:00Z')",
  "self.created + duration('24h') == timestamp('2024-01-03T03:04:05Z')",
  "timestamp('2024-01-02T00:00:00Z') - timestamp('2024-01-01T00:00:00Z') == duration('24h')",
  "self.created.getFullYear() == 2024",
  // lists extension
  '[1, 2, 3].isSorted()',
  '[1, 2, 3].sum() == 6',
  '[3, 1, 2].min() == 1',
  '[3, 1, 2].max() == 3',
  "['x', 'y'].indexOf('y') == 1",
  // Kubernetes quantities
  "isQuantity('1.5Gi') && !isQuantity('1.5Gb')",
  "quantity('1') == quantity('1000m')",
  "quantity('1Gi').isGreaterThan(quantity('1G'))",
  "quantity('500m').isLessThan(quantity('1'))",
  "quantity('2k').compareTo(quantity('2000')) == 0",
  "quantity('1.5').isInteger() == false && quantity('2e3').asInteger() == 2000",
  "quantity('1Ki').asInteger() == 1024",
  "quantity('1').add(quantity('500m')) == quantity('1.5')",
  "quantity('1').sub(2).sign() == -1",
  "quantity('250m').asApproximateFloat() == 0.25",
  // null
  'null == null',
  "self.name != null",
];

describe('CEL evaluator: expressions that must be true', () => {
  it.each(truths)('%s', (expr) => {
    expect(run(expr)).toBe(true);
  });
});

const runtimeErrors: [string, RegExp][] = [
  ['self.missing == 1', /no such key: missing/],
  ["self.labels['nope'] == 'x'", /no such key: nope/],
  ['self.tags[5] == "x"', /index out of bounds: 5/],
  ['1 / 0 == 1', /division by zero/],
  ['1 % 0 == 1', /modulus by zero/],
  ['9223372036854775807 + 1 > 0', /integer overflow/],
  ['1 + 1.0 == 2.0', /no such overload/],
  ["'a' < 1", /no such overload/],
  ["int('abc') == 1", /type conversion error/],
  ['self.name.foo == 1', /does not support field selection/],
  ['nosuchfn(1)', /undeclared reference to 'nosuchfn'/],
  ['nosuchvar == 1', /undeclared reference to 'nosuchvar'/],
  ["'x'.matches('[') ", /invalid regular expression/],
  ['optional.none().value() == 1', /optional.none\(\) dereference/],
  ['self.tags.all(t, t.missing)', /does not support field selection/],
  ['1 ? 2 : 3', /no such overload/],
  ["quantity('abc') == quantity('1')", /quantities must match/],
  ["quantity('1.5').asInteger() == 1", /cannot convert value to integer/],
];

describe('CEL evaluator: runtime errors are CelEvalError', () => {
  it.each(runtimeErrors)('%s', (expr, message) => {
    expect(() => run(expr)).toThrow(CelEvalError);
    expect(() => run(expr)).toThrow(message);
  });
});

const syntaxErrors = ['1 +', 'self.', '(1', "'unterminated", '[1, 2', '{1: }', 'a ? b', '1 2', 'self.#', 'if', '"\\q"'];

describe('CEL parser: syntax errors', () => {
  it.each(syntaxErrors)('%s', (expr) => {
    expect(() => parseCel(expr)).toThrow(CelSyntaxError);
  });

  it('rejects absurdly deep nesting instead of overflowing the stack', () => {
    expect(() => parseCel('('.repeat(5000) + '1' + ')'.repeat(5000))).toThrow(CelSyntaxError);
  });
});
