/**
 * docs/maestro-compatibility.md is tested: every row of its tables names the test that proves
 * Roomkeeper's behaviour, as `path` › "exact test title" (several joined by <br>), and each of
 * those files exists and holds that title as a test's title (or, for a table-driven test, as the
 * name of one of its rows). A renamed or deleted test, or a row added without a test, fails here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { escapeRegExp } from '../support/regexp';

const REPO = path.resolve(__dirname, '../..');
const DOC = 'docs/maestro-compatibility.md';
const MATCHES = ['same', 'deliberate', 'open'] as const;

export interface TestRef { file: string; title: string }
export interface DocRow { line: number; cells: string[]; roomkeeperCol: number; match: string; refs: TestRef[]; problems: string[] }

/** The cells of a Markdown table line (`\|` inside a cell is not a separator). */
function cellsOf(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim());
}

/** A Test cell: one or more `path` › "title", joined by <br>. */
export function parseTestCell(cell: string): { refs: TestRef[]; problems: string[] } {
  const refs: TestRef[] = [];
  const problems: string[] = [];
  for (const part of cell.split('<br>').map((p) => p.trim())) {
    const m = /^`([^`]+)` › "(.+)"$/.exec(part);
    if (!m) {
      problems.push(part === '' ? 'no test named' : `not a test reference (\`path\` › "title"): ${part}`);
      continue;
    }
    refs.push({ file: m[1]!, title: m[2]!.replace(/\\"/g, '"').replace(/\\\|/g, '|') });
  }
  return { refs, problems };
}

/** Every data row of every table whose header has Match and Test columns. */
export function parseDoc(text: string): { rows: DocRow[]; problems: string[] } {
  const lines = text.split('\n');
  const rows: DocRow[] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('|') || !lines[i + 1]?.startsWith('|---')) continue;
    const header = cellsOf(lines[i]!);
    const testCol = header.indexOf('Test');
    const matchCol = header.indexOf('Match');
    const roomkeeperCol = header.indexOf('Roomkeeper');
    if (testCol < 0 || matchCol < 0) problems.push(`line ${i + 1}: a table without Match and Test columns`);
    let j = i + 2;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++) {
      const cells = cellsOf(lines[j]!);
      const row: DocRow = { line: j + 1, cells, roomkeeperCol, match: cells[matchCol] ?? '', refs: [], problems: [] };
      if (cells.length !== header.length) row.problems.push(`${cells.length} cells for ${header.length} columns`);
      if (!(MATCHES as readonly string[]).includes(row.match)) row.problems.push(`Match is "${row.match}", not one of ${MATCHES.join(', ')}`);
      const parsed = parseTestCell(cells[testCol] ?? '');
      row.refs = parsed.refs;
      row.problems.push(...parsed.problems);
      rows.push(row);
    }
    i = j;
  }
  return { rows, problems };
}

/**
 * Whether `source` holds `title` as a test's title: the first argument of it(…)/test(…) or of the
 * call it.each(…) returns; in a table-driven file, also a row's name (`['name', …` or `name: 'name'`).
 */
