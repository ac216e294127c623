import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import { orphanedPodsNote, planOrphanedPods, type OrphanedPodsInput } from './orphaned-pods';

const S = 1000;
const NOW = 10_000 * S;
const GRACE = 30 * S;

const owner = (name: string, uid = `uid-${name}`, over: Partial<V1OwnerReference> = {}): V1OwnerReference =>
  ({ apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', name, uid, controller: true, blockOwnerDeletion: true, ...over });

/** A room pod of scheduler `s` as the operator makes it (owned by its GameRoom unless `owners` says otherwise). */
function pod(name: string, over: { owners?: V1OwnerReference[]; labels?: Record<string, string>; deleting?: boolean; uid?: string } = {}): V1Pod {
  const owners = over.owners ?? [owner(name)];
  return {
    metadata: {
      name, namespace: 's', uid: over.uid ?? `pod-${name}`,
      labels: over.labels ?? { 'app.kubernetes.io/managed-by': 'roomkeeper', 'roomkeeper.io/scheduler': 's', 'roomkeeper.io/version': 'v1.0.0' },
      ...(owners.length > 0 ? { ownerReferences: owners } : {}),
      ...(over.deleting ? { deletionTimestamp: new Date(NOW) } : {}),
    },
  };
}

/** The rooms cache holds these GameRooms (name -> uid). */
const rooms = (...names: string[]) => (name: string): string | undefined => (names.includes(name) ? `uid-${name}` : undefined);

const plan = (over: Partial<OrphanedPodsInput>) =>
  planOrphanedPods({ scheduler: 's', pods: [], roomUid: rooms(), seenSince: new Map(), now: NOW, sightSince: 0, graceMs: GRACE, ...over });

describe('planOrphanedPods: which room pods run without their GameRoom, and which are due', () => {
  test.each<{ name: string; in: Partial<OrphanedPodsInput>; seen: string[]; due: string[] }>([
    { name: 'a pod owned by a GameRoom the cache holds is no orphan', in: { pods: [pod('r1')], roomUid: rooms('r1') }, seen: [], due: [] },
    {
      name: 'a pod without ownerReferences (its GameRoom deleted --cascade=orphan) is seen, not yet due',
      in: { pods: [pod('r1', { owners: [] })], roomUid: rooms('r1') },
      seen: ['pod-r1'], due: [],
    },
    {
      name: 'seen so for the grace period: due, even while the orphaned GameRoom is still in the cache',
      in: { pods: [pod('r1', { owners: [] })], roomUid: rooms('r1'), seenSince: new Map([['pod-r1', NOW - GRACE]]) },
      seen: ['pod-r1'], due: ['r1'],
    },
    {
      name: 'a pod whose ownerReference was removed (kubectl) while its GameRoom is there, not being deleted, is no orphan',
      in: { pods: [pod('r1', { owners: [] })], roomUid: rooms('r1'), roomKept: (n) => n === 'r1', seenSince: new Map([['pod-r1', 0]]) },
      seen: [], due: [],
    },
    {
      name: 'one second short of the grace period: not due',
      in: { pods: [pod('r1', { owners: [] })], seenSince: new Map([['pod-r1', NOW - GRACE + S]]) },
      seen: ['pod-r1'], due: [],
    },
    {
      name: 'caches current only since lately: the grace counts from then',
      in: { pods: [pod('r1', { owners: [] })], seenSince: new Map([['pod-r1', NOW - 10 * GRACE]]), sightSince: NOW - 5 * S },
      seen: ['pod-r1'], due: [],
    },
    {
      name: 'an ownerReference to a GameRoom the cache does not hold (just made, or not collected yet) counts too',
      in: { pods: [pod('r1'), pod('r2')], roomUid: rooms('r2'), seenSince: new Map([['pod-r1', NOW - GRACE]]) },
      seen: ['pod-r1'], due: ['r1'],
    },
    {
      name: 'a GameRoom of the same name with another uid is not its GameRoom',
      in: { pods: [pod('r1', { owners: [owner('r1', 'old-uid')] })], roomUid: rooms('r1'), seenSince: new Map([['pod-r1', 0]]) },
      seen: ['pod-r1'], due: ['r1'],
    },
    {
      name: 'ownerReferences to other kinds only: no GameRoom owns it',
      in: { pods: [pod('r1', { owners: [owner('r1', 'uid-r1', { kind: 'ReplicaSet', apiVersion: 'apps/v1' })] })], roomUid: rooms('r1'), seenSince: new Map([['pod-r1', 0]]) },
      seen: ['pod-r1'], due: ['r1'],
    },
    {
      name: 'a pod being deleted is left to its deletion',
      in: { pods: [pod('r1', { owners: [], deleting: true })], seenSince: new Map([['pod-r1', 0]]) },
      seen: [], due: [],
    },
    {
      name: 'pods without Roomkeeper\'s room labels, or of another scheduler, are not room pods of this one',
      in: {
        pods: [
          pod('mine', { owners: [], labels: { 'roomkeeper.io/scheduler': 's' } }),
          pod('other', { owners: [], labels: { 'app.kubernetes.io/managed-by': 'roomkeeper', 'roomkeeper.io/scheduler': 'other' } }),
        ],
        seenSince: new Map([['pod-mine', 0], ['pod-other', 0]]),
      },
      seen: [], due: [],
    },
    {
      name: 'a validation room\'s pod is a room pod too',
      in: { pods: [pod('v1', { owners: [], labels: { 'app.kubernetes.io/managed-by': 'roomkeeper', 'roomkeeper.io/scheduler': 's', 'roomkeeper.io/validation-room': 'true' } })], seenSince: new Map([['pod-v1', 0]]) },
      seen: ['pod-v1'], due: ['v1'],
    },
    {
      name: 'a pod no longer without its GameRoom is forgotten; a new one of the same name is seen afresh',
      in: { pods: [pod('r1', { owners: [], uid: 'new-uid' })], seenSince: new Map([['pod-r1', 0]]) },
      seen: ['new-uid'], due: [],
    },
  ])('$name', ({ in: input, seen, due }) => {
    const got = plan(input);
    expect([...got.seenSince.keys()].sort()).toEqual(seen);
    expect(got.due.map((p) => p.name)).toEqual(due);
  });

  test('a pod keeps the time it was first seen from pass to pass, and is due once the grace has passed since', () => {
    const pods = [pod('r1', { owners: [] }), pod('r2')];
    const first = plan({ pods, now: NOW });
    expect(first.seenSince).toEqual(new Map([['pod-r1', NOW], ['pod-r2', NOW]]));
    const second = plan({ pods, seenSince: first.seenSince, now: NOW + GRACE - 1 });
    expect(second.seenSince).toEqual(first.seenSince);
    expect(second.due).toEqual([]);
    const third = plan({ pods, seenSince: second.seenSince, now: NOW + GRACE });
    expect(third.due).toEqual([
      { name: 'r1', uid: 'pod-r1', kind: 'orphaned', owners: [], validation: false },
      { name: 'r2', uid: 'pod-r2', kind: 'owner-gone', owners: [{ name: 'r2', uid: 'uid-r2' }], validation: false },
    ]);
  });
});

describe('orphanedPodsNote: the Scheduler Event of one pass', () => {
  test.each([
    {
      name: 'one pod orphaned',
      pods: [{ name: 's-ab12c', kind: 'orphaned' as const }],
      want: 'Deleted room pod s-ab12c, which ran without its GameRoom: its GameRoom was deleted with its pod orphaned (kubectl delete gameroom --cascade=orphan, or a client\'s propagationPolicy Orphan), so nothing else would delete it. Roomkeeper deleted it (with its grace period), so its host ports and its place on its node are free.',
    },
    {
      name: 'pods whose GameRooms the garbage collector did not collect',
      pods: [{ name: 'a', kind: 'owner-gone' as const }, { name: 'b', kind: 'owner-gone' as const }],
      want: 'Deleted 2 room pods that ran without their GameRooms: their GameRooms are gone, and the garbage collector (kube-controller-manager) had not deleted them after 30 s. Roomkeeper deleted them (with their grace period), so their host ports and their places on their nodes are free. Pods: a, b.',
    },
    {
      name: 'both kinds',
      pods: [{ name: 'a', kind: 'orphaned' as const }, { name: 'b', kind: 'owner-gone' as const }],
      want: 'Deleted 2 room pods that ran without their GameRooms: the GameRooms of 1 were deleted with their pods orphaned (kubectl delete gameroom --cascade=orphan, or a client\'s propagationPolicy Orphan); those of the other 1 are gone, and the garbage collector (kube-controller-manager) had not deleted their pods after 30 s. Roomkeeper deleted them (with their grace period), so their host ports and their places on their nodes are free. Pods: a, b.',
    },
  ])('$name', ({ pods, want }) => {
    expect(orphanedPodsNote(pods, GRACE)).toBe(want);
  });

  test('names the first 20 pods and counts the rest', () => {
    const pods = Array.from({ length: 25 }, (_, i) => ({ name: `p${String(i).padStart(2, '0')}`, kind: 'orphaned' as const }));
    const note = orphanedPodsNote(pods, GRACE);
    expect(note).toMatch(/^Deleted 25 room pods that ran without their GameRooms: their GameRooms were deleted with their pods orphaned/);
    expect(note).toMatch(/Pods: p00, p01, .*, p19 and 5 more\.$/);
    expect(note).not.toContain('p20');
  });
});
