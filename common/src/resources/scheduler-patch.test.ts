import type { SchedulerSpec } from '../generated/resources';
import { applySchedulerPatch, isEmptyPatch } from './scheduler-patch';

const current: SchedulerSpec = {
  game: 'g',
  maxSurge: '10%',
  roomsReplicas: 2,
  portRange: { start: 1000, end: 2000 },
  autoscaling: { enabled: false, min: 1, max: 5, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } },
  spec: {
    terminationGracePeriod: '10s',
    containers: [
      { name: 'a', image: 'a:1', command: ['x'] },
      { name: 'b', image: 'b:1' },
    ],
  },
};

describe('applySchedulerPatch', () => {
  it('replaces top-level fields and leaves the rest', () => {
    expect(applySchedulerPatch(current, { maxSurge: 3, annotations: { k: 'v' } })).toEqual({ ...current, maxSurge: 3, annotations: { k: 'v' } });
  });

  it('merges containers by index and appends extra ones', () => {
    const merged = applySchedulerPatch(current, { spec: { terminationGracePeriod: '20s', containers: [{ image: 'a:2' }, {}, { name: 'c', image: 'c:1' }] } });
    expect(merged.spec).toEqual({
      terminationGracePeriod: '20s',
      containers: [{ name: 'a', image: 'a:2', command: ['x'] }, { name: 'b', image: 'b:1' }, { name: 'c', image: 'c:1' }],
    });
  });

  it('merges autoscaling field by field', () => {
    expect(applySchedulerPatch(current, { autoscaling: { enabled: true } }).autoscaling).toEqual({ ...current.autoscaling, enabled: true });
  });

  it('does not change the current definition', () => {
    const before = structuredClone(current);
    applySchedulerPatch(current, { spec: { containers: [{ image: 'z' }] }, autoscaling: { max: 9 } });
    expect(current).toEqual(before);
  });

  it('tells an empty patch', () => {
    expect(isEmptyPatch({})).toBe(true);
    expect(isEmptyPatch({ roomsReplicas: 0 })).toBe(false);
  });
});
