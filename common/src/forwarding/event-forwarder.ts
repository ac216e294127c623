/**
 * Forwards room information (pings, statuses, room events, player events) to a scheduler's
 * forwarders over gRPC, wire-compatible with Maestro's `eventforwarder.GRPCForwarder`.
 *
 * Every call goes to all enabled forwarders in parallel, each bounded by its own deadline, so one
 * slow or dead receiver never holds up another (Maestro tries them in order and stops at the
 * first error). The forwarder list is an argument of each call, so configuration changes need no
 * restart. Calls never throw: each returns what every forwarder did.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../logger';
import type { Counter, Histogram, MetricsRegistry } from '../metrics';
import { ForwarderClientPool } from './forwarder-client-pool';
import { DEFAULT_FORWARD_TIMEOUT_MS, enabledForwarders, forwarderTimeoutMs, isGrpcForwarder, isHostPortAddress } from './forwarder-options';
import { loadForwarderProtocol, type ForwarderProtocol, type ForwarderRequests, type ForwarderRpc, type PartialMessage, type ResponseMessage } from './forwarder-protocol';
import type { ForwardedEventType, ForwardedRoom, ForwarderConfig, ForwardOutcome, ForwardResult, PlayerEventName } from './forwarder-types';
import { playerEventMessage, resyncMessage, roomEventMessage, roomStatusMessage } from './forward-messages';
import { forwarderLabel } from './forward-pump';
import type { ReportedPingStatus } from '../rooms/room-status';

export interface EventForwarderOptions {
  logger: Logger;
  metrics: MetricsRegistry;
  /** Keepalive ping interval of each connection. Default 10 s. */
  keepaliveTimeMs?: number;
  /** How long a keepalive ping may go unanswered. Default 5 s. */
  keepaliveTimeoutMs?: number;
  /** Deadline of a call when the forwarder has no valid `options.timeout`. Default 1000 ms. */
  defaultTimeoutMs?: number;
  /** Reconnect backoff (initial and maximum). Default 1 s. */
  reconnectBackoffMs?: number;
  /** A connection unused this long is closed. Default 5 min. */
  idleTimeoutMs?: number;
  /** How often idle connections are looked for; 0 turns the timer off. Default 1 min. */
  idleSweepIntervalMs?: number;
  /** The clock for idle bookkeeping. Default `Date.now`. */
  now?: () => number;
  /** The wire contract; default `loadForwarderProtocol()` (throws at construction if missing). */
  protocol?: ForwarderProtocol;
  /**
   * Whether a scheduler still exists. Given, the metric series of forwarder names that only
   * gone schedulers used are removed (forwarder names are user input: they must not pile up in
   * `/metrics` for ever). Absent, series are kept.
   */
  schedulerExists?: (name: string) => boolean;
  /** How often gone schedulers are looked for; 0 turns the timer off. Default 1 min. */
  metricsSweepIntervalMs?: number;
}

/** The `result` label for a receiver's `Response.code` (HTTP-like, as Maestro maps it). */
function responseCodeResult(code: number): string {
  switch (code) {
    case 200: return 'ok';
    case 404: return 'not_found';
    case 406: return 'failed_precondition';
    case 500: return 'internal';
    default: return 'unknown_code';
  }
}

/** The `result` label of one forward: the receiver's code, or `error` when the call failed. */
export function forwardResultLabel(result: ForwardResult): string {
  return result.ok ? responseCodeResult(result.code ?? 0) : 'error';
}

/** A forward made elsewhere (the forwarding worker thread), to count on this process's metrics. */
export interface RelayedForward {
  forwarder: string;
  scheduler: string;
  type: ForwardedEventType;
  /** `forwardResultLabel` of the result. */
  result: string;
  count: number;
  /** Seconds each of the `count` forwards took. */
  durations: readonly number[];
}

function grpcFailure(err: unknown): { code?: number; error: string } {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number') {
    const details = 'details' in err && typeof err.details === 'string' ? err.details : '';
    const name = grpc.status[err.code] ?? `code ${err.code}`;
    return { code: err.code, error: details ? `${name}: ${details}` : name };
  }
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') return { error: err.message };
  return { error: String(err) };
}

/** Most characters of a receiver's own error text told to a room. */
const MAX_DETAILS_CHARS = 160;

/**
 * A gRPC failure's details as a room may be told them: addresses (the forwarder's, any IP
 * address with its port) read "the receiver", control characters go, and the text is bounded.
 */
