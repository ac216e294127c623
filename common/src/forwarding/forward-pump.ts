/**
 * Ping forwarding with backpressure: every ping's forward to each receiver waits in that
 * receiver's own bounded queue, and at most `maxInFlight` calls per receiver are open at once. A
 * slow or dead receiver therefore only fills its own queue, whose oldest entries are dropped
 * (and counted); the other receivers and the pings themselves are never held up. Runs in the
 * forwarding worker thread (forwarding-worker-thread.ts) and, for tests, anywhere.
 */
import { BoundedQueue } from './bounded-queue';
import { isForwarderEnabled } from './forwarder-options';
import type { ForwardedRoom, ForwardedRoomStatus, ForwarderConfig, ForwardOutcome } from './forwarder-types';

/** One ping (or terminated status) to forward to every enabled forwarder of its scheduler. */
export interface PingForward {
  kind: 'resync' | 'status';
  forwarders: readonly ForwarderConfig[];
  room: ForwardedRoom;
  status: ForwardedRoomStatus;
  metadata?: Record<string, unknown>;
}

/** What became of one ping: `ok` when every forwarder took it. */
export type PingForwardResult = 'ok' | 'failed' | 'dropped';

export interface ForwardPumpOptions {
  /** Sends one ping to one forwarder (EventForwarder.forwardPing / forwardStatus with a one-element list). */
  send: (forwarder: ForwarderConfig, ping: PingForward) => Promise<ForwardOutcome>;
  /** Forwards waiting per receiver before the oldest is dropped. Default 10,000. */
  maxQueuedPerReceiver?: number;
  /** Calls open at once per receiver. Default 64. */
  maxInFlightPerReceiver?: number;
  /** Called once per ping when all its forwards are done. */
  onPingDone: (result: PingForwardResult) => void;
  /** Called when a forward waiting for `forwarderName` was dropped to make room. */
  onDropped: (forwarderName: string, schedulerName: string) => void;
}

interface PingJob { remaining: number; result: PingForwardResult }
interface Send { job: PingJob; forwarder: ForwarderConfig; ping: PingForward }
interface ReceiverLane { queue: BoundedQueue<Send>; inFlight: number }

const WORSE: Record<PingForwardResult, number> = { ok: 0, failed: 1, dropped: 2 };

export function forwarderLabel(forwarder: ForwarderConfig): string {
  return typeof forwarder.name === 'string' && forwarder.name !== '' ? forwarder.name : String(forwarder.address);
}

export class ForwardPump {
  private readonly lanes = new Map<string, ReceiverLane>();
  private readonly maxQueued: number;
  private readonly maxInFlight: number;

  constructor(private readonly options: ForwardPumpOptions) {
    this.maxQueued = options.maxQueuedPerReceiver ?? 10_000;
    this.maxInFlight = options.maxInFlightPerReceiver ?? 64;
  }

  /** Forwards waiting, over all receivers. */
  get queued(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.length;
    return n;
  }

  /** Calls open, over all receivers. */
  get inFlight(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.inFlight;
    return n;
  }

  offer(ping: PingForward): void {
    const enabled = (Array.isArray(ping.forwarders) ? ping.forwarders : []).filter(
      (f): f is ForwarderConfig => typeof f === 'object' && f !== null && isForwarderEnabled(f),
    );
    if (enabled.length === 0) {
      this.options.onPingDone('ok');
      return;
    }
    const job: PingJob = { remaining: enabled.length, result: 'ok' };
    for (const forwarder of enabled) {
      const key = `${forwarderLabel(forwarder)}\u0000${String(forwarder.address)}`;
      let lane = this.lanes.get(key);
      if (!lane) this.lanes.set(key, (lane = { queue: new BoundedQueue<Send>(this.maxQueued), inFlight: 0 }));
      const dropped = lane.queue.push({ job, forwarder, ping });
      if (dropped) {
        this.options.onDropped(forwarderLabel(dropped.forwarder), dropped.ping.room.schedulerName);
        this.finish(dropped.job, 'dropped');
      }
      this.pump(key, lane);
    }
  }

  /** Drops every lane that has nothing queued or in flight (receivers no scheduler uses any more). */
  forgetIdleLanes(): number {
    let removed = 0;
    for (const [key, lane] of this.lanes) {
      if (lane.queue.length === 0 && lane.inFlight === 0) {
        this.lanes.delete(key);
        removed++;
      }
    }
    return removed;
  }

  private pump(key: string, lane: ReceiverLane): void {
    while (lane.inFlight < this.maxInFlight && lane.queue.length > 0) {
      const send = lane.queue.shift() as Send;
      lane.inFlight++;
      void this.options.send(send.forwarder, send.ping).then(
        (outcome) => outcome.ok,
        () => false,
      ).then((ok) => {
        lane.inFlight--;
        this.finish(send.job, ok ? 'ok' : 'failed');
        this.pump(key, lane);
      });
    }
  }

  private finish(job: PingJob, result: PingForwardResult): void {
    if (WORSE[result] > WORSE[job.result]) job.result = result;
    job.remaining--;
    if (job.remaining === 0) this.options.onPingDone(job.result);
  }
}
