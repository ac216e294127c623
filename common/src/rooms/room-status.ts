/**
 * A room's status, composed from its pod (the instance) and its last ping, as Maestro does
 * (maestro-behaviour.md §3.2 and §3.3). Pure functions; both the operator and the gateway use them.
 */
import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import type { GameRoom, PingStatus, RoomStatus as GameRoomStatusValue, Scheduler } from '../generated/resources';
import { activeDefinition, type FindVersion } from '../resources/scheduler-version';
import { toMillis } from '../kube/timestamps';
import { withAllocation } from './allocation';

export type { PingStatus };
/** A status composed from pod and ping: the GameRoom's values but `allocated`, which only an allocation sets. */
export type RoomStatus = Exclude<GameRoomStatusValue, 'allocated'>;
export type InstanceStatus = 'unknown' | 'pending' | 'ready' | 'terminating' | 'error';

/** The statuses a room may report on a ping (the rooms API accepts these; `unknown` is only ever the operator's). */
export const PING_STATUSES = ['ready', 'occupied', 'terminating', 'terminated'] as const satisfies readonly PingStatus[];
export type ReportedPingStatus = (typeof PING_STATUSES)[number];
/** A running game server's ping, what the forwarders resync: every reported status but the last, `terminated`. */
export type LivePingStatus = Exclude<ReportedPingStatus, 'terminated'>;

const ERROR_WAITING_REASONS = new Set([
  'ErrImageNeverPull', 'ErrImagePullBackOff', 'ImagePullBackOff', 'ErrInvalidImageName', 'ErrImagePull',
  'CrashLoopBackOff', 'RunContainerError', 'ContainerStatusUnknown', 'CreateContainerConfigError', 'CreateContainerError',
]);

export interface Instance { status: InstanceStatus; reason?: string }

/** The instance reason of a pod that runs but is not Ready. */
export const CONTAINERS_NOT_READY = 'containers not ready';

/** The instance status of a pod, checked in Maestro's order. A missing pod is `unknown`. */
export function instanceFromPod(pod: V1Pod | undefined): Instance {
  if (!pod) return { status: 'unknown' };
  if (pod.metadata?.deletionTimestamp) return { status: 'terminating' };
  const phase = pod.status?.phase;
  if (phase === 'Succeeded') return { status: 'terminating' };
  if (phase === 'Failed' || phase === 'Unknown') {
    // The kubelet gives a pod whose container exited (restartPolicy Never) no reason of its own:
    // the container's exit (its reason and exit code) says why.
    const why = [pod.status?.reason, pod.status?.message].filter(Boolean).join(': ') || failedContainer(pod);
    return { status: 'error', reason: why ? `pod phase ${phase}: ${why}` : `pod phase ${phase}` };
  }
  for (const cs of pod.status?.containerStatuses ?? []) {
    const waiting = cs.state?.waiting;
    if (waiting?.reason && ERROR_WAITING_REASONS.has(waiting.reason)) {
      return { status: 'error', reason: `${waiting.reason}: ${waiting.message ?? ''}`.trim() };
    }
  }
  for (const cs of pod.status?.containerStatuses ?? []) {
    const terminated = cs.state?.terminated;
    if (terminated) {
      if (terminated.reason === 'Completed' || terminated.exitCode === 0) return { status: 'terminating' };
      return { status: 'error', reason: containerExit(cs.name, terminated) };
    }
  }
  for (const c of pod.status?.conditions ?? []) {
    if (c.status === 'False' && c.type !== 'Ready' && c.type !== 'ContainersReady') {
      return { status: 'pending', reason: [c.reason, c.message].filter(Boolean).join(': ') || undefined };
    }
  }
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return { status: 'ready' };
  if (phase === 'Pending' || phase === undefined) return { status: 'pending' };
  if (phase === 'Running') return ready?.status === 'False' ? { status: 'pending', reason: CONTAINERS_NOT_READY } : { status: 'ready' };
  return { status: 'error', reason: `pod phase ${phase}` };
}

