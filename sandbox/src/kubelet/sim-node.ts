/**
 * The Node objects the simulated kubelet registers: names, addresses, capacity and conditions.
 * Addresses are data only; nothing connects to them.
 *
 *   name        roomkeeper-sim-node-<i>
 *   InternalIP  10.240.0.<10 + i>
 *   ExternalIP  127.0.0.<2 + i>   (loopback, so a "room address" is at least local)
 *   pod IPs     10.<200 + i % 50>.x.y, from a per-node counter
 */
const SIMULATED_LABEL = 'roomkeeper.io/simulated';
const NODE_NAME_PREFIX = 'roomkeeper-sim-node-';
const KUBELET_VERSION = 'v1.32.0-roomkeeper-sim';

export interface SimNodeSpec {
  index: number;
  name: string;
  internalIP: string;
  externalIP: string;
  podCapacity: number;
}

export function simNodeSpec(index: number, podCapacity: number): SimNodeSpec {
  return {
    index,
    name: `${NODE_NAME_PREFIX}${index}`,
    internalIP: `10.240.${Math.floor((10 + index) / 250)}.${(10 + index) % 250}`,
    externalIP: `127.0.${Math.floor((2 + index) / 250)}.${(2 + index) % 250}`,
    podCapacity,
  };
}

/**
 * Whether a Node is one a simulated kubelet registered (by its label). A run stopped without its
 * stop (kill -9, a crash) leaves them behind; they are not real nodes that can run rooms.
 */
export function isSimulatedNode(node: { metadata?: { labels?: Record<string, string> } }): boolean {
  return node.metadata?.labels?.[SIMULATED_LABEL] === 'true';
}

/** The n-th pod IP handed out on a node (n from 0). */
export function podIpOf(nodeIndex: number, n: number): string {
  const slot = n % (250 * 250);
  return `10.${200 + (nodeIndex % 50)}.${Math.floor(slot / 250)}.${(slot % 250) + 2}`;
}

function nodeLabels(spec: SimNodeSpec): Record<string, string> {
  return {
    [SIMULATED_LABEL]: 'true',
    'kubernetes.io/hostname': spec.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'node.kubernetes.io/instance-type': 'roomkeeper-sim',
  };
}

/** A node's Ready condition as its kubelet reports it: Ready or not since `sinceIso`, and why not. */
export interface NodeReadiness {
  ready: boolean;
  sinceIso: string;
  /** The kubelet's message when not Ready. */
  message?: string;
}

export function nodeStatusBody(spec: SimNodeSpec, nowIso: string, readySinceIso: string, readiness: NodeReadiness = { ready: true, sinceIso: readySinceIso }) {
  const resources = { cpu: '64', memory: '256Gi', 'ephemeral-storage': '200Gi', pods: String(spec.podCapacity) };
  const cond = (type: string, status: 'True' | 'False', reason: string, message: string, sinceIso = readySinceIso) => ({
    type, status, reason, message, lastHeartbeatTime: nowIso, lastTransitionTime: sinceIso,
  });
  return {
    capacity: resources,
    allocatable: resources,
    conditions: [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      readiness.ready
        ? cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', readiness.sinceIso)
        : cond('Ready', 'False', 'KubeletNotReady', readiness.message ?? 'kubelet is not ready', readiness.sinceIso),
    ],
    addresses: [
      { type: 'InternalIP', address: spec.internalIP },
      { type: 'ExternalIP', address: spec.externalIP },
      { type: 'Hostname', address: spec.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: `roomkeeper-sim-${spec.index}`,
      systemUUID: `roomkeeper-sim-${spec.index}`,
      bootID: `roomkeeper-sim-${spec.index}`,
      kernelVersion: '6.1.0-roomkeeper-sim',
      osImage: 'Roomkeeper simulated node',
      containerRuntimeVersion: 'containerd://1.7.0-roomkeeper-sim',
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: KUBELET_VERSION,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

export function nodeBody(spec: SimNodeSpec, nowIso: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: spec.name, labels: nodeLabels(spec) },
    spec: {},
    status: nodeStatusBody(spec, nowIso, nowIso),
  };
}
