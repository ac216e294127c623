/**
 * A real Kubernetes control plane as a test fixture (the envtest approach): etcd, kube-apiserver
 * and kube-controller-manager as local processes on free loopback ports (see ports.ts), with a
 * fresh data dir.
 *
 * The binaries come from `ROOMKEEPER_K8S_ASSETS` (a folder holding the three). Authentication is
 * by static tokens (`tokens.csv`): an administrator for the tests themselves and a simulation
 * identity for the simulated kubelet and rooms. Roomkeeper's own components get ServiceAccount
 * tokens from the TokenRequest API (see `serviceAccountKubeconfig`), so they hold exactly what
 * the Helm chart grants them. RBAC is the authorizer: nobody else is an administrator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePorts } from './ports';

const K8S_ASSETS_ENV = 'ROOMKEEPER_K8S_ASSETS';
/** The shared plane's description (JSON file) for suites that need more than the kubeconfig. */
export const REAL_APISERVER_INFO_ENV = 'ROOMKEEPER_REAL_APISERVER_INFO';

const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager'] as const;

/** The folder with the three binaries, or undefined (with the reason) when they are not there. */
export function controlPlaneAssets(env: NodeJS.ProcessEnv = process.env): { dir: string } | { missing: string } {
  // Next to a checkout of this repository, ../shared/k8s/v1.28.0/bin is used when nothing is set.
  const beside = path.resolve(__dirname, '../../../shared/k8s/v1.28.0/bin');
  const dir = env[K8S_ASSETS_ENV] ?? (fs.existsSync(beside) ? beside : undefined);
  if (!dir) return { missing: `set ${K8S_ASSETS_ENV} to a folder holding ${BINARIES.join(', ')} (.ci/run uses ../shared/k8s/v1.28.0/bin)` };
  for (const b of BINARIES) {
    if (!fs.existsSync(path.join(dir, b))) return { missing: `${K8S_ASSETS_ENV}=${dir} has no ${b}` };
  }
  return { dir: path.resolve(dir) };
}

/** What a started plane tells its users; also written as JSON for other processes. */
export interface ControlPlaneInfo {
  readonly url: string;
  /** etcd's client URL (plain HTTP on 127.0.0.1): for what only etcd can do, such as compacting its history. */
  readonly etcdUrl: string;
  readonly caFile: string;
  readonly dir: string;
  /** Administrator (group system:masters). */
  readonly adminKubeconfig: string;
  readonly adminToken: string;
  /** The simulated kubelet and rooms' own identity (bound to cluster-admin by the fixture). */
  readonly simKubeconfig: string;
  readonly simToken: string;
  readonly pids: { etcd: number; apiserver: number; controllerManager: number };
}

