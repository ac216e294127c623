/**
 * The narrow interfaces the gateway's use cases talk to. `adapters/kubernetes-store.ts`
 * implements them with custom resources (reads from informer caches where a list is needed);
 * `testing/in-memory-store.ts` implements them in memory for router tests.
 */
import type { GameRoom, GameRoomStatus, GameRoomStatusAllocation, Operation, PreviousAllocation, PingDigestSpec, PingDigestStatus, RoomStatus, Scheduler, SchedulerSpec, SchedulerVersion } from '../../common/src/generated/resources';
import type { AllocatableGroup } from '../../common/src/rooms/allocation';
import type { FindVersion } from '../../common/src/resources/scheduler-version';

export interface SpecWriteOptions {
  /** Validate and admit only (`dryRun=All`): nothing is stored. */
  dryRun?: boolean;
}

export interface SchedulerStore {
  /** A fresh read (read-your-writes), or undefined when there is no such scheduler. */
  getScheduler(name: string): Promise<Scheduler | undefined>;
  /** Every scheduler (from a cache). */
  listSchedulers(): Promise<Scheduler[]>;
  /** Creates the Scheduler; throws StoreAlreadyExistsError when the name is taken. */
  createScheduler(name: string, spec: SchedulerSpec): Promise<Scheduler>;
  /**
   * Replaces the spec of `current`, with its generation as precondition; returns the updated
   * object (with its new generation). Throws StoreConflictError when it lost a race. The same
   * write says the API made the change, for `operationId` (SPEC_CHANGE_SOURCE_ANNOTATION): the
   * operator, should it see the new generation before that operation exists, enqueues it as the
   * API's, not as a kubectl user's. With `dryRun`, the same write as a server-side dry run: the
   * API server validates it (the CRD's CEL rules too) and answers the object it would store,
   * and nothing is stored. Throws StoreInvalidError when the API server refuses the spec.
   */
  updateSchedulerSpec(current: Scheduler, spec: SchedulerSpec, operationId: string, options?: SpecWriteOptions): Promise<Scheduler>;
  /** Deletes the Scheduler (the operator's finalizer keeps it until cleanup); a missing one is fine. */
  deleteScheduler(name: string): Promise<void>;
  /** One version snapshot (`<scheduler>-<version>`), or undefined. */
  getVersion(schedulerName: string, version: string): Promise<SchedulerVersion | undefined>;
  /** Every version of a scheduler (from a cache), in any order. */
  listVersions(schedulerName: string): Promise<SchedulerVersion[]>;
}

export interface OperationStore {
  /** Creates the Operation (common/src/operations/operation-factory.ts builds it); 'exists' when one with that id is already there (not an error). */
  createOperation(op: Operation): Promise<'created' | 'exists'>;
  /** A fresh read, or undefined. */
  getOperation(id: string): Promise<Operation | undefined>;
  /** Every operation of a scheduler (from a cache), in any order. */
  listOperations(schedulerName: string): Promise<Operation[]>;
  /** Sets `spec.cancelRequested: true` (a merge patch). */
  requestCancel(id: string): Promise<void>;
}

/** The ping-owned part of a GameRoom's status, written when a ping changes it. */
export interface RoomPingStatusPatch {
  status: NonNullable<GameRoomStatus['status']>;
  pingStatus: NonNullable<GameRoomStatus['pingStatus']>;
  lastPingAt: string;
  runningMatches: number;
  /** The ping's `timestamp` (Unix seconds); null: it sent none, and the last one is removed. */
  pingTimestamp: number | null;
  /** The ping reports the match the room's open allocation was made for: written as its `takenAt`. */
  allocationTakenAt?: string;
  /**
   * The room reported fewer running matches than its open allocation counts from (a match ended
   * before the allocated one started): written as the allocation's `runningMatches`.
   */
  allocationRunningMatches?: number;
}