export function holdsTestTitle(source: string, title: string): boolean {
  const quoted = [
    `'${title.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`,
    `"${title.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`,
    `\`${title.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``,
  ];
  // Comment lines do not count: a test mentioned in a comment is not a test.
  const code = source.split('\n').filter((l) => !/^\s*(?:\/\/|\/?\*)/.test(l)).join('\n');
  const tableDriven = /\b(?:it|test)\.each\s*\(/.test(code);
  const before = tableDriven ? String.raw`(?:\b(?:it|test)\(|\)\(|\[|\bname:)` : String.raw`(?:\b(?:it|test)\(|\)\()`;
  return quoted.some((q) => new RegExp(`${before}\\s*${escapeRegExp(q)}`).test(code));
}

/** The problems of one reference: a missing file, or a title the file does not hold. */
export function checkRef(ref: TestRef, readFile: (file: string) => string | undefined): string | undefined {
  if (!/\.test\.ts$/.test(ref.file)) return `${ref.file} is not a test file`;
  const source = readFile(ref.file);
  if (source === undefined) return `${ref.file} does not exist`;
  if (!holdsTestTitle(source, ref.title)) return `${ref.file} has no test titled "${ref.title}"`;
  return undefined;
}

const readRepoFile = (file: string): string | undefined => {
  const full = path.resolve(REPO, file);
  if (!full.startsWith(REPO + path.sep) || !fs.existsSync(full)) return undefined;
  return fs.readFileSync(full, 'utf8');
};

describe(DOC, () => {
  const { rows, problems } = parseDoc(fs.readFileSync(path.join(REPO, DOC), 'utf8'));

  it('has tables of rows, each with a Match and at least one test', () => {
    expect(problems).toEqual([]);
    // Every section's table is found (a parser that found none would pass everything below).
    expect(rows.length).toBeGreaterThan(80);
    const bad = rows.filter((r) => r.problems.length > 0 || r.refs.length === 0)
      .map((r) => `line ${r.line}: ${r.refs.length === 0 ? 'no test; ' : ''}${r.problems.join('; ')}`);
    expect(bad).toEqual([]);
  });

  it('names only test files that exist and tests they hold', () => {
    const bad = rows.flatMap((r) => r.refs.map((ref) => checkRef(ref, readRepoFile)).filter((p): p is string => p !== undefined).map((p) => `line ${r.line}: ${p}`));
    expect(bad).toEqual([]);
  });

  it('says why for each deliberate difference, and lists each open one under Open differences', () => {
    const text = fs.readFileSync(path.join(REPO, DOC), 'utf8');
    const open = text.slice(text.indexOf('## Open differences'));
    expect(open.length).toBeGreaterThan(0);
    // Roomkeeper's column of a deliberate row is more than a word or two: it has to say why.
    const terse = rows.filter((r) => r.match === 'deliberate' && (r.cells[r.roomkeeperCol] ?? '').split(/\s+/).length < 8).map((r) => `line ${r.line}`);
    expect(terse).toEqual([]);
    // The section lists the open differences, or says there is none when no row is open.
    const listed = /^\d+\. /m.test(open);
    expect(listed || /^None\b/m.test(open)).toBe(true);
    expect(listed).toBe(rows.some((r) => r.match === 'open'));
  });
});

describe('the checker itself', () => {
  const files: Record<string, string> = {
    'a.test.ts': "it('plain title', () => {});\nit('Maestro\\'s title', () => {});\nit.each([[1]])('answers %s', () => {});\n",
    'b.test.ts': "const cases = [['row one', 1]];\nit.each(cases)('%s', () => {});\nconst named = [{ name: 'row two' }];\n",
    'c.test.ts': "// it('commented mention')\nconst s = 'loose string';\n",
  };
  const read = (f: string) => files[f];
  const doc = (test: string) => `| Point | Roomkeeper | Match | Test |\n|---|---|---|---|\n| x | y | same | ${test} |\n`;

  it.each([
    ['`a.test.ts` › "plain title"'],
    ['`a.test.ts` › "Maestro\'s title"'],
    ['`a.test.ts` › "answers %s"'],
    ['`b.test.ts` › "row one"'],
    ['`b.test.ts` › "row two"'],
    ['`a.test.ts` › "plain title"<br>`b.test.ts` › "row one"'],
  ])('accepts %s', (cell) => {
    const { rows } = parseDoc(doc(cell));
    expect(rows[0]!.problems).toEqual([]);
    expect(rows[0]!.refs.map((r) => checkRef(r, read))).toEqual(rows[0]!.refs.map(() => undefined));
  });

  it.each([
    ['', /no test named/],
    ['a.test.ts plain title', /not a test reference/],
    ['`a.test.ts` › "plain title" and more', /not a test reference/],
  ])('refuses the Test cell %p', (cell, problem) => {
    expect(parseDoc(doc(cell)).rows[0]!.problems.join('\n')).toMatch(problem);
  });

  it.each([
    [{ file: 'missing.test.ts', title: 'plain title' }, /does not exist/],
    [{ file: 'a.test.ts', title: 'plain' }, /has no test titled/],
    [{ file: 'c.test.ts', title: 'commented mention' }, /has no test titled/],
    [{ file: 'c.test.ts', title: 'loose string' }, /has no test titled/],
    [{ file: 'README.md', title: 'x' }, /not a test file/],
  ])('refuses the reference %j', (ref, problem) => {
    expect(checkRef(ref, read)).toMatch(problem);
  });

  it('refuses a row whose Match is not one of same, deliberate, open', () => {
    const { rows } = parseDoc('| Point | Match | Test |\n|---|---|---|\n| x | maybe | `a.test.ts` › "plain title" |\n');
    expect(rows[0]!.problems.join('\n')).toMatch(/Match is "maybe"/);
  });
});
