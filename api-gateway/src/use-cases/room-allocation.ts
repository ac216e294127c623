/**
 * POST /scheduler/{name}/rooms/allocate: a matchmaker claims one ready room (issue 13).
 *
 * Compute, then apply: the candidates are chosen from the cache by pure rules (`chooseCandidates`),
 * then claimed one at a time with ONE status write carrying the room's resourceVersion (a
 * compare-and-swap), so two allocations, or an allocation and a retirement, can never both win
 * the same room. A write that loses (409) reads the room again: still free (a ping moved its
 * resourceVersion) it is tried again, taken it is skipped; the writes are bounded per request.
 *
 * Idempotency: the allocationId (body or Idempotency-Key) is stored in the room's status with a
 * hash of the request, so a replay finds its room from the rooms themselves (the cache, made sure
 * of after the try's own write, or a fresh list from the API server), also after a gateway restart
 * or a crash after the write. A
 * newer allocation of the same room moves the old one to `status.previousAllocations` (bounded),
 * so a replay of a superseded id still finds its room: it is answered that room while its match
 * runs there (a multi-match slot), else told the allocation ended (410), never given a second room.
 * Tries of one id sent at once to several replicas are answered one at a time through the id's
 * AllocationClaim (`allocateWithId`): the later ones answer the first one's room.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { GameRoom, GameRoomStatusAllocation, PreviousAllocation, Scheduler, SchedulerSpec } from '../../../common/src/generated/resources';
import { isRecord } from '../../../common/src/json/is-record';
import { stableStringify } from '../../../common/src/json/stable-stringify';
import { isLabelValue, LABEL_VALUE_MESSAGE, labelKeyProblems } from '../../../common/src/kube/label-syntax';
import type { Logger } from '../../../common/src/logger';
import type { Counter, Histogram, MetricsRegistry } from '../../../common/src/metrics';
import type { JsonSchemaProps } from '../../../common/src/resources/json-schema-props';
import { activeDefinition, sameRooms } from '../../../common/src/resources/scheduler-version';
import { ALLOCATION_ID_PATTERN, allocationRecord, isAllocationId, DEFAULT_ALLOCATION_TTL_SECONDS, MAX_ALLOCATION_TTL_SECONDS, mayBeAllocatable, openAllocation, previousAllocationCap, supersededAllocations, withAllocation, type AllocatableGroup, type AllocationRecord } from '../../../common/src/rooms/allocation';
import { sanitizeReplicaId } from '../../../common/src/rooms/ping-digest';
import { roomsMaxMatches } from '../../../common/src/rooms/room-status';
import { joinField, joinIndex } from '../../../common/src/validation/field-path';
import { normaliseMaestroBody } from '../../../common/src/validation/maestro-body';
import { compileSchemaValidator } from '../../../common/src/validation/schema-validator';
import { AllocationContentionError, AllocationEndedError, ConflictError, NoRoomAvailableError, NotFoundError, StoreConflictError, StoreNotFoundError, ValidationError, type FieldViolation } from '../errors';
import { refusedAs, roomkeeperRequest } from '../adapters/kube-refusal';
import { ALLOCATION_CLAIM_STALE_MS, cachedVersions, type AllocationIdClaim, type AllocationRestore, type RoomAllocationStore, type RoomStore, type SchedulerStore } from '../store-ports';
import type { Clock } from '../../../common/src/runtime/clock';
import { counted } from '../../../common/src/text/counted';
import { ReplicaShares } from './replica-shares';

export type AllocationStrategy = 'packed' | 'distributed';

export interface RoomSelector {
  version?: string;
  labels?: Record<string, string>;
}

export interface AllocationRequest {
  allocationId?: string;
  selectors?: RoomSelector[];
  strategy?: AllocationStrategy;
  ttlSeconds?: number;
  metadata?: Record<string, unknown>;
}

export interface AllocationAnswer {
  success: true;
  roomId: string;
  host: string;
  ports: { name: string; protocol: string; port: number }[];
  version: string;
  allocationId: string;
  expiresAt: string;
  message: string;
}

export interface AllocationSettings {
  /** TTL when the request names none (Maestro: 300 s). */
  defaultTtlSeconds: number;
  /**
   * Largest TTL granted on any scheduler (ROOMKEEPER_ALLOCATION_MAX_TTL); each scheduler's own cap
   * (`spec.allocation.maxTtlSeconds`, default 300) applies below it. A larger request is capped
   * (and the answer says so).
   */
  maxTtlSeconds: number;
  /** Most status writes one request makes before it answers 503. */
  maxWrites: number;
  /** Retry-After of a 429 (no room). */
  noRoomRetryAfterSeconds: number;
  /** Answer "no room" as Maestro does (500, code 2) instead of 429. */
  maestroNoRoomStatus: boolean;
  /** Largest `metadata`, as JSON bytes. */
  maxMetadataBytes: number;
  /** How long an allocationId's claim is kept after its try wrote a room (see `allocateWithId`). */
  claimLingerMs: number;
}

const DEFAULT_ALLOCATION_SETTINGS: Readonly<AllocationSettings> = Object.freeze({
  defaultTtlSeconds: DEFAULT_ALLOCATION_TTL_SECONDS,
  maxTtlSeconds: 3600,
  maxWrites: 10,
  noRoomRetryAfterSeconds: 1,
  maestroNoRoomStatus: false,
  maxMetadataBytes: 4096,
  claimLingerMs: 6000,
});

export interface RoomAllocationDeps {
  rooms: Pick<RoomStore, 'findScheduler' | 'findRoom' | 'findVersion' | 'listRooms'>;
  schedulers: Pick<SchedulerStore, 'getScheduler'>;
  store: RoomAllocationStore;
  logger: Logger;
  metrics: MetricsRegistry;
  /** Milliseconds since the epoch. */
  now: Clock;
  random?: () => number;
  settings?: Partial<AllocationSettings>;
  /** This gateway replica's name, written in the claims of the allocationIds it answers. */
  replicaId?: string;
}

/**
 * How long a try of a new allocationId waits for its cache to show its own room write before it also
 * lists the scheduler's rooms (a watch that fell behind or broke; the event comes in milliseconds
 * otherwise).
 */
const CACHE_CATCH_UP_MS = 100;
/** How long the cache is still waited for while that list runs: whichever knows first answers. */
const CACHE_WAIT_MS = 10_000;
/**
 * A try that holds an allocationId's claim writes no room once this long has passed since its
 * request arrived (it answers 503 instead), so a claim older than CLAIM_STALE_MS, by the API
 * server's clock, belongs to a try that is over: a replica that crashed or stopped mid-request. The
 * difference is the clock skew between gateways and the API server that is tolerated.
 */