/** Finds a scheduler's version in the store's cache (no API call: the ping path reads it once a ping). */
export function cachedVersions(rooms: Pick<RoomStore, 'findVersion'>): FindVersion {
  return (schedulerName, version) => rooms.findVersion(schedulerName, version);
}

/** The rooms API's view: synchronous cache lookups on the hot path, one write when a status changes. */
export interface RoomStore {
  /** The GameRoom `roomId` in namespace `schedulerName`, from the cache. */
  findRoom(schedulerName: string, roomId: string): GameRoom | undefined;
  /** Every GameRoom of a scheduler, from the cache. */
  listRooms(schedulerName: string): GameRoom[];
  /** The Scheduler from the cache (for its forwarders and game). */
  findScheduler(schedulerName: string): Scheduler | undefined;
  /** When the cache saw the GameRoom `roomId` deleted, if it did lately (room-tombstones.ts); else undefined. */
  roomDeletedAt(schedulerName: string, roomId: string): number | undefined;
  /** A version's snapshot from the cache, when known (the active one's: its forwarders and maxMatches). */
  findVersion(schedulerName: string, version: string): SchedulerVersion | undefined;
  /**
   * Merge-patches the room's status subresource; with `resourceVersion`, on condition that the room
   * is still at that version (the cached one the patch was composed from). Throws the API server's
   * error: 404 when the room is gone, 409 when it changed since.
   */
  patchRoomStatus(schedulerName: string, roomId: string, resourceVersion: string | undefined, patch: RoomPingStatusPatch): Promise<void>;
}

/** What one allocation writes to a room's status. */
export interface AllocationCommit {
  allocation: GameRoomStatusAllocation;
  status: NonNullable<GameRoomStatus['status']>;
  previousAllocations: PreviousAllocation[];
  /** The allocation the room holds at the resourceVersion written on (none: absent), which `allocation` replaces whole. */
  replacing?: GameRoomStatusAllocation;
}

/** Where allocations find their candidates, are committed and, on a replay the cache cannot answer, looked up. */
export interface RoomAllocationStore {
  /** The rooms of a scheduler that may be allocated (`mayBeAllocatable`), in their groups, from the cache's index: not the whole fleet. */
  listAllocatableGroups(schedulerName: string): AllocatableGroup[];
  /** How many rooms of a scheduler on `host` are busy (`isBusyRoom`), from the cache's index. */
  countBusyRooms(schedulerName: string, host: string): number;
  /** The cached rooms of a scheduler the operator marked silent (`status.silentSince`), from the cache's index. */
  silentRooms(schedulerName: string): GameRoom[];
  /** The cached rooms of a scheduler whose status holds `allocationId` (current or earlier), from the cache's index. */
  roomsWithAllocationId(schedulerName: string, allocationId: string): GameRoom[];
  /**
   * Writes the commit (`allocation`; `status`: `allocated`, or `active` for a multi-match room's
   * slot; `previousAllocations`: the replaced allocation kept for replays) to the room's status in
   * ONE write carrying `resourceVersion` as precondition (a compare-and-swap). Throws
   * StoreConflictError when the room changed since that version, StoreNotFoundError when it is gone.
   */
  commitAllocation(schedulerName: string, roomId: string, resourceVersion: string, commit: AllocationCommit): Promise<GameRoom>;
  /** One GameRoom read from the API server, or undefined when it is gone. */
  getRoom(schedulerName: string, roomId: string): Promise<GameRoom | undefined>;
  /** Every GameRoom of a scheduler read from the API server, not the cache (a replay after a restart). */
  listRoomsFresh(schedulerName: string): Promise<GameRoom[]>;
  /**
   * True when the rooms cache has caught up, within `timeoutMs`, with the API server as of
   * `resourceVersion` (a room write's own): every room write that had landed by then shows in the
   * cache. False when it could not tell in time; then only `listRoomsFresh` is sure.
   */
  roomsCacheCaughtUp(resourceVersion: string, timeoutMs: number): Promise<boolean>;
  /**
   * Takes back an allocation this gateway wrote (see RoomAllocations.withdraw): merge-patches the
   * room's status with `restore`, carrying `resourceVersion` as precondition. Throws
   * StoreConflictError or StoreNotFoundError as `commitAllocation` does.
   */
  restoreAllocation(schedulerName: string, roomId: string, resourceVersion: string, restore: AllocationRestore): Promise<GameRoom>;
  /**
   * Claims `allocationId` for one try (an AllocationClaim named after the id, in the scheduler's
   * namespace): `created` when this call made it; else the claim another try holds (undefined
   * when that one went before it could be read). Throws StoreNotFoundError when the scheduler's
   * namespace is gone.
   */
  claimAllocationId(schedulerName: string, allocationId: string, holder: { requestHash: string; replica: string }): Promise<AllocationIdClaimResult>;
  /** The claim on `allocationId` now (read from the API server), undefined when there is none. */
  readAllocationClaim(schedulerName: string, allocationId: string): Promise<AllocationIdClaim | undefined>;
  /**
   * Deletes that claim, with its uid as precondition (a claim made since by another try stays);
   * gone already is no error. With `afterMs`, the delete is made that much later (the promise
   * resolves at once), and stopping the store waits for it.
   */
  releaseAllocationClaim(schedulerName: string, allocationId: string, claim: AllocationIdClaim, afterMs?: number): Promise<void>;
}

