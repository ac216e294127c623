/**
 * The simulated data plane in one call: a simulated kubelet (nodes, scheduling, pod status) and,
 * when a rooms API URL is given, simulated game rooms that ping it. Uses only the public
 * Kubernetes API, so it runs against the sandbox API server or any cluster without kubelets.
 */
import type { MetricsRegistry } from '../../common/src/metrics';
import { SimKubelet, type SimKubeletOptions } from './kubelet/sim-kubelet';
import { SimRooms } from './rooms/sim-rooms';

export { isSimulatedNode } from './kubelet/sim-node';

/** The kubelet's settings (documented on `SimKubeletOptions`) and the rooms'. */
export interface SimulationOptions
  extends Pick<SimKubeletOptions, 'kubeConfig' | 'nodes' | 'podsPerNode' | 'startDelayMs' | 'deletionCapMs' | 'restartBackoffMs' | 'concurrency' | 'heartbeatMs' | 'podLabelSelector' | 'logger'> {
  /** Rooms API base URL; undefined means rooms are not simulated. */
  roomsApiUrl?: string;
  /** Interval between pings of one room (default 5000 ms). */
  pingIntervalMs?: number;
  /** Upper bound of the random delay before a room's first ping (default min(interval, 500 ms)). */
  firstPingMaxDelayMs?: number;
  metrics?: MetricsRegistry;
}

export interface Simulation {
  readonly kubelet: SimKubelet;
  /** Undefined when no `roomsApiUrl` was given. */
  readonly rooms: SimRooms | undefined;
  /**
   * Stops the rooms and the kubelet. `keepNodesWithPods` (on a real cluster): the simulated nodes
   * holding pods stay, so that a simulation started again within 5 minutes keeps their rooms;
   * resolves with their names.
   */
  stop(opts?: { keepNodesWithPods?: boolean }): Promise<string[]>;
}

export async function startSimulation(opts: SimulationOptions): Promise<Simulation> {
  const kubeletOptions: SimKubeletOptions = { kubeConfig: opts.kubeConfig };
  if (opts.nodes !== undefined) kubeletOptions.nodes = opts.nodes;
  if (opts.podsPerNode !== undefined) kubeletOptions.podsPerNode = opts.podsPerNode;
  if (opts.startDelayMs !== undefined) kubeletOptions.startDelayMs = opts.startDelayMs;
  if (opts.deletionCapMs !== undefined) kubeletOptions.deletionCapMs = opts.deletionCapMs;
  if (opts.restartBackoffMs !== undefined) kubeletOptions.restartBackoffMs = opts.restartBackoffMs;
  if (opts.concurrency !== undefined) kubeletOptions.concurrency = opts.concurrency;
  if (opts.heartbeatMs !== undefined) kubeletOptions.heartbeatMs = opts.heartbeatMs;
  if (opts.podLabelSelector !== undefined) kubeletOptions.podLabelSelector = opts.podLabelSelector;
  if (opts.logger) kubeletOptions.logger = opts.logger;
  const kubelet = await SimKubelet.start(kubeletOptions);
  let rooms: SimRooms | undefined;
  if (opts.roomsApiUrl !== undefined) {
    // Pods on real nodes (a real cluster) have real game servers; only simulated pods get rooms.
    const simulatedNodes = new Set(kubelet.nodeNames);
    try {
      rooms = await SimRooms.start({
        kubeConfig: opts.kubeConfig,
        roomsApiUrl: opts.roomsApiUrl,
        podInformer: kubelet.podInformer,
        nodeFilter: (nodeName) => simulatedNodes.has(nodeName),
        ...(opts.pingIntervalMs !== undefined ? { pingIntervalMs: opts.pingIntervalMs } : {}),
        ...(opts.firstPingMaxDelayMs !== undefined ? { firstPingMaxDelayMs: opts.firstPingMaxDelayMs } : {}),
        ...(opts.logger ? { logger: opts.logger } : {}),
        ...(opts.metrics ? { metrics: opts.metrics } : {}),
      });
    } catch (err) {
      await kubelet.stop();
      throw err;
    }
  }
  let stopped = false;
  return {
    kubelet,
    rooms,
    async stop(stopOpts = {}) {
      if (stopped) return [];
      stopped = true;
      await rooms?.stop();
      return kubelet.stop(stopOpts);
    },
  };
}
