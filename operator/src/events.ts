/**
 * The Kubernetes Events the operator tells `kubectl describe`: about a Scheduler (its
 * operations, versions, autoscaling) and about a GameRoom (why it went). Reasons are
 * UpperCamelCase constants, never user input.
 */
import type { GameRoom } from '../../common/src/generated/resources';
import { API_VERSION } from '../../common/src/resources/api-group';
import type { OperatorDeps } from './deps';

export type SchedulerEventReason =
  | 'OperationStarted' | 'OperationFinished' | 'OperationFailed' | 'OperationStopped' | 'OperationCanceled' | 'OperationStuck' | 'OperationRequeued' | 'OperationDeleted'
  | 'VersionCreated' | 'VersionSwitched' | 'VersionsPruned' | 'RolloutProgress' | 'AutoscalingDecision' | 'RoomCountNotDecided'
  | 'RoomsDeletedOutsideRoomkeeper' | 'OrphanedRoomPodsDeleted' | 'RoomsKeptAboveDesired' | 'SilentRoomsCounted' | 'RoomsFailing' | 'RoomsChurning' | 'RoomLostWithPlayers' | 'HostPortsExhausted' | 'StatusVersionRestored' | 'SpecRebasedOnActiveVersion' | 'RoomExpiryHeld' | 'SchedulerRefusedByCRD';

export type RoomEventReason = 'GameRoomCreated' | 'GameRoomReady' | 'GameRoomOccupied' | 'GameRoomDeleted' | 'GameRoomNotManaged';

const WARNINGS: ReadonlySet<string> = new Set(['OperationFailed', 'OperationStuck', 'OperationDeleted', 'RoomCountNotDecided', 'RoomsDeletedOutsideRoomkeeper', 'OrphanedRoomPodsDeleted', 'SilentRoomsCounted', 'RoomsFailing', 'RoomsChurning', 'RoomLostWithPlayers', 'HostPortsExhausted', 'StatusVersionRestored', 'SpecRebasedOnActiveVersion', 'GameRoomNotManaged', 'RoomExpiryHeld', 'SchedulerRefusedByCRD']);

type EventDeps = Pick<OperatorDeps, 'events' | 'caches'>;

/** An Event about a scheduler (cluster-scoped: the Event lives in `default`). */
export function schedulerEvent(deps: EventDeps, schedulerName: string, reason: SchedulerEventReason, action: string, note: string): void {
  if (!deps.events) return;
  const uid = deps.caches.schedulers.get(schedulerName)?.metadata.uid;
  deps.events.record({
    regarding: { apiVersion: API_VERSION, kind: 'Scheduler', name: schedulerName, ...(uid ? { uid } : {}) },
    type: WARNINGS.has(reason) ? 'Warning' : 'Normal', reason, action, note,
  });
}

/** An Event about a room, in its scheduler's namespace. */
export function roomEvent(deps: EventDeps, room: GameRoom, reason: RoomEventReason, action: string, note: string): void {
  if (!deps.events) return;
  const { name, namespace, uid } = room.metadata;
  if (!name || !namespace) return;
  deps.events.record({
    regarding: { apiVersion: API_VERSION, kind: 'GameRoom', name, namespace, ...(uid ? { uid } : {}) },
    type: WARNINGS.has(reason) ? 'Warning' : 'Normal', reason, action, note,
  });
}
