/**
 * A real gRPC receiver of forwarded events (`eventforwarder.GRPCForwarder`), recording what it
 * receives. Tests, the sandbox and demos use it as the "external service" a scheduler forwards
 * to; it loads the same .proto as the sender.
 */
import * as grpc from '@grpc/grpc-js';
import { loadForwarderProtocol, FORWARDER_RPCS, type ForwarderProtocol, type ForwarderRequests, type ForwarderRpc, type ResponseMessage } from './forwarder-protocol';

/** One call of one RPC a receiver got. */
export interface ReceivedCall<R extends ForwarderRpc> {
  rpc: R;
  request: ForwarderRequests[R];
  /** gRPC request headers (Maestro sends none of its own). */
  headers: Record<string, unknown>;
  /** Set when the sender gave up on the call (its deadline passed) before it was answered. */
  cancelled: boolean;
}

/** One call a receiver got; `rpc` tells the request's type. */
export type ReceivedForward = { [R in ForwarderRpc]: ReceivedCall<R> }[ForwarderRpc];

/** Returned by a `reply` function: the receiver never answers the call (until it stops). */
export const NO_REPLY = Symbol('NO_REPLY');

/** What a receiver answers: a Response, `NO_REPLY`, or a gRPC error status. */
export type ReceiverReply = Partial<ResponseMessage> | typeof NO_REPLY | { grpcError: { code: grpc.status; details?: string } };

export interface ForwardReceiverOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  protocol?: ForwarderProtocol;
  /** How to answer each call; default `{code: 200, message: 'ok'}`. May be changed later on the receiver. */
  reply?: (call: ReceivedForward) => ReceiverReply | Promise<ReceiverReply>;
}

export interface ForwardReceiver {
  /** `host:port`, as a forwarder's `address`. */
  address: string;
  port: number;
  /** Every call received, in arrival order. */
  received: ReceivedForward[];
  /** The requests received for one RPC. */
  requestsOf<R extends ForwarderRpc>(rpc: R): ForwarderRequests[R][];
  /** Replaces the reply function. */
  setReply(reply: (call: ReceivedForward) => ReceiverReply | Promise<ReceiverReply>): void;
  /** Stops listening and cancels calls in progress. */
  stop(): Promise<void>;
}

const OK_REPLY: ResponseMessage = { code: 200, message: 'ok' };

/** Starts a receiver listening on `host:port`; resolves once it accepts connections. */
export async function startForwardReceiver(options: ForwardReceiverOptions = {}): Promise<ForwardReceiver> {
  const protocol = options.protocol ?? loadForwarderProtocol();
  const host = options.host ?? '127.0.0.1';
  const received: ReceivedForward[] = [];
  let reply = options.reply ?? ((): ReceiverReply => OK_REPLY);

  const server = new grpc.Server();
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const rpc of Object.keys(FORWARDER_RPCS) as ForwarderRpc[]) {
    const handler: grpc.handleUnaryCall<ForwarderRequests[ForwarderRpc], ResponseMessage> = (call, callback) => {
      const entry = { rpc, request: call.request, headers: call.metadata.getMap(), cancelled: false } as ReceivedForward;
      call.on('cancelled', () => {
        entry.cancelled = true;
      });
      received.push(entry);
      Promise.resolve()
        .then(() => reply(entry))
        .then((answer) => {
          if (answer === NO_REPLY) return;
          if ('grpcError' in answer) callback({ code: answer.grpcError.code, details: answer.grpcError.details ?? '' });
          else callback(null, { code: answer.code ?? 0, message: answer.message ?? '' });
        })
        .catch((err: unknown) => callback({ code: grpc.status.INTERNAL, details: String(err) }));
    };
    implementation[rpc] = handler;
  }
  server.addService(protocol.serviceDefinition, implementation);

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, boundPort) => {
      if (err) reject(err);
      else resolve(boundPort);
    });
  });

  return {
    address: `${host}:${port}`,
    port,
    received,
    requestsOf: <R extends ForwarderRpc>(rpc: R) => received.filter((r) => r.rpc === rpc).map((r) => r.request as ForwarderRequests[R]),
    setReply: (next) => {
      reply = next;
    },
    stop: () => {
      server.forceShutdown();
      return Promise.resolve();
    },
  };
}
