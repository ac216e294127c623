/**
 * `npm start`: the whole system on one machine.
 *
 * With no cluster configured (no KUBECONFIG, not in a pod) it starts the embedded sandbox API
 * server, writes a kubeconfig for it (default `.roomkeeper/kubeconfig`, moved with
 * ROOMKEEPER_KUBECONFIG_FILE), the simulated kubelet and game rooms, the operator and the
 * gateway, prints where everything is, and runs until Ctrl-C. With a cluster configured it runs
 * the operator and the gateway against that cluster instead (and simulated nodes and rooms only
 * if the cluster has no node).
 *
 * It lives outside `sandbox/` because it starts the product: the launcher depends on the sandbox,
 * never the other way round (the sandbox is a test double and may not import the operator or the
 * gateway; `eslint.config.mjs` enforces it).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type KubeConfig, VersionApi } from '@kubernetes/client-node';
import { startGateway } from '../api-gateway/src/main';
import { discoverKubeConfig, makeKubeClients } from '../common/src/kube/clients';
import { EventForwarder } from '../common/src/forwarding';
import { createLogger, toggleDebugOnSignal } from '../common/src/logger';
import { MetricsRegistry } from '../common/src/metrics';
import { portInUseMessage } from '../common/src/ops-server';
import { SCHEDULER_LABEL } from '../common/src/resources/labels';
import { startOperator } from '../operator/src/operator';
import { startSandbox, type Sandbox } from '../sandbox/src/index';
import { isSimulatedNode, startSimulation, type Simulation } from '../sandbox/src/simulation';
import { launcherConfig, type LocalSecrets } from './start-config';

const STATE_DIR = path.resolve(process.env.ROOMKEEPER_STATE_DIR ?? '.roomkeeper');

/** Credentials kept across restarts, so rooms created before a restart can still ping. */
function localSecrets(): LocalSecrets {
  const file = path.join(STATE_DIR, 'secrets.json');
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LocalSecrets;
  } catch {
    const secrets = { username: 'admin', password: randomBytes(12).toString('base64url'), roomTokenSecret: randomBytes(32).toString('base64url') };
    fs.mkdirSync(STATE_DIR, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
    return secrets;
  }
}

/** What `npm start` is doing, so a busy port can be named by its role. */
type Phase = 'sandbox' | 'gateway' | 'operator' | 'other';
let phase: Phase = 'other';
let ports: { gateway?: number; rooms?: number; operator?: number; sandbox?: number } = {};

/**
 * "management API port 8080 is in use; set ROOMKEEPER_GATEWAY_PORT to another port" for a listen
 * that failed with EADDRINUSE, or undefined for any other error.
 */
function busyPortMessage(err: unknown, where: Phase, configured: typeof ports): string | undefined {
  const e = err as (NodeJS.ErrnoException & { port?: number }) | null | undefined;
  if (!e || e.code !== 'EADDRINUSE') return undefined;
  const port = e.port ?? configured.gateway ?? '(unknown)';
  const say = (role: string, variable: string): string => portInUseMessage(role, port, variable);
  if (where === 'sandbox') return say('sandbox Kubernetes API', 'ROOMKEEPER_SANDBOX_PORT');
  if (where === 'operator') return say('operator (health and metrics)', 'ROOMKEEPER_OPERATOR_PORT');
  if (where === 'gateway') {
    if (port === configured.gateway && port !== configured.rooms) return say('management API', 'ROOMKEEPER_GATEWAY_PORT');
    if (port === configured.rooms && port !== configured.gateway) return say('rooms API', 'ROOMKEEPER_ROOMS_PORT');
    return say('management API or rooms API', 'ROOMKEEPER_GATEWAY_PORT or ROOMKEEPER_ROOMS_PORT');
  }
  return `port ${port} is in use; set ROOMKEEPER_GATEWAY_PORT, ROOMKEEPER_ROOMS_PORT or ROOMKEEPER_OPERATOR_PORT to free ports`;
}