const CLAIM_HOLD_MS = 30_000;
const CLAIM_STALE_MS = ALLOCATION_CLAIM_STALE_MS;
/** How long a try waits for another try of its allocationId before it answers 503 (retry later). */
const CLAIM_WAIT_MS = 10_000;
/** While waiting: how often the cache is looked at for the other try's room, and the claim read again. */
const CLAIM_POLL_CACHE_MS = 10;
const CLAIM_POLL_READ_MS = 250;

export const ALLOCATE_SELECTOR_SCHEMA: JsonSchemaProps = {
  type: 'object',
  properties: {
    version: { type: 'string', maxLength: 32, pattern: '^v[0-9]{1,9}\\.[0-9]{1,9}\\.[0-9]{1,9}$' },
    // Keys and values are held to what Kubernetes takes by `labelProblems`.
    labels: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string' } },
  },
};

/** The allocate request's fields and their limits (the OpenAPI document shows them as they are checked). */
export const ALLOCATE_REQUEST_SCHEMA: JsonSchemaProps = {
  type: 'object',
  properties: {
    allocationId: { type: 'string', minLength: 1, maxLength: 128, pattern: ALLOCATION_ID_PATTERN },
    selectors: { type: 'array', maxItems: 16, items: ALLOCATE_SELECTOR_SCHEMA },
    strategy: { type: 'string', enum: ['packed', 'distributed'] },
    ttlSeconds: { type: 'integer', minimum: 1, maximum: MAX_ALLOCATION_TTL_SECONDS },
    metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

const validateRequest = compileSchemaValidator(ALLOCATE_REQUEST_SCHEMA);

/**
 * The path's scheduler, which a client of Maestro's gRPC gateway may also send in the body
 * (its request message holds it): taken and ignored, the path decides.
 */
const MAESTRO_PATH_FIELDS = ['schedulerName', 'scheduler_name'];

/**
 * Fields of the body and of its selectors that the schema does not know. The validator would drop
 * them, so a typo ("label", "selector") would make a request that takes any room.
 */
function unknownFields(body: Record<string, unknown>): FieldViolation[] {
  const outside = (record: Record<string, unknown>, schema: JsonSchemaProps, parent: string): FieldViolation[] => {
    const known = Object.keys(schema.properties ?? {});
    return Object.keys(record).filter((key) => !known.includes(key) && !(parent === '' && MAESTRO_PATH_FIELDS.includes(key)))
      .map((key) => ({ field: joinField(parent, key), message: `unknown field; known fields: ${known.join(', ')}` }));
  };
  const selectors = Array.isArray(body.selectors) ? body.selectors : [];
  return [
    ...outside(body, ALLOCATE_REQUEST_SCHEMA, ''),
    ...selectors.flatMap((selector, i) => (isRecord(selector) ? outside(selector, ALLOCATE_SELECTOR_SCHEMA, joinIndex('selectors', i)) : [])),
  ];
}

/** Selector labels Kubernetes could not hold: no room has them, so the selector is a mistake. */
function labelProblems(selectors: readonly RoomSelector[]): FieldViolation[] {
  return selectors.flatMap((selector, i) => Object.entries(selector.labels ?? {}).flatMap(([key, value]) => {
    const field = `${joinIndex('selectors', i)}.labels`;
    const keyProblems = labelKeyProblems(key).map((p) => ({ field, message: `key ${JSON.stringify(key)}: ${p}` }));
    return isLabelValue(value) ? keyProblems : [...keyProblems, { field, message: `value ${JSON.stringify(value)} of ${JSON.stringify(key)}: ${LABEL_VALUE_MESSAGE}` }];
  }));
}

/**
 * The `__proto__` keys in the allocation's metadata, by field path. Such a key names an object's
 * prototype in JavaScript, where the room or a forwarder reading the metadata may mistake it.
 * kube-apiserver and the sandbox both store it as an ordinary key; refusing it is the gateway's
 * own documented policy (openapi.json), the same on every API server.
 */
function protoKeyPaths(value: unknown, field: string): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => protoKeyPaths(v, joinIndex(field, i)));
  if (!isRecord(value)) return [];
  return Object.keys(value).flatMap((key) => {
    const path = joinField(field, key);
    return key === '__proto__' ? [path] : protoKeyPaths(value[key], path);
  });
}

/**
 * Validates an allocate body (empty is fine); every violation names its field. It is read as every
 * management body is (normaliseMaestroBody): `ttl_seconds` as `ttlSeconds`, `"ttlSeconds": "5"` as
 * 5, a field sent as null as not sent.
 */
function parseAllocationRequest(sent: unknown, idempotencyKey: string | undefined, maxMetadataBytes: number): AllocationRequest {
  if (!isRecord(sent)) throw new ValidationError([{ field: 'body', message: 'must be a JSON object (or empty)' }]);
  const sentTwice: FieldViolation[] = [];
  const body = normaliseMaestroBody(sent, ALLOCATE_REQUEST_SCHEMA, {}, sentTwice) as Record<string, unknown>;
  const check = validateRequest(body);
  const violations = [...sentTwice, ...unknownFields(body), ...check.errors.map((e) => ({ field: e.field || 'body', message: e.message }))];
  const request = check.value as AllocationRequest;
  if (check.errors.length === 0) violations.push(...labelProblems(request.selectors ?? []));
  if (request.metadata !== undefined && Buffer.byteLength(JSON.stringify(request.metadata)) > maxMetadataBytes) {
    violations.push({ field: 'metadata', message: `must be at most ${maxMetadataBytes} bytes as JSON` });
  }
  for (const field of protoKeyPaths(request.metadata, 'metadata').slice(0, 10)) {
    violations.push({ field, message: 'the key "__proto__" is not accepted (it names a JavaScript object\'s prototype): rename it' });
  }
  if (idempotencyKey !== undefined) {
    // Node joins a header sent twice with ", ", which no key holds.
    if (idempotencyKey.includes(', ')) {
      violations.push({ field: 'Idempotency-Key', message: 'was sent more than once (or holds ", "); send one Idempotency-Key header' });
    } else if (!isAllocationId(idempotencyKey)) {
      violations.push({ field: 'Idempotency-Key', message: "must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit" });
    } else if (request.allocationId !== undefined && request.allocationId !== idempotencyKey) {
      violations.push({ field: 'allocationId', message: 'differs from the Idempotency-Key header; send one, or the same value in both' });
    }
  }
  if (violations.length > 0) throw new ValidationError(violations);
  return { ...request, allocationId: request.allocationId ?? idempotencyKey };
}

