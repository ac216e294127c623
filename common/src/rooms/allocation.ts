/**
 * A room's allocation (issue 13): the pure rules both the gateway and the operator apply to
 * `status.allocation`. One writer per step: the gateway begins an allocation (a status write
 * carrying the room's resourceVersion), the operator ends it (TTL over, or the room reported
 * occupied), also with the resourceVersion, so each step happens at most once.
 *
 * `status.allocation` is the truth; `status.status: allocated` is its display, composed from it.
 */
import type { GameRoom, GameRoomStatus, GameRoomStatusAllocation, PreviousAllocation, RoomStatus } from '../generated/resources';
import { MAX_CLOCK_SKEW_MS } from '../runtime/clock';

/** Maestro's allocation TTL (roomAllocationTTLMillis). */
export const DEFAULT_ALLOCATION_TTL_SECONDS = 300;
/** The longest `ttlSeconds` the allocate API takes: a year. */
export const MAX_ALLOCATION_TTL_SECONDS = 31_536_000;

/** What an allocationId may hold: the allocate request's, and a ping's that reports the match of one. */
export const ALLOCATION_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]*$';
const ALLOCATION_ID = new RegExp(ALLOCATION_ID_PATTERN);

/** Whether `value` is an allocationId: 1 to 128 characters of ALLOCATION_ID_PATTERN. */
export function isAllocationId(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= 128 && ALLOCATION_ID.test(value);
}

/**
 * How many ended allocations a room keeps in `status.previousAllocations`: every match slot of a
 * multi-match room (up to 35), and at least 8, so a single-match room allocated again and again
 * still knows the ids a slow matchmaker may replay.
 */
export function previousAllocationCap(maxMatches: number): number {
  return Math.min(35, Math.max(8, maxMatches));
}

/**
 * The room's earlier allocations once a new one replaces `status.allocation`: the replaced one
 * (ended: only a room without an open allocation is allocated) first, newest first, at most `cap`.
 */
export function supersededAllocations(status: GameRoomStatus | undefined, now: number, cap: number): PreviousAllocation[] {
  const earlier = status?.previousAllocations ?? [];
  const a = status?.allocation;
  if (!a) return earlier.slice(0, cap);
  const at = new Date(now).toISOString();
  const ended: PreviousAllocation = {
    id: a.id, requestHash: a.requestHash, allocatedAt: a.allocatedAt, expiresAt: a.expiresAt,
    endedAt: a.endedAt ?? at, endReason: a.endReason ?? 'expired', supersededAt: at,
  };
  return [ended, ...earlier.filter((e) => e.id !== a.id)].slice(0, cap);
}

/** Where a room keeps an allocationId: its current allocation, or one a newer allocation replaced. */
export type AllocationRecord =
  | { kind: 'current'; allocation: GameRoomStatusAllocation }
  | { kind: 'previous'; allocation: PreviousAllocation; current: GameRoomStatusAllocation | undefined };

export function allocationRecord(status: GameRoomStatus | undefined, id: string): AllocationRecord | undefined {
  if (status?.allocation?.id === id) return { kind: 'current', allocation: status.allocation };
  const earlier = status?.previousAllocations?.find((e) => e.id === id);
  return earlier ? { kind: 'previous', allocation: earlier, current: status?.allocation } : undefined;
}

/**
 * When the allocation's TTL ends, or undefined when it is over at `now`: past, unreadable, or
 * further ahead than the longest TTL (plus clock skew) allows, which no allocate call wrote (an
 * expiresAt of year 9999 written with kubectl held the room from every matchmaker until then).
 */
function allocationExpiry(a: GameRoomStatusAllocation, now: number): number | undefined {
  const expires = Date.parse(a.expiresAt);
  if (!Number.isFinite(expires) || now >= expires) return undefined;
  return expires - now > MAX_ALLOCATION_TTL_SECONDS * 1000 + MAX_CLOCK_SKEW_MS ? undefined : expires;
}

/** The allocation that holds the room now, or undefined (none, ended, or its TTL is over). */
export function heldAllocation(status: GameRoomStatus | undefined, now: number): GameRoomStatusAllocation | undefined {
  const a = status?.allocation;
  if (!a || a.endedAt) return undefined;
  return allocationExpiry(a, now) === undefined ? undefined : a;
}

/** An allocation not yet ended (its TTL may be over: the operator has not ended it yet). */
export function openAllocation(status: GameRoomStatus | undefined): GameRoomStatusAllocation | undefined {
  const a = status?.allocation;
  return a && !a.endedAt ? a : undefined;
}

/**
 * The status a room is counted under in a scheduler's room counts (kubectl's ALLOCATED and ACTIVE,
 * GET /schedulers/info): its own, except that an `active` multi-match room holding an open
 * allocation counts as `allocated`. The allocate API offers it no slot until the match is
 * reported (one open allocation a room), so ACTIVE counts only rooms it may offer a slot of.
 */
export function countedStatus(status: GameRoomStatus | undefined): string | undefined {
  return status?.status === 'active' && openAllocation(status) ? 'allocated' : status?.status;
}

