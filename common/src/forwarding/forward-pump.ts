/**
 * Ping forwarding with backpressure: every ping's forward to each receiver waits in that
 * receiver's own bounded queue, and at most `maxInFlight` calls per receiver are open at once. A
 * slow or dead receiver therefore only fills its own queue; the other receivers and the pings
 * themselves are never held up. What does not go out is counted, by why (`onLost`):
 *  - `coalesced`: a newer ping of the same room came while the older one's forward still waited;
 *    the newer one takes its place (and turn), so a receiver that is behind gets each room's
 *    newest state and at most one waiting forward per room;
 *  - `dropped`: the queue was full, the oldest forward made room;
 *  - `skipped`: the receiver's circuit is open. After `circuitFailures` failed calls in a row it
 *    gets no calls for `circuitOpenMs` (doubling while it keeps failing, at most
 *    `circuitMaxOpenMs`); its waiting forwards are skipped at once, and so are new ones, which
 *    then cost nothing. After the pause one call is tried: an answer closes the circuit.
 * Runs in the forwarding worker thread (forwarding-worker-thread.ts) and, for tests, anywhere.
 */
import { CoalescingQueue } from './coalescing-queue';
import { enabledForwarders } from './forwarder-options';
import type { ForwardedRoom, ForwarderConfig, ForwardOutcome } from './forwarder-types';
import type { ReportedPingStatus } from '../rooms/room-status';

/** One ping (or terminated status) to forward to every enabled forwarder of its scheduler. */
export interface PingForward {
  kind: 'resync' | 'status';
  forwarders: readonly ForwarderConfig[];
  room: ForwardedRoom;
  status: ReportedPingStatus;
  metadata?: Record<string, unknown>;
}

/**
 * What became of one ping's forwards, the worst of them: `ok` when every forwarder took it,
 * `coalesced` when a newer ping of the room went instead, `failed`, or `dropped`.
 */
export type PingForwardResult = 'ok' | 'coalesced' | 'failed' | 'dropped';

export const PING_FORWARD_RESULTS: readonly PingForwardResult[] = ['ok', 'coalesced', 'failed', 'dropped'];

/** Why a forward to one receiver did not go out. */
export type LostReason = 'coalesced' | 'dropped' | 'skipped';

export interface ForwardPumpOptions {
  /** Sends one ping to one forwarder (EventForwarder.forwardPing / forwardStatus with a one-element list). */
  send: (forwarder: ForwarderConfig, ping: PingForward) => Promise<ForwardOutcome>;
  /** Forwards waiting per receiver before the oldest is dropped. Default 10,000. */
  maxQueuedPerReceiver?: number;
  /** Calls open at once per receiver. Default 64. */
  maxInFlightPerReceiver?: number;
  /** Failed calls in a row that open a receiver's circuit. Default 5. */
  circuitFailures?: number;
  /** How long an open circuit first stays open. Default 5 s. */
  circuitOpenMs?: number;
  /** The longest it stays open. Default 60 s. */
  circuitMaxOpenMs?: number;
  /** Default `Date.now`. */
  now?: () => number;
  /** Called once per ping when all its forwards are done. */
  onPingDone: (result: PingForwardResult) => void;
  /** Called for each forward to `forwarderName` that did not go out, and why. */
  onLost: (reason: LostReason, forwarderName: string, schedulerName: string) => void;
  /** Called when a receiver's circuit opens (for `openMs`) or closes. */
  onCircuit?: (change: { forwarder: string; address: string; state: 'open' | 'closed'; failures: number; openMs: number }) => void;
}

interface PingJob { remaining: number; result: PingForwardResult }
interface Send { job: PingJob; forwarder: ForwarderConfig; ping: PingForward }
interface ReceiverLane {
  name: string;
  address: string;
  queue: CoalescingQueue<Send>;
  inFlight: number;
  /** Calls that failed in a row. */
  failures: number;
  /** Set while the circuit is open (skip everything until then) or, once past, half-open. */
  openUntil?: number;
  openMs: number;
  /** The one call that decides a half-open circuit. */
  probe?: Send;
}

const WORSE: Record<PingForwardResult, number> = { ok: 0, coalesced: 1, failed: 2, dropped: 3 };

export function forwarderLabel(forwarder: ForwarderConfig): string {
  return typeof forwarder.name === 'string' && forwarder.name !== '' ? forwarder.name : forwarder.address;
}

/** The receiver a forwarder names (forwarders of different schedulers may share one). */
export function receiverKey(forwarder: ForwarderConfig): string {
  return `${forwarderLabel(forwarder)}\u0000${forwarder.address}`;
}

/** The key under which one room's forwards coalesce while they wait. */
export function pingForwardKey(ping: PingForward): string {
  return `${ping.kind}\u0000${ping.room.schedulerName}\u0000${ping.room.roomId}`;
}

export class ForwardPump {
  private readonly lanes = new Map<string, ReceiverLane>();
  private readonly maxQueued: number;
  private readonly maxInFlight: number;
  private readonly circuitFailures: number;
  private readonly circuitOpenMs: number;
  private readonly circuitMaxOpenMs: number;
  private readonly now: () => number;

