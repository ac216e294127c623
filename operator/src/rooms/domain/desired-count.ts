/**
 * How many rooms a scheduler should have (Maestro §6, `GetDesiredNumberOfRooms` and the health
 * controller's downscale check):
 *  - no autoscaling, or `enabled: false`: `roomsReplicas`;
 *  - `roomOccupancy`: ceil(occupied / (1 - readyTarget)), clamped to [min, max] (max -1 = unbounded);
 *  - `fixedBuffer`: occupied + amount, clamped the same way.
 * A downscale decided by a policy must also pass the gate, else the count stays at `available`:
 *  - roomOccupancy only: desiredFreeSlots / freeSlots <= downThreshold (default 0.99), where
 *    desiredFreeSlots = ceil(desired × readyTarget) and freeSlots = the ready rooms;
 *  - every policy: the cooldown has passed (now > lastDownscaleAt + cooldown seconds).
 * Multi-match schedulers (maxMatches > 1) use Maestro's match formulas (§6), with `allocated`
 * counted as running:
 *  - runningMatches = the rooms' running matches + open allocations (`counts.matches`);
 *  - freeSlots = the slots the allocate API may offer now (`counts.freeSlots`): the match slots of
 *    the serving rooms less runningMatches, and less the slots a room holds back behind its open
 *    allocation (one a room: its next slot is offered once the match is reported). Maestro counts
 *    an allocated room's slots as free; counting slots the allocate API will not offer would let
 *    the gate remove the rooms it can offer from and leave matchmakers with 429s. The desired count
 *    keeps Maestro's formula (held-back slots are neither running nor free): they come back within
 *    a match report, and adding rooms for them would grow the fleet on every burst of allocations;
 *  - desiredMatches = ceil(runningMatches / (1 - readyTarget)), desired = ceil(desiredMatches / maxMatches);
 *  - the gate compares desiredFreeSlots = ceil(desired × maxMatches × readyTarget) with freeSlots.
 * With maxMatches 1 these are the single-match formulas above (an occupied or allocated room is
 * one running match, a ready room one free slot). fixedBuffer counts rooms in use (occupied,
 * active, allocated) + amount.
 */
import type { Autoscaling } from './types';
import { counted } from '../../../../common/src/text/counted';

/** Maestro's default `downThreshold` when it is omitted or 0 (PR #619). */
const DEFAULT_DOWN_THRESHOLD = 0.99;

export interface RoomCountsInput {
  ready: number;
  occupied: number;
  /** Allocated rooms count as occupied (Maestro's autoscaling does the same). */
  allocated?: number;
  /** Multi-match rooms with free slots and at least one match. */
  active?: number;
  /** Running matches + open allocations (FleetCounts.matches); absent: occupied + allocated (single-match). */
  matches?: number;
  /** Match slots of the serving rooms (FleetCounts.matchSlots); absent: the serving rooms × maxMatches. */
  matchSlots?: number;
  /** Slots the allocate API may offer now (FleetCounts.freeSlots); absent: matchSlots − matches. */
  freeSlots?: number;
  pending?: number;
  unready?: number;
  terminating?: number;
  error?: number;
}

export interface DesiredRoomsInput {
  roomsReplicas?: number;
  autoscaling?: Autoscaling;
  /** The scheduler's matchAllocation.maxMatches (default 1). */
  maxMatches?: number;
  /** Counts of the fleet's rooms by status (validation rooms excluded). */
  counts: RoomCountsInput;
  /** The available rooms (not error, not terminating, not expired): what a downscale compares to. */
  available: number;
  now: number;
  /** When the last downscale decided by autoscaling happened, epoch ms. */
  lastDownscaleAt?: number;
  /**
   * The most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER, issue 12 M4): the
   * gateway refuses a count above it. A roomsReplicas above it written with kubectl is refused
   * here as the gateway refuses it: the fleet is kept as it is, and the reason says which field to
   * fix. An autoscaling.min above it is refused by the version operation (new-version.ts), so the
   * `autoscaling` given here (the active version's) has one above it only when the limit was
   * lowered after that version was made: the fleet is kept too, and the reason says so. An
   * autoscaling decision above it (autoscaling.max -1, or above the limit) is capped at it.
   */
  maxRooms?: number;
  /**
   * The count last decided (`status.autoscaling.desired`). While the spec's count cannot be acted on (a
   * count above the limit, an unusable policy) it is kept: keeping the current fleet instead would
   * let a rolling update in progress surge above it on every run, and take that as the new count.
   */
  lastDesired?: number;
}

