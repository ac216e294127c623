/**
 * The shapes the pure room rules work on. The resource types come from the CRDs
 * (common/src/generated/resources.ts); `RoomView` is the operator's flattened view of one room,
 * built by the I/O layer from a GameRoom and its Pod, with times as epoch milliseconds.
 */
import type { PingStatus, RoomStatus } from '../../../../common/src/generated/resources';

export type {
  Autoscaling, Container, PortRange, RoomStatus, SchedulerSpec,
} from '../../../../common/src/generated/resources';

/** One room as the health controller and the remove rules see it. */
export interface RoomView {
  /** The room id: the GameRoom's and the Pod's name. */
  name: string;
  /** The composed room status (common/src/rooms/room-status.ts). */
  status: RoomStatus;
  /** Why the room is in error or still pending (its GameRoom's `status.reason`), for people. */
  reason?: string;
  /** Matches the room reported running (multi-match rooms); absent counts as none. */
  runningMatches?: number;
  /** An allocation the operator has not ended holds a match slot of the room (counted as one running match). */
  allocationOpen?: boolean;
  /** The scheduler version the room was made from, e.g. `v1.2.0`. */
  version: string;
  /** When the room was created, epoch ms. */
  createdAt: number;
  /**
   * When the room's pod had every container running (the latest container start), epoch ms;
   * absent while the pod waits for the cluster (not yet scheduled, pulling its image, or not yet
   * started by its kubelet) and when the room has no pod.
   */
  startedAt?: number;
  /**
   * When its pod's Ready condition turned False, epoch ms, while it is False on a node whose own
   * Ready condition is True (so the kubelet, not a lost node, says the pod is not ready); absent
   * otherwise.
   */
  notReadySince?: number;
  /** Server time of the last ping received, epoch ms; absent when the room never pinged. */
  lastPingAt?: number;
  /** The operator marked the room silent (`status.silentSince`, domain/silence-marks.ts): its last ping then, epoch ms. */
  silentSince?: number;
  /**
   * What the game server last reported (`status.pingStatus`), whatever its pod says: a room whose
   * pod is marked not ready composes `pending`, yet it may still report `occupied`.
   */
  pingStatus?: PingStatus;
  /** The room is being deleted (its Pod or GameRoom has a deletionTimestamp). */
  terminating: boolean;
  /** When the deletion started (deletionTimestamp minus grace period, or when we asked), epoch ms. */
  terminatingSince?: number;
  /** A validation room of a new version; never part of the fleet. */
  validation: boolean;
  /**
   * The GameRoom's resourceVersion this view was made from: a removal decided on the view carries
   * it as precondition, so a room allocated (or occupied) since is kept.
   */
  resourceVersion?: string;
}

/** Expiry timeouts (Maestro §3.4 defaults: init 120 s, ping 240 s, deletion 120 s). */
export interface RoomTimeouts {
  /**
   * A pending or unready room that never pinged, whose pod started longer ago than this, is expired
   * (counted from the pod's start; an unready room with no known start counts from creation); so
   * is a room that pinged but whose pod has not been ready for this long on a ready node, unless
   * its game server said it has players.
   */
  initTimeoutMs: number;
  /** A room that is not pending, or pending after it pinged, and has not pinged for this long is expired. */
  pingTimeoutMs: number;
  /** A terminating room that is still there after this long is expired. */
  deletionTimeoutMs: number;
}

/** Maestro's defaults for `RoomTimeouts` (config.yaml `services.roomManager.*`). */
export const DEFAULT_ROOM_TIMEOUTS: Readonly<RoomTimeouts> = Object.freeze({
  initTimeoutMs: 120_000,
  pingTimeoutMs: 240_000,
  deletionTimeoutMs: 120_000,
});

/** A room's name and why a rule picked it, for history entries and logs. */
export interface RoomWithReason {
  name: string;
  reason: string;
}
