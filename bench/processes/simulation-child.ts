/**
 * Child process: the simulated kubelet and game rooms (they ping the rooms API over real HTTP).
 * Argument: SimulationChildArg. Calls: `stats` (SimRooms stats plus rooms per state).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { startSimulation } from '../../sandbox/src/simulation';
import { serveParent, childArg } from '../support/child-rpc';

export interface SimulationChildArg {
  kubeconfigYaml: string;
  roomsApiUrl?: string;
  nodes: number;
  pingIntervalMs: number;
  startDelayMs?: number;
  concurrency?: number;
}

export interface SimulationStats {
  activeRooms: number;
  pingsSent: number;
  pingFailures: number;
}

serveParent<null>(async () => {
  const arg = childArg() as SimulationChildArg;
  const kc = new KubeConfig();
  kc.loadFromString(arg.kubeconfigYaml);
  const simulation = await startSimulation({
    kubeConfig: kc,
    nodes: arg.nodes,
    pingIntervalMs: arg.pingIntervalMs,
    heartbeatMs: 0,
    ...(arg.roomsApiUrl !== undefined ? { roomsApiUrl: arg.roomsApiUrl } : {}),
    ...(arg.startDelayMs !== undefined ? { startDelayMs: arg.startDelayMs } : {}),
    ...(arg.concurrency !== undefined ? { concurrency: arg.concurrency } : {}),
  });
  return {
    payload: null,
    handlers: {
      stats: (): SimulationStats => {
        const s = simulation.rooms?.stats();
        return { activeRooms: s?.activeRooms ?? 0, pingsSent: s?.pingsSent ?? 0, pingFailures: s?.pingFailures ?? 0 };
      },
    },
    stop: () => simulation.stop(),
  };
});
