/**
 * Lost rooms as the Scheduler's status records them (`status.lostRooms`), so that what the room
 * status controller saw outlives the leader that saw it. The room status controller is the only
 * writer: it appends a room before it deletes the lost GameRoom. The health check only reads: it
 * names the rooms lost since its last add_rooms in the next add_rooms reason, and marks that
 * operation with the names. Pure rules, no I/O.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { GameRoom, Operation, Scheduler, SchedulerStatusLostRoomsItem } from '../../../../common/src/generated/resources';
import { addWhereAbsent } from '../../../../common/src/kube/json-patch';
import { openAllocation } from '../../../../common/src/rooms/allocation';
import { LOST_ROOMS_ANNOTATION } from '../../../../common/src/resources/labels';
import { OperationDefinition, OperationSourceName } from '../../../../common/src/resources/operation-names';
import type { Autoscaling } from './types';

export type LostRoom = SchedulerStatusLostRoomsItem;

/** How many lost rooms the status keeps (the CRD's `maxItems`): the oldest go first. */
export const MAX_LOST_ROOMS = 20;

/**
 * The JSON Patch (RFC 6902) of the Scheduler's status that records `entry`, given the Scheduler as
 * the cache shows it; undefined when the room is already recorded (a leader that died between this
 * write and the room's deletion left it there). An append needs no resourceVersion, so rooms lost at
 * once never conflict with each other nor with the room counts written meanwhile; the list stays
 * bounded because every append to a full list removes as many of the oldest (the API server
 * refuses a list longer than `maxItems`, when this cache was behind, and the caller decides again on a
 * fresh read).
 * The first record, which creates the list, is conditional on there still being none
 * (`addWhereAbsent`): not on the resourceVersion, which every room count written meanwhile moves.
 */
export function lostRoomPatch(s: Scheduler, entry: LostRoom, max = MAX_LOST_ROOMS): object[] | undefined {
  const current = s.status?.lostRooms;
  if (current?.some((e) => e.name === entry.name)) return undefined;
  if (!current) {
    return s.status ? addWhereAbsent('/status/lostRooms', [entry]) : addWhereAbsent('/status', { lostRooms: [entry] });
  }
  const drop = Math.max(0, current.length + 1 - max);
  return [{ op: 'add', path: '/status/lostRooms/-', value: entry }, ...Array.from({ length: drop }, () => ({ op: 'remove', path: '/status/lostRooms/0' }))];
}

/**
 * What happens to a lost room's place, as the health check decides it (health-controller.ts), for
 * the GameRoom's Event: given the Scheduler as the cache shows it and the autoscaling of its active
 * version. A scheduler gone or being deleted gets no room back (the loss is not recorded); else the
 * next health check adds rooms only while fewer are available than the desired count, which is
 * spec.roomsReplicas or, with autoscaling enabled, what the policy decides.
 */
export function lostRoomPlace(scheduler: string, s: Scheduler | undefined, autoscaling: Autoscaling | undefined): string {
  if (!s) return `no room replaces it: no Scheduler ${scheduler} exists`;
  if (s.metadata.deletionTimestamp) return `no room replaces it: its Scheduler ${scheduler} is being deleted`;
  const adds = 'the health check adds a room in its place (an add_rooms naming it)';
  if (autoscaling && autoscaling.enabled !== false) {
    return `${adds} only if autoscaling (${autoscaling.policy.type}, min ${autoscaling.min}) then wants more rooms than are available; if not, the fleet stays smaller`;
  }
  const replicas = s.spec.roomsReplicas ?? 0;
  if (replicas === 0) return 'no room replaces it: spec.roomsReplicas is 0';
  return `${adds} if fewer than spec.roomsReplicas ${replicas} rooms are available; none while ${replicas} or more are`;
}

/** Whether the room was ever seen with its pod: a room whose pod is then missing was deleted, not late. */
export function podWasSeen(room: GameRoom): boolean {
  return room.status?.instanceStatus !== undefined && room.status.instanceStatus !== 'unknown';
}

/** The final statuses of an operation that did not do its work: its rollback undid what it made. */
const UNDONE: ReadonlySet<string> = new Set(['error', 'canceled', 'evicted']);

/** A room still in the cache that is going by no decision of the operator, and why. */
export interface LeavingRoom {
  name: string;
  why: string;
}

/**
 * Why a room still in the cache is going by no decision of the operator: its pod, seen before, is
 * gone, or is being deleted (kube-apiserver marks a scheduled pod first, also with grace period
 * 0), or its game server pinged `terminating` (the pod cache may not show the pod's deletion yet:
 * separate watches). Undefined for a room the operator is deleting, a validation room, or a room
 * staying.
 */