export interface DesiredRooms {
  desired: number;
  /**
   * The count before the downscale gate (equal to `desired` unless the gate held a downscale).
   * A rolling update sizes its batches on this (Maestro's rolling update skips the gate): sizing
   * them on the held count, which is the current fleet, would grow the fleet on every run.
   */
  target: number;
  /** Why, for the scheduler status and history. */
  reason: string;
  /**
   * False when a downscale was wanted and the gate (threshold or cooldown) held it back; then
   * `desired` is `available`. True otherwise.
   */
  downscaleAllowed: boolean;
  /**
   * True when autoscaling decided a downscale now (desired < available): when the health plan
   * then removes rooms for `scale_down`, the caller records `now` as
   * `status.autoscaling.lastDownscaleAt` so the cooldown starts.
   */
  recordDownscale: boolean;
  /** Set when the autoscaling settings cannot be used; `desired` then keeps the fleet as it is. */
  error?: string;
}

/** The desired number of rooms. Pure; the caller persists `lastDownscaleAt` when `recordDownscale`. */
export function desiredRooms(input: DesiredRoomsInput): DesiredRooms {
  const max = input.maxRooms;
  if (max === undefined) return uncappedDesiredRooms(input);
  const refused = countAboveLimit(input, max);
  if (refused !== undefined) {
    const kept = keptCount(input);
    const above = `${refused.field} ${refused.value} is above ${max}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER)`;
    const reason = refused.field === 'spec.roomsReplicas'
      ? `${above}: the spec is refused, as the gateway refuses it, and the fleet keeps ${keptWords(input, kept)}; set it to at most ${max}`
      // The version operation refuses a min above the limit, so the active version was made under a higher one.
      : `${above}, which was lowered after that version was made: no count is decided and the fleet keeps ${keptWords(input, kept)}; `
        + `set spec.autoscaling.min to at most ${max} (a new version), or raise ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER to at least ${refused.value}`;
    return { desired: kept, target: kept, reason, downscaleAllowed: false, recordDownscale: false, error: `${refused.field} ${refused.value} is above ${max}` };
  }
  const decision = uncappedDesiredRooms(input);
  if (decision.desired <= max) return decision;
  return { ...decision, desired: max, target: Math.min(decision.target, max), reason: `${decision.reason}; capped at ${max}, the most rooms one scheduler may have` };
}

/** The count kept while the spec's count cannot be acted on: the last decided one, else the fleet's. */
function keptCount(input: DesiredRoomsInput): number {
  return input.lastDesired === undefined ? nonNegativeInt(input.available) : nonNegativeInt(input.lastDesired);
}

function keptWords(input: DesiredRoomsInput, kept: number): string {
  return input.lastDesired === undefined ? `its ${counted(kept, 'room')}` : `the desired count last decided, ${counted(kept, 'room')}`;
}

/** The field, and its value, of a count asked for above the limit (see `maxRooms`). */
function countAboveLimit(input: DesiredRoomsInput, max: number): { field: string; value: number } | undefined {
  const autoscaling = input.autoscaling;
  if (!autoscaling || autoscaling.enabled === false) {
    const replicas = input.roomsReplicas ?? 0;
    return replicas > max ? { field: 'spec.roomsReplicas', value: replicas } : undefined;
  }
  return autoscaling.min > max ? { field: "the active version's autoscaling.min", value: autoscaling.min } : undefined;
}

