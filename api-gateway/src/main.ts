/**
 * The only place that wires the gateway together: config, Kubernetes clients, caches, the two
 * Express apps, their listeners, the ping flusher and signals. `startGateway()` runs it in
 * process (for `npm start` and the e2e tests); running this file starts it from the environment.
 */
import type { AddressInfo } from 'node:net';
import type * as http from 'node:http';
import * as os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type * as k8s from '@kubernetes/client-node';
import { loadConfig, type Config } from '../../common/src/config';
import { EventForwarder } from '../../common/src/forwarding/event-forwarder';
import { ForwardingWorker } from '../../common/src/forwarding/forwarding-worker';
import { discoverKubeConfig, makeKubeClients, roomkeeperUserAgent } from '../../common/src/kube/clients';
import { createLogger, exitOnStartFailure, toggleDebugOnSignal, type Logger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { acceptedRoomTokenSecrets, roomTokenKeyId } from '../../common/src/rooms/room-token';
import { cacheCheck, Liveness } from '../../common/src/runtime/liveness';
import { KubernetesStore } from './adapters/kubernetes-store';
import { SecretCredentials } from './adapters/secret-credentials';
import { createManagementApp, createRoomsApp, requestListener } from './app';
import { staticCredentials, type CredentialsProvider } from './auth';
import { createHttpServer, listenerConnections, MANAGEMENT_TIMEOUTS, openFilesLimit, ROOMS_TIMEOUTS } from '../../common/src/http-server';
import { onShutdownSignal, portInUseMessage, startOpsServer, type OpsServer } from '../../common/src/ops-server';
import { PingRecorder, type PendingWriteView } from './pings/ping-recorder';
import { RoomsRefusalLog } from './http/rooms-refusal-log';
import { createSchedulerValidator } from './scheduler-validator';
import type { RoomEventSink } from './use-cases/room-reports';
import type { Readiness } from './routes/health-routes';

/** How often a credentials Secret is re-read. */
const SECRET_REFRESH_MS = 30_000;

export class GatewayStartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayStartupError';
  }
}

export interface StartGatewayOptions {
  config: Config;
  kubeConfig: k8s.KubeConfig;
  logger?: Logger;
  /** Defaults to a new EventForwarder (closed on stop). */
  forwarder?: RoomEventSink;
  metrics?: MetricsRegistry;
  /** Interface to listen on; default all interfaces. Tests pass 127.0.0.1. */
  host?: string;
  /** This replica's id for ping digests; default ROOMKEEPER_POD_NAME, then the hostname. */
  replicaId?: string;
  /** Waits out the drain of `stop({ drainMs })`; default a timer. Tests pass one they end themselves. */
  drainWait?: (ms: number) => Promise<void>;
  /**
   * Open the operations port (ROOMKEEPER_GATEWAY_OPS_PORT: /healthz, /livez, /readyz, /metrics)
   * beside the two API ports. `main()` (the chart's gateway) does; `npm start`, tests and
   * benchmarks leave it off by default, and the management port answers those paths in every case.
   */
  serveOps?: boolean;
}

export interface StopOptions {
  /**
   * Drain first (SIGTERM: ROOMKEEPER_SHUTDOWN_DRAIN_DELAY): /readyz answers 503 at once, while every
   * request is still served for this long and each answer closes its keep-alive connection, so
   * clients reconnect through endpoints that no longer hold this replica. 0 or absent: no drain.
   */
  drainMs?: number;
}

export interface RunningGateway {
  managementUrl: string;
  roomsUrl: string;
  /** The operations port's URL, when it was opened (`serveOps`). */
  opsUrl?: string;
  /** (After the drain, when asked for one.) Stops accepting, finishes in-flight requests, flushes pending pings, closes watches. */
  stop(options?: StopOptions): Promise<void>;
  /** For tests: what the gateway's caches hold now, by resource plural. */
  cached(): Record<string, readonly k8s.KubernetesObject[]>;
  /** For tests: the room status writes this replica answered and has not written yet. */
  pendingPingWrites(): PendingWriteView[];
  /** What a stop under way is doing (its step, and the status writes still pending), for the log of a stop that times out. */
  stopStep(): Record<string, unknown>;
}