/** A room's allocation fields as they were before an allocation that is taken back (null: absent). */
export interface AllocationRestore {
  status: RoomStatus;
  /** The allocation as it was, with null for each field the withdrawn one had and it did not. */
  allocation: Record<string, unknown> | null;
  previousAllocations: PreviousAllocation[] | null;
}

/**
 * An AllocationClaim older than this (by its creationTimestamp) is stale: the try that made it is
 * over, as a try writes no room once 30 s passed since its request arrived (RoomAllocations'
 * CLAIM_HOLD_MS) and lets its claim go within seconds after; the rest is the clock skew between
 * gateways and the API server that is tolerated. A stale claim was left by a replica that stopped
 * mid-request (kill -9, OOM, node loss): the next try of its id takes it over, and every replica's
 * periodic sweep (KubernetesStore) deletes those of any replica.
 */
export const ALLOCATION_CLAIM_STALE_MS = 60_000;

/** One try of an allocationId being answered (an AllocationClaim). */
export interface AllocationIdClaim {
  uid: string;
  requestHash: string;
  /** The gateway replica answering that try. */
  replica: string;
  /** When the API server created the claim: milliseconds since the epoch, the API server's clock, whole seconds. */
  createdAt: number;
}

export type AllocationIdClaimResult = { created: true; claim: AllocationIdClaim } | { created: false; claim: AllocationIdClaim | undefined };

/** One replica's digest of one scheduler (see `common/src/rooms/ping-digest.ts` for the format). */
export interface PingDigestWrite {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  spec: PingDigestSpec;
  status: PingDigestStatus;
}

/** Where coalesced liveness goes (see `common/src/rooms/ping-digest.ts` for the format). */
export interface PingDigestWriter {
  /**
   * Replaces the status of PingDigest `name` in `namespace`, creating the PingDigest first when
   * there is none; `namespace-gone` when the namespace no longer exists or is being deleted
   * (nothing to write).
   */
  writeDigest(digest: PingDigestWrite): Promise<'written' | 'namespace-gone'>;
  /**
   * Writes a room's last ping on its GameRoom (`status.lastPingAt` alone, a merge patch): where
   * its scheduler's PingDigest is refused (a ResourceQuota, an admission policy), the pings'
   * record goes there instead (ping-recorder.ts).
   */
  writeRoomLastPing(namespace: string, roomId: string, lastPingAt: string): Promise<void>;
}
