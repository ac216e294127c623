import type { Scheduler, SchedulerSpec, SchedulerVersion } from '../generated/resources';
import type { V1Pod } from '@kubernetes/client-node';
import { composeMatchStatus, composeRoomStatus, instanceFromPod, PING_STATUSES, pingFollows, podStartedAt, roomFreeSlots, roomMatchCount, roomsMaxMatches, type Instance, type InstanceStatus, type PingStatus, type RoomStatus } from './room-status';

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

describe('pingFollows', () => {
  // Rows: the room's last ping; columns: the next ping, in PING_STATUSES order (ready, occupied, terminating, terminated).
  const table: [PingStatus | undefined, boolean[]][] = [
    [undefined, [true, true, true, true]],
    ['unknown', [true, true, true, true]],
    ['ready', [true, true, true, true]],
    ['occupied', [true, true, true, true]],
    ['terminating', [false, false, true, true]],
    ['terminated', [false, false, false, true]],
  ];

  it.each(table)('after %s: only terminated follows terminating, nothing follows terminated', (previous, expected) => {
    expect(PING_STATUSES.map((next) => pingFollows(previous, next))).toEqual(expected);
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

describe('composeMatchStatus', () => {
  // Maestro's multi-match composition (maestro-behaviour.md section 3.3): [composed, runningMatches, maxMatches, expected].
  const table: [RoomStatus, number, number, RoomStatus][] = [
    ['ready', 0, 3, 'ready'],
    ['ready', 1, 3, 'active'],
    ['ready', 2, 3, 'active'],
    ['ready', 3, 3, 'occupied'],
    ['occupied', 1, 3, 'active'],
    ['occupied', 3, 3, 'occupied'],
    ['occupied', 7, 3, 'occupied'],
    ['occupied', 0, 3, 'ready'],
    ['pending', 2, 3, 'pending'],
    ['terminating', 2, 3, 'terminating'],
    ['error', 1, 3, 'error'],
    ['ready', 0, 1, 'ready'],
    ['occupied', 1, 1, 'occupied'],
    ['ready', 1, 1, 'ready'],
  ];

  it.each(table)('%s with %i running matches of %i is %s', (composed, running, max, expected) => {
    expect(composeMatchStatus(composed, running, max)).toBe(expected);
  });

  it('reads maxMatches from the scheduler spec, 1 when absent or out of bounds', () => {
    const none = () => undefined;
    expect(roomsMaxMatches(scheduler({ matchAllocation: { maxMatches: 3 } }), none)).toBe(3);
    expect(roomsMaxMatches(scheduler({}), none)).toBe(1);
    expect(roomsMaxMatches(undefined, none)).toBe(1);
    expect(roomsMaxMatches(scheduler({ matchAllocation: { maxMatches: 36 } }), none)).toBe(1);
    expect(roomsMaxMatches(scheduler({ matchAllocation: { maxMatches: 0 } }), none)).toBe(1);
  });
});

describe('roomsMaxMatches', () => {
  const v1 = (maxMatches: number | undefined): SchedulerVersion => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 'duel-v1.0.0' },
    spec: { scheduler: 'duel', version: 'v1.0.0', kind: 'major', definition: { ...scheduler({}).spec, ...(maxMatches ? { matchAllocation: { maxMatches } } : {}) } },
  });

  it('is the active version\'s, not a spec change that was refused (or is being validated)', () => {
    const refused = scheduler({ matchAllocation: { maxMatches: 3 } }, 'v1.0.0');
    const asked: string[] = [];
    const find = (name: string, version: string) => {
      asked.push(`${name} ${version}`);
      return v1(undefined);
    };
    expect(roomsMaxMatches(refused, find)).toBe(1);
    expect(asked).toEqual(['duel v1.0.0']);
    expect(roomsMaxMatches(scheduler({}, 'v1.0.0'), () => v1(4))).toBe(4);
  });

  it('falls back to the spec before the first version exists, or while the cache lacks the active version', () => {
    expect(roomsMaxMatches(scheduler({ matchAllocation: { maxMatches: 3 } }), () => v1(2))).toBe(3);
    expect(roomsMaxMatches(scheduler({ matchAllocation: { maxMatches: 3 } }, 'v1.0.0'), () => undefined)).toBe(3);
  });
});

function scheduler(extra: Partial<SchedulerSpec>, version?: string): Scheduler {
  const spec: SchedulerSpec = {
    game: 'duel', maxSurge: '10%', roomsReplicas: 1,
    spec: { terminationGracePeriod: 10, containers: [] },
    ...extra,
  } as SchedulerSpec;
  return { apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: 'duel' }, spec, ...(version ? { status: { version } } : {}) };
}

