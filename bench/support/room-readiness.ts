/**
 * Watches GameRooms (list+watch through the shared resilient informer) and tells when a number
 * of them reached status `ready`. The moment is taken when the watch event arrives, not at a
 * poll, so timings do not depend on a polling interval.
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import { ResilientInformer } from '../../common/src/kube/informer';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { silentLogger } from '../../common/src/logger';

interface Waiter { count: number; namespace: string | undefined; resolve(atMs: number): void }

class ReadinessTimeoutError extends Error {
  constructor(count: number, seen: number, timeoutMs: number) {
    super(`${seen}/${count} rooms ready after ${timeoutMs} ms`);
    this.name = 'ReadinessTimeoutError';
  }
}

export class RoomReadiness {
  private readonly informer: ResilientInformer<GameRoom>;
  private readonly ready = new Map<string, Set<string>>();
  private waiters: Waiter[] = [];

  constructor(kc: k8s.KubeConfig, custom: k8s.CustomObjectsApi, private readonly now: () => number = () => performance.now()) {
    const api = new RoomkeeperApi(custom);
    this.informer = new ResilientInformer<GameRoom>({
      kc,
      path: '/apis/roomkeeper.io/v1/gamerooms',
      list: () => api.listGameRooms(),
      name: 'bench-gamerooms',
      logger: silentLogger(),
      onEvent: (type, room) => this.onEvent(type, room),
    });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): Promise<void> {
    return Promise.resolve(this.informer.stop());
  }

  readyCount(namespace?: string): number {
    if (namespace !== undefined) return this.ready.get(namespace)?.size ?? 0;
    let n = 0;
    for (const s of this.ready.values()) n += s.size;
    return n;
  }

  /** Resolves with the clock reading at which `count` rooms (of `namespace`, or all) were ready. */
  whenReady(count: number, timeoutMs: number, namespace?: string): Promise<number> {
    if (this.readyCount(namespace) >= count) return Promise.resolve(this.now());
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new ReadinessTimeoutError(count, this.readyCount(namespace), timeoutMs));
      }, timeoutMs);
      const waiter: Waiter = {
        count,
        namespace,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private onEvent(type: string, room: GameRoom): void {
    const ns = room.metadata.namespace ?? '';
    const name = room.metadata.name ?? '';
    let set = this.ready.get(ns);
    if (!set) {
      set = new Set();
      this.ready.set(ns, set);
    }
    const isReady = type !== 'delete' && room.status?.status === 'ready' && !room.metadata.deletionTimestamp;
    if (isReady) set.add(name);
    else set.delete(name);
    if (this.waiters.length === 0) return;
    const at = this.now();
    this.waiters = this.waiters.filter((w) => {
      if (this.readyCount(w.namespace) < w.count) return true;
      w.resolve(at);
      return false;
    });
  }
}
