import { pingUrl, roomIdentityOf } from './room-identity';

describe('roomIdentityOf', () => {
  it('reads the room env from any container', () => {
    expect(roomIdentityOf({
      spec: {
        containers: [
          { name: 'sidecar' },
          {
            name: 'game',
            env: [
              { name: 'ROOMKEEPER_SCHEDULER_NAME', value: 'fleet' },
              { name: 'ROOMKEEPER_ROOM_ID', value: 'fleet-abc' },
              { name: 'ROOMKEEPER_ROOM_TOKEN', value: 's3cret' },
              { name: 'ROOMKEEPER_ROOMS_API_URL', value: 'http://rooms:8080' },
              { name: 'ROOMKEEPER_SIM_ROOM', value: 'occupied' },
            ],
          },
        ],
      },
    })).toEqual({ schedulerName: 'fleet', roomId: 'fleet-abc', token: 's3cret', roomsApiUrl: 'http://rooms:8080', script: 'occupied' });
  });

  it('accepts the Maestro names and ignores valueFrom', () => {
    expect(roomIdentityOf({ spec: { containers: [{ name: 'g', env: [{ name: 'MAESTRO_SCHEDULER_NAME', value: 's' }, { name: 'MAESTRO_ROOM_ID', value: 'r' }] }] } }))
      .toEqual({ schedulerName: 's', roomId: 'r' });
    expect(roomIdentityOf({ spec: { containers: [{ name: 'g', env: [{ name: 'ROOMKEEPER_SCHEDULER_NAME', value: 's' }, { name: 'ROOMKEEPER_ROOM_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }] } }))
      .toBeUndefined();
  });
});

describe('pingUrl', () => {
  it('keeps a path prefix and escapes the names', () => {
    expect(pingUrl('http://127.0.0.1:9000/', 'fleet', 'room 1')).toBe('http://127.0.0.1:9000/scheduler/fleet/rooms/room%201/ping');
    expect(pingUrl('http://gw/api', 'f', 'r')).toBe('http://gw/api/scheduler/f/rooms/r/ping');
  });
});
