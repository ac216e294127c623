/**
 * One health-controller decision for a scheduler (Maestro §3.4, §6 wrap-up and §7 rolling update):
 * which rooms expired, and how many rooms to add or remove. Pure; the room manager applies it.
 *
 * Normal run: missing rooms are added; surplus rooms are removed (`scale_down`), never more than
 * the available rooms that are not occupied (DESIGN.md "Rooms with players are protected").
 * Rooms marked silent are not counted, up to maxSurge of them (`silentStandIns`): a room is made in
 * place of each, while the silent one stays until it pings again or its ping timeout.
 *
 * Rolling update (any available room of another major than the active version; a minor switch
 * replaces nothing):
 *  - Sized on `target`, the desired count before the autoscaling downscale gate (as Maestro, whose
 *    rolling update skips the gate); the gated count would be the current fleet, surge included.
 *  - surge = computeMaxSurge(maxSurge, desired); upper = desired + surge, capped at the autoscaling
 *    max when given, as Maestro. Unlike Maestro, one room may always surge, even at the max: with
 *    no room to surge an update would never progress. So the fleet may reach max + 1, never more.
 *  - Old-major rooms that are pending or unready serve nobody and are removed at once.
 *  - Old-major ready rooms are removed only while the ready-or-occupied rooms stay >= desired, i.e.
 *    once a batch of new rooms is ready (maxUnavailable 0, as Maestro). Occupied old rooms stay
 *    until their players leave.
 *  - New rooms are added up to `upper` rooms in all, counted after this run's removals (the health
 *    controller applies the removals first and the additions in its next run, so the fleet never
 *    exceeds `upper`), and never more than the new-version rooms still missing, so the update
 *    ends at `desired` rooms.
 *  - Old-major rooms are removed first; surplus new rooms, if the desired count fell meanwhile,
 *    are scaled down (free ones, by amount) once no old room is to be removed: the old rooms left
 *    may be held by players for as long as they play.
 */
import type { RemoveRoomsReason } from '../../../../common/src/resources/operation-names';
import { summarizeFleet, type FleetCounts } from './fleet-summary';
import { chooseRoomsToRemove, hasPlayers, isFree, type RemovalOptions } from './removal-order';
import { standsSilent } from './silence-marks';
import { isOtherMajor } from './version-major';
import type { RoomTimeouts, RoomView, RoomWithReason } from './types';
import { agreeing, counted } from '../../../../common/src/text/counted';

export type RemoveReason = Extract<RemoveRoomsReason, 'scale_down' | 'rolling_update_replace'>;

export interface HealthPlanInput {
  rooms: readonly RoomView[];
  /** The desired count (desired-count.ts `desired`). */
  desired: number;
  /**
   * The desired count before the downscale gate (desired-count.ts `target`); a rolling update
   * sizes its batches on it. Defaults to `desired`.
   */
  target?: number;
  now: number;
  timeouts: RoomTimeouts;
  /** The active version, e.g. `v2.0.0`. */
  activeVersion: string;
  /** Its major; derived from `activeVersion` when absent. */
  activeMajor?: number;
  /** Scheduler `maxSurge`: an integer, a numeric string or a percentage. */
  maxSurge: number | string;
  /** `autoscaling.max` when autoscaling is enabled and bounded (>= 0). */
  autoscalingMax?: number;
  /** The silent rooms stood in for, as the caller counted them for the desired count; computed on `desired` when absent. */
  silent?: SilentStandIns;
}

export interface HealthPlan {
  /** Rooms to remove by id (reason `expired_room`). */
  expired: RoomWithReason[];
  /** Rooms to create, of the active version. */
  add: number;
  /** Rooms to remove by amount. */
  remove: number;
  removeReason: RemoveReason | undefined;
  /** The rooms this plan would remove now, in order; a removal by amount may pick again later. */
  removeRooms: string[];
  rollingUpdate: boolean;
  /** Available rooms (what `desired` is compared with, less `silent.standIns`). */
  available: number;
  /** The available rooms marked silent, and how many of them a room stands in for (`silentStandIns`). */
  silent: SilentStandIns;
  counts: FleetCounts;
  /** During a rolling update: the surge and the upper bound used. */
  surge?: number;
  upper?: number;
  /** During a rolling update: the serving rooms its removals keep (the desired count). */
  keepServing?: number;
  /**
   * Scale-down only, when rooms with players or a matchmaker's claim stand above the desired
   * count: how many (`aboveDesired`), and all such rooms by what holds them (`held`, e.g.
   * `{ allocated: 2 }`). Scale-down never removes them; they go once they are free.
   */
  heldAboveDesired?: { aboveDesired: number; held: Record<string, number> };
}

