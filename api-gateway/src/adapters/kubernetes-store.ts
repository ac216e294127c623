/**
 * The gateway's store ports on Kubernetes custom resources (roomkeeper.io/v1). Lists come from
 * informer caches (so list endpoints and the ping path never fetch every object per request);
 * single reads that must see the gateway's own writes (a scheduler, an operation, a version) are
 * direct GETs. Every API write is counted in `roomkeeper_kube_writes_total{kind}`.
 */
import { createHash } from 'node:crypto';
import type * as k8s from '@kubernetes/client-node';
import { mergePatchBetween } from '../../../common/src/json/merge-patch';
import type { Logger } from '../../../common/src/logger';
import type { Counter, MetricsRegistry } from '../../../common/src/metrics';
import type { AllocationClaim, GameRoom, GameRoomList, GameRoomStatusAllocation, Operation, Scheduler, SchedulerSpec, SchedulerVersion } from '../../../common/src/generated/resources';
import type { CrdKind } from '../../../common/src/generated/schemas';
import { apiStatus, describeApiError, isJsonPatchNotApplied, isNamespaceTerminating, isNotFound, JSON_PATCH, MERGE_PATCH, statusBodyOf } from '../../../common/src/kube/clients';
import { API_VERSION, PLURALS, ROOMKEEPER_API } from '../../../common/src/resources/api-group';
import { CREATED_THROUGH_API_ANNOTATIONS, MANAGED_BY_LABEL, MANAGED_BY_VALUE, specChangeSourcePatch } from '../../../common/src/resources/labels';
import { versionObjectName } from '../../../common/src/resources/scheduler-version';
import { allocatableGroupKey, allocatableGroupOf, isBusyRoom, mayBeAllocatable, type AllocatableGroup } from '../../../common/src/rooms/allocation';
import { FreshReads } from '../../../common/src/runtime/fresh-read';
import type { Clock } from '../../../common/src/runtime/clock';
import type { CacheRequests } from '../../../common/src/runtime/liveness';
import type { EventType, Indexer } from '../../../common/src/kube/informer';
import type { AccessAnswers } from '../../../common/src/kube/api-access';
import { StoreAlreadyExistsError, StoreConflictError, StoreInvalidError, StoreNotFoundError, StoreUnavailableError, type FieldViolation } from '../errors';
import { ALLOCATION_CLAIM_STALE_MS, type AllocationCommit, type AllocationIdClaim, type AllocationRestore, type AllocationIdClaimResult, type OperationStore, type PingDigestWrite, type PingDigestWriter, type RoomAllocationStore, type RoomPingStatusPatch, type RoomStore, type SchedulerStore, type SpecWriteOptions } from '../store-ports';
import { slimGameRoom, slimOperation } from './cache-shapes';
import { ResourceCache } from './resource-cache';
import { CLAIM_SECOND_LABEL, ClaimSweeper } from './claim-sweeper';
import { RoomTombstones } from './room-tombstones';

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const VERSION_NAME = /^v[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}$/;

export interface KubernetesStoreOptions {
  kc: k8s.KubeConfig;
  custom: k8s.CustomObjectsApi;
  core: k8s.CoreV1Api;
  logger: Logger;
  metrics: MetricsRegistry;
  /** How often this replica deletes stale AllocationClaims of every replica (default ABANDONED_CLAIM_SWEEP_MS). */
  claimSweepIntervalMs?: number;
  /** The clock claims' ages are read against (the API server stamps their creation). */
  now?: Clock;
  /** Told how the API server answered the caches' lists and watches (`KubeClients.access`: /readyz). */
  access?: AccessAnswers;
}

function validName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && NAME.test(name);
}

/**
 * The API server is the one judge of what a resource may hold (the CRD's schema and CEL rules):
 * a 422 becomes the management API's validation error, each cause with its field path relative
 * to the request body (the Scheduler's `spec.` is the body itself; `metadata.name` is `name`).
 */
