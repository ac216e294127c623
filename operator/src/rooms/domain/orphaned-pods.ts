/**
 * Room pods whose GameRoom is gone: which of a scheduler's pods the operator deletes, and when.
 * Pure rules, no I/O (rooms/orphaned-pods.ts does the deleting).
 *
 * A room is made GameRoom first, then its pod, which carries the GameRoom's ownerReference from its
 * create (room-manager.ts `createRoom`). So a room pod without an ownerReference to a GameRoom has
 * lost it: the garbage collector removes it when the GameRoom is deleted with its dependents
 * orphaned (`kubectl delete gameroom --cascade=orphan`, propagationPolicy Orphan), and such a pod
 * keeps its host ports and its game server for ever. A pod whose GameRoom ownerReference names a
 * GameRoom the rooms cache does not hold is either just made (its room not in the cache yet) or
 * one the garbage collector has not deleted yet; the caller reads its GameRoom fresh before it
 * deletes it.
 *
 * Either is deleted only once it has been seen so for `graceMs`, counted from when the caches were
 * last current (`sightSince`: leadership gained, a list, a watch reconnected): a cache behind the
 * API server is never taken for a pod without its room.
 */
import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import { API_GROUP } from '../../../../common/src/resources/api-group';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL, VALIDATION_ROOM_LABEL } from '../../../../common/src/resources/labels';
import { nameList } from '../../../../common/src/text/name-list';

/**
 * Why a room pod has no GameRoom: `orphaned`, it has no ownerReference to one (its GameRoom was
 * deleted with its dependents orphaned); `owner-gone`, its GameRoom ownerReference names a
 * GameRoom that is not there (the garbage collector has not deleted the pod).
 */
type OrphanKind = 'orphaned' | 'owner-gone';

export interface OrphanedPod {
  name: string;
  uid: string;
  kind: OrphanKind;
  /** The GameRooms its ownerReferences name (`owner-gone` only). */
  owners: { name: string; uid: string }[];
  validation: boolean;
}

export interface OrphanedPodsInput {
  scheduler: string;
  /** The pods of the scheduler's namespace, as the cache shows them. */
  pods: readonly V1Pod[];
  /** The uid of the GameRoom `name` of the scheduler as the rooms cache shows it; undefined when it holds none. */
  roomUid: (name: string) => string | undefined;
  /** Whether the rooms cache holds the GameRoom `name`, not being deleted (default: never). */
  roomKept?: (name: string) => boolean;
  /** Since when each pod (by uid) has been seen without its GameRoom, as the last pass left it. */
  seenSince: ReadonlyMap<string, number>;
  now: number;
  /** Since when the caches have been current: nothing seen before counts. */
  sightSince: number;
  graceMs: number;
}

export interface OrphanedPodsPlan {
  /** The pods seen without their GameRoom now, with since when (for the next pass). */
  seenSince: Map<string, number>;
  /** Those seen so for the grace period, by name: to be deleted. */
  due: OrphanedPod[];
}

function isGameRoomRef(ref: V1OwnerReference): boolean {
  return ref.kind === 'GameRoom' && ref.apiVersion.split('/')[0] === API_GROUP;
}

/** The pod as one without its GameRoom, or undefined when it is no room pod, is being deleted, or its GameRoom is there. */
function orphanOf(pod: V1Pod, scheduler: string, roomUid: (name: string) => string | undefined, roomKept: (name: string) => boolean): OrphanedPod | undefined {
  const meta = pod.metadata;
  const labels = meta?.labels ?? {};
  if (!meta?.name || !meta.uid || meta.deletionTimestamp) return undefined;
  if (labels[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE || labels[SCHEDULER_LABEL] !== scheduler) return undefined;
  const refs = (meta.ownerReferences ?? []).filter(isGameRoomRef);
  if (refs.some((r) => roomUid(r.name) === r.uid)) return undefined;
  // No owner named, but the GameRoom of its name is there and not being deleted (its
  // ownerReference was removed, by kubectl say; a --cascade=orphan deletion marks the GameRoom
  // deleted first): the pod is that room's, which runs; it is no orphan, and is not deleted.
  if (refs.length === 0 && roomKept(meta.name)) return undefined;
  return {
    name: meta.name,
    uid: meta.uid,
    kind: refs.length === 0 ? 'orphaned' : 'owner-gone',
    owners: refs.map((r) => ({ name: r.name, uid: r.uid })),
    validation: labels[VALIDATION_ROOM_LABEL] === 'true',
  };
}

/** Which of the scheduler's pods are without their GameRoom, and which of them are due for deletion. */
export function planOrphanedPods(input: OrphanedPodsInput): OrphanedPodsPlan {
  const seenSince = new Map<string, number>();
  const due: OrphanedPod[] = [];
  for (const pod of input.pods) {
    const orphan = orphanOf(pod, input.scheduler, input.roomUid, input.roomKept ?? (() => false));
    if (!orphan) continue;
    const since = input.seenSince.get(orphan.uid) ?? input.now;
    seenSince.set(orphan.uid, since);
    if (input.now - Math.max(since, input.sightSince) >= input.graceMs) due.push(orphan);
  }
  due.sort((a, b) => a.name.localeCompare(b.name));
  return { seenSince, due };
}

/** The names a note shows; the rest are counted. */
const NAMES_SHOWN = 20;

const CASCADE_ORPHAN = "kubectl delete gameroom --cascade=orphan, or a client's propagationPolicy Orphan";

/**
 * The Scheduler Event's note for the room pods one pass deleted: why they had no GameRoom, what
 * deleting them freed, and their names (the first NAMES_SHOWN, last, so that a note cut to the
 * Event's 1 kB loses names, not the account).
 */
export function orphanedPodsNote(deleted: readonly Pick<OrphanedPod, 'name' | 'kind'>[], graceMs: number): string {
  const one = deleted.length === 1;
  const orphaned = deleted.filter((p) => p.kind === 'orphaned').length;
  const gone = deleted.length - orphaned;
  const after = `${Math.round(graceMs / 1000)} s`;
  let why: string;
  if (gone === 0) {
    why = one
      ? `its GameRoom was deleted with its pod orphaned (${CASCADE_ORPHAN}), so nothing else would delete it`
      : `their GameRooms were deleted with their pods orphaned (${CASCADE_ORPHAN}), so nothing else would delete them`;
  } else if (orphaned === 0) {
    why = one
      ? `its GameRoom is gone, and the garbage collector (kube-controller-manager) had not deleted it after ${after}`
      : `their GameRooms are gone, and the garbage collector (kube-controller-manager) had not deleted them after ${after}`;
  } else {
    why = `the GameRooms of ${orphaned} were deleted with their pods orphaned (${CASCADE_ORPHAN}); those of the other ${gone} are gone, and the garbage collector (kube-controller-manager) had not deleted their pods after ${after}`;
  }
  const list = nameList(deleted.map((p) => p.name), { max: NAMES_SHOWN });
  return one
    ? `Deleted room pod ${list}, which ran without its GameRoom: ${why}. Roomkeeper deleted it (with its grace period), so its host ports and its place on its node are free.`
    : `Deleted ${deleted.length} room pods that ran without their GameRooms: ${why}. Roomkeeper deleted them (with their grace period), so their host ports and their places on their nodes are free. Pods: ${list}.`;
}