export interface ControlPlane extends ControlPlaneInfo {
  /** Stops kube-apiserver (SIGKILL or a graceful SIGTERM) and resolves when it has exited. */
  stopApiServer(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts kube-apiserver again on the same port and waits until it is ready. */
  startApiServer(): Promise<void>;
  stopEtcd(): Promise<void>;
  startEtcd(): Promise<void>;
  stop(): Promise<void>;
}

function kubeconfigYaml(url: string, caFile: string, user: string, token: string): string {
  return [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: real', '  cluster:', `    server: ${url}`, `    certificate-authority: ${caFile}`,
    'users:', `- name: ${user}`, '  user:', `    token: ${token}`,
    'contexts:', '- name: real', '  context:', '    cluster: real', `    user: ${user}`,
    'current-context: real', '',
  ].join('\n');
}

/** A kubeconfig for a token, written next to the plane's own files. */
export function writeTokenKubeconfig(info: ControlPlaneInfo, user: string, token: string): string {
  const file = path.join(info.dir, `kubeconfig-${user.replace(/[^a-zA-Z0-9.-]/g, '_')}`);
  fs.writeFileSync(file, kubeconfigYaml(info.url, info.caFile, user, token), { mode: 0o600 });
  return file;
}

/** A GET over HTTPS with the plane's CA and a bearer token (e.g. the API server's /readyz or /metrics). */
export function httpsGet(url: string, caFile: string | undefined, token?: string, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, {
      ca: caFile && fs.existsSync(caFile) ? fs.readFileSync(caFile) : undefined,
      rejectUnauthorized: Boolean(caFile),
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      timeout: timeoutMs,
    }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what}: the process exited (${String(child.exitCode ?? child.signalCode)}); last output:\n${tail(log)}`);
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms; last output:\n${tail(log)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no output)';
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

/** Set to a file path, kube-apiserver writes its audit log there: every request's user, user agent, verb, resource and answer (level Metadata). */
const AUDIT_LOG_ENV = 'ROOMKEEPER_APISERVER_AUDIT_LOG';

/** Audit log flags; one file, never rotated (kube-apiserver rotates at 100 MB unless told). */
function auditArgs(dir: string): string[] {
  const log = process.env[AUDIT_LOG_ENV];
  if (!log) return [];
  const policy = path.join(dir, 'audit-policy.yaml');
  fs.writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n');
  return [`--audit-policy-file=${policy}`, `--audit-log-path=${path.resolve(log)}`, '--audit-log-maxsize=1000000', '--audit-log-mode=batch'];
}

/**
 * Starts a fresh plane. `dir` (default: a new temp folder) holds data, certificates, tokens,
 * kubeconfigs and each program's output (`*.log`).
 */
export async function startControlPlane(opts: { assetsDir: string; dir?: string } ): Promise<ControlPlane> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rk-plane-'));
  fs.mkdirSync(path.join(dir, 'serving'), { recursive: true });
  const bin = (name: string): string => path.join(opts.assetsDir, name);
  const [etcdPort, peerPort, apiPort, kcmPort] = await freePorts(4) as [number, number, number, number];
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }));
  fs.writeFileSync(path.join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  const adminToken = crypto.randomBytes(24).toString('hex');
  const simToken = crypto.randomBytes(24).toString('hex');
  fs.writeFileSync(path.join(dir, 'tokens.csv'), [
    `${adminToken},rk-test-admin,rk-test-admin,"system:masters"`,
    `${simToken},roomkeeper-simulation,roomkeeper-simulation,"roomkeeper:simulation"`,
  ].join('\n') + '\n', { mode: 0o600 });
  const url = `https://127.0.0.1:${apiPort}`;
  const caFile = path.join(dir, 'serving', 'apiserver.crt');
  const spawnLogged = (name: string, args: string[]): ChildProcess => {
    const out = fs.openSync(path.join(dir, `${name}.log`), 'a');
    const child = spawn(bin(name), args, { stdio: ['ignore', out, out], detached: false });
    fs.closeSync(out);
    return child;
  };

