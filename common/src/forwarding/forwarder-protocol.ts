/**
 * The forwarder wire contract (`proto/eventforwarder.proto`), loaded at runtime with protobufjs and
 * turned into grpc-js method definitions. Loading parses the .proto once per path; callers keep
 * the returned protocol and reuse its serializers for every call.
 */
import fs from 'node:fs';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const FORWARDER_PROTO_FILE = 'eventforwarder.proto';
const FORWARDER_SERVICE_NAME = 'eventforwarder.GRPCForwarder';

/** The RPCs of `eventforwarder.GRPCForwarder`, with their request message names. */
export const FORWARDER_RPCS = {
  SendRoomInfo: 'RoomInfo',
  SendRoomStatus: 'RoomStatus',
  SendRoomPing: 'Room',
  SendRoomResync: 'RoomStatus',
  SendRoomEvent: 'RoomEvent',
  SendPlayerEvent: 'PlayerEvent',
} as const;

export type ForwarderRpc = keyof typeof FORWARDER_RPCS;

export type RoomStatusType = 'ready' | 'occupied' | 'terminating' | 'terminated';
export type PlayerEventType = 'PLAYER_JOINED' | 'PLAYER_LEFT';

/** `eventforwarder.Room`, as plain data (enums as their names, maps as objects). */
export interface RoomMessage {
  game: string;
  roomId: string;
  host: string;
  port: number;
  metadata: Record<string, string>;
  roomType: string;
}

export interface RoomStatusMessage {
  room: RoomMessage;
  statusType: RoomStatusType;
}

export interface RoomEventMessage {
  room: RoomMessage;
  eventType: string;
  metadata: Record<string, string>;
}

export interface PlayerEventMessage {
  playerId: string;
  room: RoomMessage;
  eventType: PlayerEventType;
  metadata: Record<string, string>;
}

export interface RoomInfoMessage {
  roomType: string;
  game: string;
  numberOfTeams: number;
  playersPerTeam: number;
  minimumNumberOfPlayers: number;
  matchmakingScript: string;
  webhookUrl: string;
  metadata: Record<string, string>;
  tags: Record<string, string>;
}

export interface ResponseMessage {
  code: number;
  message: string;
}

/** The request message type of each RPC. */
export interface ForwarderRequests {
  SendRoomInfo: RoomInfoMessage;
  SendRoomStatus: RoomStatusMessage;
  SendRoomPing: RoomMessage;
  SendRoomResync: RoomStatusMessage;
  SendRoomEvent: RoomEventMessage;
  SendPlayerEvent: PlayerEventMessage;
}

/** A request as a sender builds it: every field may be left out (proto3 defaults). */
export type PartialMessage<T> = { [K in keyof T]?: T[K] extends Record<string, string> ? T[K] : T[K] extends object ? PartialMessage<T[K]> : T[K] };

export type ForwarderMethod<R extends ForwarderRpc> = grpc.MethodDefinition<PartialMessage<ForwarderRequests[R]>, ResponseMessage> & {
  requestDeserialize: (bytes: Buffer) => ForwarderRequests[R];
};

export interface ForwarderProtocol {
  /** The .proto file this protocol was loaded from. */
  protoPath: string;
  root: protobuf.Root;
  methods: { [R in ForwarderRpc]: ForwarderMethod<R> };
  /** For `grpc.Server.addService` (a receiver). */
  serviceDefinition: grpc.ServiceDefinition;
}

/** The .proto file could not be found or parsed. */
export class ForwarderProtocolError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ForwarderProtocolError';
  }
}

/**
 * Finds `proto/eventforwarder.proto` by walking up from `startDir` to the first folder that has
 * it, so it is found both from source (`common/src/forwarding`) and from `dist/`.
 */
export function findForwarderProto(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    const candidate = path.join(dir, 'proto', FORWARDER_PROTO_FILE);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new ForwarderProtocolError(`proto/${FORWARDER_PROTO_FILE} not found above ${startDir}`);
    dir = parent;
  }
}

const CONVERSION: protobuf.IConversionOptions = { enums: String, longs: Number, defaults: true, arrays: true, objects: true };

function codecFor(type: protobuf.Type): { encode: (value: unknown) => Buffer; decode: (bytes: Buffer) => unknown } {
  return {
    encode: (value) => {
      const message = type.fromObject(value as Record<string, unknown>);
      return Buffer.from(type.encode(message).finish());
    },
    decode: (bytes) => type.toObject(type.decode(bytes), CONVERSION),
  };
}

const loaded = new Map<string, ForwarderProtocol>();

/**
 * Loads the forwarder protocol from `protoPath` (default: found with `findForwarderProto`).
 * Parsed once per path and cached; throws `ForwarderProtocolError` when it cannot be loaded.
 */
export function loadForwarderProtocol(protoPath: string = findForwarderProto()): ForwarderProtocol {
  const cached = loaded.get(protoPath);
  if (cached) return cached;
  let root: protobuf.Root;
  let service: protobuf.Service;
  try {
    root = protobuf.loadSync(protoPath);
    root.resolveAll();
    service = root.lookupService(FORWARDER_SERVICE_NAME);
  } catch (err) {
    throw new ForwarderProtocolError(`cannot load ${protoPath}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const response = codecFor(root.lookupType('eventforwarder.Response'));
  const methods: Record<string, grpc.MethodDefinition<unknown, ResponseMessage>> = {};
  for (const [rpc, requestName] of Object.entries(FORWARDER_RPCS)) {
    const method = service.methods[rpc];
    if (!method || method.resolvedRequestType?.name !== requestName || method.resolvedResponseType?.name !== 'Response') {
      throw new ForwarderProtocolError(`${protoPath}: ${FORWARDER_SERVICE_NAME}.${rpc} must take ${requestName} and return Response`);
    }
    const request = codecFor(method.resolvedRequestType);
    methods[rpc] = {
      path: `/${FORWARDER_SERVICE_NAME}/${rpc}`,
      originalName: rpc,
      requestStream: false,
      responseStream: false,
      requestSerialize: request.encode,
      requestDeserialize: request.decode,
      responseSerialize: response.encode,
      // The Response type was checked above: decoding with `defaults: true` gives its fields.
      responseDeserialize: (bytes) => response.decode(bytes) as ResponseMessage,
    };
  }
  const protocol: ForwarderProtocol = {
    protoPath,
    root,
    methods: methods as unknown as ForwarderProtocol['methods'],
    serviceDefinition: methods,
  };
  loaded.set(protoPath, protocol);
  return protocol;
}