function roomSafeDetails(details: string, address: string): string {
  const host = address.slice(0, address.lastIndexOf(':'));
  let text = details.split(address).join('the receiver');
  if (host.length > 0) text = text.split(host).join('the receiver');
  text = text
    .replace(/\[[0-9A-Fa-f:.]+\](:\d+)?/g, 'the receiver')
    .replace(/\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, 'the receiver')
    // grpc-js ends a connection failure with "Resolution note: <note>", the note often empty.
    .replace(/\s*Resolution note:\s*$/, '')
    .trim();
  // Control characters (line breaks, escapes) read as one space each run of them.
  text = Array.from(text, (c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? ' ' : c)).join('').replace(/ {2,}/g, ' ').trim();
  return text.length > MAX_DETAILS_CHARS ? `${text.slice(0, MAX_DETAILS_CHARS - 3)}...` : text;
}

/**
 * A call that ended with an error status, and whether the receiver itself answered it. grpc-js
 * gives UNAVAILABLE both when it could make no connection and when the receiver answers it.
 */
class FailedCall extends Error {
  constructor(readonly status: grpc.ServiceError, readonly receiverAnswered: boolean) {
    super(status.message);
  }
}

/**
 * Whether a failed call's status came from the receiver: it sent response headers, or trailers
 * with more than the status. Every status grpc-js makes itself (no connection, name resolution
 * failed, connection dropped, channel closed) has empty metadata; a receiver's answer without
 * headers (Trailers-Only) carries at least its content-type, as the gRPC HTTP/2 protocol requires.
 */
function answeredByReceiver(status: grpc.ServiceError, headersReceived: boolean): boolean {
  return headersReceived || Object.keys(status.metadata.getMap()).length > 0;
}

/**
 * Why a call failed and what to do, in words a room may be told (it goes into the answer to a
 * room or player event): the gRPC status, the deadline that passed, the receiver's own error
 * text with addresses left out, bounded. UNAVAILABLE says the receiver could not be reached only
 * when grpc-js made that status itself (`receiverAnswered` false); a receiver that answers it is
 * told as any other code.
 */
function failureReason(err: unknown, address: string, timeoutMs: number, receiverAnswered: boolean): string {
  const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number' ? err.code : undefined;
  const raw = typeof err === 'object' && err !== null && 'details' in err && typeof err.details === 'string' ? err.details
    : err instanceof Error ? err.message : String(err);
  const details = roomSafeDetails(raw, address);
  if (code === grpc.status.DEADLINE_EXCEEDED) return `the receiver did not answer within ${timeoutMs} ms (DEADLINE_EXCEEDED); make it answer sooner or raise the forwarder's options.timeout`;
  if (code === grpc.status.UNAVAILABLE && !receiverAnswered) return `the receiver could not be reached (UNAVAILABLE${details ? `: ${details}` : ''}); check that it runs and listens at the forwarder's address`;
  if (code === undefined) return `the call could not be made (${details || 'no cause given'}); see the gateway log`;
  return `the receiver answered ${grpc.status[code] ?? `gRPC code ${code}`}${details ? `: ${details}` : ''}; see the receiver's log`;
}

export class EventForwarder {
  private readonly logger: Logger;
  private readonly protocol: ForwarderProtocol;
  private readonly pool: ForwarderClientPool;
  private readonly defaultTimeoutMs: number;
  private readonly events: Counter;
  private readonly duration: Histogram;
  /** Addresses whose last call failed; failures are logged at warn only on the change. */
  private readonly failing = new Set<string>();
  /** Per forwarder name in metric labels: the schedulers whose events went out under it. */
  private readonly labelUsers = new Map<string, Set<string>>();
  private readonly schedulerExists?: (name: string) => boolean;
  private readonly metricsSweep?: NodeJS.Timeout;

  constructor(options: EventForwarderOptions) {
    this.logger = options.logger;
    this.protocol = options.protocol ?? loadForwarderProtocol();
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
    this.pool = new ForwarderClientPool({
      logger: options.logger,
      keepaliveTimeMs: options.keepaliveTimeMs,
      keepaliveTimeoutMs: options.keepaliveTimeoutMs,
      reconnectBackoffMs: options.reconnectBackoffMs,
      idleTimeoutMs: options.idleTimeoutMs,
      sweepIntervalMs: options.idleSweepIntervalMs,
      now: options.now,
    });
    this.events = options.metrics.counter('roomkeeper_forwarded_events_total', 'Events forwarded to forwarders, by forwarder, event type and result.', { labelNames: ['forwarder', 'result', 'type'] });
    this.duration = options.metrics.histogram('roomkeeper_forward_duration_seconds', 'Time to forward one event to one forwarder.', undefined, { labelNames: ['forwarder', 'type'] });
    this.schedulerExists = options.schedulerExists;
    const sweepMs = options.metricsSweepIntervalMs ?? 60_000;
    if (this.schedulerExists && sweepMs > 0) {
      this.metricsSweep = setInterval(() => this.forgetGoneSchedulers(), sweepMs);
      this.metricsSweep.unref();
    }
  }