function uncappedDesiredRooms(input: DesiredRoomsInput): DesiredRooms {
  const available = nonNegativeInt(input.available);
  const autoscaling = input.autoscaling;
  if (!autoscaling || autoscaling.enabled === false) {
    const replicas = nonNegativeInt(input.roomsReplicas ?? 0);
    const reason = autoscaling ? `autoscaling disabled; roomsReplicas is ${replicas}` : `roomsReplicas is ${replicas}`;
    return { desired: replicas, target: replicas, reason, downscaleAllowed: true, recordDownscale: false };
  }

  const c = input.counts;
  const maxMatches = Math.max(1, nonNegativeInt(input.maxMatches ?? 1));
  const inUse = nonNegativeInt(c.occupied) + nonNegativeInt(c.allocated ?? 0) + nonNegativeInt(c.active ?? 0);
  const running = c.matches === undefined ? nonNegativeInt(c.occupied) + nonNegativeInt(c.allocated ?? 0) : nonNegativeInt(c.matches);
  const slots = c.matchSlots === undefined ? (inUse + nonNegativeInt(c.ready)) * maxMatches : nonNegativeInt(c.matchSlots);
  const freeSlots = c.freeSlots === undefined ? Math.max(0, slots - running) : nonNegativeInt(c.freeSlots);
  const policy = policyTarget(autoscaling, { inUse, running, maxMatches });
  if ('error' in policy) {
    const kept = keptCount(input);
    return {
      desired: kept,
      target: kept,
      reason: `autoscaling policy unusable (${policy.error}); keeping ${keptWords(input, kept)}`,
      downscaleAllowed: false,
      recordDownscale: false,
      error: policy.error,
    };
  }

  const { desired, clampNote } = clamp(policy.target, autoscaling.min, autoscaling.max);
  const base = `${policy.formula}${clampNote}`;
  if (desired >= available) return { desired, target: desired, reason: base, downscaleAllowed: true, recordDownscale: false };
  // A held downscale keeps the rooms there are, up to max: max is a ceiling (a fleet above it, made
  // by an add-rooms or a lowered max, comes down to it), unlike Maestro, which holds them all.
  const ceiling = Number.isFinite(autoscaling.max) && autoscaling.max >= 0 ? Math.floor(autoscaling.max) : Number.POSITIVE_INFINITY;
  const held = (why: string): DesiredRooms => (available > ceiling
    ? { desired: ceiling, target: desired, reason: `${base}; downscale to max ${ceiling} from ${available}, the rest held: ${why}`, downscaleAllowed: true, recordDownscale: true }
    : { desired: available, target: desired, reason: `${base}; downscale held: ${why}`, downscaleAllowed: false, recordDownscale: false });

  // A downscale: the threshold gate (roomOccupancy), then the cooldown (every policy).
  const occupancy = autoscaling.policy.parameters?.roomOccupancy;
  if (autoscaling.policy.type === 'roomOccupancy' && occupancy) {
    const threshold = occupancy.downThreshold || DEFAULT_DOWN_THRESHOLD;
    const desiredFreeSlots = ceilOfDecimal(desired * maxMatches * occupancy.readyTarget);
    const ratio = freeSlots === 0 ? Number.POSITIVE_INFINITY : desiredFreeSlots / freeSlots;
    if (!(ratio <= threshold)) return held(`desired free slots ${desiredFreeSlots} / free slots ${freeSlots} is above the threshold ${threshold}`);
  }
  const cooldownMs = Math.max(0, autoscaling.cooldown ?? 0) * 1000;
  if (input.lastDownscaleAt !== undefined && !(input.now > input.lastDownscaleAt + cooldownMs)) {
    const waitS = Math.ceil((input.lastDownscaleAt + cooldownMs - input.now) / 1000);
    return held(`cooldown of ${autoscaling.cooldown ?? 0}s has ${waitS}s left`);
  }
  return { desired, target: desired, reason: `${base}; downscale from ${available}`, downscaleAllowed: true, recordDownscale: true };
}

interface PolicyInput {
  /** Rooms in use: occupied, allocated, active. */
  inUse: number;
  /** Running matches, allocations included. */
  running: number;
  maxMatches: number;
}

/**
 * The ceiling of a quotient or product of decimals as written (readyTarget 0.8), not as binary
 * floating point holds them: 1 - 0.8 is 0.19999999999999996 there, so ceil(40 / (1 - 0.8)) came
 * out 201, and the history said so, where the formula gives 200. Rounded to 9 decimals first.
 */
function ceilOfDecimal(x: number): number {
  return Math.ceil(Math.round(x * 1e9) / 1e9);
}

function policyTarget(autoscaling: Autoscaling, fleet: PolicyInput): { target: number; formula: string } | { error: string } {
  const { type, parameters } = autoscaling.policy;
  switch (type) {
    case 'roomOccupancy': {
      const readyTarget = parameters?.roomOccupancy?.readyTarget;
      if (typeof readyTarget !== 'number' || !(readyTarget > 0 && readyTarget < 1)) {
        return { error: 'roomOccupancy.readyTarget must be a number in (0, 1)' };
      }
      const desiredMatches = ceilOfDecimal(fleet.running / (1 - readyTarget));
      if (fleet.maxMatches === 1) {
        return { target: desiredMatches, formula: `roomOccupancy: ceil(${fleet.running} occupied / (1 - ${readyTarget})) = ${desiredMatches}` };
      }
      const target = Math.ceil(desiredMatches / fleet.maxMatches);
      return {
        target,
        formula: `roomOccupancy: ceil(ceil(${fleet.running} running matches / (1 - ${readyTarget})) / ${fleet.maxMatches} matches per room) = ${target}`,
      };
    }
    case 'fixedBuffer': {
      const amount = parameters?.fixedBuffer?.amount;
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
        return { error: 'fixedBuffer.amount must be a number >= 0' };
      }
      const target = fleet.inUse + Math.floor(amount);
      return { target, formula: `fixedBuffer: ${fleet.inUse} occupied + ${Math.floor(amount)} = ${target}` };
    }
    default:
      // A type a newer CRD allows but this operator does not know.
      return { error: `unknown policy type ${JSON.stringify(type)}` };
  }
}

/** Maestro's `ensureDesiredNumberIsBetweenMinAndMax`: below min -> min; max >= 0 and above -> max. */
function clamp(target: number, min: number, max: number): { desired: number; clampNote: string } {
  if (Number.isFinite(min) && target < min) return { desired: Math.max(0, Math.floor(min)), clampNote: `, raised to min ${min}` };
  if (Number.isFinite(max) && max >= 0 && target > max) return { desired: Math.floor(max), clampNote: `, capped at max ${max}` };
  return { desired: target, clampNote: '' };
}

function nonNegativeInt(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0;
}
