import type { Operation, Scheduler, SchedulerVersion } from '../../../common/src/generated/resources';
import { REBUILT_AT_ANNOTATION, VERSION_PROTECTION_FINALIZER } from '../../../common/src/resources/labels';
import { planOwnedObjects, type OwnedObjectsInput } from './owned-objects';

function scheduler(over: { deleting?: boolean; generation?: number; version?: string } = {}): Scheduler {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler',
    metadata: { name: 's', uid: 'u', generation: over.generation ?? 2, ...(over.deleting ? { deletionTimestamp: new Date(0) } : {}) },
    spec: { game: 'g' } as Scheduler['spec'],
    status: { version: over.version ?? 'v1.1.0', versionedGeneration: 2 },
  };
}

function version(v: string, over: { protectedBy?: boolean; deleting?: boolean; rebuilt?: boolean; active?: boolean } = {}): SchedulerVersion {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion',
    metadata: {
      name: `s-${v}`,
      ...(over.protectedBy ? { finalizers: [VERSION_PROTECTION_FINALIZER] } : {}),
      ...(over.deleting ? { deletionTimestamp: new Date(0) } : {}),
      ...(over.rebuilt ? { annotations: { [REBUILT_AT_ANNOTATION]: '2026-01-01T00:00:00.000Z' } } : {}),
    },
    spec: { scheduler: 's', version: v, kind: 'minor', definition: {} as SchedulerVersion['spec']['definition'] },
    ...(over.active !== undefined ? { status: { active: over.active } } : {}),
  };
}

function op(definitionName: string, input: Record<string, unknown>, status = 'pending'): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `op-${definitionName}` },
    spec: { schedulerName: 's', definitionName, input, priority: false, enqueuedAt: '2026-01-01T00:00:00Z', source: 'api' },
    status: { status: status as 'pending' },
  };
}

const plan = (over: Partial<OwnedObjectsInput>) => planOwnedObjects({
  scheduler: scheduler(), namespace: {}, versions: [version('v1.1.0', { protectedBy: true })], ops: [], healingDefinitions: ['add_rooms'], ...over,
});
const conditionOf = (p: ReturnType<typeof plan>, type: string) => p.conditions.find((c) => c.type === type);