export function planHealth(input: HealthPlanInput): HealthPlan {
  const { now, timeouts } = input;
  const desired = count(input.desired);
  const fleet = summarizeFleet(input.rooms, now, timeouts);
  const expired = fleet.expired.map((e) => ({ name: e.room.name, reason: e.reason }));
  const rooms = fleet.available;
  const available = rooms.length;
  const active = { activeVersion: input.activeVersion, activeMajor: input.activeMajor };
  const removalOptions = { pingTimeoutMs: timeouts.pingTimeoutMs, ...active };
  const silent = input.silent ?? silentStandIns(rooms, input);
  const base = { expired, available, silent, counts: fleet.counts };

  const isOld = (r: RoomView): boolean => isOtherMajor(r.version, active);
  if (!rooms.some(isOld)) {
    const counted = available - silent.standIns;
    if (counted < desired) {
      return { ...base, add: desired - counted, remove: 0, removeReason: undefined, removeRooms: [], rollingUpdate: false };
    }
    // Rooms with players or a matchmaker's claim (occupied, active, allocated, or said so by a fresh ping while the pod is not ready) are never removed by amount.
    const heldRooms = rooms.filter((r) => !isFree(r, now, timeouts.pingTimeoutMs));
    const remove = Math.min(counted - desired, available - heldRooms.length);
    const removeRooms = chooseRoomsToRemove(rooms, remove, now, removalOptions).remove.map((r) => r.name);
    const aboveDesired = counted - desired - remove;
    const held = aboveDesired > 0 ? { heldAboveDesired: { aboveDesired, held: countHolds(heldRooms) } } : {};
    return { ...base, add: 0, remove, removeReason: remove > 0 ? 'scale_down' : undefined, removeRooms, rollingUpdate: false, ...held };
  }

  // Sized on the count before the downscale gate: see DesiredRooms.target.
  const rollingDesired = input.target === undefined ? desired : count(input.target);
  return { ...base, ...rollingUpdatePlan(rooms, rollingDesired, input, isOld, removalOptions) };
}

function rollingUpdatePlan(
  rooms: readonly RoomView[],
  desired: number,
  input: HealthPlanInput,
  isOld: (r: RoomView) => boolean,
  removalOptions: RemovalOptions,
): Omit<HealthPlan, 'expired' | 'available' | 'silent' | 'counts'> {
  const available = rooms.length;
  const { surge, upper } = rolloutBounds(input.maxSurge, desired, input.autoscalingMax);

  const serving = rooms.filter((r) => r.status === 'ready' || r.status === 'occupied' || r.status === 'allocated' || r.status === 'active').length;
  // An old room whose pod is not ready but whose game server says players are in it is neither
  // serving nor removable: it goes once they leave.
  const oldIdle = rooms.filter((r) => isOld(r) && (r.status === 'pending' || r.status === 'unready') && !hasPlayers(r, input.now, input.timeouts.pingTimeoutMs)).length;
  const oldReady = rooms.filter((r) => isOld(r) && r.status === 'ready').length;
  const remove = oldIdle + Math.min(oldReady, Math.max(0, serving - desired));
  const newRooms = rooms.filter((r) => !isOld(r));
  const add = Math.max(0, Math.min(upper - (available - remove), desired - newRooms.length));
  const bounds = { rollingUpdate: true, surge, upper, keepServing: desired };
  if (remove === 0 && newRooms.length > desired) {
    // Nothing old to replace now (the old rooms left are held by players or a matchmaker, or
    // needed to serve), and more new rooms than desired (the count fell): the surplus free new
    // rooms are scaled down now, not once the held old rooms are free, which may be never.
    const free = newRooms.filter((r) => isFree(r, input.now, input.timeouts.pingTimeoutMs)).length;
    const surplus = Math.min(newRooms.length - desired, free);
    if (surplus > 0) {
      const removeRooms = chooseRoomsToRemove(newRooms, surplus, input.now, removalOptions).remove.map((r) => r.name);
      return { add: 0, remove: surplus, removeReason: 'scale_down', removeRooms, ...bounds };
    }
  }
  const removeRooms = chooseRoomsToRemove(rooms, remove, input.now, { ...removalOptions, otherMajorOnly: true }).remove.map((r) => r.name);
  return {
    add,
    remove,
    removeReason: remove > 0 ? 'rolling_update_replace' : undefined,
    removeRooms,
    rollingUpdate: true,
    surge,
    upper,
    keepServing: desired,
  };
}

export interface SilentStandIns {
  /** Available rooms marked silent and not heard since (silence-marks.ts `standsSilent`). */
  silent: number;
  /** How many of them are not counted towards the desired count: a room is made in place of each. */
  standIns: number;
  /** The most that may be stood in for: maxSurge of the available rooms, within the autoscaling max + 1. */
  bound: number;
  /** What set `bound`: maxSurge, the autoscaling max (when it is the lower), or a rolling update (none then). */
  boundBy?: 'maxSurge' | 'autoscaling.max' | 'rolling update';
}

