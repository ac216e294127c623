import type { GameRoom, Operation, Scheduler, SchedulerVersion } from '../../../common/src/generated/resources';
import { computeSchedulerStatus, computeState, desiredInForce, statusChanged } from './scheduler-status';
import { STOPPED_BY_DELETION_END } from '../operations/operation-ending';
import { FAILURE_PREFIX } from '../../../common/src/operations/failure-cause';

/** `desired`: the count the health check decided (status.autoscaling); `replicas`: spec.roomsReplicas, by default that count. */
function scheduler(o: { generation?: number; version?: string; versioned?: number; deleting?: boolean; desired?: number; replicas?: number } = {}): Scheduler {
  const replicas = o.replicas ?? o.desired;
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
    metadata: { name: 's', generation: o.generation ?? 1, ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
    spec: { game: 'g', maxSurge: 1, ...(replicas !== undefined ? { roomsReplicas: replicas } : {}), spec: { terminationGracePeriod: '10s', containers: [] } },
    status: { ...(o.version ? { version: o.version } : {}), ...(o.versioned ? { versionedGeneration: o.versioned } : {}), ...(o.desired !== undefined ? { autoscaling: { desired: o.desired } } : {}) },
  };
}
function op(definitionName: string, status: string, at = 0): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `${definitionName}-${at}` },
    spec: { schedulerName: 's', definitionName, enqueuedAt: new Date(at).toISOString() },
    status: { status: status as never, finishedAt: new Date(at + 1).toISOString() },
  };
}
/** An operation that ended in error, its history telling why as the runner does. */
function failedOp(definitionName: string, at: number, cause: string): Operation {
  const o = op(definitionName, 'error', at);
  o.status = { ...o.status, executionHistory: [{ createdAt: '', event: `${FAILURE_PREFIX}${cause}` }, { createdAt: '', event: 'Operation ended in error' }] };
  return o;
}
/** An operation that its scheduler's deletion stopped, as the runner ends it. */
function stoppedOp(definitionName: string, at: number): Operation {
  const o = op(definitionName, 'error', at);
  o.status = { ...o.status, executionHistory: [{ createdAt: '', event: 'Operation stopped: scheduler s is being deleted, which removes its rooms and versions; nothing is left for this operation to do' }, { createdAt: '', event: STOPPED_BY_DELETION_END }] };
  return o;
}
/** No version object in the cache: maxMatches falls back to the spec's. */
const none = (): undefined => undefined;
function room(name: string, status: string, version = 'v1.0.0'): GameRoom {
  return { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name }, spec: { scheduler: 's', version }, status: { status: status as never } };
}

describe('PendingChanges when the spec holds a change no version has and no operation tells it', () => {
  test('a change whose operation is gone (deleted while it ran) is said not applied, with what to do; a spec that matches the active version is said so', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 2, generation: 2 });
    const version = (definition: Scheduler['spec']): SchedulerVersion => ({ apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 's-v1.0.0' }, spec: { scheduler: 's', version: 'v1.0.0', kind: 'major', definition } });
    const pending = (def: Scheduler['spec']) => computeSchedulerStatus(s, [op('create_new_scheduler_version', 'finished')], [], 0, () => version(def)).conditions?.find((c) => c.type === 'PendingChanges');
    expect(pending({ ...s.spec, maxSurge: 5 })).toMatchObject({
      status: 'False', reason: 'SpecChangeFailed',
      message: 'the spec\'s last change (maxSurge) was not applied: its create_new_scheduler_version is gone (deleted while it ran, which stops it as a cancel does); the active version v1.0.0 runs: send the change again (POST or PATCH /schedulers/s), or set the spec back to that version\'s',
    });
    expect(pending({ ...s.spec, roomsReplicas: 9 })).toMatchObject({ status: 'False', reason: 'VersionMatchesSpec' });
    expect(pending(s.spec)).toMatchObject({ status: 'False', reason: 'VersionMatchesSpec' });
  });

  test('a change whose version was made but whose switch to it was canceled names the switch, the version and how to switch to it', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 2, generation: 2 });
    const active: SchedulerVersion = { apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 's-v1.0.0' }, spec: { scheduler: 's', version: 'v1.0.0', kind: 'major', definition: { ...s.spec, maxSurge: 5 } } };
    const sw = { ...op('switch_active_version', 'canceled', 10), spec: { ...op('switch_active_version', 'canceled', 10).spec, input: { newActiveVersion: 'v2.0.0' } } };
    const pending = (ops: Operation[]) => computeSchedulerStatus(s, ops, [], 0, () => active).conditions?.find((c) => c.type === 'PendingChanges');
    expect(pending([op('create_new_scheduler_version', 'finished', 5), sw])).toMatchObject({
      status: 'False', reason: 'SpecChangeFailed',
      message: 'the spec\'s last change (maxSurge) was not applied: version v2.0.0 was made of it, but operation switch_active_version-10 (switch_active_version) was canceled; the active version v1.0.0 runs: switch to v2.0.0 (PUT /schedulers/s with {"version": "v2.0.0"}), or set the spec back to the active version\'s; a change sent now builds on the active version',
    });
    // A switch enqueued before the last version operation is not its switch: it is not named.
    expect(pending([op('create_new_scheduler_version', 'finished', 20), sw])?.message).not.toContain('switch_active_version-10');
  });
});