/** The hash of a request that asks for nothing but a room (Maestro's empty body), the form sent most. */
const EMPTY_REQUEST_HASH = createHash('sha256').update('{}').digest('hex');

/** The hash stored with an allocation: the same allocationId with another body is refused. */
export function requestHash(request: AllocationRequest): string {
  const { allocationId: _id, ...rest } = request;
  const text = stableStringify(rest);
  return text === '{}' ? EMPTY_REQUEST_HASH : createHash('sha256').update(text).digest('hex');
}

/**
 * A room a new allocation may take: ready by its pod and its ping, not being deleted, not held by
 * an open allocation. With maxMatches > 1 (multi-match), an `active` room with a free match slot
 * qualifies too: the allocation claims one slot. A multi-match room takes one open allocation at
 * a time; its next slot is offered once the room reports the match (or the TTL ends).
 */
export function isAllocatable(room: GameRoom, maxMatches = 1): boolean {
  if (!mayBeAllocatable(room)) return false;
  const s = room.status;
  if (maxMatches <= 1) return s?.status === 'ready' && s.pingStatus === 'ready';
  return (s?.runningMatches ?? 0) < maxMatches;
}

function matches(room: GameRoom, selector: RoomSelector): boolean {
  if (selector.version !== undefined && !sameRooms(room.spec.version, selector.version)) return false;
  const labels = room.metadata.labels ?? {};
  return Object.entries(selector.labels ?? {}).every(([k, v]) => labels[k] === v);
}

/** The selector a room matches first, among the first `upTo` (-1: none of them). */
function firstSelector(room: GameRoom, selectors: readonly RoomSelector[], upTo: number): number {
  for (let i = 0; i < upTo; i++) if (matches(room, selectors[i] as RoomSelector)) return i;
  return -1;
}

/** Allocatable rooms of one group, or the ones of a selector's pool, with the group's place in the order. */
interface Keyed { group: AllocatableGroup; rooms?: GameRoom[]; active: number; matches: number; busy: number }

function compareKeyed(a: Keyed, b: Keyed): number {
  return a.active - b.active || a.matches - b.matches || a.busy - b.busy;
}

/**
 * The free rooms of the first selector that matches any, from the groups that may match: one pass
 * over their rooms (labels are per room), which only selectors up to the best matched so far can
 * change. Keyed entries carry the rooms kept of each group.
 */
function selectorPool(groups: readonly AllocatableGroup[], selectors: readonly RoomSelector[], free: (room: GameRoom) => boolean): { group: AllocatableGroup; rooms: GameRoom[] }[] {
  let pool: { group: AllocatableGroup; rooms: GameRoom[] }[] = [];
  let poolSelector = selectors.length;
  for (const group of groups) {
    if (!selectors.some((s, i) => i <= poolSelector && (s.version === undefined || sameRooms(group.version, s.version)))) continue;
    let kept: GameRoom[] | undefined;
    for (const room of group.rooms()) {
      if (!free(room)) continue;
      const hit = firstSelector(room, selectors, Math.min(poolSelector + 1, selectors.length));
      if (hit < 0) continue;
      if (hit < poolSelector) {
        poolSelector = hit;
        kept = [];
        pool = [{ group, rooms: kept }];
      } else if (!kept) {
        pool.push({ group, rooms: (kept = []) });
      }
      if (hit === poolSelector) kept.push(room);
    }
  }
  return pool.filter((p) => p.rooms.length > 0);
}

/**
 * The rooms to try, in order: the allocatable rooms of the first selector that matches any (all
 * of them without selectors; a selector's version matches the rooms of its major, which all run
 * its rooms' definition, see `sameRooms`); rooms of the active version's major first (the others
 * are being replaced by a rollout); then by strategy: `packed` puts
 * the rooms running the most matches first (a multi-match room's free slot before a fresh room),
 * then rooms whose host already runs the most busy (allocated, active or occupied) rooms
 * (`busyOnHost`, the cache's other index); `distributed` the fewest of both. Ties are shuffled so
 * concurrent requests (and replicas) rarely race for one room. `mine` puts this replica's share
 * of the rooms first (see `ReplicaShares`), in that order, then the other replicas' shares in that
 * order, within each class of version (the active version's major first, then the others; and
 * within the selector that matched): each replica fills its own share the strategy's way, so the
 * fleet fills nearly as under one replica, without two replicas racing for its first rooms. `skip`
 * leaves rooms out (this replica's claims in flight); `limit` keeps only the first rooms of that
 * order (a request tries at most its write budget).
 *
 * This runs on every request, so it orders the groups (`AllocatableGroup`: rooms of one version,
 * host and match count), not the rooms: the rooms of equal groups are drawn at random, one at a
 * time, until `limit` are taken. Without selectors, a request looks at the rooms of the first
 * groups only; a fleet of 10,000 ready rooms costs a copy of an array, not 10,000 comparisons.
 * The draws are the same whatever the limit, so a limit keeps a prefix of the full order.
 */
