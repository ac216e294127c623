/**
 * The README is tested: every ```sh block of its walkthrough runs, in order, in one bash shell
 * against a real `npm start` that this test launches, and every answer the README shows is
 * compared with the real answer by shape.
 *
 * What runs: every ```sh block of README.md, top to bottom, except
 *  - a block right after the marker line `<!-- readme-test: skip (reason) -->` (commands meant
 *    for another machine or another moment: `npm ci`/`npm test`, `npm start` itself, Helm on a
 *    real cluster, image builds...; the reason is written in the marker), and
 *  - the blocks of the sections in SKIPPED_SECTIONS below (the commands of the test suite and of
 *    the benchmarks themselves).
 *
 * How a block runs: each command (a line, with `\` continuations) is written to one long-lived
 * `bash` whose environment points the README's setup block at this test's instance
 * (ROOMKEEPER_STATE_DIR, ROOMKEEPER_GATEWAY_PORT, ROOMKEEPER_ROOMS_PORT,
 * ROOMKEEPER_OPERATOR_PORT, which the setup block honours), so variables and the kubectl alias
 * carry from one block to the next as they do in a newcomer's second shell. A command that exits
 * non-zero fails the test, unless the README shows its answer and the answer matches (an error the
 * README documents, such as `kubectl apply -f sandbox/examples/bad.yaml`).
 *
 * What is compared (the README's "answer" of a command):
 *  - comment lines right after a command (or at its end) that start with `{` or `[`: JSON, which
 *    may continue on the following `#` lines; text after the JSON (like `(409)`) is a note;
 *  - a ```json or ```text block right after the ```sh block: the answer of its last command.
 * An HTTP status noted after the JSON (`{…}   (409)`) is checked too, for a lone curl (the test
 * adds `-w` to print it). Comment lines that start with anything else are prose and not compared: the README uses them for
 * answers that depend on timing (`# if it was still pending: {}`).
 *
 * JSON is compared by shape: the same keys (a `…` in an object allows more keys), the same types,
 * arrays empty where the README's are empty and as long where the README lists every element
 * (`…` among the elements allows any number, and its elements' strings count by type only, as the
 * elements differ), `code` and booleans equal, strings equal once ids,
 * timestamps, room names, hosts and ports are normalised (a string with `…` only needs to be a
 * string), other numbers by type only. Text is compared line by line after the same normalisation
 * plus ages: table headers and lines with a `:` exactly, the same number of lines (unless a `…`
 * line), a `NAME=value…` line by its name, and each other line by its number of columns and its
 * first column.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { discoverKubeConfig, makeKubeClients, type KubeClients } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { freePorts } from '../support/ports';
import { deleteSchedulersCreatedSince, REPO_ROOT } from '../support/stack';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

/** Sections whose blocks never run here, and why. */
const SKIPPED_SECTIONS: Record<string, string> = {
  Testing: 'the commands of the test suite itself (and the lead edits this section)',
  Benchmarks: 'the benchmark run takes minutes and is not part of npm test',
};

const SKIP_MARKER = /^<!--\s*readme-test:\s*skip\s*\((.+)\)\s*-->\s*$/;
const COMMAND_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------------------------------------
// README parsing

export interface Step {
  /** The command as bash gets it (continuations kept). */
  command: string;
  /** The README line of the command (1-based), for messages. */
  line: number;
  answer?: { kind: 'json' | 'text'; text: string };
}

export interface Block { line: number; section: string; steps: Step[] }

export interface ParsedReadme { blocks: Block[]; skipped: { line: number; reason: string }[] }

/** Splits `cmd   # note` into the command and the comment, outside quotes. */
function splitInlineComment(line: string): [string, string | undefined] {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return [line.slice(0, i).trimEnd(), line.slice(i + 1).trim()];
  }
  return [line, undefined];
}

