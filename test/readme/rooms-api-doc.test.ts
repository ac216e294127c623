/**
 * docs/rooms-api.md is the rooms API's contract for game servers in other languages. It is checked
 * here against the gateway's own `/openapi.json`: every rooms-API call has a section, each section
 * names every field of the call's body and answer and every error status, and no section
 * describes a call the gateway does not have. The curl game server it shows (also in the README)
 * is the file docs/examples/curl-game-server.sh, and that script is run against a recording
 * rooms API here.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import { AUTH, buildTestApps } from '../../api-gateway/src/testing/fixtures';
import { startPingRecorder, type PingRecorder } from '../../sandbox/src/rooms/testing/ping-recorder';
import { REPO_ROOT } from '../support/stack';
import { waitFor } from '../support/wait';

type Schema = Record<string, unknown>;
interface Operation { tags?: string[]; requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }

const read = (file: string): string => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
const DOC = read('docs/rooms-api.md');
const SCRIPT = read('docs/examples/curl-game-server.sh');

/** `## <heading>` sections of the doc, by heading. */
function sections(markdown: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of markdown.split(/^## /m).slice(1)) {
    const newline = part.indexOf('\n');
    out.set(part.slice(0, newline).trim(), part.slice(newline + 1));
  }
  return out;
}

/** Every property name in a schema, nested ones included, following $refs. */
function propertyNames(schema: Schema | undefined, components: Record<string, Schema>, seen = new Set<string>()): string[] {
  if (!schema) return [];
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    if (seen.has(name)) return [];
    seen.add(name);
    return propertyNames(components[name], components, seen);
  }
  const names: string[] = [];
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) names.push(name, ...propertyNames(sub, components, seen));
  if (schema.items) names.push(...propertyNames(schema.items as Schema, components, seen));
  for (const key of ['allOf', 'oneOf', 'anyOf']) for (const s of (schema[key] ?? []) as Schema[]) names.push(...propertyNames(s, components, seen));
  return names;
}

/** The ```sh blocks of a markdown text. */
function shBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

describe('docs/rooms-api.md', () => {
  let openapi: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
  let roomsOps: { heading: string; op: Operation }[];
  const docSections = sections(DOC);

  beforeAll(async () => {
    const res = await request(buildTestApps().management).get('/openapi.json').set('Authorization', AUTH);
    expect(res.status).toBe(200);
    openapi = res.body as typeof openapi;
    roomsOps = Object.entries(openapi.paths).flatMap(([p, ops]) => Object.entries(ops)
      .filter(([, op]) => op.tags?.includes('rooms-api'))
      .map(([method, op]) => ({ heading: `${method.toUpperCase()} ${p}`, op })));
  });

  test('has a section for every rooms-API call of /openapi.json, and none for a call it does not have', () => {
    expect(roomsOps.length).toBeGreaterThanOrEqual(5);
    const documented = [...docSections.keys()].filter((h) => /^(GET|PUT|POST|PATCH|DELETE) \//.test(h));
    expect(documented.sort()).toEqual(roomsOps.map((o) => o.heading).sort());
  });

  test('names every field of every body and answer, marks the required ones, and names every error status', () => {
    const components = openapi.components.schemas;
    for (const { heading, op } of roomsOps) {
      const section = docSections.get(heading) ?? '';
      const body = op.requestBody?.content['application/json']?.schema;
      const answer = op.responses['200']?.content?.['application/json']?.schema;
      for (const field of [...propertyNames(body, components), ...propertyNames(answer, components)]) {
        expect([heading, field, section.includes(`\`${field}\``) || section.includes(`"${field}"`)]).toEqual([heading, field, true]);
      }
      const resolved = body && typeof body.$ref === 'string' ? components[body.$ref.replace('#/components/schemas/', '')] : body;
      for (const field of (resolved?.required ?? []) as string[]) {
        const row = section.split('\n').find((l) => l.startsWith(`| \`${field}\``));
        // A body documented by reference to another call's ("the body is a ping's") has no table.
        if (row !== undefined) expect([heading, field, row.includes('Required')]).toEqual([heading, field, true]);
        else expect([heading, field, section.includes(`\`${field}\``)]).toEqual([heading, field, true]);
      }
      for (const status of Object.keys(op.responses).filter((s) => s !== '200')) {
        expect([heading, status, section.includes(`\`${status}\``)]).toEqual([heading, status, true]);
        expect([heading, status, (docSections.get('Errors') ?? '').includes(`| ${status} |`)]).toEqual([heading, status, true]);
      }
    }
  });

  test('shows the curl game server of docs/examples/curl-game-server.sh, as the README does', () => {
    expect(shBlocks(DOC)).toContain(SCRIPT);
    expect(shBlocks(read('README.md'))).toContain(SCRIPT);
    expect(SCRIPT.trimEnd().split('\n').length).toBeLessThanOrEqual(20);
  });
});

describe('the curl game server', () => {
  /** Runs the script against a recording rooms API until a ready and an occupied ping, then SIGTERMs it; `before` sets up answers first. */
  async function runToSigterm(before?: (recorder: PingRecorder) => void) {
    const recorder = await startPingRecorder();
    before?.(recorder);
    const matchFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'curl-room-')), 'match');
    const child = spawn('sh', [path.join(REPO_ROOT, 'docs/examples/curl-game-server.sh')], {
      env: { PATH: process.env.PATH ?? '', ROOMKEEPER_ROOMS_API_URL: recorder.url, MAESTRO_SCHEDULER_NAME: 'arena', MAESTRO_ROOM_ID: 'arena-c1', ROOMKEEPER_ROOM_TOKEN: 'tok', PING_INTERVAL_S: '0.2', MATCH_FILE: matchFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const statuses = (): unknown[] => recorder.pingsFor('arena', 'arena-c1').map((p) => (p.body as { status: unknown }).status);
    try {
      await waitFor(() => statuses().includes('ready'), { timeoutMs: 20_000, message: 'a ready ping' });
      fs.writeFileSync(matchFile, '');
      await waitFor(() => statuses().includes('occupied'), { timeoutMs: 20_000, message: 'an occupied ping' });
      child.kill('SIGTERM');
      return { code: await exited, statuses: statuses(), output, pings: recorder.pingsFor('arena', 'arena-c1') };
    } finally {
      child.kill('SIGKILL');
      await recorder.close();
    }
  }

  test('pings ready with the room token, occupied while a match runs, and terminating then terminated on SIGTERM', async () => {
    const run = await runToSigterm();
    expect(run.code).toBe(0);
    expect(run.statuses.slice(-2)).toEqual(['terminating', 'terminated']);
    expect(run.pings.every((p) => p.authorization === 'Bearer tok' && typeof (p.body as { timestamp: unknown }).timestamp === 'number')).toBe(true);
    expect(run.output).toContain('terminated -> {"success":true}');
  });

  test('sends terminated again while it is answered not recorded yet, and stops at once on roomGone', async () => {
    const notYet = { success: false, message: 'room arena-c1 reported terminated, but it is not recorded yet: …' };
    const retried = await runToSigterm((r) => r.answerNext('terminated', notYet, notYet));
    expect([retried.code, retried.statuses.slice(-4)]).toEqual([0, ['terminating', 'terminated', 'terminated', 'terminated']]);
    const gone = await runToSigterm((r) => r.answerNext('terminated', { success: false, roomGone: true, message: 'room arena-c1 not found …' }));
    expect([gone.code, gone.statuses.slice(-2), gone.statuses.filter((s) => s === 'terminated').length]).toEqual([0, ['terminating', 'terminated'], 1]);
  });
});