export function chooseCandidates(
  groups: readonly AllocatableGroup[],
  options: {
    activeVersion?: string; selectors?: readonly RoomSelector[]; strategy: AllocationStrategy; random: () => number; maxMatches?: number;
    limit?: number; skip?: (room: GameRoom) => boolean; mine?: (room: GameRoom) => boolean; busyOnHost: (host: string) => number;
  },
): GameRoom[] {
  const maxMatches = options.maxMatches ?? 1;
  const free = (room: GameRoom) => !options.skip?.(room) && isAllocatable(room, maxMatches);
  // A single-match room's status alone says whether it is free (isAllocatable).
  const open = maxMatches <= 1 ? groups : groups.filter((g) => g.runningMatches < maxMatches);
  const selectors = options.selectors ?? [];
  const pool: { group: AllocatableGroup; rooms?: GameRoom[] }[] = selectors.length > 0 ? selectorPool(open, selectors, free) : open.map((group) => ({ group }));
  const sign = options.strategy === 'packed' ? -1 : 1;
  const busyByHost = new Map<string, number>();
  const busyOf = (host: string): number => {
    let n = busyByHost.get(host);
    if (n === undefined) busyByHost.set(host, (n = options.busyOnHost(host)));
    return n;
  };
  const keyed: Keyed[] = pool.map((p) => ({
    ...p, active: options.activeVersion !== undefined && sameRooms(p.group.version, options.activeVersion) ? 0 : 1, matches: sign * p.group.runningMatches, busy: sign * busyOf(p.group.host),
  })).sort(compareKeyed);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const chosen: GameRoom[] = [];
  // Other replicas' shares of the rooms of this version class (active or not), in the order drawn.
  const theirs: GameRoom[] = [];
  for (let first = 0; first < keyed.length && chosen.length < limit;) {
    // Groups in equal places make one tie: their rooms, drawn at random (a partial Fisher-Yates shuffle).
    let end = first + 1;
    while (end < keyed.length && compareKeyed(keyed[first] as Keyed, keyed[end] as Keyed) === 0) end++;
    const tie = keyed.slice(first, end);
    const roomsOf = (k: Keyed) => k.rooms ?? k.group.rooms();
    const rooms = tie.length === 1 ? roomsOf(tie[0] as Keyed) : tie.flatMap(roomsOf);
    const checked = tie.every((k) => k.rooms);
    for (let n = 0; n < rooms.length && chosen.length < limit; n++) {
      const at = n + Math.floor(options.random() * (rooms.length - n));
      const room = rooms[at] as GameRoom;
      rooms[at] = rooms[n] as GameRoom;
      rooms[n] = room;
      if (!checked && !free(room)) continue;
      if (options.mine && !options.mine(room)) theirs.push(room);
      else chosen.push(room);
    }
    if (end === keyed.length || (keyed[end] as Keyed).active !== (keyed[first] as Keyed).active) {
      for (const room of theirs.splice(0)) {
        if (chosen.length >= limit) break;
        chosen.push(room);
      }
    }
    first = end;
  }
  return chosen;
}

/**
 * The largest TTL granted on this scheduler, and what sets it (for the answer's message): the
 * active version's `allocation.maxTtlSeconds`, not a spec change that is no version (refused, say).
 */
function ttlCap(definition: SchedulerSpec, globalMaxSeconds: number): { seconds: number; by: string } {
  const own = definition.allocation?.maxTtlSeconds ?? DEFAULT_ALLOCATION_TTL_SECONDS;
  return own <= globalMaxSeconds
    ? { seconds: own, by: `the scheduler's allocation.maxTtlSeconds${definition.allocation?.maxTtlSeconds === undefined ? ', default' : ''}` }
    : { seconds: globalMaxSeconds, by: 'ROOMKEEPER_ALLOCATION_MAX_TTL' };
}

/**
 * The answer's message about its TTL: empty when the TTL asked for (or the default, when none
 * was) is granted, as Maestro's; else the TTL granted and the cap that set it.
 */
function ttlNote(asked: number | undefined, granted: number, defaultSeconds: number, cappedBy: string): string {
  if (asked === undefined) return granted < defaultSeconds ? `ttlSeconds not sent: the default ${defaultSeconds} capped at ${granted} (${cappedBy})` : '';
  return granted < asked ? `ttlSeconds capped at ${granted} (${cappedBy})` : '';
}

function portsOf(room: GameRoom): AllocationAnswer['ports'] {
  return (room.status?.ports ?? []).map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? '', port: p.port ?? 0 }));
}

/** The message of a replayed allocationId's answer: the room its allocation was answered. */
const REPLAYED = 'replayed: this allocationId was already answered with this room';

/** Whether an answer replays an allocation made before (any replay message), rather than makes one. */
function isReplay(answer: AllocationAnswer): boolean {
  return answer.message.startsWith('replayed:');
}

function answerOf(room: GameRoom, allocation: GameRoomStatusAllocation | PreviousAllocation, message: string): AllocationAnswer {
  return {
    success: true,
    roomId: room.metadata.name ?? '',
    host: room.status?.host ?? '',
    ports: portsOf(room),
    version: room.spec.version,
    allocationId: allocation.id,
    expiresAt: allocation.expiresAt,
    message,
  };
}

/**
 * The room that holds or held allocationId `id`. Only while a try takes back an allocation (see
 * `withdraw`) can two rooms hold one id: the earlier allocation is the one answered.
 */
function earliestAllocation(rooms: readonly GameRoom[], id: string): { room: GameRoom; record: AllocationRecord } | undefined {
  let found: { room: GameRoom; record: AllocationRecord } | undefined;
  for (const room of rooms) {
    const record = allocationRecord(room.status, id);
    if (record && (!found || record.allocation.allocatedAt < found.record.allocation.allocatedAt)) found = { room, record };
  }
  return found;
}

/** What an allocation's writes left: whether a room may hold the id now, the room written and the room as it was. */
interface AllocationWrite {
  mayHaveLanded: boolean;
  written?: GameRoom;
  before?: GameRoom;
}

/**
 * What a replay of an allocationId gets (pure): the room it was answered, or why not.
 * - The room's current allocation: the room, unless the allocation expired, or the room took it
 *   up (reported the match) and runs no match now (the match is over; the room is free again).
 * - An allocation a newer one replaced: the room while the match it was made for runs there (a
 *   multi-match room that reported it, `occupied`, and still runs matches); otherwise the match is
 *   over (it expired, or the single-match room was freed and given to another match).
 * Another request body under the same id is refused first.
 */
export type ReplayDecision =
  | { kind: 'answer'; allocation: GameRoomStatusAllocation | PreviousAllocation; message: string }
  | { kind: 'id_conflict' }
  | { kind: 'ended'; message: string; endedAt?: string; endReason: string; supersededAt?: string };

/**
 * Why a room can no longer host the match it was allocated for, if so: its game server pinged
 * `terminating` or `terminated` (a terminating room accepts no new players; nothing but
 * `terminated` follows), its deletion has begun, or it is in error.
 */
function roomOutOfService(room: GameRoom): { endReason: 'terminating' | 'error'; why: string } | undefined {
  const s = room.status;
  if (s?.status === 'error' || s?.instanceStatus === 'error') return { endReason: 'error', why: 'the room is in error' };
  if (s?.pingStatus === 'terminated' || s?.status === 'terminated') return { endReason: 'terminating', why: 'the room is terminating: its game server pinged terminated' };
  if (s?.pingStatus === 'terminating') return { endReason: 'terminating', why: 'the room is terminating: its game server pinged terminating and accepts no new players' };
  if (room.metadata.deletionTimestamp || s?.status === 'terminating' || s?.instanceStatus === 'terminating') {
    return { endReason: 'terminating', why: 'the room is terminating: it is being deleted' };
  }
  return undefined;
}

