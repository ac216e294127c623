import { composeRoomStatus, PING_STATUSES, podStartedAt, type InstanceStatus, type PingStatus, type RoomStatus } from './room-status';

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

describe('podStartedAt', () => {
  const running = (name: string, startedAt: string | Date) => ({ name, ready: true, restartCount: 0, image: 'g', imageID: 'g', state: { running: { startedAt: startedAt as Date } } });

  it('is the latest container start once every container runs', () => {
    const pod = { status: { containerStatuses: [running('a', '2026-01-01T12:00:00Z'), running('b', new Date('2026-01-01T12:00:05Z'))] } };
    expect(podStartedAt(pod)).toBe(Date.parse('2026-01-01T12:00:05Z'));
  });

  it('is undefined while a container waits, and for a pod with no statuses or no pod', () => {
    const waiting = { name: 'b', ready: false, restartCount: 0, image: 'g', imageID: '', state: { waiting: { reason: 'ContainerCreating' } } };
    expect(podStartedAt({ status: { containerStatuses: [running('a', '2026-01-01T12:00:00Z'), waiting] } })).toBeUndefined();
    expect(podStartedAt({ status: { phase: 'Pending' } })).toBeUndefined();
    expect(podStartedAt(undefined)).toBeUndefined();
  });
});
