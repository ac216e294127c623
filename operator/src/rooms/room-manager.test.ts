import type { GameRoom } from '../../../common/src/generated/resources';
import { deletionStartedAt, toView } from './room-manager';

describe('deletionStartedAt', () => {
  it('is the deletionTimestamp minus the grace period (the API server sets the end of the grace period)', () => {
    expect(deletionStartedAt({ deletionTimestamp: '2026-01-01T00:10:00Z', deletionGracePeriodSeconds: 600 })).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(deletionStartedAt({ deletionTimestamp: new Date('2026-01-01T00:00:05Z'), deletionGracePeriodSeconds: 0 })).toBe(Date.parse('2026-01-01T00:00:05Z'));
    expect(deletionStartedAt({ deletionTimestamp: '2026-01-01T00:00:05Z' })).toBe(Date.parse('2026-01-01T00:00:05Z'));
  });

  it('is undefined while the object is not being deleted', () => {
    expect(deletionStartedAt({})).toBeUndefined();
    expect(deletionStartedAt(undefined)).toBeUndefined();
  });

  it('dates a room whose pod is deleted with a long grace period from the request, not from the end of the grace', () => {
    const room = { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's', creationTimestamp: new Date('2026-01-01T00:00:00Z') }, spec: { scheduler: 's', version: 'v1.0.0' } } as GameRoom;
    const pod = { metadata: { name: 'r1', deletionTimestamp: new Date('2026-01-01T00:11:00Z'), deletionGracePeriodSeconds: 600 } };
    expect(toView(room, pod, new Map())).toMatchObject({ terminating: true, terminatingSince: Date.parse('2026-01-01T00:01:00Z') });
  });
});