  /**
   * Removes the metric series of forwarder names used by no scheduler that still exists; returns
   * how many names were removed. Runs on a timer when `schedulerExists` is given.
   */
  forgetGoneSchedulers(): number {
    const exists = this.schedulerExists;
    if (!exists) return 0;
    let removed = 0;
    for (const [name, users] of this.labelUsers) {
      for (const scheduler of users) if (!exists(scheduler)) users.delete(scheduler);
      if (users.size > 0) continue;
      this.labelUsers.delete(name);
      this.events.remove({ forwarder: name });
      this.duration.remove({ forwarder: name });
      removed++;
    }
    return removed;
  }

  /**
   * Forwards a ping as `SendRoomResync(RoomStatus)`, whether or not the status changed, a
   * `terminated` ping included (its room's removal is the one `SendRoomStatus` terminated). Pings
   * of a room whose pod is terminating (`room.terminating`) are not forwarded, as in Maestro.
   */
  forwardPing(forwarders: readonly ForwarderConfig[], room: ForwardedRoom, pingStatus: ReportedPingStatus, metadata?: Record<string, unknown>): Promise<ForwardOutcome> {
    return this.dispatch(forwarders, room, 'resync', 'SendRoomResync', (f) => resyncMessage(f, room, pingStatus, metadata), { skipTerminating: true });
  }

  /** Forwards a status as `SendRoomStatus(RoomStatus)`; `terminated` when a room is deleted or its pod is gone. */
  forwardStatus(forwarders: readonly ForwarderConfig[], room: ForwardedRoom, status: ReportedPingStatus, metadata?: Record<string, unknown>): Promise<ForwardOutcome> {
    return this.dispatch(forwarders, room, 'status', 'SendRoomStatus', (f) => roomStatusMessage(f, room, status, metadata));
  }

  /** Forwards a room's event as `SendRoomEvent(RoomEvent)`. */
  forwardRoomEvent(forwarders: readonly ForwarderConfig[], room: ForwardedRoom, event: string, metadata?: Record<string, unknown>): Promise<ForwardOutcome> {
    return this.dispatch(forwarders, room, 'roomEvent', 'SendRoomEvent', (f) => roomEventMessage(f, room, event, metadata));
  }

  /** Forwards a player joining or leaving as `SendPlayerEvent(PlayerEvent)`. */
  forwardPlayerEvent(
    forwarders: readonly ForwarderConfig[],
    room: ForwardedRoom,
    event: PlayerEventName,
    playerId: string,
    metadata?: Record<string, unknown>,
  ): Promise<ForwardOutcome> {
    return this.dispatch(forwarders, room, 'playerEvent', 'SendPlayerEvent', (f) => playerEventMessage(f, room, event, playerId, metadata));
  }

  /** Counts forwards the forwarding worker made, under this forwarder's metric names. */
  recordRelayed(relayed: RelayedForward): void {
    this.noteLabelUser(relayed.forwarder, relayed.scheduler);
    this.events.inc({ forwarder: relayed.forwarder, type: relayed.type, result: relayed.result }, relayed.count);
    if (relayed.durations.length === 0) return;
    // One label lookup per batch, not per duration: this runs on the thread that answers pings.
    const duration = this.duration.bind({ forwarder: relayed.forwarder, type: relayed.type });
    for (const seconds of relayed.durations) duration.observe(seconds);
  }

  /** The number of open receiver connections. */
  get openConnections(): number {
    return this.pool.size;
  }

  /** Closes idle connections now; returns how many were closed. */
  closeIdleConnections(): number {
    return this.pool.sweepIdle();
  }

  /** Closes every connection; later calls fail. */
  close(): void {
    if (this.metricsSweep) clearInterval(this.metricsSweep);
    this.pool.close();
    this.failing.clear();
  }

