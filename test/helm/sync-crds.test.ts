/**
 * helm/sync-crds.sh keeps helm/roomkeeper/crds/ identical to crds/. It is exercised on a scratch
 * copy of the repository layout (it finds the root from its own location), so the test neither
 * depends on nor touches the real crds/.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './helm-cli';

interface Run { code: number; stdout: string; stderr: string }

function run(script: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', [script, ...args], { cwd: os.tmpdir() }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe('helm/sync-crds.sh', () => {
  let root: string;
  let script: string;
  const chartCrds = (): string => path.join(root, 'helm/roomkeeper/crds');

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'roomkeeper-sync-crds-'));
    fs.mkdirSync(path.join(root, 'crds'));
    fs.mkdirSync(path.join(root, 'helm/roomkeeper/crds'), { recursive: true });
    script = path.join(root, 'helm/sync-crds.sh');
    fs.copyFileSync(path.join(REPO_ROOT, 'helm/sync-crds.sh'), script);
    fs.writeFileSync(path.join(root, 'crds/roomkeeper.io_a.yaml'), 'kind: CustomResourceDefinition\nmetadata: {name: a}\n');
    fs.writeFileSync(path.join(root, 'crds/roomkeeper.io_b.yaml'), 'kind: CustomResourceDefinition\nmetadata: {name: b}\n');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('--check fails, naming each missing file, before a sync', async () => {
    const result = await run(script, ['--check']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('helm/roomkeeper/crds/roomkeeper.io_a.yaml is missing');
    expect(result.stderr).toContain('helm/roomkeeper/crds/roomkeeper.io_b.yaml is missing');
  });

  it('copies the CRDs byte for byte, after which --check passes', async () => {
    expect((await run(script, [])).code).toBe(0);
    for (const name of ['roomkeeper.io_a.yaml', 'roomkeeper.io_b.yaml']) {
      expect(fs.readFileSync(path.join(chartCrds(), name), 'utf8')).toBe(fs.readFileSync(path.join(root, 'crds', name), 'utf8'));
    }
    const check = await run(script, ['--check']);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('chart CRDs match crds/');
  });

  it('--check fails on a changed copy and on a stale one, and changes nothing', async () => {
    await run(script, []);
    fs.appendFileSync(path.join(chartCrds(), 'roomkeeper.io_a.yaml'), '# edited by hand\n');
    fs.writeFileSync(path.join(chartCrds(), 'roomkeeper.io_old.yaml'), 'kind: CustomResourceDefinition\n');
    const result = await run(script, ['--check']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('roomkeeper.io_a.yaml differs from crds/roomkeeper.io_a.yaml');
    expect(result.stderr).toContain('roomkeeper.io_old.yaml has no source in crds/');
    expect(fs.existsSync(path.join(chartCrds(), 'roomkeeper.io_old.yaml'))).toBe(true);
  });

  it('a sync repairs drift and removes stale copies, leaving other files alone', async () => {
    fs.writeFileSync(path.join(chartCrds(), '.gitkeep'), '');
    fs.writeFileSync(path.join(chartCrds(), 'roomkeeper.io_old.yaml'), 'kind: CustomResourceDefinition\n');
    fs.writeFileSync(path.join(chartCrds(), 'roomkeeper.io_a.yaml'), 'stale\n');
    expect((await run(script, [])).code).toBe(0);
    expect(fs.readdirSync(chartCrds()).sort()).toEqual(['.gitkeep', 'roomkeeper.io_a.yaml', 'roomkeeper.io_b.yaml']);
    expect((await run(script, ['--check'])).code).toBe(0);
  });

  it('refuses an unknown argument and an empty crds/', async () => {
    expect((await run(script, ['--chek'])).code).toBe(2);
    for (const f of fs.readdirSync(path.join(root, 'crds'))) fs.rmSync(path.join(root, 'crds', f));
    const empty = await run(script, ['--check']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no CRDs found');
  });
});
