/**
 * The real-API-server tier of `npm test`: one control plane per run (test/support/control-plane.ts),
 * prepared as a platform team would prepare a cluster for Roomkeeper: the CRDs from crds/, and the
 * Helm chart's namespace, ServiceAccounts, RBAC and Secrets, rendered by the real `helm` and
 * applied by the real `kubectl`. Operator and gateway then run as the chart's ServiceAccounts
 * (tokens from the TokenRequest API, as `kubectl create token` gets them) with the environment the
 * chart gives their Deployments, so any call the chart does not grant fails.
 *
 * Suites find it through `ROOMKEEPER_REAL_APISERVER_INFO` (a JSON file, `RealApiServer` below).
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as YAML from 'yaml';
import {
  REAL_APISERVER_INFO_ENV, startControlPlane, writeTokenKubeconfig, type ControlPlane, type ControlPlaneInfo,
} from './control-plane';
import { toolPath } from './tools';

const RELEASE_NAME = 'roomkeeper';
export const RELEASE_NAMESPACE = 'roomkeeper-system';
const REPO_ROOT = path.resolve(__dirname, '../..');
const CHART_DIR = path.join(REPO_ROOT, 'helm', 'roomkeeper');

export interface RealApiServer extends ControlPlaneInfo {
  readonly releaseNamespace: string;
  /** The chart's operator ServiceAccount. */
  readonly operatorKubeconfig: string;
  /** The chart's gateway ServiceAccount. */
  readonly gatewayKubeconfig: string;
  /** The environment the chart gives each Deployment's container (secret references resolved). */
  readonly chartEnv: { operator: Record<string, string>; gateway: Record<string, string> };
}

export type Manifest = { kind?: string; apiVersion?: string; metadata?: { name?: string; namespace?: string }; spec?: unknown; data?: Record<string, string>; stringData?: Record<string, string> };

/**
 * Objects as one JSON `List` for `kubectl apply -f -`. Not YAML: kubectl reads YAML 1.1, where an
 * unquoted `off` or `yes` (a plain string in the YAML 1.2 our yaml library writes) is a boolean.
 */
export function asList(objects: readonly unknown[]): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
}

export function kubectl(kubeconfig: string, args: string[], input?: string): string {
  return execFileSync(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], {
    input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000,
  });
}

/** `helm template` of the chart (release `roomkeeper` in `roomkeeper-system`), as parsed objects. */
export function renderChart(extraArgs: string[] = [], namespace = RELEASE_NAMESPACE, release = RELEASE_NAME): Manifest[] {
  const out = execFileSync(toolPath('helm'), ['template', release, CHART_DIR, '--namespace', namespace, ...extraArgs], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000,
  });
  return YAML.parseAllDocuments(out).map((d) => d.toJSON() as Manifest | null).filter((m): m is Manifest => Boolean(m?.kind));
}

const IDENTITY_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Secret']);

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } };

function containerEnv(manifests: Manifest[], deploymentSuffix: string, secrets: Manifest[]): Record<string, string> {
  const deployment = manifests.find((m) => m.kind === 'Deployment' && m.metadata?.name?.endsWith(deploymentSuffix));
  const spec = deployment?.spec as { template: { spec: { containers: { env?: EnvVar[] }[] } } } | undefined;
  const env: Record<string, string> = {};
  for (const v of spec?.template.spec.containers[0]?.env ?? []) {
    if (v.value !== undefined) env[v.name] = v.value;
    const ref = v.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = secrets.find((s) => s.metadata?.name === ref.name);
      const data = secret?.data?.[ref.key];
      if (data !== undefined) env[v.name] = Buffer.from(data, 'base64').toString('utf8');
    }
    if (v.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[v.name] = `${deployment?.metadata?.name ?? 'pod'}-test`;
  }
  return env;
}

/**
 * Applies the CRDs and the chart's identity objects to a fresh plane and makes a kubeconfig for
 * each component's ServiceAccount.
 */
