/**
 * One grpc-js client per receiver address, created on first use and reused by every call.
 *
 * Each channel sends keepalive pings (also with no call in flight) and reconnects with a short
 * backoff, so a dead receiver is noticed within seconds (calls then fail fast with UNAVAILABLE)
 * and a receiver that comes back is used again. A client unused for `idleTimeoutMs` is closed by
 * a periodic sweep; `close()` closes them all.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../logger';

export interface ForwarderClientPoolOptions {
  logger: Logger;
  /** Interval of keepalive pings. Default 10 s. */
  keepaliveTimeMs?: number;
  /** How long a keepalive ping may go unanswered before the connection is dropped. Default 5 s. */
  keepaliveTimeoutMs?: number;
  /** Initial and maximum reconnect backoff. Default 1 s. */
  reconnectBackoffMs?: number;
  /** A client unused this long is closed. Default 5 min. */
  idleTimeoutMs?: number;
  /** How often idle clients are looked for; 0 disables the timer (call `sweepIdle`). Default 1 min. */
  sweepIntervalMs?: number;
  /** The clock, for idle bookkeeping. Default `Date.now`. */
  now?: () => number;
}

/** `acquire` was called after `close()`. */
export class ForwarderPoolClosedError extends Error {
  constructor() {
    super('forwarder client pool is closed');
    this.name = 'ForwarderPoolClosedError';
  }
}

interface PooledClient {
  client: grpc.Client;
  lastUsedAt: number;
  inFlight: number;
}

/** A lease on a pooled client: call `release()` once the call has ended. */
export interface ClientLease {
  client: grpc.Client;
  release(): void;
}

export class ForwarderClientPool {
  private readonly clients = new Map<string, PooledClient>();
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly idleTimeoutMs: number;
  private readonly sweepIntervalMs: number;
  private readonly now: () => number;
  private readonly logger: Logger;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: ForwarderClientPoolOptions) {
    const backoff = options.reconnectBackoffMs ?? 1000;
    this.channelOptions = {
      'grpc.keepalive_time_ms': options.keepaliveTimeMs ?? 10_000,
      'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs ?? 5_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.initial_reconnect_backoff_ms': backoff,
      'grpc.max_reconnect_backoff_ms': backoff,
    };
    this.idleTimeoutMs = options.idleTimeoutMs ?? 5 * 60_000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
  }

  /** The number of open clients. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Leases the client for `address`, creating it on first use. Throws `ForwarderPoolClosedError` after
   * `close()`, and whatever grpc-js throws for an address it cannot parse.
   */
  acquire(address: string): ClientLease {
    if (this.closed) throw new ForwarderPoolClosedError();
    let pooled = this.clients.get(address);
    if (!pooled) {
      const client = new grpc.Client(address, grpc.credentials.createInsecure(), this.channelOptions);
      pooled = { client, lastUsedAt: this.now(), inFlight: 0 };
      this.clients.set(address, pooled);
      this.logger.info('forwarder client created', { address });
      this.startSweeping();
    }
    const entry = pooled;
    entry.inFlight += 1;
    entry.lastUsedAt = this.now();
    let released = false;
    return {
      client: entry.client,
      release: () => {
        if (released) return;
        released = true;
        entry.inFlight -= 1;
        entry.lastUsedAt = this.now();
      },
    };
  }

  /** Closes clients with no call in flight that were unused for `idleTimeoutMs`; returns how many. */
  sweepIdle(): number {
    const cutoff = this.now() - this.idleTimeoutMs;
    let closed = 0;
    for (const [address, pooled] of this.clients) {
      if (pooled.inFlight > 0 || pooled.lastUsedAt > cutoff) continue;
      pooled.client.close();
      this.clients.delete(address);
      closed += 1;
      this.logger.info('idle forwarder client closed', { address });
    }
    if (this.clients.size === 0) this.stopSweeping();
    return closed;
  }

  /** Closes every client; later `acquire` calls throw. */
  close(): void {
    this.closed = true;
    this.stopSweeping();
    for (const pooled of this.clients.values()) pooled.client.close();
    this.clients.clear();
  }

  private startSweeping(): void {
    if (this.sweepTimer || this.sweepIntervalMs <= 0) return;
    this.sweepTimer = setInterval(() => this.sweepIdle(), this.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  private stopSweeping(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }
}
