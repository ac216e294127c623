/**
 * `npm start` with no cluster configured: the sandbox comes up, a kubeconfig is written and its
 * path printed, the real kubectl works with it, and Ctrl-C stops everything cleanly.
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../support/stack';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

const run = promisify(execFile);

test('npm start prints a kubeconfig path that kubectl can use, and stops cleanly on Ctrl-C', async () => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-start-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ROOMKEEPER_STATE_DIR: state,
    ROOMKEEPER_GATEWAY_PORT: '0',
    ROOMKEEPER_ROOMS_PORT: '0',
    ROOMKEEPER_OPERATOR_PORT: '0',
  };
  delete env.KUBECONFIG;
  delete env.E2E_KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  // Its own process group, so the test can send Ctrl-C to all of it as a terminal would.
  const child = spawn('npm', ['start'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const kubeconfig = await waitFor(() => /kubeconfig: (\S+)/.exec(out)?.[1], { timeoutMs: 60_000, message: `npm start printed its kubeconfig; output so far:\n${out}` });
    expect(kubeconfig).toBe(path.join(state, 'kubeconfig'));
    expect(out).toMatch(/Management API: http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/Rooms API: +http:\/\/127\.0\.0\.1:\d+/);
    const { stdout } = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'ns'], { timeout: 30_000 });
    expect(stdout).toMatch(/^default\s+Active/m);
    const crds = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'crd'], { timeout: 30_000 });
    expect(crds.stdout).toContain('schedulers.roomkeeper.io');
  } finally {
    process.kill(-(child.pid as number), 'SIGINT');
  }
  await exited;
  // npm itself ends by the signal, as it does at a terminal; what matters is that Roomkeeper
  // shut down cleanly (it prints this last, after saving its state).
  await waitFor(() => out.includes('Stopped.'), { timeoutMs: 20_000, message: `clean stop; output:\n${out}` });
  expect(out).not.toMatch(/failed to start/);
  fs.rmSync(state, { recursive: true, force: true });
});
