/**
 * The whole system for a test: an API server (the embedded sandbox, or a real cluster when
 * `E2E_KUBECONFIG` is set), the simulated kubelet and rooms, one or more operators in process,
 * and a rooms API the simulated rooms ping: the real gateway by default, or (`gateway: false`) a
 * small stand-in that writes ping status the way the gateway does.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { listenLocally } from './local-server';
import { waitFor } from './wait';
import { loadConfig, type Config } from '../../common/src/config';
import { discoverKubeConfig, makeKubeClients, MERGE_PATCH } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { createLogger, type Logger } from '../../common/src/logger';
import { composeRoomStatus, type PingStatus } from '../../common/src/rooms/room-status';
import type { OperationDefinition } from '../../operator/src/operations/execution';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { startGateway, type RunningGateway } from '../../api-gateway/src/main';
import { EventForwarder } from '../../common/src/forwarding';
import { MetricsRegistry } from '../../common/src/metrics';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { isSimulatedNode, startSimulation, type Simulation } from '../../sandbox/src/simulation';

export { schedulerObject } from './scheduler-object';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const CRD_DIR = path.join(REPO_ROOT, 'crds');

export interface StackOptions {
  operators?: number;
  /** Overrides of the operator configuration (fast timings are the default here). */
  config?: Partial<Record<keyof Config, unknown>>;
  extraDefinitions?: readonly OperationDefinition[];
  /** Use the real gateway for pings and the management API (default true). */
  gateway?: boolean;
  /** false: no simulated kubelet/rooms. */
  simulation?: false | { nodes?: number; startDelayMs?: number; pingIntervalMs?: number; deletionCapMs?: number };
  watchWindow?: number;
  /**
   * Run against the cluster named by E2E_KUBECONFIG when it is set (the end-to-end suites do);
   * otherwise, and by default, against a fresh embedded sandbox.
   */
  external?: boolean;
  /**
   * The kubeconfig each component uses, from the one it would use (e.g. through a fault proxy:
   * `(_component, kc) => proxy.kubeConfig(kc)`). The harness's own clients are not changed.
   */
  kubeConfigFor?: (component: 'operator' | 'gateway' | 'simulation', kc: k8s.KubeConfig) => k8s.KubeConfig;
  /** The URL rooms ping (default: the stack's gateway), e.g. a balancer in front of several gateways. */
  roomsApiUrl?: string;
  /** Each operator serves /healthz, /readyz and /metrics on a free port (`opsUrl`; default false). */
  serveOps?: boolean;
}

export interface Stack {
  readonly kc: k8s.KubeConfig;
  readonly sandbox: Sandbox | undefined;
  readonly api: RoomkeeperApi;
  readonly core: k8s.CoreV1Api;
  readonly operators: RunningOperator[];
  readonly simulation: Simulation | undefined;
  readonly roomsUrl: string;
  /** The management API (only with the real gateway). */
  readonly managementUrl: string | undefined;
  readonly gateway: RunningGateway | undefined;
  /** Basic-auth header value for the management API. */
  readonly authHeader: string;
  readonly config: Config;
  readonly logger: Logger;
  /** Writes a kubeconfig for kubectl (works for the sandbox and for a real cluster). */
  writeKubeconfig(file: string): void;
  /** Starts one more operator replica (same configuration). */
  addOperator(): Promise<RunningOperator>;
  /**
   * Replaces the gateway by one with these configuration overrides, on the same ports (a rolling
   * restart of one replica: requests in the gap are refused and retried by their clients).
   */
  restartGateway(overrides: Partial<Record<keyof Config, unknown>>): Promise<RunningGateway>;
  /** Starts one more gateway replica (same configuration and identity, its own ports and replica id); stopped with the stack. */
  addGateway(): Promise<RunningGateway>;
  /** Replaces every operator replica by one with these overrides (`config` becomes theirs). */
  restartOperators(overrides: Partial<Record<keyof Config, unknown>>): Promise<void>;
  stop(): Promise<void>;
}

