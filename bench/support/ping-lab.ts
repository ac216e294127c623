/**
 * The setup of the ping benchmarks: the sandbox API server (own process), the real gateway (in
 * the bench process, production defaults: per-room tokens on, 30 s ping flush) and schedulers
 * whose GameRooms exist and already report `ready`, so the pings the load sends change nothing
 * and are coalesced in memory (the steady state of a fleet). The load generator runs in its own
 * process.
 */
import * as path from 'node:path';
import type { Forwarder, GameRoom, Scheduler } from '../../common/src/generated/resources';
import { API_VERSION } from '../../common/src/resources/api-group';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL, VERSION_LABEL } from '../../common/src/resources/labels';
import { roomToken } from '../../common/src/rooms/room-token';
import { waitFor } from '../../test/support/wait';
import { forkChild, type ChildHandle } from './child-rpc';
import { PROCESSES_DIR, startBenchStack, type BenchStack, type BenchTarget } from './bench-stack';
import { benchSchedulerSpec } from './scheduler-body';
import type { LoadResult, LoadRun, PingTarget } from '../processes/load-child';

export interface PingLab {
  readonly stack: BenchStack;
  readonly load: ChildHandle<null>;
  /** Creates a scheduler with `rooms` ready rooms; resolves once the gateway accepts pings of every one. */
  addFleet(scheduler: string, rooms: number, forwarders?: Forwarder[]): Promise<PingTarget[]>;
  runLoad(url: string, targets: PingTarget[], durationSec: number): Promise<LoadResult>;
  stop(): Promise<void>;
}

export const LOAD_SHAPE = { connections: 50, pipelining: 1 } as const;

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  }));
}

export async function startPingLab(gatewayConfig: Record<string, unknown> = {}, target: BenchTarget = 'sandbox'): Promise<PingLab> {
  const stack = await startBenchStack({ operator: 'none', gatewayConfig, target });
  let load: ChildHandle<null>;
  try {
    load = await forkChild<null>(path.join(PROCESSES_DIR, 'load-child.ts'));
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const secret = stack.gatewayConfig.roomTokenSecret;
  return {
    stack,
    load,
    async addFleet(scheduler, rooms, forwarders) {
      await stack.clients.core.createNamespace({ body: { metadata: { name: scheduler } } });
      const spec = benchSchedulerSpec(forwarders ? { forwarders } : {}) as unknown as Scheduler['spec'];
      await stack.api.createScheduler({ apiVersion: API_VERSION, kind: 'Scheduler', metadata: { name: scheduler }, spec });
      const names = Array.from({ length: rooms }, (_, i) => `${scheduler}-${String(i).padStart(5, '0')}`);
      await pool(names, 50, async (name) => {
        const room: GameRoom = {
          apiVersion: API_VERSION,
          kind: 'GameRoom',
          metadata: { name, namespace: scheduler, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SCHEDULER_LABEL]: scheduler, [VERSION_LABEL]: 'v1.0.0' } },
          spec: { scheduler, version: 'v1.0.0', validation: false },
        };
        await stack.api.createGameRoom(room);
        await stack.api.patchGameRoomStatus(scheduler, name, {
          status: { status: 'ready', pingStatus: 'ready', runningMatches: 0, instanceStatus: 'ready', host: '127.0.0.1', lastPingAt: new Date().toISOString() },
        });
      });
      const targets = names.map((roomId) => ({ scheduler, roomId, token: roomToken(secret, scheduler, roomId) }));
      // The gateway's cache must hold every room with its status before the load starts.
      const pending = new Set(targets);
      await waitFor(async () => {
        await pool([...pending], 20, async (t) => {
          const res = await fetch(`${stack.gateway.roomsUrl}/scheduler/${t.scheduler}/rooms/${t.roomId}/ping`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}` },
            body: JSON.stringify({ status: 'ready', timestamp: Math.floor(Date.now() / 1000) }),
          });
          if ((await res.text()) === '{"success":true}') pending.delete(t);
        });
        return pending.size === 0;
      }, { timeoutMs: 60_000, intervalMs: 200, message: `the gateway accepts pings of all ${rooms} rooms of ${scheduler}` });
      return targets;
    },
    runLoad(url, targets, durationSec) {
      const arg: LoadRun = { url, targets, durationSec, ...LOAD_SHAPE };
      return load.call<LoadResult>('run', arg);
    },
    async stop() {
      await load.stop();
      await stack.stop();
    },
  };
}