function invalidCauses(err: unknown): FieldViolation[] {
  return (statusBodyOf(err)?.details?.causes ?? []).slice(0, 100).map((c) => ({
    // The Scheduler's root rules are about metadata.name (a CRD rule's fieldPath cannot point into
    // metadata), and the API server names the root `<nil>`.
    field: (c.field ?? '').replace(/^spec\./, '').replace(/^(metadata\.name|<nil>|)$/, 'name'),
    // "Invalid value: \"string\": <rule message>" reads as the rule's message alone (the API
    // server names a CEL rule's field by its type, "" for an int-or-string such as maxSurge).
    message: (c.message ?? 'invalid').replace(/^(?:Invalid value: "(?:string|integer|object|array|number|boolean|)"|Required value|Forbidden): (?=.)/, ''),
  }));
}

function mapWriteError(err: unknown): never {
  const status = apiStatus(err);
  if (status === 422 || status === 400) throw new StoreInvalidError(describeApiError(err).replace(/^\d+\s*/, ''), invalidCauses(err));
  if (status === 429 || status === 503) throw new StoreUnavailableError(`the Kubernetes API is busy: ${describeApiError(err)}`);
  throw err;
}

/**
 * The rooms cache's indexes: rooms that may be allocated, by scheduler and group (the key's first
 * part is the scheduler, so the informer lists a scheduler's groups); busy rooms, by scheduler
 * and host; rooms by the allocationIds they hold and held (current and earlier; the id alone, as
 * the room's status spells it, so the index makes no string of its own: filtered by scheduler);
 * rooms the operator marked silent, by scheduler.
 */
const ALLOCATABLE = 'allocatable';
const BUSY_ON_HOST = 'busy-on-host';
const ALLOCATION_ID = 'allocation-id';
const SILENT = 'silent';
const hostKey = (schedulerName: string, host: string) => `${schedulerName}\u0000${host}`;

function allocationIdsOf(room: GameRoom): string[] | undefined {
  const s = room.status;
  if (!s?.allocation && !s?.previousAllocations?.length) return undefined;
  const ids = (s.previousAllocations ?? []).map((a) => a.id);
  if (s.allocation) ids.push(s.allocation.id);
  return ids;
}

/**
 * How often each replica deletes the AllocationClaims of any replica older than
 * ALLOCATION_CLAIM_STALE_MS (left by a replica that stopped mid-request): one list of the claims,
 * by label, which hold only the allocations being answered.
 */
const ABANDONED_CLAIM_SWEEP_MS = 60_000;

/**
 * An AllocationClaim's name: derived from the id alone (the namespace is the scheduler's), so every
 * try of one id, on any replica, names the same object. An id may hold characters a name may not.
 */
function claimName(allocationId: string): string {
  return `id-${createHash('sha256').update(allocationId).digest('hex').slice(0, 40)}`;
}

function claimOf(obj: AllocationClaim): AllocationIdClaim {
  return {
    uid: obj.metadata.uid ?? '', requestHash: obj.spec.requestHash ?? '', replica: obj.spec.replica,
    createdAt: Date.parse(String(obj.metadata.creationTimestamp ?? '')) || 0,
  };
}

/**
 * Every field of a room's allocation, null: what a new allocation's merge patch starts from, so that
 * nothing an earlier allocation left stays (an earlier `takenAt` ended each new allocation of the
 * room at once as occupied, and the room was handed to match after match: trial T). Typed by the
 * allocation's own keys: a field added to the CRD must be listed here to compile.
 */
const NO_ALLOCATION: Record<keyof GameRoomStatusAllocation, null> = {
  id: null, requestHash: null, metadata: null, allocatedAt: null, runningMatches: null, expiresAt: null, takenAt: null, endedAt: null, endReason: null, replica: null,
};