function containerExit(name: string, terminated: V1ContainerStateTerminated): string {
  return `container ${name} terminated: ${terminated.reason ?? 'Error'} (exit code ${terminated.exitCode})`;
}

/** The first container that ended with a failure, as containerExit says it, if one did. */
function failedContainer(pod: V1Pod): string | undefined {
  for (const cs of pod.status?.containerStatuses ?? []) {
    const terminated = cs.state?.terminated;
    if (terminated && terminated.exitCode !== 0) return containerExit(cs.name, terminated);
  }
  return undefined;
}

/**
 * When every container of the pod was running, epoch ms: the latest `state.running.startedAt`.
 * Undefined while a container has not started (the pod waits for its node, image or kubelet), and
 * for a pod that is missing or has no container statuses.
 */
export function podStartedAt(pod: V1Pod | undefined): number | undefined {
  const statuses = pod?.status?.containerStatuses ?? [];
  if (statuses.length === 0) return undefined;
  let latest = 0;
  for (const cs of statuses) {
    const at = toMillis(cs.state?.running?.startedAt);
    if (at === undefined) return undefined;
    latest = Math.max(latest, at);
  }
  return latest;
}

/**
 * When the pod's Ready condition turned False (its lastTransitionTime), epoch ms, as its kubelet
 * reports it; undefined while it is not False, and when kube-controller-manager marked it so
 * (reason NodeNotReady: its node's heartbeats stopped reaching the API server, an outage included).
 */
export function podNotReadySince(pod: V1Pod | undefined): number | undefined {
  const ready = pod?.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'False' && ready.reason !== 'NodeNotReady' ? toMillis(ready.lastTransitionTime) : undefined;
}

/**
 * A room the health check marked silent (`status.silentSince`: no ping seen for the silence
 * timeout) and that is not being deleted: what the silent counts (status.rooms.silent,
 * `roomsSilent`, roomkeeper_scheduler_rooms_silent) count.
 */
export function isMarkedSilent(room: GameRoom): boolean {
  return room.status?.silentSince !== undefined && !room.metadata.deletionTimestamp;
}

/**
 * A room whose deletion has begun (its GameRoom has a deletionTimestamp) reads `terminating` until
 * it is gone, whatever its game server still says; `error` and `terminated` say more and stay.
 */
export function whileDeleting(status: GameRoomStatusValue, deleting: boolean): GameRoomStatusValue {
  return deleting && status !== 'error' && status !== 'terminated' ? 'terminating' : status;
}

/**
 * Whether a room whose last ping said `previous` may report `next` (Maestro's
 * `validStatusTransitions`, and the spec: a terminating room accepts no new players). Nothing but
 * `terminated` follows `terminating`, and nothing follows `terminated`; a repeat is always allowed.
 */
export function pingFollows(previous: PingStatus | undefined, next: ReportedPingStatus): boolean {
  if (previous === 'terminated') return next === 'terminated';
  if (previous === 'terminating') return next === 'terminating' || next === 'terminated';
  return true;
}

/** Maestro's composition table: ping status x instance status -> room status. */
export function composeRoomStatus(ping: PingStatus, instance: InstanceStatus): RoomStatus {
  if (instance === 'error') return 'error';
  if (ping === 'terminated') return 'terminated';
  if (ping === 'terminating' || instance === 'terminating') return 'terminating';
  if (instance === 'unknown' || instance === 'pending') return 'pending';
  // instance ready
  if (ping === 'unknown') return 'unready';
  return ping; // ready | occupied
}

/** Maestro's bounds of `matchAllocation.maxMatches`; 1 (the default) is a single-match room. */
const MIN_MAX_MATCHES = 1;
const MAX_MAX_MATCHES = 35;

/**
 * The maxMatches a scheduler's rooms run with: its active version's `matchAllocation.maxMatches`
 * (a minor field, so every room, of any version, runs with the active version's), never a spec
 * change that is not a version (being validated, or refused). Before the first version exists
 * it falls back to the spec, as `activeDefinition` says; 1 without a scheduler. Cheap (cache
 * reads only): the ping path calls it once a ping. The operator and the gateway read it here
 * only, so rooms, pings, allocation, counts and autoscaling agree.
 */