describe('planOwnedObjects', () => {
  test('all in place: nothing to do, twice in a row', () => {
    const p = plan({});
    expect(p).toMatchObject({ createNamespace: false, protect: [], release: [], rebuildVersion: undefined });
    expect(conditionOf(p, 'NamespaceReady')).toMatchObject({ status: 'True', reason: 'Present' });
    expect(conditionOf(p, 'ActiveVersionAvailable')).toMatchObject({ status: 'True', reason: 'Present' });
    expect(plan({})).toEqual(p);
  });

  const cases: { name: string; in: Partial<OwnedObjectsInput>; want: Partial<ReturnType<typeof plan>>; condition?: [string, string, string] }[] = [
    { name: 'namespace gone: rebuilt', in: { namespace: undefined }, want: { createNamespace: true }, condition: ['NamespaceReady', 'False', 'NamespaceMissing'] },
    { name: 'namespace terminating: wait until it is gone', in: { namespace: { deletionTimestamp: new Date(0) } }, want: { createNamespace: false }, condition: ['NamespaceReady', 'False', 'NamespaceTerminating'] },
    { name: 'namespace rebuilt: said so', in: { namespace: { annotations: { [REBUILT_AT_ANNOTATION]: 'T' } } }, want: { createNamespace: false }, condition: ['NamespaceReady', 'True', 'Rebuilt'] },
    { name: 'namespace gone while create_scheduler runs: left to it', in: { namespace: undefined, ops: [op('create_scheduler', {}, 'in_progress')] }, want: { createNamespace: false } },
    { name: 'active version unprotected: protected', in: { versions: [version('v1.1.0')] }, want: { protect: ['s-v1.1.0'] } },
    { name: 'old version protected: released', in: { versions: [version('v1.1.0', { protectedBy: true }), version('v1.0.0', { protectedBy: true })] }, want: { release: ['s-v1.0.0'] } },
    { name: 'old version a pending switch names: protected', in: { versions: [version('v1.1.0', { protectedBy: true }), version('v1.0.0')], ops: [op('switch_active_version', { version: 'v1.0.0' })] }, want: { protect: ['s-v1.0.0'] } },
    { name: 'scheduler deleting: every version released', in: { scheduler: scheduler({ deleting: true }) }, want: { release: ['s-v1.1.0'], conditions: [] } },
    { name: 'active version deleted and waiting', in: { versions: [version('v1.1.0', { protectedBy: true, deleting: true })] }, want: { rebuildVersion: undefined }, condition: ['VersionDeletionBlocked', 'True', 'VersionInUse'] },
    { name: 'active version deleted and waiting: still available, said so', in: { versions: [version('v1.1.0', { protectedBy: true, deleting: true })] }, want: { rebuildVersion: undefined }, condition: ['ActiveVersionAvailable', 'True', 'VersionInUse'] },
    { name: 'active version being deleted, no finalizer holds it: available until it is gone', in: { versions: [version('v1.1.0', { deleting: true })] }, want: { rebuildVersion: undefined }, condition: ['ActiveVersionAvailable', 'True', 'Present'] },
    { name: 'active version gone: rebuilt from the spec', in: { versions: [] }, want: { rebuildVersion: 'v1.1.0' }, condition: ['ActiveVersionAvailable', 'False', 'ActiveVersionMissing'] },
    { name: 'active version gone, spec moved on: not rebuilt', in: { versions: [], scheduler: scheduler({ generation: 3 }) }, want: { rebuildVersion: undefined }, condition: ['ActiveVersionAvailable', 'False', 'CannotRebuild'] },
    { name: 'active version gone, no other says active: rebuilt from the spec', in: { versions: [version('v1.0.0', { active: false })] }, want: { rebuildVersion: 'v1.1.0', restoreVersion: undefined }, condition: ['ActiveVersionAvailable', 'False', 'ActiveVersionMissing'] },
    { name: 'status.version edited to a version no object holds: set back to the one that says active, nothing rebuilt', in: { scheduler: scheduler({ version: 'v99.0.0' }), versions: [version('v1.1.0', { protectedBy: true, active: true }), version('v1.0.0', { active: false })] }, want: { rebuildVersion: undefined, restoreVersion: 'v1.1.0', protect: [], release: [] }, condition: ['ActiveVersionAvailable', 'False', 'StatusVersionRestored'] },
    // Edited back to an older version that exists: the health check had replaced every room to run it, no operation said so.
    { name: 'status.version edited to an older version that exists: set back to the one that says active', in: { scheduler: scheduler({ version: 'v1.0.0' }), versions: [version('v1.1.0', { protectedBy: true, active: true }), version('v1.0.0', { active: false })] }, want: { rebuildVersion: undefined, restoreVersion: 'v1.1.0' }, condition: ['ActiveVersionAvailable', 'False', 'StatusVersionRestored'] },
    // A switch writes the versions' flags before status.version: mid-switch is not an edit.
    { name: 'a switch between its flags and status.version: left to it', in: { scheduler: scheduler({ version: 'v1.0.0' }), versions: [version('v1.1.0', { active: true }), version('v1.0.0', { active: false })], ops: [op('switch_active_version', { newActiveVersion: 'v1.1.0' }, 'in_progress')] }, want: { restoreVersion: undefined } },
    { name: 'status.version names an existing version, none says active (no record): as it is', in: { scheduler: scheduler({ version: 'v1.0.0' }), versions: [version('v1.1.0'), version('v1.0.0', { protectedBy: true })] }, want: { restoreVersion: undefined }, condition: ['ActiveVersionAvailable', 'True', 'Present'] },
    { name: 'status.version edited, the version saying active being deleted: rebuilt', in: { scheduler: scheduler({ version: 'v99.0.0' }), versions: [version('v1.1.0', { protectedBy: true, active: true, deleting: true })] }, want: { rebuildVersion: 'v99.0.0', restoreVersion: undefined } },
    { name: 'status.version edited, two versions say active: neither restored nor rebuilt', in: { scheduler: scheduler({ version: 'v99.0.0' }), versions: [version('v1.1.0', { active: true }), version('v1.0.0', { active: true })] }, want: { rebuildVersion: undefined, restoreVersion: undefined }, condition: ['ActiveVersionAvailable', 'False', 'ActiveVersionAmbiguous'] },
    { name: 'another version edited to say it is active beside the active one: set back to inactive', in: { versions: [version('v1.1.0', { protectedBy: true, active: true }), version('v1.0.0', { active: true })] }, want: { unflag: ['v1.0.0'], restoreVersion: undefined }, condition: ['ActiveVersionAvailable', 'True', 'Present'] },
    { name: 'two versions saying active while a switch runs: left to it', in: { versions: [version('v1.1.0', { protectedBy: true, active: true }), version('v1.0.0', { active: true })], ops: [op('switch_active_version', { newActiveVersion: 'v1.0.0' }, 'in_progress')] }, want: { unflag: [] } },
    { name: 'healing held by nothing', in: {}, want: {}, condition: ['HealingHeld', 'False', 'NotHeld'] },
    { name: 'the active version\'s rooms failing: said so', in: { failingRooms: 'rooms of v1.1.0 fail before their game server pings: …' }, want: {}, condition: ['HealingHeld', 'True', 'RoomsFailing'] },
    { name: 'rooms waiting for host ports no node has free: said so', in: { waitingForPorts: '2 rooms (a, b) wait for host ports: …' }, want: {}, condition: ['HealingHeld', 'True', 'HostPortsExhausted'] },
    { name: 'a wide silence whose expiry is held: said so', in: { expiryHeld: 'room expiry held (RoomExpiryHeld): 20 rooms would expire now …' }, want: {}, condition: ['HealingHeld', 'True', 'ExpiryHeld'] },
    { name: 'a version change running (a major one\'s validation room may take minutes): said so', in: { ops: [op('create_new_scheduler_version', {}, 'in_progress')] }, want: {}, condition: ['HealingHeld', 'True', 'VersionChangeRunning'] },
    { name: 'a version change pending or ended: not held by it', in: { ops: [op('create_new_scheduler_version', {}), op('create_new_scheduler_version', {}, 'finished')] }, want: {}, condition: ['HealingHeld', 'False', 'NotHeld'] },
    { name: 'rooms failing and waiting for ports: the failing reason, both said', in: { failingRooms: 'rooms of v1.1.0 fail …', waitingForPorts: '2 rooms wait …' }, want: {}, condition: ['HealingHeld', 'True', 'RoomsFailing'] },
    { name: 'active version rebuilt: said so', in: { versions: [version('v1.1.0', { protectedBy: true, rebuilt: true })] }, want: {}, condition: ['ActiveVersionAvailable', 'True', 'Rebuilt'] },
  ];
  test.each(cases)('$name', ({ in: input, want, condition }) => {
    const p = plan(input);
    expect(p).toMatchObject(want);
    if (condition) expect(conditionOf(p, condition[0])).toMatchObject({ status: condition[1], reason: condition[2] });
  });

  test('a running version change is said to hold healing and autoscaling, with how to heal now', () => {
    const running = op('create_new_scheduler_version', {}, 'in_progress');
    const id = running.metadata.name as string;
    expect(conditionOf(plan({ ops: [running] }), 'HealingHeld')?.message).toBe(`healing and autoscaling wait for operation ${id} (create_new_scheduler_version) to end: the health check adds, removes and replaces rooms only while no operation runs, `
      + `and a major change's validation room may take up to ROOMKEEPER_VALIDATION_TIMEOUT per attempt; to heal now, cancel it: POST /schedulers/s/operations/${id}/cancel`);
  });

  test('status.version edited to an older version: the condition says what was edited, what it is set back to and how to switch to it', () => {
    const p = plan({ scheduler: scheduler({ version: 'v1.0.0' }), versions: [version('v1.1.0', { protectedBy: true, active: true }), version('v1.0.0', { active: false })] });
    expect(conditionOf(p, 'ActiveVersionAvailable')?.message).toBe('status.version named v1.0.0, whose SchedulerVersion does not say it is active (no switch_active_version made it so); v1.1.0 is active (its SchedulerVersion says so); status.version is set back to it, and no room is made, replaced or rebuilt for v1.0.0: '
      + 'to run v1.0.0, switch to it: PUT /schedulers/s with {"version": "v1.0.0"}, or kubectl create an Operation with spec {schedulerName: s, definitionName: switch_active_version, input: {newActiveVersion: v1.0.0}} (README, kubectl)');
  });

  test('an edited status.version is told how to switch with a body PUT /schedulers/{name} takes ({"version": ...}, Maestro\'s)', () => {
    const restored = plan({ scheduler: scheduler({ version: 'v99.0.0' }), versions: [version('v1.1.0', { protectedBy: true, active: true })] });
    const ambiguous = plan({ scheduler: scheduler({ version: 'v99.0.0' }), versions: [version('v1.1.0', { active: true }), version('v1.0.0', { active: true })] });
    for (const p of [restored, ambiguous]) expect(conditionOf(p, 'ActiveVersionAvailable')?.message).toContain('PUT /schedulers/s with {"version": "..."}');
  });
});
