import type { SchedulerVersion } from '../generated/resources';
import { majorOf, recordedActiveVersion, sameRooms } from './scheduler-version';

describe('majorOf', () => {
  it.each([
    ['v1.0.0', 1],
    ['v12.3.4', 12],
    ['2.1.0', 2],
    ['v3', 3],
    [' v4.0.0 ', 4],
    ['', undefined],
    ['latest', undefined],
    ['v1.2.3.4', undefined],
    ['v-1.0.0', undefined],
  ])('%j -> %j', (version, expected) => {
    expect(majorOf(version)).toBe(expected);
  });
});

describe('sameRooms', () => {
  it.each([
    ['v1.0.0', 'v1.3.0', true],
    ['v1.0.0', 'v2.0.0', false],
    ['v2', 'v2.1.0', true],
    ['custom', 'custom', true],
    ['custom', 'v1.0.0', false],
  ])('%j and %j -> %j', (a, b, expected) => {
    expect(sameRooms(a, b)).toBe(expected);
  });
});

describe('recordedActiveVersion', () => {
  const v = (version: string, active?: boolean, deleting?: boolean): SchedulerVersion => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion',
    metadata: { name: `s-${version}`, ...(deleting ? { deletionTimestamp: new Date(0) } : {}) },
    spec: { scheduler: 's', version, kind: 'major', definition: {} as SchedulerVersion['spec']['definition'] },
    ...(active !== undefined ? { status: { active } } : {}),
  });
  it.each<[string, string | undefined, SchedulerVersion[], string | undefined]>([
    ['status.version flagged active', 'v2.0.0', [v('v1.0.0', false), v('v2.0.0', true)], 'v2.0.0'],
    ['status.version edited back to an older version that exists: the flagged one', 'v1.0.0', [v('v1.0.0', false), v('v2.0.0', true)], 'v2.0.0'],
    ['status.version edited to a version no object holds: the flagged one', 'v99.0.0', [v('v1.0.0', true)], 'v1.0.0'],
    ['a switch between its flags and status.version: the flagged one (the switch\'s target)', 'v1.0.0', [v('v1.0.0', false), v('v2.0.0', true)], 'v2.0.0'],
    ['none flagged (no record to check against): status.version', 'v1.0.0', [v('v1.0.0'), v('v2.0.0')], 'v1.0.0'],
    ['the flagged one being deleted: no record, status.version', 'v99.0.0', [v('v1.0.0', true, true)], 'v99.0.0'],
    ['status.version flagged and being deleted: still status.version', 'v1.0.0', [v('v1.0.0', true, true)], 'v1.0.0'],
    ['several others flagged: undefined', 'v3.0.0', [v('v1.0.0', true), v('v2.0.0', true), v('v3.0.0', false)], undefined],
    ['no status.version, one flagged: the flagged one', undefined, [v('v1.0.0', true)], 'v1.0.0'],
  ])('%s', (_name, named, versions, expected) => {
    expect(recordedActiveVersion(named, versions)).toBe(expected);
  });
});
