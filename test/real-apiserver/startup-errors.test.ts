/**
 * Errors that say what to do when the operator starts (the newcomer issue): the operator process
 * (operator/src/main.ts, as the chart runs it) started with credentials the API server refuses
 * to serve, or pointed at a server that does not answer. Its log says what failed and what to do,
 * and its /readyz answers 503 with the same words; /healthz answers meanwhile (the process is
 * alive and keeps trying); a SIGTERM meanwhile, before the start has finished, exits 0 with a log
 * line saying so. A missing CustomResourceDefinition's words are unit-tested
 * (common/src/kube/diagnosis.test.ts): this plane's CRDs are shared by the other suites.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeTokenKubeconfig } from '../support/control-plane';
import { freePort } from '../support/ports';
import { kubectl, realApiServer, reportNotRun, RELEASE_NAMESPACE } from '../support/real-apiserver';
import { REPO_ROOT } from '../support/stack';
import { waitFor } from '../support/wait';

interface Started { child: ChildProcess; lines: () => Record<string, unknown>[]; opsUrl: string }

async function startOperatorProcess(kubeconfig: string): Promise<Started> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, ROOMKEEPER_OPERATOR_PORT: String(port), ROOMKEEPER_LOG_LEVEL: 'info', ROOMKEEPER_LEASE_NAME: 'rk-startup-errors' };
  delete env.E2E_KUBECONFIG;
  delete env.JEST_WORKER_ID;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'operator/src/main.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return {};
    }
  });
  return { child, lines, opsUrl: `http://127.0.0.1:${port}` };
}

async function stop(started: Started | undefined): Promise<void> {
  if (!started || started.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => started.child.once('exit', () => resolve()));
  started.child.kill('SIGKILL');
  await exited;
}

async function readyz(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`${url}/readyz`);
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined; // not listening yet
  }
}

describe('the operator says what to do when it cannot use the API server', () => {
  const plane = realApiServer();
  let started: Started | undefined;
  afterEach(async () => {
    await stop(started);
    started = undefined;
  });

  test('credentials without the chart\'s RBAC: the log and /readyz name the verb, the resource and the chart value that grants it', async () => {
    if (!plane) {
      expect(reportNotRun('startup errors')).toMatch(/NOT RUN/);
      return;
    }
    kubectl(plane.adminKubeconfig, ['create', 'serviceaccount', 'rk-nobody', '-n', RELEASE_NAMESPACE]);
    const token = kubectl(plane.adminKubeconfig, ['create', 'token', 'rk-nobody', '-n', RELEASE_NAMESPACE, '--duration=1h']).trim();
    const kubeconfig = writeTokenKubeconfig(plane, `system:serviceaccount:${RELEASE_NAMESPACE}:rk-nobody`, token);
    started = await startOperatorProcess(kubeconfig);
    const s = started;
    const line = await waitFor(() => s.lines().find((l) => l.message === 'list failed, retrying' && typeof l.whatToDo === 'string' && l.statusCode === 403), { timeoutMs: 60_000, message: 'a log line with what to do about the 403' });
    expect(line).toMatchObject({ level: 'warn', message: 'list failed, retrying', component: 'operator' });
    expect(line.whatToDo).toMatch(/^this identity may not list [a-z.]+( \(all namespaces\))?: install with the Helm chart, whose RBAC grants it \(rbac\.create=true/);
    expect(String(line.error)).toMatch(/forbidden/);
    const ready = await waitFor(async () => {
      const r = await readyz(s.opsUrl);
      return r?.body.includes('this identity may not list') ? r : undefined;
    }, { timeoutMs: 30_000, message: '/readyz saying why' });
    expect(ready.status).toBe(503);
    const body = JSON.parse(ready.body) as { status: string; reason: string; checks: { check: string; ready: boolean; reason?: string }[] };
    expect(body.status).toBe('not ready');
    expect(body.checks.find((c) => c.check === 'caches')?.reason).toMatch(/^the caches have not all made their first list: .*; the [a-z]+ list failed: 403 .*forbidden.*; this identity may not list /);
    expect(body.checks.find((c) => c.check === 'api access')?.reason).toMatch(/^the Kubernetes API server refuses this replica's requests .*was answered 403 Forbidden: this identity may not /);
    expect((await fetch(`${s.opsUrl}/healthz`)).status).toBe(200);
  }, 120_000);

  /** Starts the operator against a server that does not answer: it stays in its start, retrying. */
  async function startAgainstDeadServer(then: (s: Started, server: string) => Promise<void>): Promise<void> {
    const dead = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-dead-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kubeconfig, [
      'apiVersion: v1', 'kind: Config', 'clusters:', '- name: dead', '  cluster:', `    server: https://127.0.0.1:${dead}`, '    insecure-skip-tls-verify: true',
      'users:', '- name: u', '  user:', '    token: t', 'contexts:', '- name: c', '  context:', '    cluster: dead', '    user: u', 'current-context: c', '',
    ].join('\n'));
    try {
      started = await startOperatorProcess(kubeconfig);
      await then(started, `https://127.0.0.1:${dead}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  test('a kubeconfig pointing at a server that does not answer: the log names the server and where the kubeconfig came from', async () => {
    await startAgainstDeadServer(async (s, server) => {
      const line = await waitFor(() => s.lines().find((l) => typeof l.whatToDo === 'string'), { timeoutMs: 60_000, message: 'a log line with what to do' });
      expect(line.whatToDo).toBe(`the Kubernetes API server at ${server} does not answer: check that the cluster runs and that the kubeconfig (E2E_KUBECONFIG, KUBECONFIG or the in-cluster ServiceAccount, in that order) points at it`);
    });
  }, 120_000);

  test('a SIGTERM before the start has finished: the process says so and exits 0', async () => {
    await startAgainstDeadServer(async (s) => {
      await waitFor(() => s.lines().find((l) => typeof l.whatToDo === 'string'), { timeoutMs: 60_000, message: 'the operator retrying its first lists' });
      const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
      s.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const messages = s.lines().map((l) => l.message);
      expect(messages).toContain('stopping before the operator finished starting (SIGTERM): it led nothing and ran no operation');
      expect(messages).not.toContain('operator started');
    });
  }, 120_000);
});