/** Whether the room runs a match now (its pings' runningMatches; an `occupied` ping counts one). */
function runsMatches(room: GameRoom): boolean {
  return (room.status?.runningMatches ?? 0) > 0 || room.status?.status === 'occupied' || room.status?.status === 'active';
}

/**
 * Why an allocation expired, in the terms of the rule that ends one (common/src/rooms/allocation.ts,
 * `allocationTaken`): a multi-match room's match counts as reported only by more running matches
 * than it ran when allocated, so one match ending as another began reports none.
 */
function expiredWhy(a: GameRoomStatusAllocation, maxMatches: number): string {
  if (maxMatches > 1 && a.runningMatches !== undefined) {
    return `expired: within its TTL the room never reported more running matches than the ${a.runningMatches} it ran when allocated`;
  }
  return 'expired: the room never reported the match within its TTL';
}

/** Why an allocation the room took up is over, once the room runs no match. */
function matchOverWhy(maxMatches: number): string {
  return maxMatches > 1 ? 'occupied: the room reported the match, and runs no match now' : 'occupied: the room reported the match, which has since ended';
}

function replayDecision(room: GameRoom, record: AllocationRecord, hash: string, maxMatches: number): ReplayDecision {
  const a = record.allocation;
  if (a.requestHash !== hash) return { kind: 'id_conflict' };
  const roomId = room.metadata.name ?? '';
  const newAllocation = 'use a new allocationId for a new allocation';
  const gone = roomOutOfService(room);
  if (gone) {
    return {
      kind: 'ended', endReason: gone.endReason, ...(a.endedAt ? { endedAt: a.endedAt } : {}),
      ...(record.kind === 'previous' && record.allocation.supersededAt ? { supersededAt: record.allocation.supersededAt } : {}),
      message: `allocation ${a.id} of room ${roomId} ended: ${gone.why}; allocate again with a new allocationId`,
    };
  }
  if (record.kind === 'current') {
    if (!a.endedAt || (a.endReason === 'occupied' && runsMatches(room))) return { kind: 'answer', allocation: a, message: REPLAYED };
    if (a.endReason === 'occupied') {
      // The room reported the match and runs none now: the match is over, and the room is free
      // for the next allocation; sending players there would put them in another match's room.
      return {
        kind: 'ended', endedAt: a.endedAt, endReason: 'occupied',
        message: `allocation ${a.id} of room ${roomId} ended at ${a.endedAt} (${matchOverWhy(maxMatches)}); ${newAllocation}`,
      };
    }
    return {
      kind: 'ended', endedAt: a.endedAt, endReason: a.endReason ?? 'expired',
      message: `allocation ${a.id} of room ${roomId} ended at ${a.endedAt} (${expiredWhy(a, maxMatches)}); ${newAllocation}`,
    };
  }
  const previous = record.allocation;
  const stillRunning = previous.endReason === 'occupied' && maxMatches > 1 && !room.metadata.deletionTimestamp && runsMatches(room);
  if (stillRunning) {
    return { kind: 'answer', allocation: previous, message: `replayed: this allocationId was answered with this room, which reported its match at ${previous.endedAt} and has taken newer allocations since` };
  }
  const why = previous.endReason === 'expired' ? expiredWhy(previous, maxMatches) : matchOverWhy(maxMatches);
  const since = previous.supersededAt ? ` at ${previous.supersededAt}` : '';
  return {
    kind: 'ended', endedAt: previous.endedAt, endReason: previous.endReason, ...(previous.supersededAt ? { supersededAt: previous.supersededAt } : {}),
    message: `allocation ${previous.id} of room ${roomId} ended at ${previous.endedAt} (${why}); the room was allocated to another match${since}; ${newAllocation}`,
  };
}

export class RoomAllocations {
  private readonly settings: AllocationSettings;
  private readonly random: () => number;
  /**
   * Requests under way on this replica, by scheduler and allocationId (one entry per request in
   * flight); a try of the same id that comes meanwhile answers the same room, as a replay.
   */
  private readonly inFlight = new Map<string, { hash: string; answer: Promise<AllocationAnswer> }>();
  /**
   * Rooms this replica is claiming or has just claimed, by scheduler, then room -> the resourceVersion
   * the claim was made on: while the cache still shows that version, the room is not offered again
   * (it would only lose its compare-and-swap). Entries go once the cache shows a newer version;
   * bounded (oldest first) in case the cache never does (the room deleted meanwhile).
   */
  private readonly claimed = new Map<string, Map<string, string>>();
  private readonly results: Counter;
  private readonly latency: Histogram;
  private readonly conflicts: Counter;
  private readonly retries: Counter;
  private readonly replayChecks: Counter;
  private readonly idWaits: Counter;
  /** The replica named in the allocations this one makes, and what it knows of the others (none without `replicaId`). */
  private readonly replica?: string;
  private readonly shares?: ReplicaShares;

  constructor(private readonly deps: RoomAllocationDeps) {
    this.settings = { ...DEFAULT_ALLOCATION_SETTINGS, ...deps.settings };
    this.random = deps.random ?? Math.random;
    if (deps.replicaId !== undefined) {
      this.replica = sanitizeReplicaId(deps.replicaId);
      const shares = this.shares = new ReplicaShares(this.replica, deps.now);
      deps.metrics.gauge('roomkeeper_allocation_replicas', 'Gateway replicas this one shares equally good rooms with: itself and those that took a room it was allocating within the last minute (1: it chooses among all rooms).', () => {
        deps.metrics.gauge('roomkeeper_allocation_replicas', '').set(shares.replicas().length);
      });
    }
    this.results = deps.metrics.counter('roomkeeper_allocations_total', 'Allocate requests that reached the allocation, by result (allocated, replayed, ended, no_room, contention, id_conflict, not_found, invalid, error: any other failure, such as the Kubernetes API unavailable); one refused before it (credentials, a body that is not JSON, another content type) is in roomkeeper_http_requests_total only.', { labelNames: ['result'] });
    this.latency = deps.metrics.histogram('roomkeeper_allocation_duration_seconds', 'Time to answer an allocate request, by result.', undefined, { labelNames: ['result'] });
    this.conflicts = deps.metrics.counter('roomkeeper_allocation_conflicts_total', 'Allocation status writes refused because the room changed since it was read (409).', { labelNames: [] });
    this.retries = deps.metrics.counter('roomkeeper_allocation_retries_total', 'Allocation status writes after the first of a request (another candidate, or the same room read again).', { labelNames: [] });
    this.idWaits = deps.metrics.counter('roomkeeper_allocation_id_waits_total', 'Allocate requests that found another try of their allocationId being answered (its claim) and waited, by how the wait ended: room (the other try\'s room showed), released (the other try ended without a room), taken_over (its claim was over 60 s old), conflict (the other try has another body), timeout (503).', { labelNames: ['outcome'] });
    this.replayChecks = deps.metrics.counter('roomkeeper_allocation_replay_checks_total', 'Allocate requests with a new allocationId, by how the gateway made sure after its room write that no other room took the id first: cache (the cache showed the write) or list (a list of the scheduler\'s rooms).', { labelNames: ['by'] });
  }