/** Fast timings for tests; each is a documented setting with a production default. */
export const TEST_CONFIG: Partial<Record<keyof Config, unknown>> = {
  operatorPort: 0,
  // Leadership survives a 4 s stall of the event loop (a loaded 2-core CI machine); a dead leader
  // is replaced within 5.5 s. An operation lease is renewed every second.
  leaseDuration: 5000,
  renewDeadline: 4000,
  retryPeriod: 500,
  operationLeaseTtl: 3000,
  healthInterval: 500,
  autoscaleDebounce: 100,
  roomInitTimeout: 20_000,
  roomPingTimeout: 20_000,
  // The expiry brake's grace after gaining leadership or sight (production: one ping timeout).
  expiryGrace: 500,
  // How long a room pod without its GameRoom is seen so before it is deleted (production: 30 s).
  orphanedPodGrace: 2000,
  validationTimeout: 10_000,
  validationAttempts: 1,
  kubeQps: 2000,
  kubeBurst: 2000,
};

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const logger = createLogger('test', { level: process.env.ROOMKEEPER_TEST_LOG_LEVEL ?? 'error' });
  const external = opts.external && process.env.E2E_KUBECONFIG ? discoverKubeConfig({ E2E_KUBECONFIG: process.env.E2E_KUBECONFIG }) : undefined;
  if (opts.external && process.env.E2E_KUBECONFIG && !external) throw new Error(`E2E_KUBECONFIG=${process.env.E2E_KUBECONFIG}: no such file`);
  const sandbox = external ? undefined : await startSandbox({ crdDirs: [CRD_DIR], watchWindow: opts.watchWindow });
  const kc = external ? external.kc : (sandbox as Sandbox).kubeConfig();
  const clients = makeKubeClients(kc, { qps: 2000, burst: 2000 });
  const api = new RoomkeeperApi(clients.custom);
  if (external) await installCrds(kc);
  const schedulersBefore = new Set(external ? (await api.listSchedulers()).items.map((x) => x.metadata.name as string) : []);

  // On a cluster prepared by the real-API-server tier, each component runs as the Helm chart's
  // ServiceAccount with the environment the chart gives it; the harness itself is administrator.
  const identity = external ? externalIdentities() : undefined;
  const chartEnv = identity?.chartEnv;
  const kubeConfigOf = (component: 'operator' | 'gateway' | 'simulation', own: k8s.KubeConfig | undefined): k8s.KubeConfig =>
    opts.kubeConfigFor ? opts.kubeConfigFor(component, own ?? kc) : own ?? kc;
  const useGateway = opts.gateway ?? true;
  const credentials = chartEnv ? {} : { authUsername: 'tester', authPassword: 'test-password', roomTokenSecret: 'test-room-token-secret' };
  const base = loadConfig(chartEnv?.gateway ?? {}, { ...TEST_CONFIG, ...credentials, ...opts.config });
  const launchGateway = (cfg: Config, ports: { gatewayPort: number; roomsPort: number }, replicaId = 'test-gateway') =>
    startGateway({ config: { ...cfg, ...ports, pingFlushInterval: 500 }, kubeConfig: kubeConfigOf('gateway', identity?.gateway), host: '127.0.0.1', logger: logger.child({ component: 'gateway' }), replicaId });
  const extraGateways: RunningGateway[] = [];
  let gateway = useGateway ? await launchGateway(base, { gatewayPort: 0, roomsPort: 0 }) : undefined;
  const auth = base.authSecretName !== '' && chartEnv ? await readBasicAuth(clients.core, base.authSecretNamespace, base.authSecretName) : { username: base.authUsername, password: base.authPassword };
  const standIn = gateway ? undefined : await startPingStandIn(api);
  const roomsUrl = opts.roomsApiUrl ?? gateway?.roomsUrl ?? (standIn as { url: string }).url;
  let config = loadConfig(chartEnv?.operator ?? {}, { ...TEST_CONFIG, ...credentials, ...opts.config, roomsApiUrl: roomsUrl });
  // On a real cluster the simulated kubelet and rooms attach only when no real node can run pods.
  // ROOMKEEPER_E2E_CORDON_REAL_NODES=true (throwaway clusters such as the K3s container) cordons
  // the real nodes first, so room pods go to simulated nodes and need no game-server image.
  let realNodes = external ? (await clients.core.listNode()).items.filter((n) => !isSimulatedNode(n)) : [];
  if (external && process.env.ROOMKEEPER_E2E_CORDON_REAL_NODES === 'true') {
    for (const node of realNodes) {
      await clients.core.patchNode({ name: node.metadata?.name as string, body: { spec: { unschedulable: true } } }, MERGE_PATCH);
    }
    realNodes = [];
  }
  const simulation = opts.simulation === false || realNodes.length > 0 ? undefined : await startSimulation({
    kubeConfig: kubeConfigOf('simulation', identity?.simulation),
    nodes: opts.simulation?.nodes ?? 2,
    startDelayMs: opts.simulation?.startDelayMs ?? 20,
    deletionCapMs: opts.simulation?.deletionCapMs ?? 50,
    pingIntervalMs: opts.simulation?.pingIntervalMs ?? 300,
    roomsApiUrl: roomsUrl,
    logger,
  });
  const operators: RunningOperator[] = [];
  const forwarder = new EventForwarder({ logger, metrics: new MetricsRegistry() });
  const addOperator = async (): Promise<RunningOperator> => {
    // Each replica its own leader-election identity, as each pod has its own name (the chart's
    // environment gives every replica the same ROOMKEEPER_POD_NAME here).
    const replica = config.identity ? { ...config, identity: `${config.identity}-${operators.length}` } : config;
    const op = await startOperator({
      kubeConfig: kubeConfigOf('operator', identity?.operator), config: replica, logger: logger.child({ component: 'operator' }), extraDefinitions: opts.extraDefinitions, serveOps: opts.serveOps === true, forwarder,
    });
    operators.push(op);
    return op;
  };
  for (let i = 0; i < (opts.operators ?? 1); i++) await addOperator();

  const restartGateway = async (overrides: Partial<Record<keyof Config, unknown>>): Promise<RunningGateway> => {
    if (!gateway) throw new Error('restartGateway: this stack runs no gateway');
    const ports = { gatewayPort: Number(new URL(gateway.managementUrl).port), roomsPort: Number(new URL(gateway.roomsUrl).port) };
    await gateway.stop();
    gateway = await launchGateway(loadConfig(chartEnv?.gateway ?? {}, { ...TEST_CONFIG, ...credentials, ...opts.config, ...overrides }), ports);
    return gateway;
  };
  const restartOperators = async (overrides: Partial<Record<keyof Config, unknown>>): Promise<void> => {
    const replicas = operators.length;
    for (const op of operators.splice(0)) await op.stop();
    config = loadConfig(chartEnv?.operator ?? {}, { ...TEST_CONFIG, ...credentials, ...opts.config, ...overrides, roomsApiUrl: roomsUrl });
    for (let i = 0; i < replicas; i++) await addOperator();
  };

  const addGateway = async (): Promise<RunningGateway> => {
    const replica = await launchGateway(base, { gatewayPort: 0, roomsPort: 0 }, `test-gateway-${extraGateways.length + 1}`);
    extraGateways.push(replica);
    return replica;
  };

  return {
    kc, sandbox, api, core: clients.core, operators, simulation, roomsUrl, logger, addOperator, restartGateway, restartOperators, addGateway,
    get config() { return config; },
    get gateway() { return gateway; },
    managementUrl: gateway?.managementUrl,
    writeKubeconfig: (file: string) => fs.writeFileSync(file, kc.exportConfig(), { mode: 0o600 }),
    authHeader: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`,
    async stop() {
      const left = external ? await deleteSchedulersCreatedSince(api, schedulersBefore) : [];
      for (const op of operators) await op.stop().catch(() => undefined);
      await simulation?.stop();
      await gateway?.stop();
      for (const g of extraGateways) await g.stop().catch(() => undefined);
      forwarder.close();
      await standIn?.close();
      await clients.close();
      await sandbox?.stop();
      // On a shared cluster a deletion that never ends is a defect, not something to leave behind.
      if (left.length > 0) throw new Error(`schedulers created by the suite were not deleted within 60 s: ${left.join(', ')}`);
    },
  };
}

interface ExternalIdentities {
  operator?: k8s.KubeConfig;
  gateway?: k8s.KubeConfig;
  simulation?: k8s.KubeConfig;
  chartEnv?: { operator: Record<string, string>; gateway: Record<string, string> };
}

/**
 * E2E_OPERATOR_KUBECONFIG, E2E_GATEWAY_KUBECONFIG and E2E_SIMULATION_KUBECONFIG give each
 * component its own identity; E2E_CHART_ENV (JSON) the environment the chart gives it.
 */
function externalIdentities(env: NodeJS.ProcessEnv = process.env): ExternalIdentities {
  const load = (file: string | undefined): k8s.KubeConfig | undefined => {
    if (!file) return undefined;
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(file);
    return kc;
  };
  return {
    operator: load(env.E2E_OPERATOR_KUBECONFIG),
    gateway: load(env.E2E_GATEWAY_KUBECONFIG),
    simulation: load(env.E2E_SIMULATION_KUBECONFIG),
    chartEnv: env.E2E_CHART_ENV ? JSON.parse(env.E2E_CHART_ENV) as ExternalIdentities['chartEnv'] : undefined,
  };
}

async function readBasicAuth(core: k8s.CoreV1Api, namespace: string, name: string): Promise<{ username: string; password: string }> {
  const secret = await core.readNamespacedSecret({ name, namespace });
  const decode = (key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  return { username: decode('username'), password: decode('password') };
}

/** Applies crds/*.yaml to a cluster (create, or replace when present) and waits until served. */
async function installCrds(kc: k8s.KubeConfig): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const file of fs.readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'))) {
    // loadYaml turns the YAML into client-node's typed model, so extensions such as
    // x-kubernetes-int-or-string survive its serializer.
    const crd = k8s.loadYaml<k8s.V1CustomResourceDefinition>(fs.readFileSync(path.join(CRD_DIR, file), 'utf8'));
    const name = crd.metadata?.name as string;
    try {
      const existing = await ext.readCustomResourceDefinition({ name });
      await ext.replaceCustomResourceDefinition({ name, body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } } }); // eslint-disable-line @typescript-eslint/no-misused-spread -- loadYaml's models are data-only classes, sent as JSON (the allow-list of the tuning misses `V1ObjectMeta | undefined`)
    } catch {
      await ext.createCustomResourceDefinition({ body: crd });
    }
    await waitFor(async () => (await ext.readCustomResourceDefinition({ name })).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'),
      { timeoutMs: 30_000, message: `CRD ${name} established` });
  }
}

/**
 * On a shared cluster, a suite removes the schedulers it created (through the operator, which
 * removes their rooms and namespaces), then the history the operator keeps of them (each one's
 * finished delete_scheduler operation, otherwise pruned only after the retention age).
 */
export async function deleteSchedulersCreatedSince(api: RoomkeeperApi, before: ReadonlySet<string>): Promise<string[]> {
  const mine = (await api.listSchedulers()).items.map((x) => x.metadata.name as string).filter((n) => !before.has(n));
  for (const name of mine) await api.deleteScheduler(name).catch(() => undefined);
  const remaining = async () => (await api.listSchedulers()).items.map((x) => x.metadata.name as string).filter((n) => mine.includes(n));
  // Deleting takes seconds (the namespace's removal), and each poll lists every scheduler of a
  // shared cluster: at the default 20 ms these lists were one in six requests to the real plane
  // during the e2e suites.
  const gone = await waitFor(async () => (await remaining()).length === 0,
    { timeoutMs: 60_000, intervalMs: 250, message: 'schedulers created by the suite deleted' }).then(() => true, () => false);
  if (!gone) return remaining();
  for (const name of mine) {
    for (const op of (await api.listOperations(name)).items) await api.deleteOperation(op.metadata.name as string).catch(() => undefined);
  }
  return [];
}

/**
 * Until a test needs the real gateway, this stand-in takes pings the way the gateway does: it
 * writes the room's ping status (and the composed status) to the GameRoom's status.
 */
async function startPingStandIn(api: RoomkeeperApi): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const m = /^\/scheduler\/([^/]+)\/rooms\/([^/]+)\/ping$/.exec(req.url ?? '');
      let status: string | undefined;
      try {
        status = (JSON.parse(Buffer.concat(chunks).toString()) as { status?: string }).status;
      } catch {
        status = undefined;
      }
      if (!m || !status) {
        res.writeHead(400).end('{"success":false}');
        return;
      }
      const [, scheduler, room] = m as unknown as [string, string, string];
      api.getGameRoom(scheduler, room)
        .then(async (gr) => {
          if (gr.status?.pingStatus === status) return;
          await api.patchGameRoomStatus(scheduler, room, {
            status: {
              pingStatus: status,
              lastPingAt: new Date().toISOString(),
              status: composeRoomStatus(status as PingStatus, gr.status?.instanceStatus ?? 'unknown'),
            },
          });
        })
        .then(() => res.writeHead(200).end('{"success":true}'), () => res.writeHead(200).end('{"success":false}'));
    });
  });
  return listenLocally(server);
}
