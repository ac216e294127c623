/**
 * The chart against an API server: the embedded sandbox, driven by the real kubectl and helm.
 * - every rendered object passes `kubectl apply --dry-run=server` (CRDs applied first, for real);
 * - `helm install` and `helm upgrade` work, and the generated secrets survive the upgrade (lookup).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';
import { CHART_DIR, FULL_VALUES_FILE, HelmResult, helmTemplateRaw, parseManifests, runHelm } from './helm-cli';

jest.setTimeout(120_000);

describe('chart on the sandbox API server', () => {
  let sandbox: Sandbox | undefined;
  let workDir: string;
  let kubeconfig: string;

  function kubectl(args: string[]): Promise<HelmResult> {
    return new Promise((resolve) => {
      execFile(toolPath('kubectl'), args, { env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: workDir }, maxBuffer: 32 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }));
    });
  }

  const helm = (args: string[]): Promise<HelmResult> => runHelm(args, { KUBECONFIG: kubeconfig });

  async function mustSucceed(result: Promise<HelmResult>, what: string): Promise<HelmResult> {
    const r = await result;
    if (r.code !== 0) throw new Error(`${what} failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
    return r;
  }

  async function secretValue(namespace: string, name: string, key: string): Promise<string> {
    const r = await mustSucceed(kubectl(['-n', namespace, 'get', 'secret', name, '-o', `jsonpath={.data.${key}}`]), `get secret ${name}`);
    return Buffer.from(r.stdout, 'base64').toString('utf8');
  }

  /** Renders with helm template and dry-runs every object on the server; returns kubectl's lines. */
  async function dryRun(namespace: string, valuesFiles: string[]): Promise<string[]> {
    const rendered = await helmTemplateRaw({ namespace, valuesFiles });
    expect(rendered.stderr).toBe('');
    const file = path.join(workDir, `rendered-${namespace}.yaml`);
    fs.writeFileSync(file, rendered.stdout);
    const result = await kubectl(['apply', '--dry-run=server', '-f', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(parseManifests(rendered.stdout).length);
    for (const line of lines) expect(line).toMatch(/ \(server dry run\)$/);
    return lines;
  }

  beforeAll(async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roomkeeper-chart-sandbox-'));
    kubeconfig = path.join(workDir, 'kubeconfig');
    sandbox = await startSandbox();
    await sandbox.writeKubeconfig(kubeconfig);
    // The chart's CRDs (identical to crds/), applied for real, plus stand-ins for the Prometheus
    // Operator's ServiceMonitor and PrometheusRule CRDs.
    await mustSucceed(kubectl(['apply', '-f', path.join(CHART_DIR, 'crds')]), 'apply CRDs');
    await mustSucceed(kubectl(['apply', '-f', path.join(__dirname, 'fixtures/servicemonitor-crd.yaml')]), 'apply ServiceMonitor CRD');
    await mustSucceed(kubectl(['apply', '-f', path.join(__dirname, 'fixtures/prometheusrule-crd.yaml')]), 'apply PrometheusRule CRD');
    await waitFor(async () => (await kubectl(['get', 'schedulers,servicemonitors,prometheusrules', '-A'])).code === 0, { timeoutMs: 30_000, message: 'CRDs never served' });
    const namespaces = ['roomkeeper-system', 'games'].map((n) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${n}\n`).join('---\n');
    fs.writeFileSync(path.join(workDir, 'namespaces.yaml'), namespaces);
    await mustSucceed(kubectl(['apply', '-f', path.join(workDir, 'namespaces.yaml')]), 'create namespaces');
  });

  afterAll(async () => {
    await sandbox?.stop();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('accepts every object rendered with default values (kubectl apply --dry-run=server)', async () => {
    const lines = await dryRun('roomkeeper-system', []);
    expect(lines).toEqual(expect.arrayContaining([
      'deployment.apps/rk-roomkeeper-operator created (server dry run)',
      'deployment.apps/rk-roomkeeper-gateway created (server dry run)',
      'clusterrole.rbac.authorization.k8s.io/rk-roomkeeper-gateway created (server dry run)',
    ]));
    // A dry run stores nothing.
    expect((await kubectl(['-n', 'roomkeeper-system', 'get', 'deployments', '-o', 'name'])).stdout).toBe('');
  });

  it('accepts every object rendered with every option set', async () => {
    const lines = await dryRun('games', [FULL_VALUES_FILE]);
    expect(lines).toEqual(expect.arrayContaining([
      'ingress.networking.k8s.io/roomkeeper-full-gateway created (server dry run)',
      'servicemonitor.monitoring.coreos.com/roomkeeper-full-operator created (server dry run)',
      'prometheusrule.monitoring.coreos.com/roomkeeper-full created (server dry run)',
    ]));
  });

  it('installs with helm, and keeps the generated secrets across an upgrade, an uninstall and a reinstall', async () => {
    const install = await mustSucceed(helm(['install', 'rk', CHART_DIR, '--namespace', 'rk-install', '--create-namespace']), 'helm install');
    expect(install.stdout).toContain('STATUS: deployed');
    expect(install.stdout).toContain('kubectl -n rk-install port-forward svc/rk-roomkeeper-gateway 8080:8080');
    const password = await secretValue('rk-install', 'rk-roomkeeper-auth', 'password');
    const token = await secretValue('rk-install', 'rk-roomkeeper-room-token', 'token-secret');
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(token).toMatch(/^[A-Za-z0-9]{48}$/);
    const deployments = await mustSucceed(kubectl(['-n', 'rk-install', 'get', 'deployments', '-o', 'name']), 'get deployments');
    expect(deployments.stdout.trim().split('\n').sort()).toEqual(['deployment.apps/rk-roomkeeper-gateway', 'deployment.apps/rk-roomkeeper-operator']);

    // Both first-scheduler examples in NOTES.txt are valid Schedulers for the CRD's schema.
    const yamlExample = /cat <<'YAML' \| kubectl apply -f -\n([\s\S]*?)\n {2}YAML\n/.exec(install.stdout)?.[1];
    const jsonBody = /-X POST \$ROOMKEEPER_URL\/schedulers -d '(\{[\s\S]*?\n {4}\})'/.exec(install.stdout)?.[1];
    expect(yamlExample).toBeDefined();
    expect(jsonBody).toBeDefined();
    const { name, ...spec } = JSON.parse(jsonBody!) as { name: string } & Record<string, unknown>;
    const fromApi = { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: `${name}-api` }, spec };
    fs.writeFileSync(path.join(workDir, 'notes-examples.yaml'), `${yamlExample!.replace(/^ {2}/gm, '')}\n---\n${JSON.stringify(fromApi)}\n`);
    const examples = await kubectl(['apply', '--dry-run=server', '-f', path.join(workDir, 'notes-examples.yaml')]);
    expect(examples.stderr).toBe('');
    expect(examples.stdout.trim().split('\n')).toEqual([
      'scheduler.roomkeeper.io/my-first-game created (server dry run)',
      'scheduler.roomkeeper.io/my-first-game-api created (server dry run)',
    ]);
    // ...and the check has teeth: the same example without its required `game` is refused.
    const { game: _game, ...withoutGame } = spec;
    fs.writeFileSync(path.join(workDir, 'notes-broken.yaml'), JSON.stringify({ ...fromApi, spec: withoutGame }));
    const broken = await kubectl(['apply', '--dry-run=server', '-f', path.join(workDir, 'notes-broken.yaml')]);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toMatch(/game/);

    const upgrade = await mustSucceed(helm(['upgrade', 'rk', CHART_DIR, '--namespace', 'rk-install', '--set', 'logLevel=debug']), 'helm upgrade');
    expect(upgrade.stdout).toContain('REVISION: 2');
    expect(await secretValue('rk-install', 'rk-roomkeeper-auth', 'password')).toBe(password);
    expect(await secretValue('rk-install', 'rk-roomkeeper-room-token', 'token-secret')).toBe(token);
    const env = await mustSucceed(kubectl(['-n', 'rk-install', 'get', 'deployment', 'rk-roomkeeper-operator', '-o', 'jsonpath={.spec.template.spec.containers[0].env[0].value}']), 'get env');
    expect(env.stdout).toBe('debug');

    // Uninstall keeps both secrets, and a reinstall takes them over: the running rooms' tokens and
    // the management password survive (a new room-token secret would fail every room's pings).
    await mustSucceed(helm(['uninstall', 'rk', '--namespace', 'rk-install']), 'helm uninstall');
    expect(await secretValue('rk-install', 'rk-roomkeeper-room-token', 'token-secret')).toBe(token);
    const again = await mustSucceed(helm(['install', 'rk', CHART_DIR, '--namespace', 'rk-install']), 'helm install again');
    expect(again.stdout).toContain('STATUS: deployed');
    expect(await secretValue('rk-install', 'rk-roomkeeper-auth', 'password')).toBe(password);
    expect(await secretValue('rk-install', 'rk-roomkeeper-room-token', 'token-secret')).toBe(token);
  });
});
