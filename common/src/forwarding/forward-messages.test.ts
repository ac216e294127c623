import {
  metadataValue,
  playerEventMessage,
  portsAttribute,
  resyncMessage,
  roomEventMessage,
  roomStatusMessage,
  selectRoomPort,
  stringifyMetadata,
} from './forward-messages';
import type { ForwardedRoom, ForwarderConfig } from './forwarder-types';

const room: ForwardedRoom = {
  game: 'tennis',
  schedulerName: 'tennis-eu',
  roomId: 'tennis-eu-abc12',
  host: '10.0.0.7',
  ports: [
    { name: 'metrics', protocol: 'TCP', port: 9100 },
    { name: 'clientPort', protocol: 'UDP', port: 7000 },
  ],
};
const PORTS_JSON = '[{"name":"metrics","port":9100,"protocol":"TCP"},{"name":"clientPort","port":7000,"protocol":"UDP"}]';

const forwarder: ForwarderConfig = {
  name: 'matchmaker',
  address: 'mm:9000',
  options: { timeout: 500, metadata: { roomType: 'green', region: 'eu', shared: 'from-forwarder', limits: { max: 4 } } },
};

describe('metadata stringification', () => {
  it.each<[unknown, string | undefined]>([
    ['text', 'text'],
    [3, '3'],
    [1.5, '1.5'],
    [true, 'true'],
    [null, 'null'],
    [{ a: [1, 2] }, '{"a":[1,2]}'],
    [[1, 'x'], '[1,"x"]'],
    [undefined, undefined],
  ])('%p -> %p', (value, expected) => {
    expect(metadataValue(value)).toBe(expected);
  });

  it('drops undefined values and tolerates a missing object', () => {
    expect(stringifyMetadata({ a: 1, b: undefined })).toEqual({ a: '1' });
    expect(stringifyMetadata(undefined)).toEqual({});
  });
});

describe('room port', () => {
  it('prefers clientPort, else the first port, else 0', () => {
    expect(selectRoomPort(room.ports)).toBe(7000);
    expect(selectRoomPort([{ name: 'game', protocol: 'TCP', port: 1234 }, { name: 'other', protocol: 'TCP', port: 1 }])).toBe(1234);
    expect(selectRoomPort([])).toBe(0);
    expect(selectRoomPort(undefined)).toBe(0);
    expect(selectRoomPort([{ name: 'clientPort' }])).toBe(0);
  });

  it('describes the ports as JSON with name, port and protocol', () => {
    expect(portsAttribute(room.ports)).toBe(PORTS_JSON);
    expect(portsAttribute([])).toBeUndefined();
    expect(portsAttribute(undefined)).toBeUndefined();
    expect(portsAttribute([{ port: 7000 }])).toBe('[{"name":"","port":7000,"protocol":""}]');
  });
});

describe('resyncMessage', () => {
  it('carries the room, the ping status and the merged metadata where event attributes win', () => {
    const message = resyncMessage(forwarder, room, 'occupied', { shared: 'from-ping', players: 3 });
    expect(message).toEqual({
      room: {
        game: 'tennis',
        roomId: 'tennis-eu-abc12',
        host: '10.0.0.7',
        port: 7000,
        roomType: 'green',
        metadata: {
          roomType: 'green',
          region: 'eu',
          limits: '{"max":4}',
          shared: 'from-ping',
          players: '3',
          eventType: 'resync',
          pingType: 'occupied',
          ports: PORTS_JSON,
        },
      },
      statusType: 'occupied',
    });
  });

  it('does not let request metadata override eventType or pingType', () => {
    const message = resyncMessage({ name: 'f', address: 'a:1' }, room, 'ready', { eventType: 'x', pingType: 'y' });
    expect(message.room?.metadata).toMatchObject({ eventType: 'resync', pingType: 'ready' });
    expect(message.room?.roomType).toBeUndefined();
  });
});

describe('roomStatusMessage', () => {
  it('sends terminated with roomEvent=terminated, tolerating a room with no address', () => {
    const gone: ForwardedRoom = { ...room, host: '', ports: [] };
    expect(roomStatusMessage({ name: 'f', address: 'a:1' }, gone, 'terminated')).toEqual({
      room: {
        game: 'tennis',
        roomId: 'tennis-eu-abc12',
        host: '',
        port: 0,
        metadata: { eventType: 'status', pingType: 'terminated', roomEvent: 'terminated' },
      },
      statusType: 'terminated',
    });
  });

  it('tolerates a room with neither host nor ports', () => {
    const message = roomStatusMessage({ name: 'f', address: 'a:1' }, { game: 'g', schedulerName: 's', roomId: 'r' }, 'terminated');
    expect(message.room).toMatchObject({ host: '', port: 0 });
    expect(message.room?.metadata).not.toHaveProperty('ports');
  });

  it('sends other statuses without roomEvent', () => {
    const message = roomStatusMessage(forwarder, room, 'ready');
    expect(message.statusType).toBe('ready');
    expect(message.room?.metadata).not.toHaveProperty('roomEvent');
    expect(message.room?.metadata).toMatchObject({ eventType: 'status', pingType: 'ready', region: 'eu', ports: PORTS_JSON });
  });
});

describe('roomEventMessage', () => {
  it('names the event and lets the forwarder metadata win', () => {
    const message = roomEventMessage(forwarder, room, 'matchStarted', { shared: 'from-room', map: 'dust' });
    expect(message).toEqual({
      room: {
        game: 'tennis',
        roomId: 'tennis-eu-abc12',
        host: '10.0.0.7',
        port: 7000,
        metadata: {
          shared: 'from-forwarder',
          map: 'dust',
          eventType: 'roomEvent',
          roomEvent: 'matchStarted',
          ports: PORTS_JSON,
          roomType: 'green',
          region: 'eu',
          limits: '{"max":4}',
        },
      },
      eventType: 'matchStarted',
    });
  });
});

describe('playerEventMessage', () => {
  it('carries the player, the request metadata and all of the forwarder metadata, where the event\'s fields win', () => {
    expect(playerEventMessage(forwarder, room, 'playerJoin', 'p-1', { team: 'red', level: 7, shared: 'from-event' })).toEqual({
      playerId: 'p-1',
      room: { game: 'tennis', roomId: 'tennis-eu-abc12' },
      eventType: 'PLAYER_JOINED',
      metadata: { roomType: 'green', region: 'eu', limits: '{"max":4}', shared: 'from-event', team: 'red', level: '7', playerId: 'p-1', eventType: 'playerJoin' },
    });
  });

  it('maps playerLeft and works without forwarder metadata', () => {
    const message = playerEventMessage({ name: 'f', address: 'a:1' }, room, 'playerLeft', 'p-2');
    expect(message.eventType).toBe('PLAYER_LEFT');
    expect(message.metadata).toEqual({ playerId: 'p-2', eventType: 'playerLeft' });
  });
});
