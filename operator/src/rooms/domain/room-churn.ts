/**
 * Rooms that keep failing after their game server pinged (pure). A release whose game server
 * crashes a little while after it starts (trial Q, 2026-12-06: exit code 1 twenty seconds after
 * the first ping) never trips RoomsFailing (failing-rooms.ts: rooms that fail before they ever
 * ping): every room pinged, so the version "works", and the health check replaces each failed room
 * at once. The room counts stay whole, Ready stays True, and players lose their matches. Here the
 * failures themselves are counted: rooms of the active major that failed (in error, or expired for
 * their silence) after they had pinged, within the last CHURN_WINDOW_MS, as this replica saw them
 * fail (room-failures.ts). Rooms whose pod was deleted (a node lost, kubectl delete pod) are left
 * out: no fault of the game server.
 *
 * The mark is a quarter of the desired count, at least CHURN_MIN and at most CHURN_MAX: a game
 * server that crashes now and then during a match does not reach it; a release whose rooms each
 * crash within the window does, whatever the fleet's size.
 */
import { counted } from '../../../../common/src/text/counted';
import { isOtherMajor } from './version-major';

export const CHURN_WINDOW_MS = 10 * 60_000;
const CHURN_MIN = 3;
/** Past this, a fleet of any size churns: 500 rooms failing after they started in 10 minutes is no accident. It stays below what room-failures.ts keeps per scheduler. */
export const CHURN_MAX = 500;
const CHURN_SHARE = 0.25;

/** How a room failed: `error` (its pod failed or a container exited with an error), `expired` (no ping, or no readiness, within its timeout), `pod_deleted` (its pod went: deleted, or its node lost). */
export const ROOM_FAILURE_CAUSES = ['error', 'expired', 'pod_deleted'] as const;
export type RoomFailureCause = (typeof ROOM_FAILURE_CAUSES)[number];

export interface RoomFailure {
  room: string;
  version: string;
  cause: RoomFailureCause;
  /** Whether its game server had pinged before it failed. */
  pinged: boolean;
  /** Whether players or a matchmaker held it when it failed (an occupied ping, a running match, an open allocation). */
  withPlayers: boolean;
  /** When it failed (seen by this replica) and when it was made, epoch ms. */
  at: number;
  createdAt: number;
  /** Why, for people: the room's status reason, or its expiry reason. */
  why?: string;
}

export interface Churn {
  /** Whether the failures reach the mark. */
  churning: boolean;
  /** The failures after a ping of the active major in the window, newest first. */
  failed: RoomFailure[];
  mark: number;
  desired: number;
  windowMs: number;
  /** When this replica began to see failures (its start as leader): the window reaches no further back. */
  since: number;
}

/** The mark for a fleet of `desired` rooms. */
export function churnMark(desired: number): number {
  return Math.min(CHURN_MAX, Math.max(CHURN_MIN, Math.ceil(Math.max(0, desired) * CHURN_SHARE)));
}

/**
 * The active version's rooms' failures after a ping (of this scheduler, any order), of the active
 * major, at or after `now - windowMs`, and whether they reach the mark (they churn).
 */
export function roomChurn(
  failures: readonly RoomFailure[],
  active: { activeVersion: string },
  desired: number,
  now: number,
  since: number,
  windowMs = CHURN_WINDOW_MS,
): Churn {
  const from = now - windowMs;
  const failed = failures
    .filter((f) => f.pinged && f.cause !== 'pod_deleted' && f.at >= from && !isOtherMajor(f.version, active))
    .sort((a, b) => b.at - a.at);
  const mark = churnMark(desired);
  return { churning: failed.length >= mark, failed, mark, desired, windowMs, since };
}

const minutes = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);
const seconds = (ms: number): string => `${Math.max(0, Math.round(ms / 1000))} s`;

const markWords = (churn: Churn): string => `the mark is ${churn.mark}: a quarter of the ${churn.desired} desired rooms, at least ${CHURN_MIN} and at most ${CHURN_MAX}`;

/** RoomsChurning False's words: how many failed after a ping, and the mark they stay below. */
export function describeCalm(churn: Churn, activeVersion: string): string {
  const counting = `the operator counts the failures it sees from when it began to lead, ${new Date(churn.since).toISOString()}`;
  return `${counted(churn.failed.length, 'room')} of ${activeVersion} failed after their game server pinged in the last ${minutes(churn.windowMs)} (${counting}), fewer than the mark (${markWords(churn)})`;
}

/**
 * What churns and what to do, for the RoomsChurning condition and Warning Event, e.g. `rooms of
 * v1.2.0 keep failing after their game server pinged: 12 rooms between 2026-12-06T23:30:02.000Z and
 * 2026-12-06T23:39:40.000Z (11 in error, 1 expired: …; the mark is 5: …); newest r-1, 21 s
 * after it was made: pod phase Failed: …`. Every count is of what the leading replica saw.
 */
export function describeChurn(churn: Churn, schedulerName: string, activeVersion: string): string {
  const newest = churn.failed[0] as RoomFailure;
  const inError = churn.failed.filter((f) => f.cause === 'error').length;
  const expired = churn.failed.length - inError;
  const how = [...(inError > 0 ? [`${inError} in error`] : []), ...(expired > 0 ? [`${expired} expired: their pings stopped, or their pod was not ready, for a timeout`] : [])].join(', ');
  const players = churn.failed.filter((f) => f.withPlayers).length;
  const held = players > 0 ? `; ${players} of them held players or a matchmaker's allocation` : '';
  const why = newest.why ? `: ${newest.why}` : '';
  const oldest = churn.failed[churn.failed.length - 1] as RoomFailure;
  const between = `between ${new Date(oldest.at).toISOString()} and ${new Date(newest.at).toISOString()}`;
  return `rooms of ${activeVersion} keep failing after their game server pinged: ${counted(churn.failed.length, 'room')} ${between} (${how}${held}; `
    + `${markWords(churn)}); newest ${newest.room}, ${seconds(newest.at - newest.createdAt)} after it was made${why}. `
    + 'The health check replaces each failed room, so the room counts look whole while the matches on them end. '
    + `Read a failed room's game server log (kubectl -n ${schedulerName} logs <room>; the newest rooms in error are kept until their ping timeout), `
    + `then fix the game server in a new version (POST /schedulers/${schedulerName} with the fixed definition, or kubectl edit scheduler ${schedulerName}), `
    + `or switch back to a version that worked: PUT /schedulers/${schedulerName} with {"version": "<version>"} (GET /schedulers/${schedulerName}/versions lists them)`;
}
