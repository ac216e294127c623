/**
 * One scheduler's rooms by version, from GameRoom watch events: the live rooms (not being
 * deleted) with their version, which of them are ready or occupied, the most live rooms seen
 * at once (for the "never more than desired + maxSurge" bound of a rollout), and every room seen
 * marked silent (status.silentSince).
 */
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import { ResilientInformer } from '../../common/src/kube/informer';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { silentLogger } from '../../common/src/logger';

export class FleetByVersion {
  readonly live = new Map<string, string>();
  readonly ready = new Set<string>();
  /** Every room seen marked silent by the operator: its mark (status.silentSince, its last ping) and when the mark was first seen. */
  readonly markedSilent = new Map<string, { since: string; seenAt: number }>();
  /** The most live rooms at once since the last `resetPeak()`. */
  peak = 0;
  private listeners: (() => void)[] = [];

  constructor(private readonly scheduler: string) {}

  /**
   * A watch of the scheduler's GameRooms (its namespace) feeding this fleet (start it, stop it when
   * done). Not of every GameRoom: three fleets watching all of them made the API server send each
   * room change three times to the bench, which measured the bench as much as the fleet.
   */
  static informer(fleet: FleetByVersion, kc: k8s.KubeConfig, custom: k8s.CustomObjectsApi): ResilientInformer<GameRoom> {
    const api = new RoomkeeperApi(custom);
    return new ResilientInformer<GameRoom>({
      kc, path: `/apis/roomkeeper.io/v1/namespaces/${fleet.scheduler}/gamerooms`, list: () => api.listGameRooms(fleet.scheduler),
      name: `bench-fleet-${fleet.scheduler}`, logger: silentLogger(), onEvent: (type, room) => fleet.onEvent(type, room),
    });
  }

  onEvent(type: string, room: GameRoom): void {
    if (room.metadata.namespace !== this.scheduler || room.spec.validation) return;
    const name = room.metadata.name ?? '';
    if (type === 'delete' || room.metadata.deletionTimestamp) {
      this.live.delete(name);
      this.ready.delete(name);
    } else {
      this.live.set(name, room.spec.version);
      const since = room.status?.silentSince;
      if (since !== undefined && this.markedSilent.get(name)?.since !== since) this.markedSilent.set(name, { since, seenAt: Date.now() });
      if (room.status?.status === 'ready' || room.status?.status === 'occupied') this.ready.add(name);
      else this.ready.delete(name);
    }
    this.peak = Math.max(this.peak, this.live.size);
    for (const l of this.listeners) l();
  }

  resetPeak(): void {
    this.peak = this.live.size;
  }

  count(version: string, readyOnly: boolean): number {
    let n = 0;
    for (const [name, v] of this.live) if (v === version && (!readyOnly || this.ready.has(name))) n++;
    return n;
  }

  /** Resolves (with Date.now()) at the first event after which `done` holds. */
  until(done: () => boolean, timeoutMs: number, what = 'rollout not complete'): Promise<number> {
    if (done()) return Promise.resolve(Date.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== check);
        reject(new Error(`${what} after ${timeoutMs} ms (${this.live.size} live rooms, ${this.ready.size} ready or occupied)`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== check);
        resolve(Date.now());
      };
      this.listeners.push(check);
    });
  }
}
