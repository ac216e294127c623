import { composeRoomStatus, PING_STATUSES, type InstanceStatus, type PingStatus, type RoomStatus } from './room-status';

describe('composeRoomStatus', () => {
  // Maestro's table (maestro-behaviour.md section 3.3): rows are the ping status, columns the instance status.
  const instances: InstanceStatus[] = ['unknown', 'pending', 'ready', 'terminating', 'error'];
  const table: [PingStatus, RoomStatus[]][] = [
    ['unknown', ['pending', 'pending', 'unready', 'terminating', 'error']],
    ['ready', ['pending', 'pending', 'ready', 'terminating', 'error']],
    ['occupied', ['pending', 'pending', 'occupied', 'terminating', 'error']],
    ['terminating', ['terminating', 'terminating', 'terminating', 'terminating', 'error']],
    ['terminated', ['terminated', 'terminated', 'terminated', 'terminated', 'error']],
  ];

  it.each(table)('composes ping %s with each instance status as Maestro does', (ping, expected) => {
    expect(instances.map((instance) => composeRoomStatus(ping, instance))).toEqual(expected);
  });

  it('accepts the four ping statuses a room may report, as Maestro', () => {
    expect(PING_STATUSES).toEqual(['ready', 'occupied', 'terminating', 'terminated']);
  });
});