  constructor(private readonly options: ForwardPumpOptions) {
    this.maxQueued = options.maxQueuedPerReceiver ?? 10_000;
    this.maxInFlight = options.maxInFlightPerReceiver ?? 64;
    this.circuitFailures = options.circuitFailures ?? 5;
    this.circuitOpenMs = options.circuitOpenMs ?? 5000;
    this.circuitMaxOpenMs = Math.max(this.circuitOpenMs, options.circuitMaxOpenMs ?? 60_000);
    this.now = options.now ?? Date.now;
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
    const enabled = enabledForwarders(ping.forwarders);
    if (enabled.length === 0) {
      this.options.onPingDone('ok');
      return;
    }
    const job: PingJob = { remaining: enabled.length, result: 'ok' };
    for (const forwarder of enabled) {
      const lane = this.laneOf(forwarder);
      const send: Send = { job, forwarder, ping };
      if (lane.openUntil !== undefined && this.now() < lane.openUntil) {
        this.lose('skipped', lane, send);
        continue;
      }
      const evicted = lane.queue.push(pingForwardKey(ping), send);
      if (evicted) this.lose(evicted.reason, lane, evicted.item);
      this.pump(lane);
    }
  }

  /** The receivers whose circuit is open now (`receiverKey`), and until when (`now()` time). */
  openCircuits(): { receiver: string; until: number }[] {
    const now = this.now();
    const open: { receiver: string; until: number }[] = [];
    for (const [receiver, lane] of this.lanes) if (lane.openUntil !== undefined && now < lane.openUntil) open.push({ receiver, until: lane.openUntil });
    return open;
  }

  /**
   * Drops every lane that has nothing queued or in flight and no circuit open now (receivers no
   * scheduler uses any more; one still in use starts afresh).
   */
  forgetIdleLanes(): number {
    let removed = 0;
    const now = this.now();
    for (const [key, lane] of this.lanes) {
      if (lane.queue.length === 0 && lane.inFlight === 0 && (lane.openUntil === undefined || now >= lane.openUntil)) {
        this.lanes.delete(key);
        removed++;
      }
    }
    return removed;
  }

  private laneOf(forwarder: ForwarderConfig): ReceiverLane {
    const key = receiverKey(forwarder);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { name: forwarderLabel(forwarder), address: forwarder.address, queue: new CoalescingQueue<Send>(this.maxQueued), inFlight: 0, failures: 0, openMs: this.circuitOpenMs };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private pump(lane: ReceiverLane): void {
    // A half-open circuit gets one call (the probe) until it is decided.
    const halfOpen = lane.openUntil !== undefined;
    if (halfOpen && (lane.probe !== undefined || this.now() < (lane.openUntil ?? 0))) return;
    const limit = halfOpen ? 1 : this.maxInFlight;
    while (lane.inFlight < limit && lane.queue.length > 0) {
      const send = lane.queue.shift() as Send;
      if (halfOpen) lane.probe = send;
      lane.inFlight++;
      void this.options.send(send.forwarder, send.ping).then(
        (outcome) => outcome.ok,
        () => false,
      ).then((ok) => {
        lane.inFlight--;
        this.finish(send.job, ok ? 'ok' : 'failed');
        this.noteCall(lane, send, ok);
        this.pump(lane);
      });
    }
  }

  /** Circuit bookkeeping after a call to `lane` came back. */
  private noteCall(lane: ReceiverLane, send: Send, ok: boolean): void {
    if (lane.openUntil !== undefined) {
      // Open or half-open: only the probe decides; calls made before the circuit opened do not.
      if (lane.probe !== send) return;
      lane.probe = undefined;
      if (ok) {
        lane.openUntil = undefined;
        lane.failures = 0;
        lane.openMs = this.circuitOpenMs;
        this.options.onCircuit?.({ forwarder: lane.name, address: lane.address, state: 'closed', failures: 0, openMs: 0 });
      } else {
        lane.failures++;
        this.open(lane, Math.min(lane.openMs * 2, this.circuitMaxOpenMs));
      }
      return;
    }
    if (ok) {
      lane.failures = 0;
      return;
    }
    lane.failures++;
    if (lane.failures >= this.circuitFailures) this.open(lane, this.circuitOpenMs);
  }

  private open(lane: ReceiverLane, openMs: number): void {
    lane.openMs = openMs;
    lane.openUntil = this.now() + openMs;
    for (const send of lane.queue.clear()) this.lose('skipped', lane, send);
    this.options.onCircuit?.({ forwarder: lane.name, address: lane.address, state: 'open', failures: lane.failures, openMs });
  }

  private lose(reason: LostReason, lane: ReceiverLane, send: Send): void {
    this.options.onLost(reason, lane.name, send.ping.room.schedulerName);
    this.finish(send.job, reason === 'skipped' ? 'failed' : reason);
  }

  private finish(job: PingJob, result: PingForwardResult): void {
    if (WORSE[result] > WORSE[job.result]) job.result = result;
    job.remaining--;
    if (job.remaining === 0) this.options.onPingDone(job.result);
  }
}
