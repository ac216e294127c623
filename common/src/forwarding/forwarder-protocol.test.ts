import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import { findForwarderProto, ForwarderProtocolError, loadForwarderProtocol } from './forwarder-protocol';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const PROTO = path.join(REPO_ROOT, 'proto', 'eventforwarder.proto');

/** Maestro's wire contract (maestro-behaviour.md, section 5): field name -> [number, type]. */
const MAESTRO_MESSAGES: Record<string, Record<string, [number, string]>> = {
  Room: { game: [1, 'string'], roomId: [2, 'string'], host: [4, 'string'], port: [5, 'int32'], metadata: [6, 'map<string,string>'], roomType: [7, 'string'] },
  RoomStatus: { room: [1, 'Room'], statusType: [2, 'RoomStatusType'] },
  RoomEvent: { room: [1, 'Room'], eventType: [2, 'string'], metadata: [3, 'map<string,string>'] },
  PlayerEvent: { playerId: [1, 'string'], room: [2, 'Room'], eventType: [3, 'PlayerEventType'], metadata: [4, 'map<string,string>'] },
  RoomInfo: {
    roomType: [1, 'string'], game: [2, 'string'], numberOfTeams: [3, 'int32'], playersPerTeam: [4, 'int32'],
    minimumNumberOfPlayers: [5, 'int32'], matchmakingScript: [6, 'string'], webhookUrl: [7, 'string'],
    metadata: [8, 'map<string,string>'], tags: [9, 'map<string,string>'],
  },
  Response: { code: [1, 'int32'], message: [2, 'string'] },
};

const MAESTRO_RPCS: Record<string, [string, string]> = {
  SendRoomInfo: ['RoomInfo', 'Response'],
  SendRoomStatus: ['RoomStatus', 'Response'],
  SendRoomPing: ['Room', 'Response'],
  SendRoomResync: ['RoomStatus', 'Response'],
  SendRoomEvent: ['RoomEvent', 'Response'],
  SendPlayerEvent: ['PlayerEvent', 'Response'],
};

function describeField(field: protobuf.Field): string {
  if (field instanceof protobuf.MapField) return `map<${field.keyType},${field.type}>`;
  return field.type;
}

describe('proto/eventforwarder.proto', () => {
  const root = protobuf.loadSync(PROTO);
  root.resolveAll();

  it.each(Object.entries(MAESTRO_MESSAGES))('message %s has Maestro\'s fields and numbers', (name, fields) => {
    const type = root.lookupType(`eventforwarder.${name}`);
    const actual = Object.fromEntries(Object.values(type.fields).map((f) => [f.name, [f.id, describeField(f)]]));
    expect(actual).toEqual(fields);
    for (const field of Object.values(type.fields)) expect(field.repeated).toBe(false);
  });

  it('has Maestro\'s enums', () => {
    expect(root.lookupEnum('eventforwarder.RoomStatus.RoomStatusType').values).toEqual({ ready: 0, occupied: 1, terminating: 2, terminated: 3 });
    expect(root.lookupEnum('eventforwarder.PlayerEvent.PlayerEventType').values).toEqual({ PLAYER_JOINED: 0, PLAYER_LEFT: 1 });
  });

  it('has the GRPCForwarder service with Maestro\'s RPCs', () => {
    const service = root.lookupService('eventforwarder.GRPCForwarder');
    const actual = Object.fromEntries(
      Object.values(service.methods).map((m) => [m.name, [m.resolvedRequestType?.name, m.resolvedResponseType?.name]]),
    );
    expect(actual).toEqual(MAESTRO_RPCS);
    for (const method of Object.values(service.methods)) {
      expect(method.requestStream).toBeFalsy();
      expect(method.responseStream).toBeFalsy();
    }
  });
});

describe('findForwarderProto', () => {
  it('walks up from a nested folder to the repository root', () => {
    expect(findForwarderProto(__dirname)).toBe(PROTO);
    expect(findForwarderProto(path.join(REPO_ROOT, 'dist', 'common', 'src', 'forwarding'))).toBe(PROTO);
  });

  it('throws a ForwarderProtocolError when no proto/ folder is above', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-proto-'));
    try {
      expect(() => findForwarderProto(dir)).toThrow(ForwarderProtocolError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadForwarderProtocol', () => {
  it('parses once per path and round-trips messages with enums as names', () => {
    const protocol = loadForwarderProtocol();
    expect(loadForwarderProtocol()).toBe(protocol);
    expect(protocol.protoPath).toBe(PROTO);
    const method = protocol.methods.SendRoomStatus;
    expect(method.path).toBe('/eventforwarder.GRPCForwarder/SendRoomStatus');
    const bytes = method.requestSerialize({ room: { game: 'g', roomId: 'r', port: 7000, metadata: { a: 'b' } }, statusType: 'terminated' });
    expect(method.requestDeserialize(bytes)).toEqual({
      room: { game: 'g', roomId: 'r', host: '', port: 7000, metadata: { a: 'b' }, roomType: '' },
      statusType: 'terminated',
    });
    expect(protocol.methods.SendRoomResync.responseDeserialize(protocol.methods.SendRoomResync.responseSerialize({ code: 404, message: 'x' })))
      .toEqual({ code: 404, message: 'x' });
  });

  it('rejects a .proto that does not hold the service', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-proto-'));
    const file = path.join(dir, 'other.proto');
    fs.writeFileSync(file, 'syntax = "proto3"; package other; message X { string a = 1; }');
    try {
      expect(() => loadForwarderProtocol(file)).toThrow(ForwarderProtocolError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