async function main(): Promise<void> {
  const logger = createLogger('roomkeeper', { level: process.env.ROOMKEEPER_LOG_LEVEL ?? 'warn' });
  toggleDebugOnSignal(logger);
  const cluster = discoverKubeConfig();
  let sandbox: Sandbox | undefined;
  let kubeconfigFile: string | undefined;
  if (!cluster) {
    phase = 'sandbox';
    ports.sandbox = Number(process.env.ROOMKEEPER_SANDBOX_PORT ?? 0);
    const snapshot = process.env.ROOMKEEPER_SANDBOX_SNAPSHOT ?? path.join(STATE_DIR, 'sandbox-state.json');
    sandbox = await startSandbox({
      port: Number(process.env.ROOMKEEPER_SANDBOX_PORT ?? 0),
      crdDirs: [path.resolve(__dirname, '../crds')],
      snapshotFile: snapshot === '' ? undefined : snapshot,
      logger: logger.child({ component: 'sandbox' }),
    });
    kubeconfigFile = path.resolve(process.env.ROOMKEEPER_KUBECONFIG_FILE ?? path.join(STATE_DIR, 'kubeconfig'));
    fs.mkdirSync(path.dirname(kubeconfigFile), { recursive: true });
    await sandbox.writeKubeconfig(kubeconfigFile);
  }
  const kc = cluster?.kc ?? (sandbox as Sandbox).kubeConfig();
  if (cluster) await assertReachable(kc, cluster.source);

  const secrets = localSecrets();
  const env = process.env;
  const config = launcherConfig(env, secrets, sandbox !== undefined);
  ports = { ...ports, gateway: config.gatewayPort, rooms: config.roomsPort, operator: config.operatorPort };
  phase = 'gateway';
  const gateway = await startGateway({ config, kubeConfig: kc, logger: logger.child({ component: 'gateway' }) });
  const roomsApiUrl = gateway.roomsUrl;
  // The simulated nodes (they go with the simulation at each stop) are registered before the
  // operator starts: its first look at the rooms left from the last run must find their nodes, or
  // it gives them the pods' host IPs (the nodes' internal addresses) as the rooms' addresses.
  phase = 'other';
  let simulation: Simulation | undefined;
  // Simulated nodes a run left behind (killed, so its stop never deleted them) are no real ones:
  // taking them for real ones left every room Pending, bound to a node no kubelet served.
  const realNodes = sandbox ? [] : (await makeKubeClients(kc, { qps: 50, burst: 100 }).core.listNode()).items.filter((n) => !isSimulatedNode(n));
  if (realNodes.length === 0) {
    // Room pods only: another pod (a Helm release's operator and gateway, anything of the user's)
    // stays Pending, as on any cluster without nodes, rather than shown Running with nothing in it.
    simulation = await startSimulation({ kubeConfig: kc, roomsApiUrl, podLabelSelector: SCHEDULER_LABEL, logger: logger.child({ component: 'simulation' }) });
  }

  phase = 'operator';
  // The operator forwards the status changes it makes (a room removed is `terminated`, an
  // allocation and the end of its TTL) as operator/src/main.ts does; its metrics count them.
  const operatorLogger = logger.child({ component: 'operator' });
  const operatorMetrics = new MetricsRegistry();
  const forwarder = new EventForwarder({ logger: operatorLogger, metrics: operatorMetrics });
  const operator = await startOperator({ kubeConfig: kc, config: { ...config, roomsApiUrl }, logger: operatorLogger, metrics: operatorMetrics, forwarder })
    .catch(async (err: unknown) => {
      await simulation?.stop(); // no simulated node left behind for the next npm start to take for a real one
      throw err;
    });

  const lines = [
    '',
    'Roomkeeper is running.',
    sandbox
      ? `  Kubernetes API (embedded sandbox): ${sandbox.url}\n  kubeconfig: ${kubeconfigFile ?? ''}\n    export KUBECONFIG=${kubeconfigFile ?? ''}\n    kubectl get schedulers`
      : `  Kubernetes cluster from ${cluster?.source ?? 'the environment'}`,
    `  Management API: ${gateway.managementUrl}   (HTTP Basic: ${config.authUsername} / ${config.authPassword})`,
    `  Rooms API:      ${gateway.roomsUrl}`,
    `  Operator:       ${operator.opsUrl ? `${operator.opsUrl}/metrics` : 'no health and metrics port'}`,
    simulation ? '  Simulated nodes and game rooms: on (rooms ping the rooms API)' : '',
    '',
    'Create a scheduler:',
    `  curl -u ${config.authUsername}:${config.authPassword} -H 'Content-Type: application/json' ${gateway.managementUrl}/schedulers -d @sandbox/examples/scheduler.json`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ];
  process.stdout.write(lines.filter((l) => l !== '').join('\n') + '\n');

  let stoppingSince = 0;
  const stop = async (signal: string): Promise<void> => {
    // Ctrl-C can reach this process more than once (the terminal signals the whole process group,
    // and npm relays it): a repeat within a few seconds is the same request; a later one forces
    // the exit.
    if (stoppingSince > 0) {
      if (Date.now() - stoppingSince > 3000) process.exit(1);
      return;
    }
    stoppingSince = Date.now();
    process.stdout.write(`\n${signal}: stopping...\n`);
    // The operator first: it must not see the simulated nodes go (the simulation deletes them).
    await operator.stop();
    forwarder.close();
    // On a cluster of the user's, the nodes holding room pods stay: deleted, kube-controller-manager
    // deletes their pods about 40 s later, and a restart longer than that lost every room.
    const kept = await simulation?.stop({ keepNodesWithPods: !sandbox }) ?? [];
    if (kept.length > 0) {
      process.stdout.write(`Kept the ${kept.length} simulated nodes that hold room pods (${kept.join(', ')}): an npm start within 5 minutes takes them up again with their rooms; `
        + `after that, kube-controller-manager evicts their pods, as from any node that stopped reporting. To remove them: kubectl delete node ${kept.join(' ')}\n`);
    }
    await gateway.stop();
    await sandbox?.stop();
    process.stdout.write('Stopped.\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/** Fails fast, and says what to do, when a configured cluster does not answer. */
async function assertReachable(kc: KubeConfig, source: string): Promise<void> {
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  try {
    await Promise.race([
      kc.makeApiClient(VersionApi).getCode(),
      new Promise((_r, reject) => setTimeout(() => reject(new Error('no answer within 10 s')), 10_000).unref()),
    ]);
  } catch (err) {
    throw new Error(`${source} points at ${server}, which does not answer (${err instanceof Error ? err.message : String(err)}). ` +
      'Unset KUBECONFIG (and E2E_KUBECONFIG) to run on the embedded sandbox instead.', { cause: err });
  }
}

main().catch((err: unknown) => {
  const busy = busyPortMessage(err, phase, ports);
  console.error(`roomkeeper failed to start: ${busy ?? (err instanceof Error ? err.message : String(err))}`);
  process.exit(1);
});