describe('roomFreeSlots', () => {
  it('counts the slots the allocate API may offer now: none behind an open allocation, none in a room that does not serve', () => {
    expect(roomFreeSlots({ status: 'ready', runningMatches: 0 }, 3)).toBe(3);
    expect(roomFreeSlots({ status: 'active', runningMatches: 1 }, 3)).toBe(2);
    expect(roomFreeSlots({ status: 'active', runningMatches: 1, allocationOpen: true }, 3)).toBe(0);
    expect(roomFreeSlots({ status: 'allocated', runningMatches: 0 }, 3)).toBe(0);
    expect(roomFreeSlots({ status: 'occupied', runningMatches: 3 }, 3)).toBe(0);
    expect(roomFreeSlots({ status: 'pending' }, 3)).toBe(0);
    expect(roomFreeSlots({ status: 'ready' }, 1)).toBe(1);
    expect(roomFreeSlots({ status: 'occupied' }, 1)).toBe(0);
  });

  it('lets the status alone decide in a single-match scheduler: a ready room that reports a running match is free and counts for none', () => {
    expect(roomFreeSlots({ status: 'ready', runningMatches: 1 }, 1)).toBe(1);
    expect(roomMatchCount({ status: 'ready', runningMatches: 1 }, 1)).toBe(0);
    expect(roomMatchCount({ status: 'occupied', runningMatches: 0 }, 1)).toBe(1);
    expect(roomMatchCount({ status: 'ready', runningMatches: 1, allocationOpen: true }, 1)).toBe(1);
    expect(roomMatchCount({ status: 'ready', runningMatches: 1 }, 3)).toBe(1);
  });
});

describe('roomMatchCount', () => {
  it('counts running matches plus one per open allocation, capped at maxMatches; rooms that do not serve count none', () => {
    expect(roomMatchCount({ status: 'ready', runningMatches: 0 }, 3)).toBe(0);
    expect(roomMatchCount({ status: 'allocated', runningMatches: 0, allocationOpen: true }, 3)).toBe(1);
    expect(roomMatchCount({ status: 'allocated' }, 1)).toBe(1);
    expect(roomMatchCount({ status: 'active', runningMatches: 2, allocationOpen: true }, 3)).toBe(3);
    expect(roomMatchCount({ status: 'occupied', runningMatches: 9 }, 3)).toBe(3);
    // A single-match occupied room is one match, with or without runningMatches.
    expect(roomMatchCount({ status: 'occupied' }, 1)).toBe(1);
    expect(roomMatchCount({ status: 'pending', runningMatches: 2 }, 3)).toBe(0);
    expect(roomMatchCount({ status: 'terminating', runningMatches: 2, allocationOpen: true }, 3)).toBe(0);
  });
});

describe('instanceFromPod', () => {
  const exited = (exitCode: number, reason: string) => ({ name: 'server', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, reason } } });
  test.each<[string, V1Pod | undefined, Instance]>([
    ['no pod: unknown', undefined, { status: 'unknown' }],
    ['a Failed pod with a reason of its own: that reason', { status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on memory.' } }, { status: 'error', reason: 'pod phase Failed: Evicted: The node was low on memory.' }],
    ['a Failed pod whose container exited non-zero (restartPolicy Never): the exit',
      { status: { phase: 'Failed', containerStatuses: [exited(0, 'Completed'), { ...exited(137, 'OOMKilled'), name: 'sidecar' }] } },
      { status: 'error', reason: 'pod phase Failed: container sidecar terminated: OOMKilled (exit code 137)' }],
    ['a Failed pod with nothing to say why: its phase', { status: { phase: 'Failed' } }, { status: 'error', reason: 'pod phase Failed' }],
    ['a running pod whose container exited non-zero: the exit', { status: { phase: 'Running', containerStatuses: [exited(1, 'Error')] } }, { status: 'error', reason: 'container server terminated: Error (exit code 1)' }],
    ['a ready pod: ready', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, { status: 'ready' }],
  ])('%s', (_name, pod, instance) => {
    expect(instanceFromPod(pod)).toEqual(instance);
  });
});