  const etcdArgs = [
    '--data-dir', path.join(dir, 'etcd'),
    '--listen-client-urls', `http://127.0.0.1:${etcdPort}`, '--advertise-client-urls', `http://127.0.0.1:${etcdPort}`,
    '--listen-peer-urls', `http://127.0.0.1:${peerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`,
    '--initial-cluster', `default=http://127.0.0.1:${peerPort}`, '--name', 'default',
    // Tests write many small objects; keep the database small and its syncs cheap.
    '--quota-backend-bytes', String(4 * 1024 ** 3), '--unsafe-no-fsync',
  ];
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`, '--bind-address=127.0.0.1', `--secure-port=${apiPort}`,
    '--advertise-address=127.0.0.1', '--endpoint-reconciler-type=none', `--cert-dir=${path.join(dir, 'serving')}`,
    '--service-account-issuer=https://kubernetes.default.svc', '--api-audiences=https://kubernetes.default.svc',
    `--service-account-key-file=${path.join(dir, 'sa.pub')}`, `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
    `--token-auth-file=${path.join(dir, 'tokens.csv')}`, '--authorization-mode=RBAC',
    '--service-cluster-ip-range=10.0.0.0/24', '--allow-privileged=true',
    '--enable-admission-plugins=NamespaceLifecycle,ServiceAccount',
    // A test run creates thousands of objects quickly; the defaults (400/200 in flight) suffice,
    // but a loaded 2-core machine needs patience for the first requests.
    '--max-requests-inflight=800', '--max-mutating-requests-inflight=400',
    ...auditArgs(dir),
  ];
  const adminKubeconfig = path.join(dir, 'kubeconfig-admin');
  fs.writeFileSync(adminKubeconfig, kubeconfigYaml(url, caFile, 'rk-test-admin', adminToken), { mode: 0o600 });
  const simKubeconfig = path.join(dir, 'kubeconfig-simulation');
  fs.writeFileSync(simKubeconfig, kubeconfigYaml(url, caFile, 'roomkeeper-simulation', simToken), { mode: 0o600 });
  const kcmArgs = [
    `--kubeconfig=${adminKubeconfig}`, '--bind-address=127.0.0.1', `--secure-port=${kcmPort}`,
    '--leader-elect=false', '--controllers=*', '--use-service-account-credentials=false',
    `--service-account-private-key-file=${path.join(dir, 'sa.key')}`, `--root-ca-file=${caFile}`,
    // Garbage collection and namespace deletion promptly, as tests wait on them.
    '--concurrent-gc-syncs=10', '--concurrent-namespace-syncs=5',
  ];

  let etcd: ChildProcess | undefined;
  let apiserver: ChildProcess | undefined;
  let kcm: ChildProcess | undefined;
  const startEtcd = async (): Promise<void> => {
    etcd = spawnLogged('etcd', etcdArgs);
    const child = etcd;
    await until('etcd', 30_000, async () => {
      const res = await fetch(`http://127.0.0.1:${etcdPort}/health`).then((r) => r.text());
      return res.includes('"health":"true"');
    }, child, path.join(dir, 'etcd.log'));
  };
  const startApiServer = async (): Promise<void> => {
    apiserver = spawnLogged('kube-apiserver', apiArgs);
    const child = apiserver;
    await until('kube-apiserver', 90_000, async () => {
      if (!fs.existsSync(caFile)) return false;
      const res = await httpsGet(`${url}/readyz`, caFile, adminToken);
      return res.status === 200 && res.body.trim() === 'ok';
    }, child, path.join(dir, 'kube-apiserver.log'));
  };
  const stopAll = async (): Promise<void> => {
    await stopChild(kcm);
    await stopChild(apiserver);
    await stopChild(etcd);
  };
  try {
    await startEtcd();
    await startApiServer();
    kcm = spawnLogged('kube-controller-manager', kcmArgs);
    await bindSimulationIdentity(url, caFile, adminToken);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const info: ControlPlaneInfo = {
    url, etcdUrl: `http://127.0.0.1:${etcdPort}`, caFile, dir, adminKubeconfig, adminToken, simKubeconfig, simToken,
    pids: { etcd: etcd?.pid ?? 0, apiserver: apiserver?.pid ?? 0, controllerManager: kcm.pid ?? 0 },
  };
  fs.writeFileSync(path.join(dir, 'plane.json'), JSON.stringify(info, null, 2));
  return {
    ...info,
    get pids() {
      return { etcd: etcd?.pid ?? 0, apiserver: apiserver?.pid ?? 0, controllerManager: kcm.pid ?? 0 };
    },
    stopApiServer: (signal = 'SIGKILL') => stopChild(apiserver, signal, 70_000),
    startApiServer,
    stopEtcd: () => stopChild(etcd, 'SIGKILL'),
    startEtcd,
    stop: async () => {
      await stopAll();
      if (!opts.dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The simulated kubelet and rooms act for nodes and game servers: give their identity admin. */
async function bindSimulationIdentity(url: string, caFile: string, adminToken: string): Promise<void> {
  const body = JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
    metadata: { name: 'roomkeeper-simulation' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'roomkeeper:simulation' }],
  });
  await new Promise<void>((resolve, reject) => {
    const req = https.request(`${url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, {
      method: 'POST', ca: fs.readFileSync(caFile),
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 || res.statusCode === 409 ? resolve() : reject(new Error(`binding the simulation identity: HTTP ${String(res.statusCode)}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