async function credentialsFor(config: Config, core: k8s.CoreV1Api, logger: Logger): Promise<{ provider: CredentialsProvider; secret?: SecretCredentials }> {
  const fromConfig = config.authUsername !== '' && config.authPassword !== '' ? { username: config.authUsername, password: config.authPassword } : undefined;
  if (config.authSecretName !== '') {
    const secret = new SecretCredentials({ core, name: config.authSecretName, namespace: config.authSecretNamespace, logger, fallback: fromConfig });
    const read = await secret.refresh();
    if (read === 'read' || fromConfig) return { provider: secret, secret };
    const named = `Secret ${config.authSecretNamespace}/${config.authSecretName}`;
    if (read === 'incomplete') {
      throw new GatewayStartupError(`no management API credentials: ${named} has no username and password, and ROOMKEEPER_AUTH_USERNAME/ROOMKEEPER_AUTH_PASSWORD are not set`);
    }
    // What only a change of the Secret or of RBAC mends stops the start, saying which.
    if (read.unreadable === 404) {
      throw new GatewayStartupError(`no management API credentials: ${named} does not exist: create it with keys username and password, or name an existing one in ROOMKEEPER_AUTH_SECRET_NAME and ROOMKEEPER_AUTH_SECRET_NAMESPACE (the chart's auth.existingSecret)`);
    }
    if (read.unreadable === 403) {
      throw new GatewayStartupError(`no management API credentials: the API server refused the gateway reading ${named} (403 Forbidden): grant its ServiceAccount get on that Secret (the chart grants it on the Secret it makes, or the one auth.existingSecret names), or check that ROOMKEEPER_AUTH_SECRET_NAME names that one`);
    }
    // The API server did not answer (or failed): a restart would not help. The gateway starts; its
    // management API answers 503 saying why until the Secret is read (every few seconds).
    logger.warn('management API credentials not read yet: the gateway starts, and its management API answers 503 until it reads them', { secret: `${config.authSecretNamespace}/${config.authSecretName}`, why: secret.unavailableReason() });
    return { provider: secret, secret };
  }
  if (!fromConfig) {
    throw new GatewayStartupError('no management API credentials: set ROOMKEEPER_AUTH_USERNAME and ROOMKEEPER_AUTH_PASSWORD, or ROOMKEEPER_AUTH_SECRET_NAME');
  }
  return { provider: staticCredentials(fromConfig) };
}

/**
 * A listen refused for a port in use, said with the setting that moves it: "rooms API port 8090 is
 * in use; set ROOMKEEPER_ROOMS_PORT to another port" (Node says only `listen EADDRINUSE`). The
 * error keeps its code and port. Any other error as it came.
 */
function portInUse(err: unknown, role: string, variable: string): Error {
  const e = err as (NodeJS.ErrnoException & { port?: number }) | null;
  if (e?.code !== 'EADDRINUSE') return err instanceof Error ? err : new Error(String(err));
  return Object.assign(new Error(portInUseMessage(role, e.port ?? '(unknown)', variable)), { code: e.code, port: e.port });
}

function listen(server: http.Server, port: number, host: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const addr = server.address() as AddressInfo;
      const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve(`http://${shownHost === '0.0.0.0' || shownHost === '[::]' ? '127.0.0.1' : shownHost}:${addr.port}`);
    });
  });
}