  private async dispatch<R extends ForwarderRpc>(
    forwarders: readonly ForwarderConfig[],
    room: ForwardedRoom,
    type: ForwardedEventType,
    rpc: R,
    build: (forwarder: ForwarderConfig) => PartialMessage<ForwarderRequests[R]>,
    { skipTerminating = false } = {},
  ): Promise<ForwardOutcome> {
    try {
      if (room.validation === true || (skipTerminating && room.terminating === true)) return { ok: true, results: [] };
      const enabled = enabledForwarders(forwarders);
      const results = await Promise.all(enabled.map((f) => this.sendOne(f, room, type, rpc, build)));
      return { ok: results.every((r) => r.ok), results };
    } catch (err) {
      // Only malformed input gets here (sendOne never rejects); report it rather than throw.
      this.logger.error('forwarding skipped: malformed input', { type, error: grpcFailure(err).error });
      return { ok: false, results: [] };
    }
  }

  private async sendOne<R extends ForwarderRpc>(
    forwarder: ForwarderConfig,
    room: ForwardedRoom,
    type: ForwardedEventType,
    rpc: R,
    build: (forwarder: ForwarderConfig) => PartialMessage<ForwarderRequests[R]>,
  ): Promise<ForwardResult> {
    const name = forwarderLabel(forwarder);
    const context = { forwarder: name, address: forwarder.address, type, scheduler: room.schedulerName, roomId: room.roomId };
    this.noteLabelUser(name, room.schedulerName);
    const stopTimer = this.duration.startTimer({ forwarder: name, type });
    const timeoutMs = forwarderTimeoutMs(forwarder, this.defaultTimeoutMs);
    let result: ForwardResult;
    try {
      if (!isGrpcForwarder(forwarder)) {
        const error = `unsupported forwarder type "${forwarder.type ?? ''}"`;
        result = { forwarder: name, ok: false, error, reason: `${error}; set its type to gRPC` };
      } else if (typeof forwarder.address !== 'string' || forwarder.address.trim() === '') {
        result = { forwarder: name, ok: false, error: 'forwarder has no address', reason: 'the forwarder has no address; set it to the receiver\'s host:port' };
      } else if (!isHostPortAddress(forwarder.address)) {
        result = { forwarder: name, ok: false, error: 'forwarder address is not host:port', reason: 'the forwarder\'s address is not host:port, so it was not dialled; set it to the receiver\'s host:port' };
      } else {
        const response = await this.call(forwarder.address, rpc, build(forwarder), timeoutMs);
        result = { forwarder: name, ok: true, code: response.code };
      }
    } catch (err) {
      const cause = err instanceof FailedCall ? err.status : err;
      const answered = err instanceof FailedCall && err.receiverAnswered;
      result = { forwarder: name, ok: false, ...grpcFailure(cause), reason: failureReason(cause, forwarder.address, timeoutMs, answered) };
    }
    stopTimer();
    this.record(result, context);
    return result;
  }

  private noteLabelUser(name: string, scheduler: string): void {
    let users = this.labelUsers.get(name);
    if (!users) this.labelUsers.set(name, (users = new Set()));
    users.add(scheduler);
  }

  private call<R extends ForwarderRpc>(address: string, rpc: R, message: PartialMessage<ForwarderRequests[R]>, timeoutMs: number): Promise<ResponseMessage> {
    const method = this.protocol.methods[rpc];
    const lease = this.pool.acquire(address);
    return new Promise<ResponseMessage>((resolve, reject) => {
      try {
        let headersReceived = false;
        const call = lease.client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          message,
          new grpc.Metadata(),
          { deadline: Date.now() + timeoutMs },
          (err, response) => {
            lease.release();
            if (err) reject(new FailedCall(err, answeredByReceiver(err, headersReceived)));
            else if (!response) reject(new Error('empty response'));
            else resolve(response);
          },
        );
        call.on('metadata', () => {
          headersReceived = true;
        });
      } catch (err) {
        lease.release();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  private record(result: ForwardResult, context: Record<string, unknown> & { forwarder: string; type: ForwardedEventType }): void {
    const label = forwardResultLabel(result);
    this.events.inc({ forwarder: context.forwarder, type: context.type, result: label });
    const address = String(context.address);
    if (result.ok) {
      if (this.failing.delete(address)) this.logger.info('forwarder reachable again', context);
      if (label !== 'ok') this.logger.debug('forwarder answered with a non-OK code', { ...context, code: result.code });
      return;
    }
    const fields = { ...context, code: result.code, error: result.error };
    if (!this.failing.has(address)) {
      this.failing.add(address);
      this.logger.warn('forwarding failed', fields);
    } else {
      this.logger.debug('forwarding failed', fields);
    }
  }
}