export function roomsMaxMatches(scheduler: Scheduler | undefined, findVersion: FindVersion): number {
  return scheduler ? maxMatchesOf(activeDefinition(scheduler, findVersion)) : 1;
}

/** A definition's `matchAllocation.maxMatches`, 1 when absent (or out of bounds: the CRD refuses those). */
export function maxMatchesOf(spec: { matchAllocation?: { maxMatches?: number } } | undefined): number {
  const n = spec?.matchAllocation?.maxMatches;
  return typeof n === 'number' && Number.isInteger(n) && n >= MIN_MAX_MATCHES && n <= MAX_MAX_MATCHES ? n : 1;
}

/**
 * Maestro's multi-match composition (maestro-behaviour.md §3.3, `rooms/status.go`): for a scheduler
 * with maxMatches > 1, a composed `ready` or `occupied` becomes `ready` with no running match,
 * `occupied` with maxMatches or more, and `active` in between. Single-match rooms are unchanged.
 */
export function composeMatchStatus(composed: RoomStatus, runningMatches: number, maxMatches: number): RoomStatus {
  if (maxMatches <= 1 || (composed !== 'ready' && composed !== 'occupied')) return composed;
  if (runningMatches < 1) return 'ready';
  return runningMatches >= maxMatches ? 'occupied' : 'active';
}

/**
 * The status a ping gives a room as the cache shows it: Maestro's composition with its instance
 * status, then the multi-match rule (ready, active, occupied by running matches), a held
 * allocation (a `ready` stays `allocated`), and a deletion under way (`terminating`). The gateway
 * writes it, and tells it to the forwarders.
 */
export function pingedRoomStatus(room: GameRoom, ping: { status: PingStatus; runningMatches: number }, maxMatches: number, now: number): GameRoomStatusValue {
  const composed = composeMatchStatus(composeRoomStatus(ping.status, room.status?.instanceStatus ?? 'unknown'), ping.runningMatches, maxMatches);
  return whileDeleting(withAllocation(composed, room.status, now), room.metadata.deletionTimestamp !== undefined);
}

/** Rooms that serve players or matchmakers: each offers maxMatches match slots. */
export function isServing(status: string | undefined): boolean {
  return status === 'ready' || status === 'allocated' || status === 'active' || status === 'occupied';
}

/**
 * The matches one serving room counts for, as Maestro's autoscaling counts them with `allocated`
 * counted as running: its reported running matches (an occupied room at least one), plus one for
 * an open allocation, capped at maxMatches. A room that does not serve counts for none. In a
 * single-match scheduler the status alone decides, as it does for the room's status and for the
 * allocate API: a `ready` ping that also reports a running match leaves the room ready, and free.
 */
export function roomMatchCount(room: { status?: string; runningMatches?: number; allocationOpen?: boolean }, maxMatches: number): number {
  if (!isServing(room.status)) return 0;
  const occupied = room.status === 'occupied' ? 1 : 0;
  const reported = maxMatches <= 1 ? occupied : Math.max(occupied, room.runningMatches ?? 0);
  return Math.min(maxMatches, reported + (room.allocationOpen || room.status === 'allocated' ? 1 : 0));
}

/**
 * The match slots of one room the allocate API may offer now: a serving room's maxMatches less its
 * running matches, and none while it holds an open allocation. A room holds one open allocation at
 * a time, so the slots past it are held back until the room reports the match (or the TTL ends):
 * they are neither running matches nor free. Autoscaling's downscale gate counts these free slots.
 */
export function roomFreeSlots(room: { status?: string; runningMatches?: number; allocationOpen?: boolean }, maxMatches: number): number {
  if (room.allocationOpen || room.status === 'allocated') return 0;
  return isServing(room.status) ? maxMatches - roomMatchCount(room, maxMatches) : 0;
}