export class KubernetesStore implements SchedulerStore, OperationStore, RoomStore, RoomAllocationStore, PingDigestWriter {
  private readonly schedulers: ResourceCache<Scheduler>;
  private readonly versions: ResourceCache<SchedulerVersion>;
  private readonly operations: ResourceCache<Operation>;
  private readonly rooms: ResourceCache<GameRoom>;
  /** The rooms this replica's cache saw deleted lately, to tell one that pings after its deletion. */
  private readonly tombstones = new RoomTombstones();
  private readonly writes: Counter;
  private readonly writeErrors: Counter;
  /** Full lists of a scheduler's rooms, one at a time per scheduler, shared by the replays that wait for one. */
  private readonly freshRoomLists = new FreshReads<GameRoom[]>((schedulerName) => this.listRoomPages(schedulerName));
  /** Deletes the AllocationClaims kept after their try, in batches (made with the first claim: it knows the replica). */
  private claimSweeper: ClaimSweeper | undefined;
  private abandonedClaimsTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: KubernetesStoreOptions) {
    // The path is spelled here, not by collectionPath(): the RBAC test follows `kind` from these
    // four call sites only, and a shared helper's parameter would add the operator's kinds.
    // Rooms and operations are cached slim (`cache-shapes.ts`): at 10,000 rooms the cache is most
    // of the gateway's heap.
    const cache = <T extends k8s.KubernetesObject>(kind: CrdKind, transform?: (obj: T) => T, indexers?: Record<string, Indexer<T>>, onEvent?: (type: EventType, obj: T) => void) =>
      new ResourceCache<T>({
        kc: options.kc,
        path: `/apis/${API_VERSION}/${PLURALS[kind]}`,
        resource: PLURALS[kind],
        logger: options.logger,
        metrics: options.metrics,
        transform,
        indexers,
        onEvent,
        access: options.access,
        list: (page) => options.custom.listClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS[kind], ...page }) as Promise<k8s.KubernetesListObject<T>>,
      });
    this.schedulers = cache<Scheduler>('Scheduler');
    this.versions = cache<SchedulerVersion>('SchedulerVersion');
    this.operations = cache<Operation>('Operation', slimOperation);
    this.rooms = cache<GameRoom>('GameRoom', slimGameRoom, {
      // Allocation reads these on every request instead of walking the scheduler's whole fleet.
      [ALLOCATABLE]: (room) => mayBeAllocatable(room) ? `${room.metadata.namespace ?? ''}\u0000${allocatableGroupKey(room)}` : undefined,
      [BUSY_ON_HOST]: (room) => isBusyRoom(room) ? hostKey(room.metadata.namespace ?? '', room.status?.host ?? '') : undefined,
      [ALLOCATION_ID]: allocationIdsOf,
      [SILENT]: (room) => (room.status?.silentSince !== undefined ? room.metadata.namespace ?? '' : undefined),
    }, (type, room) => this.tombstones.observe(type, room.metadata.namespace ?? '', room.metadata.name ?? ''));
    this.writes = options.metrics.counter('roomkeeper_kube_writes_total', 'Kubernetes API writes made by the gateway, by kind.', { labelNames: ['kind'] });
    this.writeErrors = options.metrics.counter('roomkeeper_kube_write_errors_total', 'Kubernetes API writes of the gateway that the API server refused (conflicts, not found, invalid), by kind.', { labelNames: ['kind'] });
  }

  private get caches(): Pick<ResourceCache<k8s.KubernetesObject>, 'start' | 'stop' | 'isSynced' | 'error' | 'name' | 'pendingRequest'>[] {
    return [this.schedulers, this.versions, this.operations, this.rooms];
  }

  /** The caches as the liveness check sees them (`cacheCheck`). */
  get cacheRequests(): readonly CacheRequests[] {
    return this.caches;
  }

  /** For tests: what each cache holds now, by resource plural. */
  cached(): Record<string, readonly k8s.KubernetesObject[]> {
    return { [PLURALS.Scheduler]: this.schedulers.list(), [PLURALS.SchedulerVersion]: this.versions.list(), [PLURALS.Operation]: this.operations.list(), [PLURALS.GameRoom]: this.rooms.list() };
  }

  /** Starts every cache; resolves after each made its first attempt. */
  async start(): Promise<void> {
    await Promise.all(this.caches.map((c) => c.start()));
    const sweep = () => {
      this.abandonedClaimsTimer = setTimeout(() => {
        void this.deleteAbandonedClaims(ALLOCATION_CLAIM_STALE_MS).finally(sweep);
      }, this.options.claimSweepIntervalMs ?? ABANDONED_CLAIM_SWEEP_MS);
      this.abandonedClaimsTimer.unref();
    };
    sweep();
  }

  /**
   * Deletes the AllocationClaims, of every replica, made more than `ageMs` ago (by the API server's
   * clock against this one's; ALLOCATION_CLAIM_STALE_MS when timed): their tries are over (a try
   * writes no room 30 s after its request, and a claim kept after its try goes within seconds), so
   * these were left by a replica that stopped mid-request and whose ids were not tried again. Each
   * with its uid as precondition, so a claim made since by a new try stays.
   * Returns how many it deleted; a failure is logged, and the next sweep tries again.
   */
  async deleteAbandonedClaims(ageMs: number): Promise<number> {
    let deleted = 0;
    try {
      let next: string | undefined;
      do {
        const page = await this.options.custom.listClusterCustomObject({
          ...ROOMKEEPER_API, plural: PLURALS.AllocationClaim, labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`, limit: 500, ...(next ? { _continue: next } : {}),
        }) as { items: AllocationClaim[]; metadata?: { continue?: string } };
        for (const obj of page.items) {
          const claim = claimOf(obj);
          if ((this.options.now ?? Date.now)() - claim.createdAt <= ageMs || !obj.metadata.namespace) continue;
          // A failure is logged by deleteClaim; the next sweep tries again.
          if (await this.deleteClaim(obj.metadata.namespace, obj.spec.allocationId, claim).catch(() => false)) deleted++;
        }
        next = page.metadata?.continue || undefined;
      } while (next);
    } catch (err) {
      this.options.logger.warn('could not look for abandoned AllocationClaims; trying again at the next sweep', { error: describeApiError(err) });
    }
    if (deleted > 0) this.options.logger.info('deleted abandoned AllocationClaims (left by a gateway replica that stopped mid-request)', { deleted });
    return deleted;
  }

  async stop(): Promise<void> {
    clearTimeout(this.abandonedClaimsTimer);
    // Claims kept on purpose for a while after their try (see RoomAllocations) are deleted when due, not sooner.
    await this.claimSweeper?.stop();
    await Promise.all(this.caches.map((c) => c.stop()));
  }

  /** undefined when every cache has synced once; otherwise which have not, and why. */
  notReadyReason(): string | undefined {
    const names = [PLURALS.Scheduler, PLURALS.SchedulerVersion, PLURALS.Operation, PLURALS.GameRoom];
    const waiting = this.caches.map((c, i) => (c.isSynced ? undefined : `${names[i] ?? ''}${c.error ? ` (${c.error})` : ''}`)).filter(Boolean);
    return waiting.length > 0 ? `caches not synced: ${waiting.join(', ')}` : undefined;
  }

  // ---- SchedulerStore ----

  async getScheduler(name: string): Promise<Scheduler | undefined> {
    if (!validName(name)) return undefined;
    try {
      return (await this.options.custom.getClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Scheduler, name })) as Scheduler;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Whether the scheduler exists, as far as the cache knows; true while the cache has not synced. */
  hasScheduler(name: string): boolean {
    return !this.schedulers.isSynced || this.schedulers.get(name) !== undefined;
  }

  listSchedulers(): Promise<Scheduler[]> {
    return Promise.resolve(this.requireSynced(this.schedulers, PLURALS.Scheduler).list());
  }

  async createScheduler(name: string, spec: SchedulerSpec): Promise<Scheduler> {
    const body: Scheduler = { apiVersion: API_VERSION, kind: 'Scheduler', metadata: { name, annotations: { ...CREATED_THROUGH_API_ANNOTATIONS } }, spec };
    try {
      const created = (await this.options.custom.createClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Scheduler, body })) as Scheduler;
      this.writes.inc({ kind: 'scheduler' });
      return created;
    } catch (err) {
      this.countFailedWrite(err, 'scheduler');
      if (apiStatus(err) === 409) throw new StoreAlreadyExistsError('scheduler', name);
      return mapWriteError(err);
    }
  }

  /**
   * Replaces the spec if nobody changed it since `current` was read: a JSON Patch whose `test` of
   * metadata.generation is the precondition. Status writes (the operator's, many a second during
   * a rollout) change the resourceVersion but not the generation, so they do not conflict.
   * A dry run sends the same patch with `dryRun=All`; it is no write, and is not counted as one.
   */
  async updateSchedulerSpec(current: Scheduler, spec: SchedulerSpec, operationId: string, options: SpecWriteOptions = {}): Promise<Scheduler> {
    const name = current.metadata.name ?? '';
    const body = [
      { op: 'test', path: '/metadata/uid', value: current.metadata.uid },
      { op: 'test', path: '/metadata/generation', value: current.metadata.generation },
      { op: 'replace', path: '/spec', value: spec },
      ...specChangeSourcePatch(current, 'api', operationId),
    ];
    try {
      const dryRun = options.dryRun ? 'All' : undefined;
      const updated = (await this.options.custom.patchClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Scheduler, name, body, dryRun }, JSON_PATCH)) as Scheduler;
      if (!dryRun) this.writes.inc({ kind: 'scheduler' });
      return updated;
    } catch (err) {
      if (!options.dryRun) this.countFailedWrite(err, 'scheduler');
      if (apiStatus(err) === 409 || isJsonPatchNotApplied(err)) throw new StoreConflictError('scheduler', name);
      return mapWriteError(err);
    }
  }

  async deleteScheduler(name: string): Promise<void> {
    try {
      await this.options.custom.deleteClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Scheduler, name, propagationPolicy: 'Background' });
      this.writes.inc({ kind: 'scheduler' });
    } catch (err) {
      this.countFailedWrite(err, 'scheduler');
      if (!isNotFound(err)) throw err;
    }
  }

  async getVersion(schedulerName: string, version: string): Promise<SchedulerVersion | undefined> {
    const name = versionObjectName(schedulerName, version);
    if (!VERSION_NAME.test(version) || !validName(name)) return undefined;
    const cached = this.versions.get(name);
    if (cached) return cached;
    try {
      return (await this.options.custom.getClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.SchedulerVersion, name })) as SchedulerVersion;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  listVersions(schedulerName: string): Promise<SchedulerVersion[]> {
    return Promise.resolve(this.requireSynced(this.versions, PLURALS.SchedulerVersion).list().filter((v) => v.spec.scheduler === schedulerName));
  }

  // ---- OperationStore ----

  async createOperation(body: Operation): Promise<'created' | 'exists'> {
    try {
      await this.options.custom.createClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Operation, body });
      this.writes.inc({ kind: 'operation' });
      return 'created';
    } catch (err) {
      this.countFailedWrite(err, 'operation');
      if (apiStatus(err) === 409) return 'exists';
      return mapWriteError(err);
    }
  }

  async getOperation(id: string): Promise<Operation | undefined> {
    if (!validName(id)) return undefined;
    try {
      return (await this.options.custom.getClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Operation, name: id })) as Operation;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  listOperations(schedulerName: string): Promise<Operation[]> {
    return Promise.resolve(this.requireSynced(this.operations, PLURALS.Operation).list().filter((o) => o.spec.schedulerName === schedulerName));
  }

  async requestCancel(id: string): Promise<void> {
    try {
      await this.options.custom.patchClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Operation, name: id, body: { spec: { cancelRequested: true } } }, MERGE_PATCH);
      this.writes.inc({ kind: 'operation' });
    } catch (err) {
      this.countFailedWrite(err, 'operation');
      return mapWriteError(err);
    }
  }

  // ---- RoomStore ----

  findRoom(schedulerName: string, roomId: string): GameRoom | undefined {
    return this.rooms.get(roomId, schedulerName);
  }

  listRooms(schedulerName: string): GameRoom[] {
    return this.rooms.list(schedulerName);
  }

  findScheduler(schedulerName: string): Scheduler | undefined {
    return this.schedulers.get(schedulerName);
  }

  roomDeletedAt(schedulerName: string, roomId: string): number | undefined {
    return this.tombstones.deletedAt(schedulerName, roomId);
  }

  findVersion(schedulerName: string, version: string): SchedulerVersion | undefined {
    return this.versions.get(versionObjectName(schedulerName, version));
  }

  async patchRoomStatus(schedulerName: string, roomId: string, resourceVersion: string | undefined, patch: RoomPingStatusPatch): Promise<void> {
    const { allocationTakenAt, allocationRunningMatches, ...fields } = patch;
    // A merge patch: takenAt or runningMatches join the allocation's other fields.
    const allocation = { ...(allocationTakenAt !== undefined ? { takenAt: allocationTakenAt } : {}), ...(allocationRunningMatches !== undefined ? { runningMatches: allocationRunningMatches } : {}) };
    const status = Object.keys(allocation).length === 0 ? fields : { ...fields, allocation };
    await this.sendRoomStatus(schedulerName, roomId, resourceVersion === undefined ? { status } : { metadata: { resourceVersion }, status });
  }

  // ---- RoomAllocationStore ----

  listAllocatableGroups(schedulerName: string): AllocatableGroup[] {
    return this.rooms.indexKeys(ALLOCATABLE, schedulerName).map((key) =>
      allocatableGroupOf(key.slice(schedulerName.length + 1), () => this.rooms.byIndex(ALLOCATABLE, key)));
  }

  countBusyRooms(schedulerName: string, host: string): number {
    return this.rooms.indexCount(BUSY_ON_HOST, hostKey(schedulerName, host));
  }

  silentRooms(schedulerName: string): GameRoom[] {
    return this.rooms.byIndex(SILENT, schedulerName);
  }

  roomsWithAllocationId(schedulerName: string, allocationId: string): GameRoom[] {
    return this.rooms.byIndex(ALLOCATION_ID, allocationId).filter((r) => r.metadata.namespace === schedulerName);
  }

  commitAllocation(schedulerName: string, roomId: string, resourceVersion: string, commit: AllocationCommit): Promise<GameRoom> {
    // A merge patch: every field of an earlier allocation that this one does not set is removed
    // (null), and so is every member of its metadata that this one's lacks (a merge patch merges
    // objects: the new metadata alone would keep the old one's other members); the list of earlier
    // allocations is replaced whole. The resourceVersion makes the room the one `replacing` is read from.
    const { metadata, ...fields } = commit.allocation;
    const allocation = { ...NO_ALLOCATION, ...fields, metadata: metadata === undefined ? null : mergePatchBetween(commit.replacing?.metadata, metadata) };
    const body = { metadata: { resourceVersion }, status: { status: commit.status, allocation, previousAllocations: commit.previousAllocations } };
    return this.casRoomStatus(schedulerName, roomId, body);
  }

  /** A merge patch of a room's status carrying a resourceVersion: 409 is StoreConflictError, 404 StoreNotFoundError. */
  private async casRoomStatus(schedulerName: string, roomId: string, body: { metadata: { resourceVersion: string }; status: object }): Promise<GameRoom> {
    try {
      return await this.sendRoomStatus(schedulerName, roomId, body);
    } catch (err) {
      if (apiStatus(err) === 409) throw new StoreConflictError('gameroom', roomId);
      if (isNotFound(err)) throw new StoreNotFoundError('gameroom', roomId);
      return mapWriteError(err);
    }
  }

  /** The one write of a room's status (a merge patch), counted; the API server's error as it came. */
  private async sendRoomStatus(schedulerName: string, roomId: string, body: { metadata?: { resourceVersion: string }; status: object }): Promise<GameRoom> {
    try {
      const room = await this.options.custom.patchNamespacedCustomObjectStatus(
        { ...ROOMKEEPER_API, namespace: schedulerName, plural: PLURALS.GameRoom, name: roomId, body }, MERGE_PATCH,
      ) as GameRoom;
      this.writes.inc({ kind: 'gameroom_status' });
      return room;
    } catch (err) {
      this.countFailedWrite(err, 'gameroom_status');
      throw err;
    }
  }

  async getRoom(schedulerName: string, roomId: string): Promise<GameRoom | undefined> {
    try {
      return await this.options.custom.getNamespacedCustomObject({ ...ROOMKEEPER_API, namespace: schedulerName, plural: PLURALS.GameRoom, name: roomId }) as GameRoom;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Every room of the scheduler as the API server has it now (a list that starts after this call).
   * Concurrent callers share one list: at most one runs per scheduler and one waits, whatever the
   * number of allocations asking (at 10,000 rooms a list is 20 pages). Rooms are kept in the
   * cache's shape (`slimGameRoom`), page by page.
   */
  listRoomsFresh(schedulerName: string): Promise<GameRoom[]> {
    return this.freshRoomLists.get(schedulerName);
  }

  /**
   * Waits for the rooms cache to apply a room change at or past `resourceVersion` (a room write's
   * own: its event comes within milliseconds). The watch delivers room writes in increasing
   * revisions, so the cache then holds every room write made before.
   */
  roomsCacheCaughtUp(resourceVersion: string, timeoutMs: number): Promise<boolean> {
    return this.rooms.waitForResourceVersion(resourceVersion, timeoutMs);
  }

  restoreAllocation(schedulerName: string, roomId: string, resourceVersion: string, restore: AllocationRestore): Promise<GameRoom> {
    const body = { metadata: { resourceVersion }, status: restore };
    return this.casRoomStatus(schedulerName, roomId, body);
  }

  async claimAllocationId(schedulerName: string, allocationId: string, holder: { requestHash: string; replica: string }): Promise<AllocationIdClaimResult> {
    this.claimSweeper ??= new ClaimSweeper({
      replica: createHash('sha256').update(holder.replica).digest('hex').slice(0, 16),
      deleteCollection: (namespace, labelSelector) => this.deleteClaims(namespace, labelSelector),
      logger: this.options.logger,
    });
    const labels = this.claimSweeper.labels();
    const body: AllocationClaim = {
      apiVersion: API_VERSION, kind: 'AllocationClaim',
      metadata: { name: claimName(allocationId), namespace: schedulerName, labels: { ...labels, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
      spec: { scheduler: schedulerName, allocationId, requestHash: holder.requestHash, replica: holder.replica },
    };
    try {
      const created = await this.options.custom.createNamespacedCustomObject({ ...ROOMKEEPER_API, namespace: schedulerName, plural: PLURALS.AllocationClaim, body }) as AllocationClaim;
      this.writes.inc({ kind: 'allocation_claim' });
      const claim = claimOf(created);
      this.claimSweeper.opened(schedulerName, claim.uid, labels[CLAIM_SECOND_LABEL] ?? '');
      return { created: true, claim };
    } catch (err) {
      this.countFailedWrite(err, 'allocation_claim');
      if (apiStatus(err) === 409) return { created: false, claim: await this.readAllocationClaim(schedulerName, allocationId) };
      if (isNotFound(err) && statusBodyOf(err)?.details?.kind !== 'namespaces') {
        throw new StoreUnavailableError('the API server does not serve AllocationClaims (roomkeeper.io/v1): the CRD was not installed with this version; apply it (kubectl apply --server-side --force-conflicts -f helm/roomkeeper/crds/; --force-conflicts takes over the fields Helm wrote when it installed the CRDs)');
      }
      if (isNamespaceGone(err)) throw new StoreNotFoundError('scheduler', schedulerName);
      return mapWriteError(err);
    }
  }

  async readAllocationClaim(schedulerName: string, allocationId: string): Promise<AllocationIdClaim | undefined> {
    try {
      return claimOf(await this.options.custom.getNamespacedCustomObject({
        ...ROOMKEEPER_API, namespace: schedulerName, plural: PLURALS.AllocationClaim, name: claimName(allocationId),
      }) as AllocationClaim);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async releaseAllocationClaim(schedulerName: string, allocationId: string, claim: AllocationIdClaim, afterMs = 0): Promise<void> {
    if (this.claimSweeper?.released(claim.uid, afterMs)) return;
    await this.deleteClaim(schedulerName, allocationId, claim);
  }

  /** One deletecollection of kept claims (ClaimSweeper); a namespace that is gone has none left. */
  private async deleteClaims(namespace: string, labelSelector: string): Promise<void> {
    try {
      await this.options.custom.deleteCollectionNamespacedCustomObject({ ...ROOMKEEPER_API, namespace, plural: PLURALS.AllocationClaim, labelSelector });
      this.writes.inc({ kind: 'allocation_claim' });
    } catch (err) {
      this.countFailedWrite(err, 'allocation_claim');
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Deletes the claim with its uid as precondition; one gone already, or another try's by now, is
   * not ours to delete (false).
   */
  private async deleteClaim(schedulerName: string, allocationId: string, claim: AllocationIdClaim): Promise<boolean> {
    try {
      await this.options.custom.deleteNamespacedCustomObject({
        ...ROOMKEEPER_API, namespace: schedulerName, plural: PLURALS.AllocationClaim, name: claimName(allocationId), body: { preconditions: { uid: claim.uid } },
      });
      this.writes.inc({ kind: 'allocation_claim' });
      return true;
    } catch (err) {
      this.countFailedWrite(err, 'allocation_claim');
      if (isNotFound(err) || apiStatus(err) === 409) return false;
      this.options.logger.warn(`could not delete an AllocationClaim; once it is ${ALLOCATION_CLAIM_STALE_MS / 1000} s old, the next try of its allocationId takes it over and a gateway's sweep (every minute) deletes it`, {
        scheduler: schedulerName, allocationId, error: describeApiError(err),
      });
      throw err;
    }
  }

  private async listRoomPages(schedulerName: string): Promise<GameRoom[]> {
    const out: GameRoom[] = [];
    let next: string | undefined;
    do {
      const page = await this.listRoomPage(schedulerName, 500, next);
      for (const room of page.items) out.push(slimGameRoom(room));
      next = page.metadata.continue || undefined;
    } while (next);
    return out;
  }

  private async listRoomPage(schedulerName: string, limit: number, next?: string): Promise<GameRoomList & { metadata: { continue?: string } }> {
    return await this.options.custom.listNamespacedCustomObject({
      ...ROOMKEEPER_API, namespace: schedulerName, plural: PLURALS.GameRoom, limit, ...(next ? { _continue: next } : {}),
    }) as GameRoomList & { metadata: { continue?: string } };
  }

  // ---- PingDigestWriter ----

  async writeRoomLastPing(namespace: string, roomId: string, lastPingAt: string): Promise<void> {
    await this.sendRoomStatus(namespace, roomId, { status: { lastPingAt } });
  }

  /**
   * A PingDigest's status is merge-patched (one write); the first write of a replica for a
   * scheduler creates the PingDigest (its spec and labels) and then patches the status, since the
   * status subresource ignores a status sent with the create.
   */
  async writeDigest(digest: PingDigestWrite): Promise<'written' | 'namespace-gone'> {
    const { namespace, name } = digest;
    const patchStatus = () => this.options.custom.patchNamespacedCustomObjectStatus(
      { ...ROOMKEEPER_API, namespace, plural: PLURALS.PingDigest, name, body: { status: digest.status } },
      MERGE_PATCH,
    );
    try {
      await patchStatus();
      this.writes.inc({ kind: 'ping_digest' });
      return 'written';
    } catch (err) {
      this.countFailedWrite(err, 'ping_digest');
      if (!isNotFound(err)) throw err;
    }
    try {
      await this.options.custom.createNamespacedCustomObject({
        ...ROOMKEEPER_API, namespace, plural: PLURALS.PingDigest,
        body: { apiVersion: API_VERSION, kind: 'PingDigest', metadata: { name, namespace, labels: { ...digest.labels, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } }, spec: digest.spec },
      });
      this.writes.inc({ kind: 'ping_digest' });
    } catch (err) {
      this.countFailedWrite(err, 'ping_digest');
      if (isNamespaceGone(err)) return 'namespace-gone';
      if (apiStatus(err) !== 409) throw err; // another request of this replica created it: patch it
    }
    try {
      await patchStatus();
    } catch (err) {
      this.countFailedWrite(err, 'ping_digest');
      throw err;
    }
    this.writes.inc({ kind: 'ping_digest' });
    return 'written';
  }

  private requireSynced<T extends k8s.KubernetesObject>(cache: ResourceCache<T>, name: string): ResourceCache<T> {
    if (!cache.isSynced) throw new StoreUnavailableError(`the ${name} cache has not synced yet; retry shortly`);
    return cache;
  }

  /** Refused writes still cost the API server a request; they are counted apart. */
  private countFailedWrite(err: unknown, kind: string): void {
    if (apiStatus(err) !== undefined) this.writeErrors.inc({ kind });
  }
}

/**
 * A create refused because its namespace does not exist (404) or is being deleted (403,
 * cause NamespaceTerminating): the scheduler is gone, and no retry can succeed.
 */
function isNamespaceGone(err: unknown): boolean {
  return apiStatus(err) === 404 || isNamespaceTerminating(err);
}
