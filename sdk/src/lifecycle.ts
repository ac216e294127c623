/**
 * The statuses a room reports and which changes are legal, decided without I/O.
 *
 *   starting ─▶ ready ⇄ occupied
 *      │          │        │
 *      └──────────┴────────┴─▶ terminating ─▶ terminated
 *
 * `starting` is the SDK's own name for "nothing reported yet"; it is never sent.
 */
export type ReportedStatus = 'ready' | 'occupied' | 'terminating' | 'terminated';
export type RoomStatus = 'starting' | ReportedStatus;

const LEGAL: Record<RoomStatus, readonly ReportedStatus[]> = {
  starting: ['ready', 'occupied', 'terminating'],
  ready: ['ready', 'occupied', 'terminating'],
  occupied: ['ready', 'occupied', 'terminating'],
  terminating: ['terminating', 'terminated'],
  terminated: [],
};

export function isLegalTransition(from: RoomStatus, to: ReportedStatus): boolean {
  return LEGAL[from].includes(to);
}

/** `setRunningMatches` is allowed only while the room serves matches. */
export function acceptsRunningMatches(status: RoomStatus): boolean {
  return status === 'starting' || status === 'ready' || status === 'occupied';
}

export const MAX_RUNNING_MATCHES = 1_000_000;
