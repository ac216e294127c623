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

/**
 * `setRunningMatches` is allowed only while the room serves matches, and only once it reported a
 * status: the count travels with a status, and a count kept back for a first status the game server
 * may never report would be acknowledged by nobody.
 */
export function acceptsRunningMatches(status: RoomStatus): status is 'ready' | 'occupied' {
  return status === 'ready' || status === 'occupied';
}

/** The name of a running-matches report in `IllegalTransitionError` (it is no status). */
export const RUNNING_MATCHES_REPORT = 'a running-matches report';

/** What a game server should do instead of a change its room's life does not allow. */
export function transitionAdvice(from: RoomStatus, to: ReportedStatus | typeof RUNNING_MATCHES_REPORT): string {
  if (from === 'terminated') return 'the room already reported terminated, its last ping: send nothing more and exit';
  if (from === 'terminating' && to === RUNNING_MATCHES_REPORT) return 'a terminating room runs no new matches: it may report its matches ending (setRunningMatches with a count no higher than the last), then terminated()';
  if (from === 'terminating') return 'a terminating room takes no new players and runs no new matches: only terminated() may follow';
  if (to === RUNNING_MATCHES_REPORT) return 'running matches go with a status: call ready() (or occupied()) first, then setRunningMatches(n)';
  if (to === 'terminated') return 'call terminating() first and wait for it, then terminated(): Maestro\'s rooms API takes terminated only after terminating';
  return `legal from ${from}: ${LEGAL[from].join(', ')}`;
}

export const MAX_RUNNING_MATCHES = 1_000_000;