export function leavingOnItsOwn(room: GameRoom, pod: V1Pod | undefined): string | undefined {
  if (room.metadata.deletionTimestamp || room.spec.validation) return undefined;
  if ((!pod && podWasSeen(room)) || pod?.metadata?.deletionTimestamp) return 'its pod was deleted';
  const ping = room.status?.pingStatus;
  if (ping === 'terminating' || ping === 'terminated') return `its game server pinged ${ping}`;
  return undefined;
}

export interface LostToName {
  /** `name (why)` of each room named, oldest loss first. */
  named: string[];
  /** The names, for the add_rooms' LOST_ROOMS_ANNOTATION. */
  names: string[];
  /** Lost rooms not named (more than `max`, by default as many as the status keeps). */
  more: number;
  /**
   * Whether rooms lost since the last add_rooms may have left the record: it is full, and every
   * room in it was lost since then (the oldest are dropped as new ones come).
   */
  recordFull: boolean;
}

/**
 * The lost rooms the next add_rooms of the health check names, derived from the objects only, so
 * a new leader names what the old one saw: the rooms recorded in `status.lostRooms` after the
 * last add_rooms the health check enqueued (any of its add_rooms, a rollout's included), and the
 * rooms still there that are going on their own (`leaving`, see leavingOnItsOwn: the room status
 * controller is about to record and delete them, and a room's terminating ping, or the pod's
 * deletion, can reach the health check first).
 * Rooms the last add_rooms named (its LOST_ROOMS_ANNOTATION) are not named again. An add_rooms that
 * ended in error, canceled or evicted does not count: the one that does replace the rooms names
 * them. Without such an operation in the history (none yet, or pruned), every recorded room is named.
 */
export function lostToName(recorded: readonly LostRoom[] | undefined, ops: readonly Operation[], leaving: readonly LeavingRoom[], max = MAX_LOST_ROOMS): LostToName {
  // An add_rooms that failed or was stopped replaced nothing for sure: the next one names its rooms again.
  const last = ops
    .filter((op) => op.spec.definitionName === OperationDefinition.AddRooms && op.spec.source === OperationSourceName.Operator && !UNDONE.has(op.status?.status ?? 'pending'))
    .reduce<Operation | undefined>((latest, op) => (!latest || (Date.parse(op.spec.enqueuedAt) || 0) > (Date.parse(latest.spec.enqueuedAt) || 0) ? op : latest), undefined);
  const since = last ? Date.parse(last.spec.enqueuedAt) || 0 : Number.NEGATIVE_INFINITY;
  const namedBefore = new Set((last?.metadata.annotations?.[LOST_ROOMS_ANNOTATION] ?? '').split(',').filter((n) => n !== ''));
  const why = new Map<string, string>();
  const sinceLast = (recorded ?? []).filter((e) => (Date.parse(e.lostAt) || 0) > since);
  for (const e of sinceLast) {
    if (!namedBefore.has(e.name)) why.set(e.name, e.reason);
  }
  for (const room of leaving) {
    if (!why.has(room.name) && !namedBefore.has(room.name)) why.set(room.name, room.why);
  }
  const all = [...why];
  const shown = all.slice(0, max);
  return { named: shown.map(([name, w]) => `${name} (${w})`), names: shown.map(([name]) => name), more: all.length - shown.length, recordFull: sinceLast.length >= MAX_LOST_ROOMS };
}

/**
 * Whether the room's game server had said players or a matchmaker held it when it failed: an
 * `occupied` ping, a running match, or an allocation not yet ended.
 */
export function heldPlayers(room: GameRoom): boolean {
  const status = room.status;
  return status?.pingStatus === 'occupied' || (status?.runningMatches ?? 0) > 0 || openAllocation(status) !== undefined;
}

/**
 * The Warning for a room lost while players or a matchmaker held it (its pod deleted, or gone
 * with its node): what held it, why it went, and what replaces it.
 */
export function lostWithPlayersNote(room: GameRoom, why: string, next: string): string {
  const status = room.status;
  const matches = status?.runningMatches ?? 0;
  const allocation = openAllocation(status);
  const held = [
    ...(status?.pingStatus === 'occupied' ? ['its game server said occupied'] : []),
    ...(matches > 0 ? [`${matches} running ${matches === 1 ? 'match' : 'matches'}`] : []),
    ...(allocation ? [`allocation ${allocation.id} not ended`] : []),
  ].join(', ');
  const where = status?.host ? ` on host ${status.host}` : '';
  return `Room ${room.metadata.name as string}${where} was lost while players or a matchmaker held it (${held}): ${why}, and its matches ended with it; ${next}. `
    + 'A node lost takes every room on it: kubectl get nodes, and kubectl get events -A --field-selector involvedObject.kind=Node; '
    + 'roomkeeper_room_failures_total{cause="pod_deleted",stage="with_players"} counts such rooms';
}