  async allocate(schedulerName: string, body: unknown, idempotencyKey: string | undefined): Promise<AllocationAnswer> {
    const started = this.deps.now();
    let result = 'invalid';
    try {
      const request = parseAllocationRequest(body, idempotencyKey, this.settings.maxMetadataBytes);
      result = 'error';
      const scheduler = this.deps.rooms.findScheduler(schedulerName) ?? await this.deps.schedulers.getScheduler(schedulerName);
      if (!scheduler) throw new NotFoundError(`scheduler ${schedulerName} not found`);
      if (scheduler.metadata.deletionTimestamp) throw new NotFoundError(`scheduler ${schedulerName} is being deleted`);
      const id = request.allocationId ?? randomUUID();
      const hash = requestHash({ ...request, allocationId: undefined });
      // An allocationId is one scheduler's: another scheduler's try of the same id is another allocation.
      const key = `${schedulerName}/${id}`;
      const running = this.inFlight.get(key);
      let answer: AllocationAnswer;
      if (running) {
        if (running.hash !== hash) throw this.idConflict(id);
        // The try under way makes the allocation (or replays it): this one answers its room as a replay.
        const first = await running.answer;
        answer = isReplay(first) ? first : { ...first, message: REPLAYED };
      } else {
        const work = request.allocationId !== undefined ? this.allocateWithId(scheduler, id, hash, request, started) : this.allocateOnce(scheduler, id, hash, request);
        this.inFlight.set(key, { hash, answer: work });
        try {
          answer = await work;
        } finally {
          this.inFlight.delete(key);
        }
      }
      result = isReplay(answer) ? 'replayed' : 'allocated';
      return answer;
    } catch (err) {
      result = err instanceof NoRoomAvailableError ? 'no_room' : err instanceof AllocationContentionError ? 'contention'
        : err instanceof ConflictError ? 'id_conflict' : err instanceof AllocationEndedError ? 'ended' : err instanceof NotFoundError ? 'not_found' : result;
      throw err;
    } finally {
      this.results.inc({ result });
      this.latency.observe((this.deps.now() - started) / 1000, { result });
    }
  }

