/**
 * kubectl users cannot break a scheduler (issue 21), on the real API server: the suite
 * test/operator/kubectl-deletions.test.ts (namespace, active version, a running Operation, the
 * leader Lease, a pod force-deleted, the rooms-token Secret, the GameRoom CRD — each deleted with
 * the real kubectl; and an add_rooms failing the same way again and again)
 * against kube-apiserver v1.28 with kube-controller-manager (the namespace controller and the
 * garbage collector are the real ones), the operator and gateway running as the chart's
 * ServiceAccounts.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/stack';
import { realApiServer, realClusterEnv, reportNotRun } from '../support/real-apiserver';

describe('kubectl deletions on the real API server', () => {
  test('test/operator/kubectl-deletions.test.ts passes against kube-apiserver', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('kubectl deletions')).toMatch(/NOT RUN/);
      return;
    }
    const suite = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'jest'), ['--selectProjects', 'integration', '--runInBand', '--ci', 'test/operator/kubectl-deletions.test.ts'], {
      cwd: REPO_ROOT, env: { ...process.env, ...realClusterEnv(plane) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    suite.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    suite.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => suite.once('exit', (c) => resolve(c)));
    if (code !== 0) throw new Error(`kubectl deletions failed on the real API server:\n${output.slice(-12000)}`);
    const lines = output.slice(output.indexOf('[kubectl-deletions]')).split('\n');
    const figures = lines.slice(0, lines.findIndex((l, i) => i > 0 && !/^ {2}\S/.test(l)));
    const summary = output.split('\n').filter((l) => /^Tests:/.test(l)).join('; ');
    process.stdout.write(`\n[real-apiserver] kubectl deletions: ${summary}\n${figures.join('\n')}\n`);
    expect(summary).toMatch(/Tests:\s+9 passed, 9 total/);
  }, 420_000);
});