export interface StandInInput {
  maxSurge: number | string;
  activeVersion: string;
  activeMajor?: number;
  /** `autoscaling.max` when autoscaling is enabled and bounded (>= 0). */
  autoscalingMax?: number;
  /** The desired count the autoscaling max is compared with: the fleet stays within max + 1 at that count. */
  desired?: number;
}

/**
 * The rooms marked silent that the desired count does not count, so that the health check makes a
 * room in place of each: the allocate API offers a silent room no more, and kept until its ping
 * timeout (it may ping again) it would leave its scheduler a room short all that time; a fleet
 * whose game servers all hung answered every allocation 429 for minutes. Agones replaces an
 * Unhealthy game server at once; here the silent room stays too, and the surplus a room heard
 * again makes is scaled down. At most maxSurge of them (computed on the available rooms, as a
 * rolling update's on the desired count), and the fleet stays within the autoscaling max + 1, as
 * during a rolling update (judged on `desired`: the health check passes the count it decided last,
 * as the count it decides now depends on the rooms counted). None while a rolling update runs: its
 * own surge replaces rooms.
 */
export function silentStandIns(available: readonly RoomView[], input: StandInInput): SilentStandIns {
  const silent = available.filter(standsSilent).length;
  const active = { activeVersion: input.activeVersion, activeMajor: input.activeMajor };
  if (silent === 0) return { silent, standIns: 0, bound: 0 };
  if (available.some((r) => isOtherMajor(r.version, active))) return { silent, standIns: 0, bound: 0, boundBy: 'rolling update' };
  const max = input.autoscalingMax;
  const ceiling = max !== undefined && max >= 0 ? Math.max(0, max + 1 - count(input.desired ?? available.length - silent)) : Number.POSITIVE_INFINITY;
  const surge = computeMaxSurge(input.maxSurge, available.length);
  const bound = Math.min(surge, ceiling);
  return { silent, standIns: Math.min(silent, bound), bound, boundBy: ceiling < surge ? 'autoscaling.max' : 'maxSurge' };
}

/**
 * The counts a health check's decision names: `3 available of 2 desired`, and the silent rooms it
 * did not count (`, 1 of them marked silent and not counted: a room is made in its place while it
 * stays until it pings again or its ping timeout`), with those beyond the bound.
 */
export function availableWords(plan: Pick<HealthPlan, 'available' | 'silent'>, desired: number): string {
  const counts = `${plan.available} available of ${count(desired)} desired`;
  const { silent, standIns, boundBy } = plan.silent;
  if (silent > 0 && standIns === 0 && boundBy === 'autoscaling.max') return `${counts}, ${counted(silent, 'room')} marked silent and counted: no room is made in their place, as the fleet would pass autoscaling.max + 1`;
  if (standIns === 0) return counts;
  const w = agreeing(standIns);
  const beyond = silent > standIns ? ` (${beyondBound(plan.silent)})` : '';
  return `${counts}, ${standIns} of them marked silent and not counted: a room is made in ${w.its} place while ${w.it} stay${w.s} until ${w.it} ping${w.s} again or ${w.its} ping timeout${beyond}`;
}

/** `1 more marked silent is counted: at most 1 is stood in for at once, maxSurge, 1, of the available rooms`. */
function beyondBound({ silent, standIns, bound, boundBy }: SilentStandIns): string {
  const more = silent - standIns;
  const limit = boundBy === 'autoscaling.max' ? 'the fleet stays within autoscaling.max + 1' : `maxSurge, ${bound}, of the available rooms`;
  return `${more} more marked silent ${agreeing(more).is} counted: at most ${bound} ${agreeing(bound).is} stood in for at once, ${limit}`;
}

/**
 * When rooms marked silent are counted because the bound is reached (`silentStandIns`): the words
 * of the health check's SilentRoomsCounted Event, e.g. `2 rooms marked silent, 1 stood in for (1
 * more marked silent is counted: …): the ones counted are neither allocated nor replaced until
 * they ping again or their ping timeout, so the scheduler serves with fewer rooms than it counts
 * …`; `undefined` when every silent room is stood in for.
 */
