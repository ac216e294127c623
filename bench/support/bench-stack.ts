/**
 * The parts a benchmark runs, each where a deployment would run it: the sandbox API server in its
 * own process, the gateway in the bench process (so its metrics can be read), the operator in its
 * own process (or in the bench process when a benchmark compares it with code running there),
 * and the simulated kubelet and rooms in their own process. Production defaults everywhere
 * unless a benchmark overrides a setting (and says so).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { controlPlaneAssets, httpsGet } from '../../test/support/control-plane';
import { startRealApiServer } from '../../test/support/real-apiserver';
import { loadConfig, type Config } from '../../common/src/config';
import { makeKubeClients, type KubeClients } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { createLogger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { startGateway, type RunningGateway } from '../../api-gateway/src/main';
import { forkChild, type ChildHandle } from './child-rpc';
import { ManagementClient } from './management-client';
import type { SandboxReady } from '../processes/sandbox-child';
import type { SimulationChildArg } from '../processes/simulation-child';
import type { OperatorChildArg } from '../processes/operator-child';

export const PROCESSES_DIR = path.resolve(__dirname, '../processes');
export const BENCH_SECRETS = { authUsername: 'bench', authPassword: 'bench-password', roomTokenSecret: 'bench-room-token-secret' } as const;

type Overrides = Partial<Record<keyof Config, unknown>>;

const CHART_VALUES = path.resolve(__dirname, '../../helm/roomkeeper/values.yaml');

/**
 * The node flags a bench child of the operator or the gateway runs with: the V8 heap limit the Helm
 * chart gives that component (`<component>.maxHeapMB`, `maxSemiSpaceMB` and `optimizeForSize` in the chart's values.yaml), unless
 * BENCH_OPERATOR_NODE_FLAGS or BENCH_GATEWAY_NODE_FLAGS says otherwise (space-separated flags).
 */
export function chartNodeFlags(component: 'operator' | 'gateway'): string[] {
  const override = process.env[`BENCH_${component.toUpperCase()}_NODE_FLAGS`];
  if (override !== undefined) return override.split(' ').filter(Boolean);
  const values = parseYaml(fs.readFileSync(CHART_VALUES, 'utf8')) as Record<string, { maxHeapMB?: unknown; maxSemiSpaceMB?: unknown; optimizeForSize?: unknown } | undefined>;
  const mb = values[component]?.maxHeapMB;
  if (typeof mb !== 'number') throw new Error(`${CHART_VALUES} has no ${component}.maxHeapMB`);
  const semi = values[component]?.maxSemiSpaceMB;
  return [
    `--max-old-space-size=${String(mb)}`,
    ...(typeof semi === 'number' ? [`--max-semi-space-size=${String(semi)}`] : []),
    ...(values[component]?.optimizeForSize === true ? ['--optimize-for-size'] : []),
  ];
}

export interface BenchStackOptions {
  /** Where the operator runs (default `child`). */
  operator?: 'child' | 'inline' | 'none';
  operatorConfig?: Overrides;
  gatewayConfig?: Overrides;
  /** Simulated kubelet and rooms (default none). */
  simulation?: Omit<SimulationChildArg, 'kubeconfigYaml' | 'roomsApiUrl'> & { rooms?: boolean };
  /** The API server (default the sandbox). */
  target?: BenchTarget;
}

export interface BenchStack {
  readonly cluster: BenchCluster;
  /** Only on the sandbox target. */
  readonly sandbox: ChildHandle<SandboxReady> | undefined;
  readonly kc: k8s.KubeConfig;
  /** Clients for the benchmark's own reads and setup (not rate limited in practice). */
  readonly clients: KubeClients;
  readonly api: RoomkeeperApi;
  readonly gateway: RunningGateway;
  readonly gatewayMetrics: MetricsRegistry;
  readonly management: ManagementClient;
  /** The gateway's configuration (production defaults plus bench secrets and overrides). */
  readonly gatewayConfig: Config;
  readonly operatorConfig: Config;
  readonly operatorChild: ChildHandle<{ opsUrl: string | undefined }> | undefined;
  readonly operatorInline: RunningOperator | undefined;
  readonly simulation: ChildHandle<null> | undefined;
  /** Starts the operator later (for `operator: 'none'` stacks that start it on cue). */
  startInlineOperator(): Promise<RunningOperator>;
  stop(): Promise<void>;
}

