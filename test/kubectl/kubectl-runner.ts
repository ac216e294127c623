/**
 * Runs the real kubectl against a sandbox. Always asynchronous: the API server lives in this
 * process, so a blocking exec would deadlock it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Sandbox } from '../../sandbox/src/index';
import { toolPath } from '../support/tools';

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface KubectlSession {
  readonly dir: string;
  run(args: string[], options?: { env?: Record<string, string>; input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Starts a long-running kubectl (e.g. `get --watch`); the caller kills it. */
  spawn(args: string[]): { child: ChildProcess; output: () => string };
  dispose(): void;
}

export async function kubectlSession(sandbox: Sandbox): Promise<KubectlSession> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rk-kubectl-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  const kubectl = toolPath('kubectl');
  const baseEnv = { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: path.join(dir, 'cache') };
  const children = new Set<ChildProcess>();
  return {
    dir,
    run(args, options = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(kubectl, args, { env: { ...baseEnv, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
        children.add(child);
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(timer);
          children.delete(child);
          resolve({ code, stdout, stderr });
        });
        child.stdin.end(options.input ?? '');
      });
    },
    spawn(args) {
      const child = spawn(kubectl, args, { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      children.add(child);
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => children.delete(child));
      return { child, output: () => out };
    },
    dispose() {
      for (const c of children) c.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
