/**
 * The parts a benchmark runs, each where a deployment would run it: the sandbox API server in its
 * own process, the gateway in the bench process (so its metrics can be read), the operator in its
 * own process (or in the bench process when a benchmark compares it with code running there),
 * and the simulated kubelet and rooms in their own process. Production defaults everywhere
 * unless a benchmark overrides a setting (and says so).
 */
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
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

export interface BenchStackOptions {
  /** Where the operator runs (default `child`). */
  operator?: 'child' | 'inline' | 'none';
  operatorConfig?: Overrides;
  gatewayConfig?: Overrides;
  /** Simulated kubelet and rooms (default none). */
  simulation?: Omit<SimulationChildArg, 'kubeconfigYaml' | 'roomsApiUrl'> & { rooms?: boolean };
}

export interface BenchStack {
  readonly sandbox: ChildHandle<SandboxReady>;
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

export async function startSandboxChild(): Promise<{ sandbox: ChildHandle<SandboxReady>; kc: k8s.KubeConfig }> {
  const sandbox = await forkChild<SandboxReady>(path.join(PROCESSES_DIR, 'sandbox-child.ts'));
  const kc = new k8s.KubeConfig();
  kc.loadFromString(sandbox.ready.kubeconfigYaml);
  return { sandbox, kc };
}

export async function startBenchStack(opts: BenchStackOptions = {}): Promise<BenchStack> {
  const { sandbox, kc } = await startSandboxChild();
  const stops: (() => Promise<void>)[] = [() => sandbox.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const clients = makeKubeClients(kc, { qps: 10_000, burst: 10_000 });
    stops.push(async () => clients.limiter.drain());
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
      const arg: OperatorChildArg = { kubeconfigYaml: sandbox.ready.kubeconfigYaml, config: { ...operatorConfig } };
      // The heap limit the Helm chart gives the operator (operator.maxHeapMB), unless told otherwise.
      const nodeFlags = (process.env.BENCH_OPERATOR_NODE_FLAGS ?? '--max-old-space-size=160').split(' ').filter(Boolean);
      const child = await forkChild<{ opsUrl: string | undefined }>(path.join(PROCESSES_DIR, 'operator-child.ts'), { arg, nodeFlags });
      operatorChild = child;
      stops.push(() => child.stop());
    } else if (opts.operator === 'inline') {
      await startInlineOperator();
    }

    let simulation: ChildHandle<null> | undefined;
    if (opts.simulation) {
      const { rooms, ...rest } = opts.simulation;
      const arg: SimulationChildArg = { ...rest, kubeconfigYaml: sandbox.ready.kubeconfigYaml, ...(rooms === false ? {} : { roomsApiUrl: gateway.roomsUrl }) };
      const sim = await forkChild<null>(path.join(PROCESSES_DIR, 'simulation-child.ts'), { arg });
      simulation = sim;
      stops.push(() => sim.stop());
    }

    return {
      sandbox, kc, clients, api: new RoomkeeperApi(clients.custom), gateway, gatewayMetrics,
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