async function startSandboxChild(): Promise<{ sandbox: ChildHandle<SandboxReady>; kc: k8s.KubeConfig }> {
  const sandbox = await forkChild<SandboxReady>(path.join(PROCESSES_DIR, 'sandbox-child.ts'));
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sandbox.ready.kubeconfigYaml);
  return { sandbox, kc };
}

/**
 * Where a benchmark runs: the sandbox API server in its own process, or a real Kubernetes v1.28
 * control plane (etcd, kube-apiserver, kube-controller-manager from ROOMKEEPER_K8S_ASSETS or
 * ../shared/k8s/v1.28.0/bin) prepared as the real-API-server test tier prepares it: the operator
 * runs as the chart's ServiceAccount, the simulation as its own identity.
 */
export interface BenchCluster {
  readonly target: BenchTarget;
  readonly kc: k8s.KubeConfig;
  /** Administrator. */
  readonly kubeconfigYaml: string;
  readonly operatorKubeconfigYaml: string;
  readonly gatewayKubeconfigYaml: string;
  readonly simulationKubeconfigYaml: string;
  /** Only on the sandbox. */
  readonly sandbox: ChildHandle<SandboxReady> | undefined;
  /** Pods in a namespace, counted by the API server. */
  countPods(namespace: string): Promise<number>;
  /** The real API server's own Prometheus text (`/metrics`); undefined on the sandbox. */
  apiServerMetrics(): Promise<string | undefined>;
  /** The cluster's processes by name (the sandbox; or etcd, kube-apiserver, kube-controller-manager), read when called. */
  processes(): Record<string, number>;
  stop(): Promise<void>;
}

export type BenchTarget = 'sandbox' | 'real';

/** Whether the real control plane can run here, or why not. */
export function realTargetAvailable(): { ok: true } | { ok: false; reason: string } {
  const assets = controlPlaneAssets();
  return 'missing' in assets ? { ok: false, reason: assets.missing } : { ok: true };
}