function stepsOf(lines: string[], firstLine: number): Step[] {
  const steps: Step[] = [];
  let current: Step | undefined;
  let json: string | undefined;
  const flushJson = (): void => {
    if (current && json !== undefined) current.answer = { kind: 'json', text: json };
    json = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (raw.trim() === '') { flushJson(); continue; }
    if (/^\s*#/.test(raw)) {
      const comment = raw.replace(/^\s*#\s?/, '');
      if (json !== undefined && /^\s/.test(comment)) { json += ` ${comment.trim()}`; continue; }
      flushJson();
      if (current && !current.answer && /^[{[]/.test(comment.trim())) json = comment.trim();
      continue;
    }
    flushJson();
    let command = raw;
    const line = firstLine + i;
    while (command.endsWith('\\') && i + 1 < lines.length) command += `\n${lines[++i] as string}`;
    const [code, comment] = splitInlineComment(command);
    current = { command: code, line };
    steps.push(current);
    if (comment !== undefined && /^[{[]/.test(comment)) json = comment;
  }
  flushJson();
  return steps;
}

export function parseReadme(markdown: string): ParsedReadme {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  const skipped: { line: number; reason: string }[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const heading = /^## (.+)$/.exec(line);
    if (heading) section = (heading[1] as string).trim();
    if (!/^```sh\s*$/.test(line)) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] as string); i++) body.push(lines[i] as string);
    const marker = SKIP_MARKER.exec(lines[start - 1] ?? '');
    if (marker) { skipped.push({ line: start + 1, reason: marker[1] as string }); continue; }
    if (section in SKIPPED_SECTIONS) { skipped.push({ line: start + 1, reason: SKIPPED_SECTIONS[section] as string }); continue; }
    const block: Block = { line: start + 1, section, steps: stepsOf(body, start + 2) };
    // A ```json / ```text block right after the ```sh block answers its last command.
    const next = /^```(json|text)\s*$/.exec(lines[i + 1] ?? '');
    if (next) {
      const answer: string[] = [];
      let j = i + 2;
      for (; j < lines.length && !/^```\s*$/.test(lines[j] as string); j++) answer.push(lines[j] as string);
      const last = block.steps[block.steps.length - 1];
      if (last) last.answer = { kind: next[1] as 'json' | 'text', text: answer.join('\n') };
      i = j;
    }
    blocks.push(block);
  }
  return { blocks, skipped };
}

// ---------------------------------------------------------------------------------------------
// Shapes

const ELLIPSIS = Symbol('…');
type Loose = string | number | boolean | null | typeof ELLIPSIS | Loose[] | { [key: string]: Loose };

/** Parses the README's JSON, which may hold `…` as a member, an element or inside a string. */
export function parseLooseJson(text: string): { value: Loose; rest: string } {
  let pos = 0;
  const ws = (): void => { while (pos < text.length && /\s/.test(text[pos] as string)) pos++; };
  const fail = (what: string): never => { throw new Error(`README JSON: ${what} at ${pos}: ${text.slice(Math.max(0, pos - 30), pos + 30)}`); };
  const value = (): Loose => {
    ws();
    const c = text[pos];
    if (c === '…') { pos++; return ELLIPSIS; }
    if (c === '{') {
      pos++;
      const obj: { [key: string]: Loose } = {};
      for (;;) {
        ws();
        if (text[pos] === '}') { pos++; return obj; }
        if (text[pos] === '…') { pos++; obj['…'] = ELLIPSIS; } else {
          const key = value();
          if (typeof key !== 'string') fail('key');
          ws();
          if (text[pos] !== ':') fail('expected :');
          pos++;
          obj[key as string] = value();
        }
        ws();
        if (text[pos] === ',') pos++;
        else if (text[pos] !== '}') fail('expected , or }');
      }
    }
    if (c === '[') {
      pos++;
      const arr: Loose[] = [];
      for (;;) {
        ws();
        if (text[pos] === ']') { pos++; return arr; }
        arr.push(value());
        ws();
        if (text[pos] === ',') pos++;
        else if (text[pos] !== ']') fail('expected , or ]');
      }
    }
    if (c === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(pos));
      if (!m) return fail('string');
      pos += m[0].length;
      return JSON.parse(m[0]) as string;
    }
    const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(pos));
    if (!m) return fail('value');
    pos += m[0].length;
    return JSON.parse(m[0]) as Loose;
  };
  const v = value();
  return { value: v, rest: text.slice(pos) };
}

/** Values that differ on every run, replaced by placeholders. */
export function normalise(s: string): string {
  return s
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<time>')
    .replace(/\b((?:space|busy)-arena)-[a-z0-9]{5}\b/g, '$1-<room>')
    .replace(/\b127\.0\.0\.\d+\b/g, '<host>')
    .replace(/<host>:\d+/g, '<host>:<port>')
    .replace(/\b4[01]\d{3}\b/g, '<port>');
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** Every difference between the README's answer and the real one (empty: same shape). */
export function shapeDiff(expected: Loose, actual: unknown, at = '$', loose = false): string[] {
  if (expected === ELLIPSIS) return [];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${at}: README shows an array, got ${typeName(actual)}`];
    const shown = expected.filter((e) => e !== ELLIPSIS);
    const open = shown.length !== expected.length;
    if (shown.length === 0) return open || actual.length === 0 ? [] : [`${at}: README shows [], got ${actual.length} elements`];
    if (!open && actual.length !== shown.length) return [`${at}: README shows ${shown.length} elements, got ${actual.length}`];
    if (actual.length === 0) return [`${at}: README shows elements, got []`];
    const out: string[] = [];
    actual.forEach((a, i) => {
      // In a list the README shortens with `…`, elements differ: their strings count by type.
      const diffs = shown.map((e) => shapeDiff(e, a, `${at}[${i}]`, loose || open));
      if (!diffs.some((d) => d.length === 0)) out.push(...(diffs.sort((x, y) => x.length - y.length)[0] as string[]));
    });
    return out;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${at}: README shows an object, got ${typeName(actual)}`];
    const out: string[] = [];
    const open = '…' in expected;
    const real = actual as Record<string, unknown>;
    for (const key of Object.keys(expected)) {
      if (key === '…') continue;
      if (!(key in real)) out.push(`${at}.${key}: README shows it, the answer has no such key`);
      else out.push(...shapeDiff(expected[key] as Loose, real[key], `${at}.${key}`, loose));
    }
    if (!open) for (const key of Object.keys(real)) if (!(key in expected)) out.push(`${at}.${key}: in the answer, not in the README (add it or a …)`);
    return out;
  }
  if (typeName(expected) !== typeName(actual)) return [`${at}: README shows ${typeName(expected)} ${JSON.stringify(expected)}, got ${typeName(actual)} ${JSON.stringify(actual)}`];
  if (typeof expected === 'boolean' || at.endsWith('.code')) {
    return expected === actual ? [] : [`${at}: README shows ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (typeof expected === 'string' && !loose && !expected.includes('…') && normalise(expected) !== normalise(actual as string)) {
    return [`${at}: README shows ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  return [];
}

function normaliseText(s: string): string {
  return normalise(s).replace(/\b\d+(?:s|m\d*s?|h\d*m?)$/, '<age>').replace(/\s+/g, ' ').trim();
}

/** Text answers: headers exactly, line count, and each line's columns and first column. */
export function textDiff(expected: string, actual: string): string[] {
  const exp = expected.split('\n').map(normaliseText).filter((l) => l !== '');
  const act = actual.split('\n').map(normaliseText).filter((l) => l !== '' && !l.startsWith('Warning:'));
  const open = exp.some((l) => l === '…');
  const shown = exp.filter((l) => l !== '…');
  if (!open && shown.length !== act.length) return [`README shows ${shown.length} lines, got ${act.length}:\n${actual}`];
  const out: string[] = [];
  let a = 0;
  for (const line of shown) {
    const isHeader = /^[A-Z][A-Z ]+$/.test(line);
    // With `…`, lines the README leaves out are skipped until the next one that fits.
    // `NAME=value…`: the value differs (a token); the name must be there.
    const cut = line.endsWith('…') && line.includes('=') ? `${line.split('=')[0] as string}=` : undefined;
    const fits = (got: string | undefined): boolean => got !== undefined && (cut ? got.startsWith(cut) : isHeader || line.includes(':')
      ? got === line
      : got.split(' ').length === line.split(' ').length && got.split(' ')[0] === line.split(' ')[0]);
    while (open && a < act.length && !fits(act[a])) a++;
    if (!fits(act[a])) out.push(`README line ${JSON.stringify(line)} does not match ${JSON.stringify(act[a])}`);
    a++;
  }
  return out;
}

/** The HTTP status the README notes after a JSON answer, as in `{…}   (409)`. */
export function notedStatus(step: Step): number | undefined {
  if (step.answer?.kind !== 'json') return undefined;
  const m = /^\s*\((\d{3})\)/.exec(parseLooseJson(step.answer.text).rest);
  return m ? Number(m[1]) : undefined;
}

const STATUS_MARK = '__readme_http_status__';

/** A single curl whose answer notes a status also prints the status, so it is checked too. */
function withStatus(step: Step): string {
  if (notedStatus(step) === undefined || !/^curl /.test(step.command) || /[|;&>]/.test(step.command)) return step.command;
  return `${step.command} -w '\n${STATUS_MARK} %{http_code}'`;
}

function answerDiff(step: Step, output: string): string[] {
  const answer = step.answer;
  if (!answer) return [];
  if (answer.kind === 'text') return textDiff(answer.text, output);
  const out: string[] = [];
  const status = new RegExp(`\\n?${STATUS_MARK} (\\d+)$`).exec(output);
  if (status) {
    output = output.slice(0, status.index);
    if (Number(status[1]) !== notedStatus(step)) out.push(`README notes HTTP ${String(notedStatus(step))}, got ${status[1]!}`);
  }
  return [...out, ...jsonDiff(answer.text, output)];
}

function jsonDiff(answerText: string, output: string): string[] {
  const expected = parseLooseJson(answerText).value;
  let actual: unknown;
  try {
    actual = JSON.parse(output);
  } catch {
    return [`README shows JSON, got: ${output.slice(0, 500)}`];
  }
  return shapeDiff(expected, actual);
}

// ---------------------------------------------------------------------------------------------
// Running

/** One bash, fed a command at a time; output up to a marker line is the command's output. */
class Shell {
  private out = '';
  private readonly bash: ChildProcess;
  private n = 0;

  constructor(env: NodeJS.ProcessEnv) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.bash.stdout?.on('data', (d: Buffer) => (this.out += d.toString()));
    this.bash.stderr?.on('data', (d: Buffer) => (this.out += d.toString()));
    // As in an interactive shell: aliases work and stderr shows with stdout.
    this.bash.stdin?.write('shopt -s expand_aliases\nexec 2>&1\n');
  }

  async run(command: string): Promise<{ output: string; code: number }> {
    const marker = `__readme_step_${++this.n}__`;
    this.out = '';
    this.bash.stdin?.write(`${command}\nprintf '\\n${marker} %s\\n' "$?"\n`);
    const re = new RegExp(`\\n?${marker} (\\d+)\\n`);
    const m = await waitFor(() => re.exec(this.out), { timeoutMs: COMMAND_TIMEOUT_MS, intervalMs: 50, message: `command did not finish: ${command}\noutput so far:\n${this.out}` });
    return { output: this.out.slice(0, m.index).trim(), code: Number(m[1]) };
  }

  stop(): void {
    this.bash.stdin?.end();
    this.bash.kill('SIGKILL');
  }
}

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
/** A cluster to run the walkthrough on instead of the sandbox (the real tier sets it: test/real-apiserver/readme-walkthrough.test.ts). */
const CLUSTER = process.env.E2E_KUBECONFIG;

/** The test's own clients of that cluster (to see and remove what the walkthrough created), as the components load a kubeconfig. */
function clusterClients(kubeconfig: string): KubeClients {
  const found = discoverKubeConfig({ E2E_KUBECONFIG: kubeconfig });
  if (!found) throw new Error(`E2E_KUBECONFIG names ${kubeconfig}, which does not exist`);
  return makeKubeClients(found.kc, { qps: 50, burst: 100 });
}

describe('README parsing', () => {
  test('finds the walkthrough, skips only marked blocks, and reads answers', () => {
    const { blocks, skipped } = parseReadme(README);
    expect(blocks.length).toBeGreaterThan(10);
    expect(skipped.every((s) => s.reason.trim().length > 0)).toBe(true);
    const answered = blocks.flatMap((b) => b.steps).filter((s) => s.answer);
    expect(answered.length).toBeGreaterThan(20);
    // Every README JSON answer parses (a typo in one would otherwise hide a comparison).
    for (const s of answered) if (s.answer?.kind === 'json') expect(() => parseLooseJson(s.answer?.text as string)).not.toThrow();
    // Error answers note their HTTP status, which the run checks.
    expect(answered.filter((s) => notedStatus(s) !== undefined).map((s) => notedStatus(s))).toEqual(expect.arrayContaining([400, 401, 404, 409]));
  });

  test('shape comparison catches a changed key, type or message, and ignores per-run values', () => {
    const readme = parseLooseJson('{"scheduler":{"name":"space-arena","spec":{"version":"v1.0.0", …},"createdAt":"2026-11-21T12:53:39Z"},"operationId":"9e269f70-a2c5-5408-8cf5-3a9864a5af0f"}').value;
    const real = { scheduler: { name: 'space-arena', spec: { version: 'v1.0.0', more: 1 }, createdAt: '2026-11-25T00:00:00Z' }, operationId: '00000000-0000-0000-0000-000000000000' };
    expect(shapeDiff(readme, real)).toEqual([]);
    expect(shapeDiff(readme, { ...real, extra: 1 })).toHaveLength(1);
    expect(shapeDiff(readme, { ...real, operationId: 7 })).toHaveLength(1);
    expect(shapeDiff(parseLooseJson('{"code":6,"message":"name already exists"}').value, { code: 6, message: 'other' })).toHaveLength(1);
    expect(textDiff('NAME   STATUS\nspace-arena-k2vs0   ready', 'NAME STATUS\nspace-arena-zzzzz   occupied')).toEqual([]);
    expect(textDiff('NAME   STATUS\nspace-arena-k2vs0   ready', 'NAME STATE\nspace-arena-zzzzz   occupied')).toHaveLength(1);
  });
});

test(`every command of the README walkthrough runs against npm start${CLUSTER ? ' on a cluster of one\'s own (E2E_KUBECONFIG)' : ''} and answers what the README shows`, async () => {
  const { blocks } = parseReadme(README);
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-readme-'));
  const [gatewayPort, roomsPort, operatorPort] = await freePorts(3) as [number, number, number];
  const ports = {
    ROOMKEEPER_STATE_DIR: state,
    ROOMKEEPER_GATEWAY_PORT: String(gatewayPort),
    ROOMKEEPER_ROOMS_PORT: String(roomsPort),
    ROOMKEEPER_OPERATOR_PORT: String(operatorPort),
  };
  // No cluster but the one meant: not the caller's KUBECONFIG, E2E_* or in-cluster account.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries({ ...process.env, ...ports })
    .filter(([name]) => !name.startsWith('E2E_') && name !== 'KUBECONFIG' && name !== 'KUBERNETES_SERVICE_HOST'));
  // "On a cluster of your own": KUBECONFIG set in both shells, as the README says. A Lease of
  // its own, as a Helm release's operator may hold the default one.
  const clients = CLUSTER ? clusterClients(CLUSTER) : undefined;
  const cluster = clients ? new RoomkeeperApi(clients.custom) : undefined;
  if (CLUSTER) Object.assign(env, { KUBECONFIG: CLUSTER, ROOMKEEPER_LEASE_NAME: 'roomkeeper-readme' });
  const schedulersBefore = new Set(cluster ? (await cluster.listSchedulers()).items.map((x) => x.metadata.name as string) : []);
  toolPath('kubectl'); // the README's alias points at the unpacked kubectl
  const child = spawn('npm', ['start'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const shell = new Shell({ ...env, PATH: `${path.dirname(process.execPath)}:${env.PATH ?? ''}` });
  const failures: string[] = [];
  let ran = 0;
  try {
    // A clean clone's first `npm start` transpiles the whole tree (tsx, no cache yet) while other
    // suites load both cores: 60 s was once not enough in CI. The output is read at the deadline,
    // not when the wait begins (it was always empty in the failure message).
    await waitFor(() => out.includes('Press Ctrl-C to stop.'), { timeoutMs: 180_000, message: 'npm start came up' }).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; its output so far:\n${out}`, { cause: err });
    });
    const where = CLUSTER ? 'Kubernetes cluster from KUBECONFIG' : 'Kubernetes API (embedded sandbox)';
    if (!out.includes(where)) failures.push(`npm start did not say "${where}":\n${out}`);
    for (const block of blocks) {
      for (const step of block.steps) {
        const { output, code } = await shell.run(withStatus(step));
        ran++;
        const where = `README.md:${step.line} (${block.section}) $ ${step.command}`;
        const diffs = answerDiff(step, output);
        if (diffs.length > 0) failures.push(`${where}\n  ${diffs.join('\n  ')}\n  real answer: ${output.slice(0, 2000)}`);
        if (code !== 0 && !(step.answer && diffs.length === 0)) failures.push(`${where}\n  exited ${code}: ${output.slice(0, 2000)}`);
      }
    }
  } finally {
    shell.stop();
    // On a cluster, what the walkthrough created goes, through npm start's operator, before it stops.
    const left = cluster ? await deleteSchedulersCreatedSince(cluster, schedulersBefore) : [];
    if (left.length > 0) failures.push(`schedulers the walkthrough created, still there a minute after their deletion: ${left.join(', ')}`);
    await clients?.close();
    // npm start may have ended on its own (a crash): then the error above, with its output, is the one to see.
    if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid as number), 'SIGINT');
  }
  await exited;
  await waitFor(() => out.includes('Stopped.'), { timeoutMs: 20_000, message: `clean stop; output:\n${out}` });
  fs.rmSync(state, { recursive: true, force: true });
  expect(ran).toBeGreaterThan(40);
  expect(failures).toEqual([]);
}, 600_000);
