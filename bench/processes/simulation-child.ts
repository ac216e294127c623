/**
 * Child process: the simulated kubelet, the simulated game rooms (they ping the rooms API over real
 * HTTP), or both. Argument: SimulationChildArg. Calls: `stats` (SimRooms stats), `room` (one room's
 * game server) and `loopDelay` (how late its event loop ran since the last call).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { startSimulation } from '../../sandbox/src/simulation';
import { SimRooms } from '../../sandbox/src/rooms/sim-rooms';
import { serveParent, childArg } from '../support/child-rpc';
import type { PingFailure, SimRoomView } from '../../sandbox/src/rooms/sim-rooms';

export interface SimulationChildArg {
  kubeconfigYaml: string;
  /** Without it, no rooms are simulated (the kubelet only). */
  roomsApiUrl?: string;
  /**
   * Only the game rooms, with a pod watch of their own: another child runs the kubelet, so neither
   * one's work delays the other's (`nodes`, `startDelayMs` and `concurrency` are the kubelet's).
   */
  roomsOnly?: boolean;
  nodes: number;
  pingIntervalMs: number;
  startDelayMs?: number;
  concurrency?: number;
}

export interface SimulationStats {
  activeRooms: number;
  pingsSent: number;
  pingFailures: number;
  /** The last failed pings, oldest first. */
  recentFailures: PingFailure[];
}

serveParent<null>(async () => {
  const arg = childArg() as SimulationChildArg;
  const kc = new KubeConfig();
  kc.loadFromString(arg.kubeconfigYaml);
  let rooms: SimRooms | undefined;
  let stop: () => Promise<void>;
  if (arg.roomsOnly) {
    if (arg.roomsApiUrl === undefined) throw new Error('roomsOnly needs roomsApiUrl');
    const only = await SimRooms.start({ kubeConfig: kc, roomsApiUrl: arg.roomsApiUrl, pingIntervalMs: arg.pingIntervalMs });
    rooms = only;
    stop = () => only.stop();
  } else {
    const simulation = await startSimulation({
      kubeConfig: kc,
      nodes: arg.nodes,
      pingIntervalMs: arg.pingIntervalMs,
      ...(arg.roomsApiUrl !== undefined ? { roomsApiUrl: arg.roomsApiUrl } : {}),
      ...(arg.startDelayMs !== undefined ? { startDelayMs: arg.startDelayMs } : {}),
      ...(arg.concurrency !== undefined ? { concurrency: arg.concurrency } : {}),
    });
    rooms = simulation.rooms;
    stop = async () => { await simulation.stop(); };
  }
  // How late this process's event loop runs: a ping that fails here may never have left it.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  return {
    payload: null,
    handlers: {
      /** The event loop's longest delay since the last call (ms). */
      loopDelay: () => {
        const out = { maxMs: loopDelay.max / 1e6 };
        loopDelay.reset();
        return out;
      },
      stats: (): SimulationStats => {
        const s = rooms?.stats();
        return { activeRooms: s?.activeRooms ?? 0, pingsSent: s?.pingsSent ?? 0, pingFailures: s?.pingFailures ?? 0, recentFailures: s?.recentFailures ?? [] };
      },
      /** What one room's simulated game server did, its pod alive or gone: `{ roomId, scheduler }`. */
      room: (q: unknown): SimRoomView | null => {
        const { roomId, scheduler } = q as { roomId: string; scheduler: string };
        return rooms?.room(roomId, scheduler) ?? rooms?.endedRoom(roomId, scheduler) ?? null;
      },
    },
    stop: () => {
      loopDelay.disable();
      return stop();
    },
  };
});
