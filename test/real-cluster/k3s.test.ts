/**
 * The third target: K3s in a container, through testcontainers, when a Docker engine is present.
 * Without one (as in CI here) the target is reported as not run, with the reason; that is not a
 * failure. With one, the end-to-end suites run against K3s through E2E_KUBECONFIG; its real node
 * is cordoned so room pods go to the simulated kubelet and need no game-server image.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { K3sContainer } from '@testcontainers/k3s';
import { getContainerRuntimeClient } from 'testcontainers';
import { REPO_ROOT } from '../support/stack';

const K3S_IMAGE = process.env.ROOMKEEPER_K3S_IMAGE ?? 'rancher/k3s:v1.31.4-k3s1';

async function dockerEngine(): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    await getContainerRuntimeClient();
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message.split('\n')[0] ?? 'unknown' : String(err) };
  }
}

describe('K3s via testcontainers', () => {
  test('the end-to-end suites pass against a K3s container (run only where a Docker engine exists)', async () => {
    const engine = await dockerEngine();
    if (!engine.ok) {
      // Reported, not failed: this machine cannot run containers.
      process.stdout.write(`\n[k3s] NOT RUN: no Docker engine (${engine.reason})\n`);
      expect(engine.reason).toBeTruthy();
      return;
    }
    const k3s = await new K3sContainer(K3S_IMAGE).start();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-k3s-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      fs.writeFileSync(kubeconfig, k3s.getKubeConfig());
      const suites = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'jest'), ['--selectProjects', 'e2e', '--runInBand', '--ci', 'test/e2e/'], {
        cwd: REPO_ROOT, env: { ...process.env, E2E_KUBECONFIG: kubeconfig, ROOMKEEPER_E2E_CORDON_REAL_NODES: 'true' }, stdio: 'inherit',
      });
      const code = await new Promise<number | null>((resolve) => suites.once('exit', resolve));
      expect(code).toBe(0);
    } finally {
      await k3s.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});