export function prepareForRoomkeeper(plane: ControlPlaneInfo): RealApiServer {
  const admin = plane.adminKubeconfig;
  kubectl(admin, ['apply', '--server-side', '-f', path.join(REPO_ROOT, 'crds')]);
  kubectl(admin, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  kubectl(admin, ['create', 'namespace', RELEASE_NAMESPACE]);
  const manifests = renderChart();
  const identity = manifests.filter((m) => m.kind && IDENTITY_KINDS.has(m.kind));
  kubectl(admin, ['apply', '-f', '-'], asList(identity));
  const secrets = identity.filter((m) => m.kind === 'Secret');
  const token = (sa: string): string => kubectl(admin, ['create', 'token', sa, '-n', RELEASE_NAMESPACE, '--duration=24h']).trim();
  const operatorSa = `${RELEASE_NAME}-operator`;
  const gatewaySa = `${RELEASE_NAME}-gateway`;
  const info: RealApiServer = {
    ...plane,
    releaseNamespace: RELEASE_NAMESPACE,
    operatorKubeconfig: writeTokenKubeconfig(plane, `system:serviceaccount:${RELEASE_NAMESPACE}:${operatorSa}`, token(operatorSa)),
    gatewayKubeconfig: writeTokenKubeconfig(plane, `system:serviceaccount:${RELEASE_NAMESPACE}:${gatewaySa}`, token(gatewaySa)),
    chartEnv: { operator: containerEnv(manifests, '-operator', secrets), gateway: containerEnv(manifests, '-gateway', secrets) },
  };
  return info;
}

/** Starts and prepares the plane of one test run; the JSON description goes next to it. */
export async function startRealApiServer(assetsDir: string): Promise<{ plane: ControlPlane; info: RealApiServer; infoFile: string }> {
  const plane = await startControlPlane({ assetsDir });
  try {
    const info = prepareForRoomkeeper(plane);
    const infoFile = path.join(plane.dir, 'real-apiserver.json');
    fs.writeFileSync(infoFile, JSON.stringify(info, null, 2), { mode: 0o600 });
    return { plane, info, infoFile };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

/** The plane this test run shares, or undefined when the tier does not run. */
export function realApiServer(env: NodeJS.ProcessEnv = process.env): RealApiServer | undefined {
  const file = env[REAL_APISERVER_INFO_ENV];
  if (!file || !fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as RealApiServer;
}

/** The one line a suite prints when the tier cannot run here. */
export function reportNotRun(suite: string): string {
  const reason = process.env.ROOMKEEPER_REAL_APISERVER_NOT_RUN ?? `${REAL_APISERVER_INFO_ENV} is not set (run through npm test, with ROOMKEEPER_K8S_ASSETS)`;
  const line = `[real-apiserver] NOT RUN: ${suite}: ${reason}`;
  process.stdout.write(`\n${line}\n`);
  return line;
}

/**
 * The environment for a child process (a jest run, `npm start`) that should use this plane as
 * its cluster: the administrator for the harness, the chart's identities for the components.
 */
export function realClusterEnv(info: RealApiServer): Record<string, string> {
  return {
    E2E_KUBECONFIG: info.adminKubeconfig,
    E2E_OPERATOR_KUBECONFIG: info.operatorKubeconfig,
    E2E_GATEWAY_KUBECONFIG: info.gatewayKubeconfig,
    E2E_SIMULATION_KUBECONFIG: info.simKubeconfig,
    E2E_CHART_ENV: JSON.stringify(info.chartEnv),
  };
}

/**
 * Runs jest suites of another project (`project`, `files`) against the real plane, as the suites
 * that wrap them do: the cluster environment of `realClusterEnv`, in band. Prints the suites'
 * PASS lines (with their times) and resolves to jest's output; throws with its last part when jest failed.
 */
async function runSuitesOnPlane(plane: RealApiServer, what: string, project: string, files: readonly string[], deadlineMs: number): Promise<string> {
  // --forceExit: once every suite has ended, a socket or timer a stopped stack left behind must
  // not hold the run until its deadline (the plane outlives the suites, so a watch on it never ends).
  // (The reporters first: jest's --reporters takes every word after it up to the next option.)
  const reporters = ['--reporters', 'default', '--reporters', path.join(REPO_ROOT, 'test', 'support', 'suite-progress-reporter.cjs')];
  const jest = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'jest'), [...reporters, '--selectProjects', project, '--runInBand', '--ci', '--forceExit', ...files], {
    // A process group of its own: stopped at the deadline with whatever it started (npm start).
    cwd: REPO_ROOT, env: { ...process.env, ...realClusterEnv(plane) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let output = '';
  jest.stdout.on('data', (d: Buffer) => (output += d.toString()));
  jest.stderr.on('data', (d: Buffer) => (output += d.toString()));
  // Past the deadline the suites are stopped and what they printed is shown: a run left going
  // would keep its schedulers on the shared plane under the next suites, and a timeout of the
  // wrapping test would show nothing of where they were.
  const stopped = { late: false };
  const deadline = setTimeout(() => {
    stopped.late = true;
    try {
      if (jest.pid !== undefined) process.kill(-jest.pid, 'SIGKILL');
    } catch {
      jest.kill('SIGKILL'); // the group is gone already
    }
  }, deadlineMs);
  const code = await new Promise<number | null>((resolve) => jest.once('exit', (c) => resolve(c)));
  clearTimeout(deadline);
  if (stopped.late) {
    // The output first, the finding last: the end of a CI log is what is read first.
    process.stdout.write(`${output.slice(-30_000)}\n`);
    throw new Error(`${what} did not end within ${Math.round(deadlineMs / 1000)} s on the real API server and was stopped (its output is printed above): ${whereStopped(output)}`);
  }
  if (code !== 0) throw new Error(`${what} failed on the real API server:\n${output.slice(-30_000)}`);
  const passed = output.split('\n').filter((l) => l.startsWith('PASS '));
  process.stdout.write(passed.map((l) => `[real-apiserver] ${l}\n`).join(''));
  return output;
}

/**
 * Where a run stopped at its deadline was, from the lines of suite-progress-reporter.cjs and jest's
 * PASS and FAIL lines: the suites started and not ended, and the last test that ended.
 */
export function whereStopped(output: string): string {
  const lines = output.split('\n');
  const started = lines.flatMap((l) => /^\[suite started\] (.+)$/.exec(l)?.[1] ?? []).map((p) => path.relative(REPO_ROOT, p));
  const ended = new Set(lines.flatMap((l) => /^(?:PASS|FAIL) \S+ (\S+)/.exec(l)?.[1] ?? []));
  const running = started.filter((p) => !ended.has(p));
  const lastTest = lines.filter((l) => l.startsWith('[test ended] ')).at(-1)?.slice('[test ended] '.length);
  const done = `${ended.size} of ${started.length} suites started had ended`;
  const last = lastTest ? `; the last test to end: ${lastTest}` : '; no test had ended';
  if (running.length === 0) return `${done}, none was running: jest had not exited after them${last}`;
  return `${done}; still running: ${running.join(', ')}${last}`;
}

export interface SuitesOnPlane {
  /** What the suites prove, in the NOT RUN line and the summary (`[real-apiserver] <what>: Tests: ...`). */
  readonly what: string;
  /** The jest project of the files (their config: e2e, integration). */
  readonly project: string;
  readonly files: readonly string[];
  /** How many tests must pass, when the suite's count is fixed; otherwise any count, none failed or skipped. */
  readonly tests?: number;
  /** Lines of the output to print after the summary (the suites' own figures). */
  readonly figures?: (output: string) => string;
  /** When the suites are stopped as stuck: shorter than the wrapping test's timeout, so their output is shown. */
  readonly deadlineMs: number;
}

/**
 * A real-tier test that runs suites of another tier on the shared plane (`runSuitesOnPlane`) and
 * passes when they all did, printing their summary; without a plane it reports NOT RUN and passes.
 */
export async function expectSuitesPassOnPlane(o: SuitesOnPlane): Promise<void> {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun(o.what)).toMatch(/NOT RUN/);
    return;
  }
  const output = await runSuitesOnPlane(plane, o.what, o.project, o.files, o.deadlineMs);
  const summary = output.split('\n').filter((l) => /^(Tests|Test Suites):/.test(l)).join('; ');
  const figures = o.figures?.(output);
  process.stdout.write(`\n[real-apiserver] ${o.what}: ${summary}\n${figures ? `${figures}\n` : ''}`);
  expect(summary).toMatch(o.tests === undefined ? /Tests:\s+\d+ passed, \d+ total/ : new RegExp(`Tests:\\s+${o.tests} passed, ${o.tests} total`));
  expect(summary).not.toMatch(/failed|skipped/);
}
