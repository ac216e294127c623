/**
 * Building the messages sent to receivers, as Maestro builds them (a pure module: no I/O).
 *
 * `Room.metadata` carries every event attribute as a string: the request's metadata plus
 * `eventType`, `pingType`, `roomEvent` and `ports` (JSON of `[{name, port, protocol}]`). The
 * forwarder's `options.metadata` is merged in: event attributes win for status and resync, the
 * forwarder's metadata wins for room events. Player events carry all of the forwarder's metadata
 * too, as the spec says of every forwarded event (Maestro sends only its `roomType`), the
 * event's own fields winning, and a room with just game and id.
 */
import { isRecord } from '../json/is-record';
import { forwarderMetadata } from './forwarder-options';
import type { PartialMessage, PlayerEventMessage, RoomEventMessage, RoomMessage, RoomStatusMessage } from './forwarder-protocol';
import type { ForwardedRoom, ForwarderConfig, PlayerEventName, RoomPort } from './forwarder-types';
import type { ReportedPingStatus } from '../rooms/room-status';

/** Metadata values go on the wire as strings: strings as they are, objects as JSON. */
export function metadataValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  try {
    return JSON.stringify(value);
  } catch {
    // Not JSON (a cycle, a BigInt inside; metadata parsed from JSON never is): the object's tag, as String() gives.
    return Object.prototype.toString.call(value);
  }
}

/** A metadata object with every value stringified; undefined values are dropped. */
export function stringifyMetadata(metadata: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(metadata)) return out;
  for (const [key, value] of Object.entries(metadata)) {
    const text = metadataValue(value);
    if (text !== undefined) out[key] = text;
  }
  return out;
}

/** The port a receiver is told about: the one named `clientPort`, else the first, else 0. */
export function selectRoomPort(ports: readonly RoomPort[] = []): number {
  const port = ports.find((p) => p.name === 'clientPort') ?? ports[0];
  return port?.port ?? 0;
}

/** The `ports` attribute: JSON of the room's ports with keys in Maestro's (sorted) order. */
export function portsAttribute(ports: readonly RoomPort[] = []): string | undefined {
  if (ports.length === 0) return undefined;
  return JSON.stringify(ports.map((p) => ({ name: p.name ?? '', port: p.port ?? 0, protocol: p.protocol ?? '' })));
}

function roomTypeOf(forwarder: ForwarderConfig): string | undefined {
  const roomType = forwarderMetadata(forwarder).roomType;
  return typeof roomType === 'string' ? roomType : undefined;
}

function withPorts(attributes: Record<string, string>, room: ForwardedRoom): Record<string, string> {
  const ports = portsAttribute(room.ports);
  if (ports !== undefined) attributes.ports = ports;
  return attributes;
}

function addressedRoom(room: ForwardedRoom, metadata: Record<string, string>, roomType?: string): PartialMessage<RoomMessage> {
  const message: PartialMessage<RoomMessage> = {
    game: room.game,
    roomId: room.roomId,
    host: room.host ?? '',
    port: selectRoomPort(room.ports),
    metadata,
  };
  if (roomType !== undefined) message.roomType = roomType;
  return message;
}

function statusMessage(
  forwarder: ForwarderConfig,
  room: ForwardedRoom,
  statusType: ReportedPingStatus,
  attributes: Record<string, string>,
): PartialMessage<RoomStatusMessage> {
  const metadata = { ...stringifyMetadata(forwarderMetadata(forwarder)), ...withPorts(attributes, room) };
  return { room: addressedRoom(room, metadata, roomTypeOf(forwarder)), statusType };
}

/** A ping, forwarded with `SendRoomResync`. */
export function resyncMessage(
  forwarder: ForwarderConfig,
  room: ForwardedRoom,
  pingStatus: ReportedPingStatus,
  metadata?: Record<string, unknown>,
): PartialMessage<RoomStatusMessage> {
  const attributes = { ...stringifyMetadata(metadata), eventType: 'resync', pingType: pingStatus };
  return statusMessage(forwarder, room, pingStatus, attributes);
}

/** A status (a gone room is `terminated`), forwarded with `SendRoomStatus`. */
export function roomStatusMessage(
  forwarder: ForwarderConfig,
  room: ForwardedRoom,
  status: ReportedPingStatus,
  metadata?: Record<string, unknown>,
): PartialMessage<RoomStatusMessage> {
  const attributes: Record<string, string> = { ...stringifyMetadata(metadata), eventType: 'status', pingType: status };
  if (status === 'terminated') attributes.roomEvent = 'terminated';
  return statusMessage(forwarder, room, status, attributes);
}

/** A room's own event, forwarded with `SendRoomEvent`; the forwarder's metadata wins. */
export function roomEventMessage(
  forwarder: ForwarderConfig,
  room: ForwardedRoom,
  event: string,
  metadata?: Record<string, unknown>,
): PartialMessage<RoomEventMessage> {
  const attributes = withPorts({ ...stringifyMetadata(metadata), eventType: 'roomEvent', roomEvent: event }, room);
  const merged = { ...attributes, ...stringifyMetadata(forwarderMetadata(forwarder)) };
  return { room: addressedRoom(room, merged), eventType: event };
}

/** A player joining or leaving, forwarded with `SendPlayerEvent`. */
export function playerEventMessage(
  forwarder: ForwarderConfig,
  room: ForwardedRoom,
  event: PlayerEventName,
  playerId: string,
  metadata?: Record<string, unknown>,
): PartialMessage<PlayerEventMessage> {
  const merged: Record<string, string> = { ...stringifyMetadata(forwarderMetadata(forwarder)), ...stringifyMetadata(metadata), playerId, eventType: event };
  return {
    playerId,
    room: { game: room.game, roomId: room.roomId },
    eventType: event === 'playerLeft' ? 'PLAYER_LEFT' : 'PLAYER_JOINED',
    metadata: merged,
  };
}