export async function startBenchCluster(target: BenchTarget): Promise<BenchCluster> {
  if (target === 'sandbox') {
    const { sandbox, kc } = await startSandboxChild();
    const yaml = sandbox.ready.kubeconfigYaml;
    return {
      target, kc, sandbox, kubeconfigYaml: yaml, operatorKubeconfigYaml: yaml, gatewayKubeconfigYaml: yaml, simulationKubeconfigYaml: yaml,
      countPods: (namespace) => sandbox.call<number>('count', { resource: 'pods', namespace }),
      apiServerMetrics: () => Promise.resolve(undefined),
      processes: () => ({ 'sandbox API server': sandbox.pid }),
      stop: () => sandbox.stop(),
    };
  }
  const assets = controlPlaneAssets();
  if ('missing' in assets) throw new Error(`real control plane not available: ${assets.missing}`);
  const { plane, info } = await startRealApiServer(assets.dir);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(info.adminKubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const read = (file: string) => fs.readFileSync(file, 'utf8');
  return {
    target, kc, sandbox: undefined,
    kubeconfigYaml: read(info.adminKubeconfig), operatorKubeconfigYaml: read(info.operatorKubeconfig), gatewayKubeconfigYaml: read(info.gatewayKubeconfig), simulationKubeconfigYaml: read(info.simKubeconfig),
    // A one-item list reports how many items remain: a count without transferring the pods.
    countPods: async (namespace) => {
      const list = await core.listNamespacedPod({ namespace, limit: 1 });
      return list.items.length + (list.metadata?.remainingItemCount ?? 0);
    },
    apiServerMetrics: async () => {
      const res = await httpsGet(`${info.url}/metrics`, info.caFile, info.adminToken, 30_000);
      if (res.status !== 200) throw new Error(`GET /metrics of the API server: HTTP ${res.status}`);
      return res.body;
    },
    processes: () => {
      const { etcd, apiserver, controllerManager } = plane.pids;
      return { etcd, 'kube-apiserver': apiserver, 'kube-controller-manager': controllerManager };
    },
    stop: () => plane.stop(),
  };
}

export async function startBenchStack(opts: BenchStackOptions = {}): Promise<BenchStack> {
  const cluster = await startBenchCluster(opts.target ?? 'sandbox');
  const { kc } = cluster;
  const sandbox = cluster.sandbox;
  const stops: (() => Promise<void>)[] = [() => cluster.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const clients = makeKubeClients(kc, { qps: 10_000, burst: 10_000 });
    stops.push(() => {
      clients.limiter.drain();
      return Promise.resolve();
    });
    const logger = createLogger('bench', { level: process.env.BENCH_LOG_LEVEL ?? 'error' });
    const gatewayConfig = loadConfig({}, { logLevel: 'error', gatewayPort: 0, roomsPort: 0, ...BENCH_SECRETS, ...opts.gatewayConfig });
    const gatewayMetrics = new MetricsRegistry();
    const gateway = await startGateway({ config: gatewayConfig, kubeConfig: kc, host: '127.0.0.1', logger: logger.child({ component: 'gateway' }), metrics: gatewayMetrics, replicaId: 'bench-gateway' });
    stops.push(() => gateway.stop());
    const operatorConfig = loadConfig({}, { logLevel: 'error', operatorPort: 0, ...BENCH_SECRETS, roomsApiUrl: gateway.roomsUrl, ...opts.operatorConfig });

    let operatorChild: ChildHandle<{ opsUrl: string | undefined }> | undefined;
    let operatorInline: RunningOperator | undefined;
    const startInlineOperator = async () => {
      const op = await startOperator({ kubeConfig: kc, config: operatorConfig, logger: logger.child({ component: 'operator' }), serveOps: false });
      stops.push(() => op.stop());
      operatorInline = op;
      return op;
    };
    if ((opts.operator ?? 'child') === 'child') {
      const arg: OperatorChildArg = { kubeconfigYaml: cluster.operatorKubeconfigYaml, config: { ...operatorConfig } };
      const nodeFlags = chartNodeFlags('operator');
      const child = await forkChild<{ opsUrl: string | undefined }>(path.join(PROCESSES_DIR, 'operator-child.ts'), { arg, nodeFlags });
      operatorChild = child;
      stops.push(() => child.stop());
    } else if (opts.operator === 'inline') {
      await startInlineOperator();
    }

    let simulation: ChildHandle<null> | undefined;
    if (opts.simulation) {
      const { rooms, ...rest } = opts.simulation;
      const arg: SimulationChildArg = { ...rest, kubeconfigYaml: cluster.simulationKubeconfigYaml, ...(rooms === false ? {} : { roomsApiUrl: gateway.roomsUrl }) };
      const sim = await forkChild<null>(path.join(PROCESSES_DIR, 'simulation-child.ts'), { arg });
      simulation = sim;
      stops.push(() => sim.stop());
    }

    return {
      cluster, sandbox, kc, clients, api: new RoomkeeperApi(clients.custom), gateway, gatewayMetrics,
      management: new ManagementClient(gateway.managementUrl, BENCH_SECRETS.authUsername, BENCH_SECRETS.authPassword),
      gatewayConfig, operatorConfig, simulation, startInlineOperator,
      get operatorChild() { return operatorChild; },
      get operatorInline() { return operatorInline; },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
