/**
 * The plain types the forwarding code takes and returns. They are structurally compatible with
 * the Scheduler resource's `forwarders` items and with a GameRoom's address, so callers pass
 * resource data straight in.
 */

/** One configured forwarder, as in `Scheduler.spec.forwarders[]`. */
export interface ForwarderConfig {
  /** Reference only; used in results, logs and metric labels. */
  name: string;
  /** Only `true` enables the forwarder; absent means disabled (Maestro's and the CRD's default). */
  enable?: boolean;
  /** Only `gRPC` is accepted (any letter case); absent means gRPC. */
  type?: string;
  /** `host:port` of the receiver. */
  address: string;
  options?: {
    /** Per-event gRPC deadline in milliseconds: an integer or a numeric string. Default 1000. */
    timeout?: number | string;
    /** Free content merged into every forwarded event (see `forward-messages.ts`). */
    metadata?: Record<string, unknown>;
  };
}

/**
 * One port of a room, as the rooms API reports it (`port` is the host port). Fields are optional
 * so a GameRoom's `status.ports` can be passed as is; a missing one is sent as `''` or 0.
 */
export interface RoomPort {
  name?: string;
  protocol?: string;
  port?: number;
}

/** The room an event is about. */
export interface ForwardedRoom {
  /** The scheduler's game. */
  game: string;
  schedulerName: string;
  roomId: string;
  /** The node address the room is reached at; `''` or absent when unknown (a terminating room). */
  host?: string;
  /** The room's ports; empty or absent when unknown. */
  ports?: readonly RoomPort[];
  /** A validation room's events are never forwarded. */
  validation?: boolean;
  /** The room's pod is being deleted; its pings are then not forwarded (as Maestro). */
  terminating?: boolean;
}

export type PlayerEventName = 'playerJoin' | 'playerLeft';

/** What one forwarder did with one event. */
export interface ForwardResult {
  forwarder: string;
  /** True when the receiver answered; a non-200 `Response.code` is still ok. */
  ok: boolean;
  /** Why it failed (gRPC status name and details, or a configuration problem), for the log. */
  error?: string;
  /**
   * Why it failed and what to do, as a room may be told it: no address, the receiver's own
   * text bounded (the answer to a room or player event carries it).
   */
  reason?: string;
  /** On success the receiver's `Response.code`; on a gRPC failure the gRPC status code. */
  code?: number;
}

/** What one forwarding call did: ok when every enabled forwarder got the event. */
export interface ForwardOutcome {
  ok: boolean;
  results: ForwardResult[];
}

/** The kind of event, as used in metric labels and logs. */
export type ForwardedEventType = 'resync' | 'status' | 'roomEvent' | 'playerEvent';
