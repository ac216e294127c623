/**
 * Records pings with a bounded number of API writes (DESIGN.md "Pings never cost one API write
 * each"):
 * - a ping that changes the room's ping status or running matches is written to the GameRoom's
 *   status at once (one merge patch of the status subresource);
 * - any other ping only updates an in-memory map room -> last ping time; every flush interval the
 *   map of each scheduler heard from is written as ONE ConfigMap (see `ping-digest.ts`).
 * So 10,000 rooms pinging every 5 s with a 30 s flush cost about one write per scheduler per 30 s.
 */
import type { Logger } from '../../../common/src/logger';
import type { GameRoom, PingStatus } from '../../../common/src/generated/resources';
import { composeRoomStatus } from '../../../common/src/rooms/room-status';
import type { PingDigestWriter, RoomStore } from '../store-ports';
import { encodePingDigest, GATEWAY_REPLICA_LABEL, PING_DIGEST_LABEL, PING_DIGEST_RETENTION_MS, pingDigestName, sanitizeReplicaId } from '../../../common/src/rooms/ping-digest';
import { SCHEDULER_LABEL } from '../../../common/src/resources/labels';

export interface PingRecorderOptions {
  /** Milliseconds since the epoch. */
  now: () => number;
  rooms: Pick<RoomStore, 'patchRoomStatus'>;
  digests: PingDigestWriter;
  /** This gateway replica (ROOMKEEPER_POD_NAME or hostname). */
  replicaId: string;
  logger: Logger;
  retentionMs?: number;
}

export interface PingReport {
  status: Exclude<PingStatus, 'unknown'>;
  runningMatches: number;
}

interface Written { pingStatus: string; runningMatches: number }

export type PingOutcome = 'status-written' | 'recorded';

export class PingRecorder {
  private readonly lastPings = new Map<string, Map<string, number>>();
  private readonly dirty = new Set<string>();
  /** What this replica last wrote per room ("scheduler/room"), to skip repeats while the cache lags. */
  private readonly written = new Map<string, Written>();
  private readonly replicaId: string;
  private readonly retentionMs: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<number> | undefined;

  constructor(private readonly options: PingRecorderOptions) {
    this.replicaId = sanitizeReplicaId(options.replicaId);
    this.retentionMs = options.retentionMs ?? PING_DIGEST_RETENTION_MS;
  }

  /**
   * Records one ping of a room known to exist (`room` from the cache). Writes the status at once
   * when it changes; throws when that write fails (the room may be gone).
   */
  async record(room: GameRoom, ping: PingReport): Promise<PingOutcome> {
    const scheduler = room.metadata.namespace ?? room.spec.scheduler;
    const roomId = room.metadata.name ?? '';
    const now = this.options.now();
    this.remember(scheduler, roomId, now);
    const key = `${scheduler}/${roomId}`;
    const cached = room.status;
    const mine = this.written.get(key);
    const differsFromCache = cached?.pingStatus !== ping.status || (cached.runningMatches ?? 0) !== ping.runningMatches;
    const differsFromMine = mine !== undefined && (mine.pingStatus !== ping.status || mine.runningMatches !== ping.runningMatches);
    if (!differsFromCache && !differsFromMine) return 'recorded';
    await this.options.rooms.patchRoomStatus(scheduler, roomId, {
      pingStatus: ping.status,
      runningMatches: ping.runningMatches,
      lastPingAt: new Date(now).toISOString(),
      status: composeRoomStatus(ping.status, cached?.instanceStatus ?? 'unknown'),
    });
    this.written.set(key, { pingStatus: ping.status, runningMatches: ping.runningMatches });
    return 'status-written';
  }

  /** Rooms heard from and not yet written, by scheduler (for tests and metrics). */
  get pendingSchedulers(): number {
    return this.dirty.size;
  }

  /** Writes one digest per scheduler heard from since the last flush; returns how many were written. */
  flush(): Promise<number> {
    if (this.flushing) return this.flushing;
    this.flushing = this.doFlush().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Flushes every `intervalMs` until `stop()`. */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.flush();
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private remember(scheduler: string, roomId: string, now: number): void {
    let rooms = this.lastPings.get(scheduler);
    if (!rooms) {
      rooms = new Map();
      this.lastPings.set(scheduler, rooms);
    }
    rooms.set(roomId, now);
    this.dirty.add(scheduler);
  }

  private async doFlush(): Promise<number> {
    const now = this.options.now();
    const schedulers = [...this.dirty];
    this.dirty.clear();
    let writes = 0;
    for (const scheduler of schedulers) {
      const rooms = this.lastPings.get(scheduler);
      if (!rooms) continue;
      for (const [roomId, at] of rooms) {
        if (now - at > this.retentionMs) {
          rooms.delete(roomId);
          this.written.delete(`${scheduler}/${roomId}`);
        }
      }
      if (rooms.size === 0) {
        this.lastPings.delete(scheduler);
        continue;
      }
      try {
        await this.options.digests.writeDigest(
          scheduler,
          pingDigestName(this.replicaId),
          { [PING_DIGEST_LABEL]: 'true', [SCHEDULER_LABEL]: scheduler, [GATEWAY_REPLICA_LABEL]: this.replicaId },
          encodePingDigest(rooms, now),
        );
        writes++;
      } catch (err) {
        this.dirty.add(scheduler);
        this.options.logger.warn('ping digest write failed; retrying at the next flush', { scheduler, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return writes;
  }
}
