/**
 * The real-cluster path, proven end to end: a bare API server in its own process (the sandbox
 * with no CRDs, no nodes and no Roomkeeper, as a fresh cluster would be), and end-to-end suites
 * run against it through E2E_KUBECONFIG — they install the CRDs, run operator and gateway in
 * process, and attach the simulated kubelet and rooms because the cluster has no node.
 *
 * When the real Kubernetes binaries are there, `npm test`'s real tier runs the whole of test/e2e
 * through this same path against kube-apiserver (test/real-apiserver/e2e-suite.test.ts), so here
 * two suites prove the path (rooms, and the management API); without them, the whole suite runs here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { controlPlaneAssets } from '../support/control-plane';
import { REPO_ROOT } from '../support/stack';
import { waitFor } from '../support/wait';

function bin(name: string): string {
  return path.join(REPO_ROOT, 'node_modules', '.bin', name);
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The suites run here: two when the real tier runs them all through E2E_KUBECONFIG, else all. */
const SUITES = 'missing' in controlPlaneAssets() ? ['test/e2e/'] : ['test/e2e/rooms.test.ts', 'test/e2e/management-api.test.ts'];

describe('E2E_KUBECONFIG', () => {
  test(`end-to-end suites (${SUITES.join(', ')}) pass against a separate API server that has no Roomkeeper and no nodes`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-real-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    const server = spawn(bin('tsx'), ['sandbox/src/serve.ts'], {
      cwd: REPO_ROOT, env: { ...process.env, ROOMKEEPER_KUBECONFIG_FILE: kubeconfig }, stdio: 'ignore',
    });
    try {
      await waitFor(() => fs.existsSync(kubeconfig), { timeoutMs: 30_000, message: 'the API server wrote its kubeconfig' });
      const suites = spawn(bin('jest'), ['--selectProjects', 'e2e', '--runInBand', '--ci', ...SUITES], {
        cwd: REPO_ROOT, env: { ...process.env, E2E_KUBECONFIG: kubeconfig, JEST_WORKER_ID: '' }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      suites.stdout.on('data', (d: Buffer) => (output += d.toString()));
      suites.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const code = await exitOf(suites);
      const summary = output.split('\n').filter((l) => /^(Tests|Test Suites):/.test(l)).join('\n');
      if (code !== 0) throw new Error(`end-to-end suites failed against E2E_KUBECONFIG:\n${output.slice(-6000)}`);
      const expectedSuites = SUITES[0] === 'test/e2e/' ? fs.readdirSync(path.join(REPO_ROOT, 'test/e2e')).filter((f) => f.endsWith('.test.ts')).length : SUITES.length;
      expect(summary).toMatch(new RegExp(`Test Suites:\\s+${expectedSuites} passed, ${expectedSuites} total`));
      expect(summary).toMatch(/Tests:\s+\d+ passed, \d+ total/);
      expect(summary).not.toMatch(/failed|skipped/);
    } finally {
      server.kill('SIGTERM');
      await exitOf(server);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