export function silentCountedNote(plan: Pick<HealthPlan, 'silent'>): string | undefined {
  const { silent, standIns, boundBy } = plan.silent;
  // A rolling update replaces rooms with its own surge; the Ready condition says none is stood in for meanwhile.
  if (silent <= standIns || boundBy === 'rolling update') return undefined;
  const raise = boundBy === 'autoscaling.max' ? 'raise autoscaling.max' : 'raise the scheduler\'s maxSurge';
  const w = agreeing(silent - standIns);
  return `${counted(silent, 'room')} marked silent, ${standIns} stood in for (${beyondBound(plan.silent)}): the ${w.one} counted ${w.is} neither allocated nor replaced until ${w.it} ping${w.s} again or ${w.its} ping timeout, so the scheduler serves with fewer rooms than it counts; kubectl get rkgr -o wide shows the silent ones (SILENT); ${raise} to stand in for more`;
}

/** Why a scale-down keeps a room with players or a matchmaker's claim, told wherever it keeps one. */
const HELD_RULE = 'scale-down never removes such a room; the health check removes it once it is free';

/** The rooms held by players or a matchmaker, by what holds them: `2 rooms held by … (2 allocated)`. */
export function heldRoomsWords(held: Record<string, number>): string {
  const total = Object.values(held).reduce((a, b) => a + b, 0);
  const parts = Object.entries(held).map(([hold, n]) => `${n} ${hold}`).join(', ');
  return `${counted(total, 'room')} held by players or a matchmaker (${parts})`;
}

/**
 * A scale-down's words for the rooms it keeps above the desired count, e.g. `kept 2 rooms held by
 * players or a matchmaker (2 allocated), 1 above the desired count of 1: …`; `{}` when none.
 */
export function keptNote(plan: HealthPlan, desired: number): { kept?: string } {
  const h = plan.heldAboveDesired;
  if (!h) return {};
  return { kept: `kept ${heldRoomsWords(h.held)}, ${h.aboveDesired} above the desired count of ${count(desired)}: ${HELD_RULE}` };
}

/**
 * When every room above the desired count is held by players or a matchmaker, so the plan removes
 * none and enqueues no remove_rooms to tell it: the words of the health check's
 * RoomsKeptAboveDesired Event, e.g. `3 rooms, 1 desired: kept 3 rooms held by players or a
 * matchmaker (3 allocated), 2 above the desired count, and removed none: …`, in the terms of
 * `keptNote`; `undefined` otherwise (nothing above the desired count, or a removal tells it).
 */
export function keptAboveDesiredNote(plan: HealthPlan, desired: number): string | undefined {
  const h = plan.heldAboveDesired;
  if (!h || plan.remove > 0) return undefined;
  const rooms = counted(plan.available, 'room');
  return `${rooms}, ${count(desired)} desired: kept ${heldRoomsWords(h.held)}, ${h.aboveDesired} above the desired count, and removed none: ${HELD_RULE}`;
}

/** Rooms that are not free, by what holds them: their status, else an open allocation or a fresh ping's word. */
function countHolds(rooms: readonly RoomView[]): Record<string, number> {
  const held: Record<string, number> = {};
  for (const r of rooms) {
    const hold = r.status === 'allocated' || r.status === 'active' || r.status === 'occupied'
      ? r.status
      : r.allocationOpen === true ? `${r.status} with an open allocation` : `${r.status} with players by its last ping`;
    held[hold] = (held[hold] ?? 0) + 1;
  }
  return held;
}

function count(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0;
}

/**
 * Maestro's `ComputeMaxSurge`: "N" or N -> N; "N%" -> ceil(N/100 × desired); a result <= 0 or an
 * unreadable value -> 1.
 */
/**
 * A rolling update's surge and upper bound of rooms for `desired` rooms: desired + maxSurge,
 * capped at the autoscaling max, except that one room may always surge (else no progress): the
 * fleet never exceeds max + 1 during an update.
 */
export function rolloutBounds(maxSurge: number | string | undefined, desired: number, autoscalingMax: number | undefined): { surge: number; upper: number } {
  const surge = computeMaxSurge(maxSurge, desired);
  const cap = autoscalingMax !== undefined && autoscalingMax >= 0 ? Math.max(autoscalingMax, Math.min(desired, autoscalingMax) + 1) : Number.POSITIVE_INFINITY;
  return { surge, upper: Math.min(desired + surge, cap) };
}

export function computeMaxSurge(maxSurge: number | string | undefined, desired: number): number {
  let surge = Number.NaN;
  if (typeof maxSurge === 'number') {
    surge = Math.floor(maxSurge);
  } else if (typeof maxSurge === 'string') {
    const text = maxSurge.trim();
    const percent = /^(\d+(?:\.\d+)?)%$/.exec(text);
    if (percent?.[1]) {
      // Subtract a hair so 7% of 100 is 7, not 8 from 7.000000000000001.
      surge = Math.ceil((Number(percent[1]) * Math.max(0, desired)) / 100 - 1e-9);
    } else if (/^\d+$/.test(text)) {
      surge = Number(text);
    }
  }
  return Number.isFinite(surge) && surge > 0 ? surge : 1;
}