describe('match capacity in the scheduler status (kubectl get: Matches, Slots)', () => {
  test('counts running matches, open allocations as running, and maxMatches slots per serving room; an active room with an open allocation as allocated', () => {
    const s = { ...scheduler({ version: 'v1.0.0', versioned: 1 }) };
    s.spec = { ...s.spec, matchAllocation: { maxMatches: 3 } };
    const slot = { id: 'm', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:05:00Z', runningMatches: 1 };
    const rooms: GameRoom[] = [
      room('fresh', 'ready'),
      { ...room('one', 'active'), status: { status: 'active', runningMatches: 1, allocation: slot } },
      { ...room('full', 'occupied'), status: { status: 'occupied', runningMatches: 3 } },
      room('starting', 'pending'),
    ];
    // 'one' holds an open allocation: the allocate API offers it no slot until the match is reported,
    // so it counts as allocated, not active (a room with a free slot).
    expect(computeSchedulerStatus(s, [], rooms, 0, none).rooms).toMatchObject({ current: 4, ready: 1, active: 0, allocated: 1, occupied: 1, pending: 1, matches: 5, matchSlots: 9 });
    const reported = rooms.map((r) => (r.metadata.name === 'one' ? { ...r, status: { status: 'active' as const, runningMatches: 2, allocation: { ...slot, endedAt: '2026-01-01T00:01:00Z' } } } : r));
    expect(computeSchedulerStatus(s, [], reported, 0, none).rooms).toMatchObject({ active: 1, allocated: 0, matches: 5 });
  });

  test('counts with the active version\'s maxMatches, not a refused spec change\'s', () => {
    const s = { ...scheduler({ version: 'v1.0.0', versioned: 1 }) };
    const active: SchedulerVersion = { apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 's-v1.0.0' }, spec: { scheduler: 's', version: 'v1.0.0', kind: 'major', definition: s.spec } };
    s.spec = { ...s.spec, matchAllocation: { maxMatches: 3 } };
    const rooms = [room('a', 'ready'), { ...room('b', 'occupied'), status: { status: 'occupied' as const, runningMatches: 1 } }];
    expect(computeSchedulerStatus(s, [], rooms, 0, (name, version) => (name === 's' && version === 'v1.0.0' ? active : undefined)).rooms).toMatchObject({ matches: 1, matchSlots: 2 });
  });
});

describe('scheduler state', () => {
  test.each([
    ['terminating while deleted', scheduler({ deleting: true, version: 'v1.0.0' }), [], 'terminating'],
    ['terminating while its deletion runs, before the scheduler is marked deleted', scheduler({ version: 'v1.0.0', versioned: 1 }), [op('delete_scheduler', 'in_progress')], 'terminating'],
    ['creating before a version exists', scheduler(), [op('create_scheduler', 'in_progress')], 'creating'],
    ['on-error when the create failed', scheduler(), [op('create_scheduler', 'error')], 'on-error'],
    ['pending-changes while a version operation is queued', scheduler({ version: 'v1.0.0', versioned: 1 }), [op('create_new_scheduler_version', 'pending')], 'pending-changes'],
    ['pending-changes when the spec moved on', scheduler({ version: 'v1.0.0', versioned: 1, generation: 2 }), [], 'pending-changes'],
    // A failed operation leaves the active version serving (Maestro too sets in-sync after a new version's rollback): Degraded tells it.
    ['in-sync when the last operation failed', scheduler({ version: 'v1.0.0', versioned: 1 }), [op('add_rooms', 'finished', 1), op('remove_rooms', 'error', 2)], 'in-sync'],
    ['in-sync when the last version change failed', scheduler({ version: 'v1.0.0', versioned: 2, generation: 2 }), [op('create_new_scheduler_version', 'error', 2)], 'in-sync'],
    ['in-sync otherwise', scheduler({ version: 'v1.0.0', versioned: 1 }), [op('remove_rooms', 'error', 1), op('add_rooms', 'finished', 2)], 'in-sync'],
  ])('%s', (_n, s, ops, expected) => {
    expect(computeState(s, ops)).toBe(expected);
  });
});