  /**
   * The room another try of this allocationId took before this try's own room write (at
   * `revision`, on room `mine`), if any. The cache shows every such write once it has applied this
   * try's own (its event comes within milliseconds); should it not within CACHE_CATCH_UP_MS, a list
   * of the scheduler's rooms from the API server starts too, and the first of the two to know
   * decides.
   */
  private async findEarlier(scheduler: string, id: string, revision: string, mine: string): Promise<{ room: GameRoom; record: AllocationRecord } | undefined> {
    const others = (rooms: readonly GameRoom[]) => earliestAllocation(rooms.filter((r) => r.metadata.name !== mine), id);
    // Cannot tell (false) also when the wait failed: the list decides.
    const caughtUp = this.deps.store.roomsCacheCaughtUp(revision, CACHE_WAIT_MS).catch(() => false);
    let timer: NodeJS.Timeout | undefined;
    const soon = await Promise.race([caughtUp, new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), CACHE_CATCH_UP_MS); })]);
    clearTimeout(timer);
    let byCache = soon === true;
    if (!byCache) {
      const list = this.deps.store.listRoomsFresh(scheduler);
      // The list's own failure is thrown below, once it is the one that decides.
      const listed = list.then(() => false, () => false);
      byCache = soon === false ? false : await Promise.race([caughtUp, listed]);
      if (!byCache) {
        this.replayChecks.inc({ by: 'list' });
        return others(await list);
      }
    }
    this.replayChecks.inc({ by: 'cache' });
    return others(this.deps.store.roomsWithAllocationId(scheduler, id));
  }

  /**
   * This replica's claims on the scheduler's rooms that the cache does not show past yet (the rooms
   * not to offer again); a claim goes once the cache shows the room at another version, or gone.
   */
  private pendingClaims(scheduler: string): Map<string, string> | undefined {
    const claimed = this.claimed.get(scheduler);
    if (!claimed) return undefined;
    for (const [name, rv] of claimed) {
      if (this.deps.rooms.findRoom(scheduler, name)?.metadata.resourceVersion !== rv) claimed.delete(name);
    }
    return claimed.size > 0 ? claimed : undefined;
  }

  private noteClaim(scheduler: string, room: GameRoom): void {
    let claimed = this.claimed.get(scheduler);
    if (!claimed) this.claimed.set(scheduler, (claimed = new Map<string, string>()));
    claimed.set(room.metadata.name ?? '', room.metadata.resourceVersion ?? '');
    if (claimed.size > 10_000) claimed.delete(claimed.keys().next().value as string);
    if (this.claimed.size > 1_000) this.claimed.delete(this.claimed.keys().next().value as string);
  }

  private idConflict(id: string): ConflictError {
    return new ConflictError(`allocationId ${id} was already used with another request body; use a new allocationId for a new allocation`);
  }

  /**
   * An allocation with the matchmaker's allocationId. One try of an id writes at a time, on all
   * replicas together, through the id's AllocationClaim (an object named after the id, which only
   * one try can create):
   * 1. a room the cache shows with the id answers the try (a replay);
   * 2. the try claims the id. Held by another try: it waits for that try's room and answers it;
   * 3. it allocates a room, then makes sure no other room took the id before (`findEarlier`, once
   *    its cache has applied its own write). One did (its cache was behind a try that ended
   *    earlier): it takes its allocation back (`withdraw`) and answers that room;
   * 4. it releases the claim: at once when no room of its own holds the id, else CLAIM_LINGER_MS
   *    later, so a try whose cache is just behind finds the claim and waits for the room.
   * Two tries sent at once, to two replicas, never take two rooms.
   */
  private async allocateWithId(scheduler: Scheduler, id: string, hash: string, request: AllocationRequest, started: number): Promise<AllocationAnswer> {
    const name = scheduler.metadata.name ?? '';
    const maxMatches = roomsMaxMatches(scheduler, cachedVersions(this.deps.rooms));
    const cached = () => earliestAllocation(this.deps.store.roomsWithAllocationId(name, id), id);
    for (;;) {
      let earlier = cached();
      if (earlier) return this.replay(earlier.room, earlier.record, hash, maxMatches);
      const claimed = await this.deps.store.claimAllocationId(name, id, { requestHash: hash, replica: this.deps.replicaId ?? 'gateway' })
        .catch(refusedAs(roomkeeperRequest('create', 'AllocationClaim', name)));
      if (!claimed.created) {
        await this.waitForOtherTry(name, id, hash, claimed.claim, started);
        continue;
      }
      const write: AllocationWrite = { mayHaveLanded: false };
      try {
        // The cache may have shown the room of a try that released its claim since step 1.
        earlier = cached();
        if (earlier) return this.replay(earlier.room, earlier.record, hash, maxMatches);
        const answer = await this.allocateOnce(scheduler, id, hash, request, started, write);
        const { written, before } = write;
        if (!written?.metadata.resourceVersion || !before) return answer;
        earlier = await this.findEarlier(name, id, written.metadata.resourceVersion, answer.roomId).catch((err: unknown) => {
          this.deps.logger.warn('could not make sure no other room took this allocationId before; answering the room written', { scheduler: name, allocationId: id, room: answer.roomId, error: String(err) });
          return undefined;
        });
        if (!earlier) return answer;
        if (await this.withdraw(name, id, written, before)) write.mayHaveLanded = false;
        return this.replay(earlier.room, earlier.record, hash, maxMatches);
      } finally {
        await this.deps.store.releaseAllocationClaim(name, id, claimed.claim, write.mayHaveLanded ? this.settings.claimLingerMs : 0).catch(() => undefined);
      }
    }
  }

  /**
   * Takes back this try's allocation of `written` (another room took the id earlier): the room's
   * allocation fields go back to what they were (`before`), with the written version as
   * precondition; a room changed since (a ping) is read again. True once taken back, or when the
   * room no longer holds this allocation open; false when it could not be (the allocation then
   * ends with its TTL, as an abandoned one does).
   */
  private async withdraw(name: string, id: string, written: GameRoom, before: GameRoom): Promise<boolean> {
    const mine = written.status?.allocation;
    let room: GameRoom | undefined = written;
    for (let attempt = 0; attempt < this.settings.maxWrites && room; attempt++) {
      const held = room.status?.allocation;
      if (!mine || held?.id !== id || held.allocatedAt !== mine.allocatedAt || held.endedAt) return true;
      const was = before.status?.allocation;
      const restore: AllocationRestore = {
        // A status that moved on since (the room reported something else) stays.
        status: room.status?.status === written.status?.status ? before.status?.status ?? 'ready' : room.status?.status ?? 'ready',
        allocation: was ? { ...Object.fromEntries(Object.keys(held).map((k) => [k, null])), ...was } : null,
        previousAllocations: before.status?.previousAllocations ?? null,
      };
      try {
        await this.deps.store.restoreAllocation(name, room.metadata.name ?? '', room.metadata.resourceVersion ?? '', restore);
        this.deps.logger.warn('took back an allocation: another room held its allocationId from an earlier try this replica\'s cache did not show yet', { scheduler: name, allocationId: id, room: room.metadata.name });
        return true;
      } catch (err) {
        if (err instanceof StoreNotFoundError) return true;
        if (!(err instanceof StoreConflictError)) break;
        room = await this.deps.store.getRoom(name, room.metadata.name ?? '').catch(() => undefined);
      }
    }
    this.deps.logger.warn('could not take back an allocation whose allocationId another room held first; it ends with its TTL', { scheduler: name, allocationId: id, room: written.metadata.name });
    return false;
  }

  /**
   * Returns once another try of the id that holds its claim is over (its room shows in the cache,
   * or its claim is gone or stale, then deleted here): the caller looks again.
   */
  private async waitForOtherTry(name: string, id: string, hash: string, first: AllocationIdClaim | undefined, started: number): Promise<void> {
    let claim = first;
    for (;;) {
      if (this.deps.now() - started > CLAIM_WAIT_MS) {
        this.idWaits.inc({ outcome: 'timeout' });
        const takeOver = claim ? `; if that replica stopped mid-request, its claim is taken over once ${CLAIM_STALE_MS / 1000} s old, in ${Math.max(1, Math.ceil((claim.createdAt + CLAIM_STALE_MS - this.deps.now()) / 1000))} s` : '';
        throw new AllocationContentionError(`another try of allocationId ${id} is still being answered${claim ? ` (by gateway replica ${claim.replica})` : ''}; send it again shortly, and it answers the same room${takeOver}`);
      }
      if (!claim) {
        this.idWaits.inc({ outcome: 'released' });
        return;
      }
      if (this.deps.now() - claim.createdAt > CLAIM_STALE_MS) {
        this.deps.logger.warn(`took over an allocationId claim over ${CLAIM_STALE_MS / 1000} s old: the try that made it is over without an answer (its replica stopped mid-request); this try allocates`, { scheduler: name, allocationId: id, replica: claim.replica });
        await this.deps.store.releaseAllocationClaim(name, id, claim);
        this.idWaits.inc({ outcome: 'taken_over' });
        return;
      }
      if (claim.requestHash !== hash) {
        this.idWaits.inc({ outcome: 'conflict' });
        throw this.idConflict(id);
      }
      const readAt = this.deps.now() + CLAIM_POLL_READ_MS;
      while (this.deps.now() < readAt) {
        if (this.deps.store.roomsWithAllocationId(name, id).length > 0) {
          this.idWaits.inc({ outcome: 'room' });
          return;
        }
        await delay(CLAIM_POLL_CACHE_MS);
      }
      claim = await this.deps.store.readAllocationClaim(name, id);
    }
  }

  private async allocateOnce(scheduler: Scheduler, id: string, hash: string, request: AllocationRequest, claimedAt?: number, write: AllocationWrite = { mayHaveLanded: false }): Promise<AllocationAnswer> {
    const name = scheduler.metadata.name ?? '';
    const maxMatches = roomsMaxMatches(scheduler, cachedVersions(this.deps.rooms));
    const cap = ttlCap(activeDefinition(scheduler, cachedVersions(this.deps.rooms)), this.settings.maxTtlSeconds);
    const requested = request.ttlSeconds ?? Math.min(this.settings.defaultTtlSeconds, cap.seconds);
    const ttl = Math.min(requested, cap.seconds);
    const claimed = this.pendingClaims(name);
    const candidates = chooseCandidates(this.deps.store.listAllocatableGroups(name), {
      activeVersion: scheduler.status?.version, selectors: request.selectors, strategy: request.strategy ?? 'packed', random: this.random, maxMatches,
      busyOnHost: (host) => this.deps.store.countBusyRooms(name, host),
      limit: this.settings.maxWrites, mine: this.shares?.mine(), ...(claimed ? { skip: (r: GameRoom) => claimed.has(r.metadata.name ?? '') } : {}),
    });
    let writes = 0;
    for (const first of candidates) {
      let room: GameRoom | undefined = first;
      while (room) {
        if (writes >= this.settings.maxWrites) {
          throw new AllocationContentionError(`every room tried for scheduler ${name} was changed by concurrent requests ${counted(writes, 'time')} in a row; retry shortly`);
        }
        const now = this.deps.now();
        if (claimedAt !== undefined && now - claimedAt > CLAIM_HOLD_MS) {
          throw new AllocationContentionError(`allocationId ${id}: no room was written within ${CLAIM_HOLD_MS / 1000} s of the request (the Kubernetes API is slow); nothing was allocated; send it again`);
        }
        if (writes > 0) this.retries.inc();
        writes++;
        const allocation: GameRoomStatusAllocation = {
          id, requestHash: hash, allocatedAt: new Date(now).toISOString(), expiresAt: new Date(now + ttl * 1000).toISOString(),
          runningMatches: room.status?.runningMatches ?? 0,
          ...(request.metadata !== undefined ? { metadata: request.metadata } : {}),
          ...(this.replica !== undefined ? { replica: this.replica } : {}),
        };
        this.noteClaim(name, room);
        try {
          // A ready room shows `allocated`; a multi-match room's slot leaves it `active`.
          const shown = withAllocation(room.status?.status ?? 'ready', { allocation }, now);
          const previousAllocations = supersededAllocations(room.status, now, previousAllocationCap(maxMatches));
          write.mayHaveLanded = true;
          const written = await this.deps.store.commitAllocation(name, room.metadata.name ?? '', room.metadata.resourceVersion ?? '', { allocation, status: shown, previousAllocations, replacing: room.status?.allocation })
            .catch(refusedAs(roomkeeperRequest('patch', 'GameRoom', name, 'status')));
          write.written = written;
          write.before = room;
          this.deps.logger.info('room allocated', { scheduler: name, room: written.metadata.name, allocationId: id, expiresAt: allocation.expiresAt, writes });
          return answerOf(written, allocation, ttlNote(request.ttlSeconds, ttl, this.settings.defaultTtlSeconds, cap.by));
        } catch (err) {
          if (err instanceof StoreNotFoundError || err instanceof StoreConflictError) write.mayHaveLanded = false;
          if (err instanceof StoreNotFoundError) break;
          if (!(err instanceof StoreConflictError)) throw err;
          this.conflicts.inc();
          // The room changed since the cache showed it: read it again; still free, try it again.
          const fresh = await this.deps.store.getRoom(name, room.metadata.name ?? '');
          if (fresh) this.shares?.noteLoss(fresh);
          const mine = fresh ? allocationRecord(fresh.status, id) : undefined;
          if (fresh && mine) {
            write.mayHaveLanded = true;
            return this.replay(fresh, mine, hash, maxMatches);
          }
          room = fresh && isAllocatable(fresh, maxMatches) ? fresh : undefined;
        }
      }
    }
    const selectors = request.selectors && request.selectors.length > 0 ? ' matching the selectors' : '';
    // A multi-match room may have free slots it does not offer yet: say why, and when they come;
    // only when one does (a room with an open allocation and a slot beyond it), not when every room
    // is full or not ready (only on this refusal: one pass over the scheduler's cached rooms).
    const heldBack = maxMatches > 1 && this.deps.rooms.listRooms(name).some((r) => openAllocation(r.status) !== undefined && (r.status?.runningMatches ?? 0) + 1 < maxMatches);
    const slots = heldBack ? ` (a multi-match room holds one open allocation at a time: its next match slot is offered once the room reports the match in runningMatches or the allocation's TTL ends)` : '';
    // Rooms the operator marked silent would have been offered otherwise: said, so that a fleet of
    // hung game servers is not taken for a full one (from the cache's index: a refusal storm at a
    // full fleet walks no fleet).
    const silent = this.deps.store.silentRooms(name).filter((r) => mayBeAllocatable({ ...r, status: { ...r.status, silentSince: undefined } })).length;
    const unheard = silent > 0 ? ` (${counted(silent, 'room')} ${silent === 1 ? 'is' : 'are'} not offered: no ping of ${silent === 1 ? 'its game server' : 'their game servers'} has been seen for longer than ROOMKEEPER_ROOM_SILENCE_TIMEOUT, status.silentSince; each is offered again once it pings; the health check makes a room in place of each, up to the scheduler's maxSurge, and removes those still silent at the ping timeout)` : '';
    throw new NoRoomAvailableError(`no ready rooms available for scheduler ${name}${selectors}${slots}${unheard}; retry later or add rooms`, {
      retryAfterSeconds: this.settings.noRoomRetryAfterSeconds, maestroStatus: this.settings.maestroNoRoomStatus,
    });
  }

  private replay(room: GameRoom, record: AllocationRecord, hash: string, maxMatches: number): AllocationAnswer {
    const decision = replayDecision(room, record, hash, maxMatches);
    if (decision.kind === 'id_conflict') throw this.idConflict(record.allocation.id);
    if (decision.kind === 'ended') {
      throw new AllocationEndedError(decision.message, {
        roomId: room.metadata.name ?? '', ...(decision.endedAt ? { endedAt: decision.endedAt } : {}), endReason: decision.endReason,
        ...(decision.supersededAt ? { supersededAt: decision.supersededAt } : {}),
      });
    }
    return answerOf(room, decision.allocation, decision.message);
  }
}
