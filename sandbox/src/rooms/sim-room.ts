/**
 * One simulated game server: pings the rooms API on an interval and whenever its scripted status
 * changes, and sends one `terminating` ping when its pod is being deleted. One timer at a time;
 * `stop()` clears it.
 */
import type { PingRequest, PingResult } from './ping-client';
import type { RoomIdentity } from './room-identity';
import { pingUrl } from './room-identity';
import { scriptStateAt, unitRandom, type RoomScript } from './room-script';
import type { LivePingStatus } from '../../../common/src/rooms/room-status';

export type RoomState = 'running' | 'terminated' | 'stopped';

export interface SimRoomOptions {
  identity: RoomIdentity;
  script: RoomScript;
  roomsApiUrl: string;
  pingIntervalMs: number;
  /** Delay of the first ping, to spread a fleet's pings. */
  firstPingDelayMs: number;
  send: (ping: PingRequest) => Promise<PingResult>;
  now: () => number;
  onPing?: (status: LivePingStatus, result: PingResult) => void;
}

export interface RoomView {
  schedulerName: string;
  roomId: string;
  state: RoomState;
  /** What the script says now: `ready`, `occupied`, or `silent` (not pinging); `terminating` once terminated. */
  status: 'ready' | 'occupied' | 'silent' | 'terminating';
  lastPingStatus?: LivePingStatus;
  pingsSent: number;
  pingFailures: number;
  /** When the game server started (ms since the epoch). */
  startedAt: number;
  /** When a ping last got a 2xx answer (ms since the epoch). */
  lastOkAt?: number;
}

export class SimRoom {
  private stateValue: RoomState = 'running';
  private startedAtMs = 0;
  private nextPingAtMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private pendingWake = false;
  private lastSent: LivePingStatus | undefined;
  private sent = 0;
  private failures = 0;
  private lastOkAtMs: number | undefined;
  private readonly url: string;

  constructor(private readonly options: SimRoomOptions) {
    this.url = pingUrl(options.roomsApiUrl, options.identity.schedulerName, options.identity.roomId);
  }

  get state(): RoomState {
    return this.stateValue;
  }

  start(): void {
    this.startedAtMs = this.options.now();
    this.nextPingAtMs = this.startedAtMs + this.options.firstPingDelayMs;
    this.wake();
  }

  /** The pod is being deleted: one `terminating` ping if the game server is alive, then silence. */
  terminate(): void {
    if (this.stateValue !== 'running') return;
    const alive = this.scripted().status !== undefined;
    this.clearTimer();
    this.stateValue = 'terminated';
    if (alive) void this.ping('terminating');
  }

  /** The game server is gone: no more pings. */
  stop(): void {
    this.clearTimer();
    this.stateValue = 'stopped';
  }

  view(): RoomView {
    const scripted = this.stateValue === 'running' ? this.scripted().status : undefined;
    return {
      schedulerName: this.options.identity.schedulerName,
      roomId: this.options.identity.roomId,
      state: this.stateValue,
      status: this.stateValue === 'terminated' ? 'terminating' : scripted ?? 'silent',
      ...(this.lastSent ? { lastPingStatus: this.lastSent } : {}),
      pingsSent: this.sent,
      pingFailures: this.failures,
      startedAt: this.startedAtMs,
      ...(this.lastOkAtMs !== undefined ? { lastOkAt: this.lastOkAtMs } : {}),
    };
  }

  private scripted() {
    return scriptStateAt(this.options.script, this.options.now() - this.startedAtMs, {
      roomId: this.options.identity.roomId, pingIntervalMs: this.options.pingIntervalMs,
    });
  }

  private wake(): void {
    this.timer = undefined;
    if (this.stateValue !== 'running') return;
    const now = this.options.now();
    const scripted = this.scripted();
    if (scripted.status !== undefined) {
      const changed = this.lastSent !== undefined && scripted.status !== this.lastSent;
      if (now >= this.nextPingAtMs || changed) {
        if (this.inFlight) {
          // The ping under way wakes this room when it ends (a timer now would fire at once, again
          // and again, for as long as the answer takes).
          this.pendingWake = true;
          return;
        }
        // The gap after the first ping is anywhere in [0.5, 1.5) intervals, so rooms created in
        // one burst spread their pings over the whole interval; later gaps vary by ±10%.
        const r = unitRandom(0, this.options.identity.roomId, this.sent);
        const jitter = this.lastSent === undefined ? 0.5 + r : 0.9 + 0.2 * r;
        this.nextPingAtMs = now + Math.max(1, Math.round(this.options.pingIntervalMs * jitter));
        void this.ping(scripted.status);
      }
    }
    const wakeAt: number[] = [];
    if (scripted.status !== undefined) wakeAt.push(this.nextPingAtMs);
    if (scripted.nextChangeAtMs !== undefined) wakeAt.push(this.startedAtMs + scripted.nextChangeAtMs);
    if (wakeAt.length > 0) this.timer = setTimeout(() => this.wake(), Math.max(0, Math.min(...wakeAt) - now));
  }

  private async ping(status: LivePingStatus): Promise<void> {
    this.inFlight = true;
    this.lastSent = status;
    const result = await this.options.send({
      url: this.url, status, timestamp: Math.floor(this.options.now() / 1000),
      ...(this.options.identity.token ? { token: this.options.identity.token } : {}),
    });
    this.inFlight = false;
    this.sent++;
    if (result.ok) this.lastOkAtMs = this.options.now();
    else this.failures++;
    this.options.onPing?.(status, result);
    if (this.pendingWake && this.stateValue === 'running') {
      this.pendingWake = false;
      this.clearTimer();
      this.wake();
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