describe('the desired count in force: spec.roomsReplicas as soon as it moves, an add_rooms or remove_rooms running (the health check decides nothing then)', () => {
  const running = (definitionName: string): Operation => {
    const o = op(definitionName, 'in_progress', 5);
    return { ...o, status: { status: 'in_progress', startedAt: new Date(5).toISOString() } };
  };
  const ready = (n: number) => Array.from({ length: n }, (_x, i) => room(`r${i}`, 'ready'));
  const readyCondition = (s: Scheduler, ops: Operation[], rooms: GameRoom[]) => {
    const status = computeSchedulerStatus(s, ops, rooms, 0, none, 10_000);
    return { desired: status.rooms?.desired, ready: status.conditions?.find((c) => c.type === 'Ready') };
  };

  test('an add_rooms of 100 on 52 rooms: desired 152 and Ready says 149 of 152 rooms, not "149 rooms (52 desired)"', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 2, generation: 2, desired: 52, replicas: 152 });
    expect(readyCondition(s, [op('create_scheduler', 'finished', 1), running('add_rooms')], ready(149))).toMatchObject({
      desired: 152, ready: { status: 'False', reason: 'RoomsNotReady', message: '149 of 152 rooms ready, allocated, active or occupied; state in-sync' },
    });
  });

  test('a remove_rooms of 150 on 202 rooms: desired 52 and Ready True with the 52 rooms ready, not RoomsNotReady against 202', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 2, generation: 2, desired: 202, replicas: 52 });
    expect(readyCondition(s, [op('create_scheduler', 'finished', 1), running('remove_rooms')], ready(52))).toMatchObject({
      desired: 52, ready: { status: 'True', reason: 'InSync', message: '52 of 52 rooms ready, allocated, active or occupied; state in-sync' },
    });
  });

  test.each([
    ['no autoscaling: the spec\'s count', {}, 7, { desired: 7, reason: 'roomsReplicas is 7' }],
    ['autoscaling disabled: the spec\'s count', { autoscaling: { enabled: false, min: 1, max: 9, policy: { type: 'fixedBuffer' } } }, 7, { desired: 7, reason: 'autoscaling disabled; roomsReplicas is 7' }],
    ['autoscaling enabled: the autoscaler\'s decision', { autoscaling: { enabled: true, min: 1, max: 9, policy: { type: 'fixedBuffer' } } }, 7, { desired: 3 }],
    ['a count above the limit: the count last decided, as the health check keeps it', {}, 10_001, { desired: 3 }],
  ] as const)('%s', (_n, definition, replicas, expected) => {
    const s = scheduler({ version: 'v1.0.0', versioned: 1, desired: 3, replicas });
    const active: SchedulerVersion = { apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 's-v1.0.0' }, spec: { scheduler: 's', version: 'v1.0.0', kind: 'major', definition: { ...s.spec, ...definition } } };
    expect(desiredInForce(s, () => active, 10_000)).toMatchObject(expected);
  });

  test('none before the health check\'s first decision (Ready waits for it)', () => {
    expect(desiredInForce(scheduler({ version: 'v1.0.0', versioned: 1, replicas: 3 }), none, 10_000)).toEqual({ desired: undefined });
  });
});