function closeServer(server: http.Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Ping authentication off is a choice for Maestro game servers; it must never pass unnoticed. */
function warnPingAuthOff(logger: Logger, roomsUrl: string): void {
  logger.warn('PING AUTHENTICATION IS OFF: anyone who can reach the rooms port can change the status of any room (mark it occupied, or terminated so it is replaced) and send events in its name', {
    setting: 'ROOMKEEPER_PING_AUTH=false',
    roomsUrl,
    remedy: 'set ROOMKEEPER_PING_AUTH=true (Helm: gateway.pingAuth=true) once game servers send Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN; until then let only game-server pods reach the rooms port (Helm: networkPolicy.enabled=true with networkPolicy.roomsFrom) and never expose it outside the cluster',
  });
}

/** Starts the gateway in this process. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { config, kubeConfig } = options;
  const logger = options.logger ?? createLogger('gateway', { level: config.logLevel });
  const metrics = options.metrics ?? new MetricsRegistry();
  if (config.pingAuth && config.roomTokenSecret === '') {
    throw new GatewayStartupError('ROOMKEEPER_PING_AUTH is on but ROOMKEEPER_ROOM_TOKEN_SECRET is empty: set the secret (the operator gives rooms their tokens from it) or turn ping authentication off');
  }
  const clients = makeKubeClients(kubeConfig, { qps: config.kubeQps, burst: config.kubeBurst }, { metrics, userAgent: roomkeeperUserAgent('gateway'), logger: logger.child({ part: 'api-access' }) });
  const { provider, secret } = await credentialsFor(config, clients.core, logger);
  secret?.start(SECRET_REFRESH_MS);

  const store = new KubernetesStore({ kc: clients.kc, custom: clients.custom, core: clients.core, logger, metrics, access: clients.access });
  await store.start();
  const replicaId = options.replicaId ?? process.env.ROOMKEEPER_POD_NAME ?? config.identity ?? os.hostname();
  const recorder = new PingRecorder({ now: Date.now, rooms: store, digests: store, replicaId, logger, metrics, lastPingEveryMs: Math.max(1_000, Math.floor(config.roomPingTimeout / 4)), reviveAfterMs: Math.floor(config.roomPingTimeout / 2) });
  recorder.start(config.pingFlushInterval);
  // Metric series of forwarder names go once no existing scheduler uses them.
  const ownForwarder = options.forwarder ? undefined : new EventForwarder({ logger, metrics, schedulerExists: (name) => store.hasScheduler(name) });
  const forwarder = options.forwarder ?? ownForwarder;
  // Pings are forwarded from a worker thread, so forwarding never slows the ping path (issue 15).
  // Its logger logs at this one's level (under `npm start` the launcher's, not ROOMKEEPER_LOG_LEVEL's default).
  const pingQueue = ownForwarder ? new ForwardingWorker({ logger, metrics, logLevel: logger.level, record: (f) => ownForwarder.recordRelayed(f) }) : undefined;

  let shuttingDown: string | undefined;
  // Not ready while shutting down, while the API server refuses our credentials or the caches'
  // lists and watches (a restart would not help: /healthz stays 200), or until the caches synced.
  // An API server that does not answer is shown, but the gateway stays ready: it answers pings
  // (kept until they can be written) and reads from its caches, and every replica sees the same.
  const readiness: Readiness = [
    { name: 'shutdown', notReadyReason: () => shuttingDown },
    { name: 'api access', notReadyReason: () => clients.access.notReadyReason() },
    { name: 'caches', notReadyReason: () => store.notReadyReason() },
    {
      name: 'management credentials', notReadyReason: () => provider.unavailableReason?.(), gates: false,
      whyStillReady: 'the rooms API answers pings without them; the management API answers 503 until the Secret is read',
    },
    {
      name: 'api server', notReadyReason: () => clients.access.unreachableReason(), gates: false,
      whyStillReady: 'the gateway answers pings (their changes are written once the API server answers) and lists schedulers and their operations from its caches; the reads of one scheduler or its versions, allocations and the writes of the management API go to the API server and fail (503) until it answers',
    },
  ];
  // Liveness fails only on what a restart fixes: a cache request that will never be answered. A
  // blocked event loop cannot be seen from inside (the probe itself goes unanswered then).
  const liveness = new Liveness([cacheCheck(store.cacheRequests, config.livenessCacheTimeout)], { logger, now: Date.now });
  const common = { logger, metrics, readiness, liveness };
  const management = createManagementApp({ ...common, maxBodyBytes: config.maxBodyBytes, schedulers: store, operations: store, rooms: store, validator: createSchedulerValidator(), credentials: provider, now: Date.now, maxRoomsPerScheduler: config.maxRoomsPerScheduler,
    allocationStore: store, replicaId,
    allocationSettings: { defaultTtlSeconds: Math.ceil(config.allocationTtl / 1000), maxTtlSeconds: Math.floor(config.allocationMaxTtl / 1000), maestroNoRoomStatus: config.allocationNoRoomMaestro },
  });
  const roomTokenSecrets = config.pingAuth ? acceptedRoomTokenSecrets(config.roomTokenSecret, config.roomTokenPreviousSecret) : undefined;
  // Refused rooms API calls, a line per reason a minute at most; what is left is said on stop.
  const refusals = new RoomsRefusalLog({ logger, now: Date.now, heldKeyIds: roomTokenSecrets?.map((s) => roomTokenKeyId(s)) });
  const rooms = createRoomsApp({
    ...common, maxBodyBytes: config.roomsMaxBodyBytes, rooms: store, recorder, forwarder, pingQueue, roomTokenSecrets, refusals,
    forwardResyncIntervalMs: config.forwardResyncInterval, pingAnswerAllocation: config.pingAnswerAllocation,
  });

  const connections = listenerConnections(config.maxConnections, 2, openFilesLimit());
  if (connections.lowered) {
    // Info, not a warning: with the default and a common limit (20,000 here) it is every start's case.
    logger.info(`ROOMKEEPER_MAX_CONNECTIONS (${config.maxConnections} a listener) is more than this process's open-files limit (${connections.lowered.limit}) leaves room for: `
      + `the management and rooms APIs each hold at most ${connections.perListener} connections, so that a flood of connections cannot take the file descriptors the Kubernetes API server's connections need; `
      + 'raise the limit (ulimit -n, or the container runtime\'s nofile) to hold more', { maxConnections: config.maxConnections, openFilesLimit: connections.lowered.limit, perListener: connections.perListener });
  }
  const managementServer = createHttpServer(requestListener(management), { ...MANAGEMENT_TIMEOUTS, maxConnections: connections.perListener });
  // Rooms keep connections open between pings.
  const roomsServer = createHttpServer(requestListener(rooms), { ...ROOMS_TIMEOUTS, maxConnections: connections.perListener }, { errorBody: { success: false } });
  // While shutting down, each answer closes its connection: a room or matchmaker that keeps one
  // open reconnects, through endpoints that no longer hold this replica.
  let draining = false;
  for (const server of [managementServer, roomsServer]) {
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      if (draining) res.setHeader('Connection', 'close');
    });
  }
  const cleanup = async () => {
    secret?.stop();
    refusals.flush();
    await recorder.stop();
    await store.stop();
    ownForwarder?.close();
    await pingQueue?.close();
    await clients.close();
  };
  let managementUrl: string;
  let roomsUrl: string;
  // Probes and scrapers get a listener of their own (its own connection limit), so a flood of
  // connections that fills an API listener's slots cannot fail the liveness probe: a restart would
  // take the rooms API down with the flooded one.
  let ops: OpsServer | undefined;
  try {
    if (options.serveOps === true) {
      ops = await startOpsServer({ port: config.gatewayOpsPort, host: options.host, metrics, liveness, readiness })
        .catch((err: unknown) => Promise.reject(portInUse(err, 'health and metrics', 'ROOMKEEPER_GATEWAY_OPS_PORT')));
    }
    managementUrl = await listen(managementServer, config.gatewayPort, options.host).catch((err: unknown) => Promise.reject(portInUse(err, 'management API', 'ROOMKEEPER_GATEWAY_PORT')));
    roomsUrl = await listen(roomsServer, config.roomsPort, options.host).catch((err: unknown) => Promise.reject(portInUse(err, 'rooms API', 'ROOMKEEPER_ROOMS_PORT')));
  } catch (err) {
    managementServer.close();
    await ops?.close();
    await cleanup();
    throw err;
  }
  const opsUrl = ops?.url;
  logger.info('gateway listening', { managementUrl, roomsUrl, ...(opsUrl !== undefined ? { opsUrl } : {}), replicaId, pingAuth: config.pingAuth });
  if (!config.pingAuth) warnPingAuthOff(logger, roomsUrl);
  else if (config.roomTokenPreviousSecret !== '') {
    logger.info('room-token rotation in progress: tokens under the current and the previous secret are accepted', {
      currentKeyId: roomTokenKeyId(config.roomTokenSecret), previousKeyId: roomTokenKeyId(config.roomTokenPreviousSecret),
    });
  }

  let stopping: Promise<void> | undefined;
  let stopStep = 'not stopping';
  return {
    managementUrl,
    roomsUrl,
    ...(opsUrl !== undefined ? { opsUrl } : {}),
    cached: () => store.cached(),
    pendingPingWrites: () => recorder.pendingWriteList(),
    stopStep: () => ({ stopStep, pendingStatusWrites: recorder.pendingWrites }),
    stop: (stopOptions = {}) => {
      stopping ??= (async () => {
        draining = true;
        const drainMs = stopOptions.drainMs ?? 0;
        if (drainMs > 0) {
          stopStep = 'draining (answering every request while endpoints drop this replica)';
          shuttingDown = `shutting down: this replica got SIGTERM; it serves requests for ${drainMs} ms more (ROOMKEEPER_SHUTDOWN_DRAIN_DELAY) while endpoints drop it, then stops; send new requests to another replica`;
          logger.info('gateway draining: /readyz answers 503 while every request is still served, so endpoints and load balancers drop this replica before it stops accepting', { drainMs, then: 'stops accepting and finishes within ROOMKEEPER_SHUTDOWN_TIMEOUT' });
          await (options.drainWait ?? delay)(drainMs);
        }
        shuttingDown = 'shutting down: this replica stops accepting requests; send them to another replica';
        logger.info('gateway stopping');
        stopStep = 'closing the API listeners (finishing the requests under way)';
        await Promise.all([closeServer(managementServer, config.shutdownTimeout), closeServer(roomsServer, config.shutdownTimeout)]);
        // Last: the probes see /readyz answer 503 until the API listeners are closed.
        await ops?.close();
        stopStep = 'writing the pending room status writes and the last ping digests, then closing the watches';
        await cleanup();
        logger.info('gateway stopped');
      })();
      return stopping;
    },
  };
}

/** Starts from the environment and stops on SIGTERM/SIGINT. */
export async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('gateway', { level: config.logLevel });
  toggleDebugOnSignal(logger);
  const found = discoverKubeConfig();
  if (!found) throw new GatewayStartupError('no Kubernetes cluster configured (E2E_KUBECONFIG, KUBECONFIG or in-cluster); `npm start` runs the gateway against the sandbox');
  const gateway = await startGateway({ config, kubeConfig: found.kc, logger, serveOps: true });
  // Bounded by the drain plus the shutdown budget, as the chart's grace period (plus 5 s) is: a
  // stop that hangs (an API server holding the last ping-digest write) exits 1 saying so, not SIGKILLed unsaid.
  onShutdownSignal(logger, config.shutdownDrainDelay + config.shutdownTimeout, () => gateway.stop({ drainMs: config.shutdownDrainDelay }), () => gateway.stopStep());
}

if (require.main === module) {
  main().catch((err: unknown) => exitOnStartFailure('gateway', err));
}
