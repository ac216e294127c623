/**
 * The kubectl user's acceptance tests (test/operator/kubectl-scheduler.test.ts: apply, printer
 * columns, edit the image -> create / new version / switch in the history, an invalid Scheduler
 * refused at admission with the field named, delete through the finalizer) on the real API
 * server, with the real kubectl as administrator and the operator as the chart's ServiceAccount.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/stack';
import { realApiServer, realClusterEnv, reportNotRun } from '../support/real-apiserver';

describe('kubectl acceptance on the real API server', () => {
  test('test/operator/kubectl-scheduler.test.ts passes against kube-apiserver', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('kubectl acceptance')).toMatch(/NOT RUN/);
      return;
    }
    const suites = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'jest'), ['--selectProjects', 'integration', '--runInBand', '--ci', 'test/operator/kubectl-scheduler.test.ts'], {
      cwd: REPO_ROOT, env: { ...process.env, ...realClusterEnv(plane) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    suites.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    suites.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => suites.once('exit', (c) => resolve(c)));
    if (code !== 0) throw new Error(`kubectl acceptance failed on the real API server:\n${output.slice(-8000)}`);
    const summary = output.split('\n').filter((l) => /^Tests:/.test(l)).join('; ');
    process.stdout.write(`\n[real-apiserver] kubectl acceptance: ${summary}\n`);
    expect(summary).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(summary).not.toMatch(/failed|skipped/);
  }, 600_000);
});