describe('scheduler status', () => {
  test.each([
    [1, ['ready'], '1 of 1 room ready, allocated, active or occupied; state in-sync'],
    [2, ['ready'], '1 of 2 rooms ready, allocated, active or occupied; state in-sync'],
    // More serve than desired (occupied rooms kept above the count): never "3 of 1 room".
    [1, ['ready', 'occupied', 'allocated'], '3 rooms (1 desired) ready, allocated, active or occupied; state in-sync'],
  ] as const)('Ready\'s message with %p desired and rooms %p: %p', (desired, statuses, message) => {
    const s = scheduler({ version: 'v1.0.0', versioned: 1, desired });
    const rooms = statuses.map((st, i) => room(`r${i}`, st));
    expect(computeSchedulerStatus(s, [op('create_scheduler', 'finished')], rooms, 0, none).conditions?.find((c) => c.type === 'Ready')?.message).toBe(message);
  });

  test('Ready\'s message and status.rooms say how many rooms are marked silent: counted ready, but not allocated', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 1, desired: 2 });
    const rooms = [room('r0', 'ready'), room('r1', 'ready')];
    for (const r of rooms) r.status = { ...r.status, silentSince: '2026-01-01T00:00:00Z' };
    const status = computeSchedulerStatus(s, [op('create_scheduler', 'finished')], rooms, 0, none);
    expect(status.rooms).toMatchObject({ ready: 2, silent: 2 });
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      message: '2 of 2 rooms ready, allocated, active or occupied; 2 rooms marked silent (no ping seen for ROOMKEEPER_ROOM_SILENCE_TIMEOUT: they are not allocated until they ping again, the health check makes a room in the place of each (up to maxSurge; not while a rolling update runs), and they are removed at the ping timeout if still silent; kubectl get rkgr -o wide shows which); state in-sync',
    });
  });

  test('Ready\'s message, while rooms are missing, says why most pending rooms wait (their pods\' reason) and where each room\'s is', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 1, desired: 3 });
    const unschedulable = 'Unschedulable: 0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.';
    const pending = (name: string, reason: string) => { const r = room(name, 'pending'); r.status = { ...r.status, reason }; return r; };
    const rooms = [pending('a', unschedulable), pending('b', unschedulable), pending('c', 'ContainerCreating')];
    expect(computeSchedulerStatus(s, [op('create_scheduler', 'finished')], rooms, 0, none).conditions?.find((c) => c.type === 'Ready')?.message)
      .toBe(`0 of 3 rooms ready, allocated, active or occupied; state in-sync; 2 rooms are pending: ${unschedulable} (each GameRoom's status.reason gives its own: kubectl describe rkgr -n s)`
        + '; no node can take them: check the room template\'s affinity, toleration, nodeSelector and requests (GET /schedulers/s) against the nodes\' labels, taints and free CPU and memory (kubectl describe nodes), or add nodes');
    // Another reason: no advice about placement.
    const creating = [pending('a', 'ContainerCreating'), pending('b', 'ContainerCreating'), pending('c', unschedulable)];
    expect(computeSchedulerStatus(s, [op('create_scheduler', 'finished')], creating, 0, none).conditions?.find((c) => c.type === 'Ready')?.message)
      .toBe('0 of 3 rooms ready, allocated, active or occupied; state in-sync; 2 rooms are pending: ContainerCreating (each GameRoom\'s status.reason gives its own: kubectl describe rkgr -n s)');
    // Enough rooms serve: nothing more said.
    expect(computeSchedulerStatus(scheduler({ version: 'v1.0.0', versioned: 1, desired: 1 }), [op('create_scheduler', 'finished')], [room('r', 'ready'), pending('a', unschedulable)], 0, none)
      .conditions?.find((c) => c.type === 'Ready')?.message).toBe('1 of 1 room ready, allocated, active or occupied; state in-sync');
  });

  test('counts rooms by status and version, leaving validation rooms out', () => {
    const s = scheduler({ version: 'v2.0.0', versioned: 1, desired: 3 });
    const rooms = [room('a', 'ready', 'v2.0.0'), room('b', 'occupied', 'v2.0.0'), room('c', 'ready', 'v1.0.0'),
      { ...room('v', 'ready', 'v3.0.0'), spec: { scheduler: 's', version: 'v3.0.0', validation: true } }];
    const status = computeSchedulerStatus(s, [], rooms, 0, none);
    expect(status.rooms).toMatchObject({ desired: 3, current: 3, ready: 2, occupied: 1, updated: 2, matches: 1, matchSlots: 3 });
    expect(status.roomsByVersion).toEqual({ 'v2.0.0': 2, 'v1.0.0': 1 });
    expect(status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'True', reason: 'ReplacingRooms', message: '2 of 3 rooms run the major of the active version v2.0.0; the health check is replacing the others',
    });
  });

  test('names the older rooms that are occupied, counted across the older versions', () => {
    const s = scheduler({ version: 'v3.0.0', versioned: 1, desired: 4 });
    const rooms = [room('a', 'ready', 'v3.0.0'), room('b', 'occupied', 'v1.0.0'), room('c', 'occupied', 'v2.0.0'), room('d', 'ready', 'v2.0.0'), room('e', 'occupied', 'v3.0.0')];
    const status = computeSchedulerStatus(s, [], rooms, 0, none);
    expect(status.rooms).toMatchObject({ current: 5, updated: 2 });
    expect(status.conditions?.find((c) => c.type === 'Progressing')?.message)
      .toBe('2 of 5 rooms run the major of the active version v3.0.0; the health check is replacing the others; of the older rooms, 2 rooms held by players or a matchmaker (2 occupied) are replaced once free');
  });

  test('names the older rooms a matchmaker holds, as a rolling update replaces no allocated or active room either', () => {
    const s = scheduler({ version: 'v2.0.0', versioned: 1, desired: 3 });
    const rooms = [room('a', 'ready', 'v2.0.0'), room('b', 'allocated', 'v1.0.0'), room('c', 'allocated', 'v1.0.0'), room('d', 'ready', 'v2.0.0'), room('e', 'allocated', 'v2.0.0')];
    const status = computeSchedulerStatus(s, [], rooms, 0, none);
    expect(status.conditions?.find((c) => c.type === 'Progressing')?.message)
      .toBe('3 of 5 rooms run the major of the active version v2.0.0; the health check is replacing the others; of the older rooms, 2 rooms held by players or a matchmaker (2 allocated) are replaced once free');
  });

  test('a rollout held by the health check\'s repeated failures says so, not that it is replacing rooms; one whose failed add_rooms kept its rooms is replacing them', () => {
    const s = scheduler({ version: 'v2.0.0', versioned: 1, desired: 6 });
    const rooms = [room('a', 'ready', 'v2.0.0'), ...['b', 'c', 'd', 'e', 'f'].map((n) => room(n, 'ready', 'v1.0.0'))];
    const refused = 'room creation failed after 0/1 room: pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=7, limited: pods=7';
    const healthCheck = (o: Operation): Operation => ({ ...o, spec: { ...o.spec, source: 'operator', priority: true } });
    const tries = [healthCheck(failedOp('add_rooms', 1, refused)), healthCheck(failedOp('add_rooms', 2, refused))];
    const progressing = (ops: Operation[]) => computeSchedulerStatus(s, ops, rooms, 0, none).conditions?.find((c) => c.type === 'Progressing');
    expect(progressing(tries)).toMatchObject({
      status: 'True', reason: 'ReplacingRooms',
      message: `1 of 6 rooms run the major of the active version v2.0.0; the health check replaces the others, but its add_rooms failed 2 times in a row (${refused}): it tries again once its backoff passes or something it depends on changes (the HealingHeld condition says when)`,
    });
    const kept = healthCheck(failedOp('add_rooms', 3, refused.replace('0/1 room', '1/2 rooms')));
    kept.status?.executionHistory?.push({ createdAt: '', event: 'Kept 1 of the rooms created by this operation: the rolling update to v2.0.0 wants it' });
    expect(progressing([...tries, kept])?.message).toBe('1 of 6 rooms run the major of the active version v2.0.0; the health check is replacing the others');
  });

  test('reports the rollout complete once every room runs the active major, minor versions included', () => {
    const s = scheduler({ version: 'v2.1.0', versioned: 1, desired: 2 });
    const status = computeSchedulerStatus(s, [], [room('a', 'ready', 'v2.0.0'), room('b', 'occupied', 'v2.1.0')], 0, none);
    expect(status.rooms).toMatchObject({ current: 2, updated: 2 });
    expect(status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
  });

  // A reason explains the condition's CURRENT status (Kubernetes API conventions): True and False
  // never share a reason.
  const stuckOp = (): Operation => {
    const o = op('add_rooms', 'error', 3);
    o.status = { ...o.status, conditions: [{ type: 'Stuck', status: 'True', reason: 'LeaseExpired', message: 'lease expired', lastTransitionTime: new Date(0).toISOString() }] };
    return o;
  };
  const synced = () => scheduler({ version: 'v1.0.0', versioned: 1, desired: 1 });
  test.each([
    ['in sync, rooms ready', synced(), [op('create_scheduler', 'finished')], [room('a', 'ready')],
      { Ready: ['True', 'InSync'], PendingChanges: ['False', 'VersionMatchesSpec'], Degraded: ['False', 'LastOperationDidNotFail'] }],
    ['in sync, rooms not ready yet', synced(), [op('create_scheduler', 'finished')], [room('a', 'pending')],
      { Ready: ['False', 'RoomsNotReady'], PendingChanges: ['False', 'VersionMatchesSpec'], Degraded: ['False', 'LastOperationDidNotFail'] }],
    // create_scheduler ended and the health check has not decided a count yet: `kubectl wait
    // --for=condition=Ready` passed here on 0 ready rooms (seen on kube-apiserver v1.28).
    ['in sync, no desired count decided yet', scheduler({ version: 'v1.0.0', versioned: 1 }), [op('create_scheduler', 'finished')], [room('a', 'pending')],
      { Ready: ['False', 'RoomsNotReady'], PendingChanges: ['False', 'VersionMatchesSpec'], Degraded: ['False', 'LastOperationDidNotFail'] }],
    ['a spec change awaiting its version', scheduler({ version: 'v1.0.0', versioned: 1, generation: 2, desired: 1 }), [], [room('a', 'ready')],
      { Ready: ['False', 'PendingChanges'], PendingChanges: ['True', 'SpecChanged'], Degraded: ['False', 'LastOperationDidNotFail'] }],
    // A failure does not take Ready away while the rooms serve on the active version: Degraded tells it.
    ['the last operation failed', synced(), [op('add_rooms', 'error', 2)], [room('a', 'ready')],
      { Ready: ['True', 'InSync'], PendingChanges: ['False', 'VersionMatchesSpec'], Degraded: ['True', 'OperationFailed'] }],
    ['a spec change failed its version operation (a major whose validation room failed, a refused minor)', synced(), [op('create_new_scheduler_version', 'error', 2)], [room('a', 'ready')],
      { Ready: ['True', 'InSync'], PendingChanges: ['False', 'SpecChangeFailed'], Degraded: ['True', 'OperationFailed'] }],
    ['a switch of the active version failed', synced(), [op('switch_active_version', 'error', 2)], [room('a', 'ready')],
      { Ready: ['True', 'InSync'], PendingChanges: ['False', 'VersionMatchesSpec'], Degraded: ['True', 'OperationFailed'] }],
    ['a spec change failed while rooms are short of the desired count', synced(), [op('create_new_scheduler_version', 'error', 2)], [room('a', 'pending')],
      { Ready: ['False', 'RoomsNotReady'], Degraded: ['True', 'OperationFailed'] }],
    ['the create failed: no version, nothing serves', scheduler(), [op('create_scheduler', 'error', 2)], [],
      { Ready: ['False', 'OnError'], PendingChanges: ['False', 'CreateFailed'], Progressing: ['False', 'CreateFailed'], Degraded: ['True', 'OperationFailed'] }],
    // Nothing is applied nor rolled out before the first version: neither condition may say it is.
    ['creating: no version yet', scheduler(), [op('create_scheduler', 'in_progress')], [],
      { Ready: ['False', 'Creating'], PendingChanges: ['True', 'Creating'], Progressing: ['True', 'Creating'] }],
    // Commit 7ca52a4: an operation that found its scheduler being deleted ends in error, yet nothing failed.
    ['the deletion stopped the last operation', scheduler({ version: 'v1.0.0', versioned: 1, desired: 1, deleting: true }), [stoppedOp('add_rooms', 2)], [room('a', 'ready')],
      { Ready: ['False', 'Terminating'], Degraded: ['False', 'OperationStoppedByDeletion'] }],
    // kubectl scale of a Scheduler being deleted is accepted and never applied: nothing may say the spec is applied.
    ['a spec change made while the scheduler is deleted', scheduler({ version: 'v1.0.0', versioned: 1, generation: 3, desired: 1, deleting: true }), [op('delete_scheduler', 'in_progress', 2)], [room('a', 'ready')],
      { Ready: ['False', 'Terminating'], PendingChanges: ['False', 'Terminating'] }],
    ['the deletion stopped a version change', scheduler({ version: 'v1.0.0', versioned: 1, desired: 1, deleting: true }), [stoppedOp('create_new_scheduler_version', 2)], [room('a', 'ready')],
      { Degraded: ['False', 'OperationStoppedByDeletion'] }],
    ['the deletion itself failed', scheduler({ version: 'v1.0.0', versioned: 1, desired: 1, deleting: true }), [stoppedOp('add_rooms', 2), op('delete_scheduler', 'error', 3)], [room('a', 'ready')],
      { Ready: ['False', 'Terminating'], Degraded: ['True', 'OperationFailed'] }],
    ['a spec change failed, a later one was applied', synced(), [op('create_new_scheduler_version', 'error', 2), op('create_new_scheduler_version', 'finished', 3)], [room('a', 'ready')],
      { Ready: ['True', 'InSync'], PendingChanges: ['False', 'VersionMatchesSpec'], Degraded: ['False', 'LastOperationDidNotFail'] }],
    ['an operation is stuck', synced(), [stuckOp()], [room('a', 'ready')],
      { Degraded: ['True', 'OperationStuck'] }],
    // A failover long ago, and operations finished since: the latest outcome decides.
    ['an operation was stuck, later ones finished', synced(), [stuckOp(), op('add_rooms', 'finished', 4)], [room('a', 'ready')],
      { Ready: ['True', 'InSync'], Degraded: ['False', 'LastOperationDidNotFail'] }],
    ['a spec change whose version operation was canceled', synced(), [op('create_new_scheduler_version', 'canceled', 2)], [room('a', 'ready')],
      { PendingChanges: ['False', 'SpecChangeFailed'] }],
  ])('condition reasons explain the current status: %s', (_n, s, ops, rooms, expected) => {
    const conditions = computeSchedulerStatus(s, ops, rooms, 0, none).conditions ?? [];
    for (const [type, [status, reason]] of Object.entries(expected)) {
      expect(conditions.find((c) => c.type === type)).toMatchObject({ status, reason });
    }
  });

  test.each([
    ['no operation ended yet', [], 'no ended operation of this scheduler is kept (none has ended yet, or their history was deleted: by the retention of operations or with kubectl delete rkop); none is stuck'],
    ['the last finished', [op('add_rooms', 'finished', 2)], 'the operation that ended last, add_rooms-2 (add_rooms), finished; none is stuck'],
    ['a failure before the last, which finished', [op('add_rooms', 'error', 2), op('remove_rooms', 'finished', 3)],
      'the operation that ended last, remove_rooms-3 (remove_rooms), finished; operation add_rooms-2 (add_rooms) failed before it; none is stuck'],
    ['the last was canceled', [op('add_rooms', 'canceled', 2)], 'the operation that ended last, add_rooms-2 (add_rooms), was canceled; none is stuck'],
  ])('Degraded False says which operation ended last and how, not that none failed: %s', (_n, ops, message) => {
    const degraded = (computeSchedulerStatus(synced(), ops, [room('a', 'ready')], 0, none).conditions ?? []).find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'False', reason: 'LastOperationDidNotFail', message });
  });

  test("Degraded False says the deletion stopped the last operation, and names the failure before it", () => {
    const deleting = scheduler({ version: 'v1.0.0', versioned: 1, desired: 1, deleting: true });
    const degraded = (computeSchedulerStatus(deleting, [op('add_rooms', 'error', 2), stoppedOp('remove_rooms', 3)], [room('a', 'ready')], 0, none).conditions ?? []).find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({
      status: 'False', reason: 'OperationStoppedByDeletion',
      message: "the operation that ended last, remove_rooms-3 (remove_rooms), was stopped by the scheduler's deletion, which removes its rooms and versions: nothing failed and nothing is left to do; "
        + 'operation add_rooms-2 (add_rooms) failed before it; none is stuck',
    });
  });

  test.each([
    ['a major change whose validation room failed', failedOp('create_new_scheduler_version', 2, 'validation failed: the validation room of v2.0.0 ended in error'),
      'operation create_new_scheduler_version-2 (create_new_scheduler_version) failed: validation failed: the validation room of v2.0.0 ended in error; the change was not applied and the active version v1.0.0 '
      + "still serves (kubectl get rkop create_new_scheduler_version-2 -o yaml shows its history): fix the spec and apply it again, or set it back to that version's"],
    ['a major change whose validation room reads a missing Secret', failedOp('create_new_scheduler_version', 2, 'validation failed: the validation room s-abcde of v2.0.0 could not start its container: CreateContainerConfigError: secret "game-secrets" not found'),
      'operation create_new_scheduler_version-2 (create_new_scheduler_version) failed: validation failed: the validation room s-abcde of v2.0.0 could not start its container: CreateContainerConfigError: secret "game-secrets" not found; '
      + 'the change was not applied and the active version v1.0.0 still serves (kubectl get rkop create_new_scheduler_version-2 -o yaml shows its history): its validation room could not start, as a Secret or ConfigMap its environment reads is missing (the error names it): '
      + "create it in the rooms' namespace s (kubectl -n s create secret generic <name> --from-literal=<key>=<value>), then apply the change (or send it) again; or drop the reference from the spec"],
    ['a switch to a version that does not exist', failedOp('switch_active_version', 2, 'version v9.0.0 of scheduler s not found'),
      'operation switch_active_version-2 (switch_active_version) failed: version v9.0.0 of scheduler s not found; the active version v1.0.0 still serves '
      + '(kubectl get rkop switch_active_version-2 -o yaml shows its history): switch to a version that exists and can run'],
    ['a room operation', failedOp('add_rooms', 2, 'namespaces "s" not found'),
      'operation add_rooms-2 (add_rooms) failed: namespaces "s" not found; kubectl get rkop add_rooms-2 -o yaml shows its history; this clears once a later operation of the scheduler ends without failing'],
    ['a failure whose history tells no cause', op('remove_rooms', 'error', 2),
      'operation remove_rooms-2 (remove_rooms) failed; kubectl get rkop remove_rooms-2 -o yaml shows its history; this clears once a later operation of the scheduler ends without failing'],
  ])('Degraded True says what failed, why, and what to do: %s', (_n, failure, message) => {
    const degraded = (computeSchedulerStatus(synced(), [op('create_scheduler', 'finished', 1), failure], [room('a', 'ready')], 0, none).conditions ?? []).find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'OperationFailed', message });
  });

  test('Degraded True of a creation that failed (no version) says how the scheduler is created again: by the operator\'s next attempt when the cluster refused it, else by a change', () => {
    const s = scheduler({ version: undefined, versioned: 1 });
    s.status = { ...s.status, state: 'on-error' };
    delete s.status.version;
    const degradedOf = (cause: string) => (computeSchedulerStatus(s, [failedOp('create_scheduler', 1, cause)], [], 0, none).conditions ?? []).find((c) => c.type === 'Degraded')?.message;
    expect(degradedOf('pods "s-x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0')).toBe('operation create_scheduler-1 (create_scheduler) failed: pods "s-x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0; no version was made (kubectl get rkop create_scheduler-1 -o yaml shows its history). '
      + 'The cluster refused it (a ResourceQuota, a Pod Security or admission policy, a PriorityClass it does not have, a namespace being deleted): once that is lifted, the operator\'s next attempt creates the scheduler (after a backoff from 5 s, doubling up to 5 min; sending the same definition again, POST /schedulers/s, makes it at once)');
    expect(degradedOf('422 Unprocessable Entity: Pod "s-x" is invalid: spec.containers[0].image: Required value')).toBe('operation create_scheduler-1 (create_scheduler) failed: 422 Unprocessable Entity: Pod "s-x" is invalid: spec.containers[0].image: Required value; no version was made (kubectl get rkop create_scheduler-1 -o yaml shows its history). '
      + 'Once its cause is fixed, create the scheduler again: change its spec (a new generation: PATCH /schedulers/s, kubectl edit), or delete it and create it again with the same definition (the same definition sent again is no change)');
  });

  test('Degraded quotes at most 400 characters of a cause', () => {
    const degraded = (computeSchedulerStatus(synced(), [failedOp('add_rooms', 2, 'x'.repeat(1000))], [room('a', 'ready')], 0, none).conditions ?? []).find((c) => c.type === 'Degraded');
    expect(degraded?.message).toContain(`failed: ${'x'.repeat(400)}…; kubectl get rkop`);
  });

  test('a failed spec change names its operation and what to do', () => {
    const failed = computeSchedulerStatus(synced(), [op('create_new_scheduler_version', 'error', 2)], [room('a', 'ready')], 0, none).conditions ?? [];
    expect(failed.find((c) => c.type === 'PendingChanges')?.message).toBe("the spec's last change was not applied: operation create_new_scheduler_version-2 (create_new_scheduler_version) failed "
      + "(kubectl get rkop create_new_scheduler_version-2 -o yaml shows why); the active version v1.0.0 runs: fix the spec, or set it back to that version's");
  });

  test('a canceled spec change says so', () => {
    const canceled = computeSchedulerStatus(synced(), [op('create_new_scheduler_version', 'canceled', 2)], [room('a', 'ready')], 0, none).conditions ?? [];
    expect(canceled.find((c) => c.type === 'PendingChanges')?.message).toBe("the spec's last change was not applied: operation create_new_scheduler_version-2 (create_new_scheduler_version) was canceled "
      + "(kubectl get rkop create_new_scheduler_version-2 -o yaml shows why); the active version v1.0.0 runs: fix the spec, or set it back to that version's");
  });

  test('is level-based: computing it again from its own result changes nothing', () => {
    const s = scheduler({ version: 'v1.0.0', versioned: 1, desired: 1 });
    const first = computeSchedulerStatus(s, [op('create_scheduler', 'finished')], [room('a', 'ready')], 1000, none);
    const again = computeSchedulerStatus({ ...s, status: { ...s.status, ...first } }, [op('create_scheduler', 'finished')], [room('a', 'ready')], 5000, none);
    expect(statusChanged({ ...s.status, ...first }, again)).toBe(false);
  });
});