/**
 * A room an allocation may be given to, for some maxMatches: not being deleted, not a validation
 * room, its pod ready, no allocation open on it, not marked silent by the operator (its game
 * server may hang: operator/src/rooms/domain/silence-marks.ts), and `ready` or `active` by status
 * and ping. Whether it has a free match slot depends on the scheduler's maxMatches (`isAllocatable`
 * in the gateway).
 */
export function mayBeAllocatable(room: GameRoom): boolean {
  const s = room.status;
  if (room.metadata.deletionTimestamp || room.spec.validation === true || !s || s.instanceStatus !== 'ready' || openAllocation(s) || s.silentSince !== undefined) return false;
  return (s.status === 'ready' || s.status === 'active') && (s.pingStatus === 'ready' || s.pingStatus === 'occupied');
}

/**
 * Rooms that may be allocated (`mayBeAllocatable`) and share what orders them for an allocation:
 * their version, host and running matches. The cache keeps them so (`allocatableGroupKey`), so
 * choosing a room looks at a few groups, not at every room of the fleet.
 */
export interface AllocatableGroup {
  version: string;
  host: string;
  runningMatches: number;
  /** The group's rooms: a new array, which the caller owns. */
  rooms(): GameRoom[];
}

/** A room's group (`version`, `host`, `runningMatches`, separated by NUL, which none of them holds). */
export function allocatableGroupKey(room: GameRoom): string {
  return `${room.spec.version}\u0000${room.status?.host ?? ''}\u0000${room.status?.runningMatches ?? 0}`;
}

/** The group a key of `allocatableGroupKey` names, with its rooms. */
export function allocatableGroupOf(key: string, rooms: () => GameRoom[]): AllocatableGroup {
  const [version = '', host = '', matches = '0'] = key.split('\u0000');
  return { version, host, runningMatches: Number(matches), rooms };
}

/** The rooms of `rooms` that may be allocated, in their groups (as the cache files them). */
export function groupAllocatable(rooms: readonly GameRoom[]): AllocatableGroup[] {
  const byKey = new Map<string, GameRoom[]>();
  for (const room of rooms) {
    if (!mayBeAllocatable(room)) continue;
    const key = allocatableGroupKey(room);
    const group = byKey.get(key);
    if (group) group.push(room);
    else byKey.set(key, [room]);
  }
  return [...byKey].map(([key, members]) => allocatableGroupOf(key, () => [...members]));
}

/** A room that hosts or awaits a match (`allocated`, `active`, `occupied`): its host counts as in use for packing. */
export function isBusyRoom(room: GameRoom): boolean {
  const st = room.status?.status;
  return st === 'allocated' || st === 'occupied' || st === 'active';
}

/**
 * A composed room status with the allocation applied (Maestro: an allocated room within its TTL
 * stays `allocated` while it reports ready; every other status applies).
 */
export function withAllocation(composed: RoomStatus, status: GameRoomStatus | undefined, now: number): RoomStatus {
  return composed === 'ready' && heldAllocation(status, now) ? 'allocated' : composed;
}

/**
 * What the operator does about a room's open allocation: nothing yet (check again at `untilMs`),
 * or end it: `occupied` when the room reported the match (see `allocationTaken`), `expired` when
 * the TTL ended first.
 */
export type AllocationStep =
  | { kind: 'none' }
  | { kind: 'wait'; untilMs: number }
  | { kind: 'end'; reason: 'expired' | 'occupied' };

/**
 * Whether the room reported the match it was allocated for: the gateway marked it taken
 * (`takenAt`, with the ping that reported it), or the room reports more running matches than when
 * the allocation was made (a single-match room's occupied ping counts as one match). An allocation
 * written before `runningMatches` was recorded ends on an occupied ping, as it always did.
 */
function allocationTaken(status: GameRoomStatus | undefined, allocation: GameRoomStatusAllocation): boolean {
  return allocation.takenAt !== undefined || reportTakes(status?.pingStatus, status?.runningMatches ?? 0, allocation);
}

/** Whether a ping report (its status and running matches) reports the match `allocation` was made for. */
export function reportTakes(pingStatus: string | undefined, runningMatches: number, allocation: GameRoomStatusAllocation): boolean {
  if (allocation.runningMatches === undefined) return pingStatus === 'occupied';
  return runningMatches > allocation.runningMatches;
}

export function allocationStep(room: GameRoom, now: number): AllocationStep {
  const a = openAllocation(room.status);
  if (!a) return { kind: 'none' };
  if (allocationTaken(room.status, a)) return { kind: 'end', reason: 'occupied' };
  const expires = allocationExpiry(a, now);
  return expires === undefined ? { kind: 'end', reason: 'expired' } : { kind: 'wait', untilMs: expires };
}

/** What the room is told in its ping answer while an allocation holds it. */
export interface RoomAllocationNotice {
  id: string;
  metadata: Record<string, unknown>;
  expiresAt: string;
}

export function allocationNotice(status: GameRoomStatus | undefined, now: number): RoomAllocationNotice | undefined {
  const a = heldAllocation(status, now);
  return a ? { id: a.id, metadata: a.metadata ?? {}, expiresAt: a.expiresAt } : undefined;
}
