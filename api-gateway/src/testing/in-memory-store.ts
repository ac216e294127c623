/**
 * An in-memory implementation of the gateway's store ports, for router tests. It behaves like
 * the Kubernetes adapter (uid, generation bumped on spec changes, resourceVersion preconditions,
 * AlreadyExists) and records every write so tests can assert that a failed request wrote nothing.
 */
import { randomUUID } from 'node:crypto';
import { jsonEqual } from '../../../common/src/json/json-equal';
import { allocationRecord, groupAllocatable, isBusyRoom, type AllocatableGroup } from '../../../common/src/rooms/allocation';
import type { GameRoom, Operation, PingDigestSpec, PingDigestStatus, Scheduler, SchedulerSpec, SchedulerState, SchedulerVersion } from '../../../common/src/generated/resources';
import { SPEC_CHANGE_SOURCE_ANNOTATION } from '../../../common/src/resources/labels';
import { isFinalOperationStatus } from '../../../common/src/resources/operation-names';
import { StoreAlreadyExistsError, StoreConflictError, StoreInvalidError, StoreNotFoundError, type FieldViolation } from '../errors';
import type { AllocationCommit, AllocationIdClaim, AllocationIdClaimResult, AllocationRestore, OperationStore, PingDigestWrite, PingDigestWriter, RoomAllocationStore, RoomPingStatusPatch, RoomStore, SchedulerStore, SpecWriteOptions } from '../store-ports';

export interface RecordedWrite {
  kind: 'scheduler' | 'operation' | 'gameroom-status' | 'ping-digest' | 'allocationclaim';
  verb: 'create' | 'update' | 'delete' | 'patch';
  name: string;
}

export class InMemoryStore implements SchedulerStore, OperationStore, RoomStore, RoomAllocationStore, PingDigestWriter {
  readonly schedulers = new Map<string, Scheduler>();
  readonly versions = new Map<string, SchedulerVersion>();
  readonly operations = new Map<string, Operation>();
  readonly rooms = new Map<string, GameRoom>();
  /** Rooms a test says the cache saw deleted (`scheduler/room` -> when), for `roomDeletedAt`. */
  readonly deletedRooms = new Map<string, number>();
  /** AllocationClaims, by `scheduler/allocationId`. */
  readonly claims = new Map<string, AllocationIdClaim>();
  readonly digests = new Map<string, { labels: Record<string, string>; spec: PingDigestSpec; status: PingDigestStatus }>();
  readonly writes: RecordedWrite[] = [];
  /** Makes the next N scheduler updates fail with a conflict (to test the retry). */
  conflictsToInject = 0;
  /**
   * What the API server refuses in a Scheduler's spec (the CRD's CEL rules, which this store does
   * not judge): a test sets it, and a spec update (dry run or not) with violations is refused as invalid.
   */
  specViolations: (spec: SchedulerSpec) => FieldViolation[] = () => [];
  private rv = 1;

  constructor(private readonly now: () => number = Date.now) {}

  // ---- seeding helpers ----

  /** Puts a scheduler in place as the operator would have left it (active version + snapshot). */
  seedScheduler(name: string, spec: SchedulerSpec, options: { version?: string; state?: SchedulerState } = {}): Scheduler {
    const s: Scheduler = {
      apiVersion: 'roomkeeper.io/v1',
      kind: 'Scheduler',
      metadata: { name, uid: randomUUID(), generation: 1, resourceVersion: String(this.rv++), creationTimestamp: new Date(this.now()).toISOString() as unknown as Date },
      spec: structuredClone(spec),
      status: { state: options.state ?? 'in-sync', version: options.version ?? 'v1.0.0' },
    };
    this.schedulers.set(name, s);
    this.seedVersion(name, options.version ?? 'v1.0.0', spec);
    return s;
  }

  seedVersion(scheduler: string, version: string, definition: SchedulerSpec, createdAt = new Date(this.now()).toISOString()): SchedulerVersion {
    const v: SchedulerVersion = {
      apiVersion: 'roomkeeper.io/v1',
      kind: 'SchedulerVersion',
      metadata: { name: `${scheduler}-${version}`, creationTimestamp: createdAt as unknown as Date, labels: { 'roomkeeper.io/scheduler': scheduler } },
      spec: { scheduler, version, kind: 'initial', definition: structuredClone(definition) },
    };
    this.versions.set(`${scheduler}-${version}`, v);
    return v;
  }

  seedOperation(id: string, spec: Partial<Operation['spec']> & { schedulerName: string }, status?: Operation['status']): Operation {
    const op: Operation = {
      apiVersion: 'roomkeeper.io/v1',
      kind: 'Operation',
      metadata: { name: id, resourceVersion: String(this.rv++) },
      spec: { definitionName: 'add_rooms', enqueuedAt: new Date(this.now()).toISOString(), input: {}, ...spec },
      ...(status ? { status } : {}),
    };
    this.operations.set(id, op);
    return op;
  }

  seedRoom(scheduler: string, id: string, status: GameRoom['status'] = {}, spec: Partial<GameRoom['spec']> = {}): GameRoom {
    const room: GameRoom = {
      apiVersion: 'roomkeeper.io/v1',
      kind: 'GameRoom',
      metadata: { name: id, namespace: scheduler, resourceVersion: String(this.rv++) },
      spec: { scheduler, version: 'v1.0.0', ...spec },
      status: structuredClone(status),
    };
    this.rooms.set(`${scheduler}/${id}`, room);
    return room;
  }

  // ---- SchedulerStore ----

  getScheduler(name: string): Promise<Scheduler | undefined> {
    const s = this.schedulers.get(name);
    return Promise.resolve(s ? structuredClone(s) : undefined);
  }

  listSchedulers(): Promise<Scheduler[]> {
    return Promise.resolve([...this.schedulers.values()].map((s) => structuredClone(s)));
  }

  createScheduler(name: string, spec: SchedulerSpec): Promise<Scheduler> {
    if (this.schedulers.has(name)) return Promise.reject(new StoreAlreadyExistsError('scheduler', name));
    const s: Scheduler = {
      apiVersion: 'roomkeeper.io/v1',
      kind: 'Scheduler',
      metadata: { name, uid: randomUUID(), generation: 1, resourceVersion: String(this.rv++), creationTimestamp: new Date(this.now()).toISOString() as unknown as Date },
      spec: structuredClone(spec),
    };
    this.schedulers.set(name, s);
    this.writes.push({ kind: 'scheduler', verb: 'create', name });
    return Promise.resolve(structuredClone(s));
  }

  updateSchedulerSpec(current: Scheduler, spec: SchedulerSpec, operationId: string, options: SpecWriteOptions = {}): Promise<Scheduler> {
    const name = current.metadata.name ?? '';
    const stored = this.schedulers.get(name);
    if (!stored) return Promise.reject(Object.assign(new Error(`scheduler ${name} not found`), { code: 404 }));
    if (this.conflictsToInject > 0) {
      this.conflictsToInject--;
      stored.metadata.resourceVersion = String(this.rv++);
      return Promise.reject(new StoreConflictError('scheduler', name));
    }
    if (stored.metadata.generation !== current.metadata.generation) return Promise.reject(new StoreConflictError('scheduler', name));
    const violations = this.specViolations(spec);
    if (violations.length > 0) return Promise.reject(new StoreInvalidError(`Scheduler.roomkeeper.io "${name}" is invalid`, violations));
    // A dry run answers the object it would store, and stores nothing.
    const updated = options.dryRun ? structuredClone(stored) : stored;
    if (!jsonEqual(stored.spec, spec)) updated.metadata.generation = (stored.metadata.generation ?? 1) + 1;
    updated.metadata.annotations = { ...stored.metadata.annotations, [SPEC_CHANGE_SOURCE_ANNOTATION]: `${updated.metadata.generation ?? 1} api ${operationId}` };
    updated.spec = structuredClone(spec);
    if (options.dryRun) return Promise.resolve(updated);
    updated.metadata.resourceVersion = String(this.rv++);
    this.writes.push({ kind: 'scheduler', verb: 'update', name });
    return Promise.resolve(structuredClone(updated));
  }

  deleteScheduler(name: string): Promise<void> {
    this.schedulers.delete(name);
    this.writes.push({ kind: 'scheduler', verb: 'delete', name });
    return Promise.resolve();
  }

  getVersion(schedulerName: string, version: string): Promise<SchedulerVersion | undefined> {
    return Promise.resolve(this.findVersion(schedulerName, version));
  }

  listVersions(schedulerName: string): Promise<SchedulerVersion[]> {
    return Promise.resolve([...this.versions.values()].filter((v) => v.spec.scheduler === schedulerName).map((v) => structuredClone(v)));
  }

  // ---- OperationStore ----

  createOperation(op: Operation): Promise<'created' | 'exists'> {
    const id = op.metadata.name ?? '';
    if (this.operations.has(id)) return Promise.resolve('exists');
    const stored = structuredClone(op);
    stored.metadata.resourceVersion = String(this.rv++);
    this.operations.set(id, stored);
    this.writes.push({ kind: 'operation', verb: 'create', name: id });
    return Promise.resolve('created');
  }

  getOperation(id: string): Promise<Operation | undefined> {
    const op = this.operations.get(id);
    return Promise.resolve(op ? structuredClone(op) : undefined);
  }

  listOperations(schedulerName: string): Promise<Operation[]> {
    return Promise.resolve([...this.operations.values()].filter((o) => o.spec.schedulerName === schedulerName).map((o) => structuredClone(o)));
  }

  requestCancel(id: string): Promise<void> {
    const op = this.operations.get(id);
    // The Operation CRD's rule: an operation that has ended cannot be asked to cancel.
    if (op && !op.spec.cancelRequested && isFinalOperationStatus(op.status?.status)) {
      return Promise.reject(new StoreInvalidError(`Operation.roomkeeper.io "${id}" is invalid: spec.cancelRequested: Forbidden: the operation has already ended`));
    }
    if (op) op.spec.cancelRequested = true;
    this.writes.push({ kind: 'operation', verb: 'patch', name: id });
    return Promise.resolve();
  }

  // ---- RoomStore ----

  findRoom(schedulerName: string, roomId: string): GameRoom | undefined {
    return this.rooms.get(`${schedulerName}/${roomId}`);
  }

  listRooms(schedulerName: string): GameRoom[] {
    return [...this.rooms.values()].filter((r) => r.metadata.namespace === schedulerName);
  }

  findScheduler(schedulerName: string): Scheduler | undefined {
    return this.schedulers.get(schedulerName);
  }

  roomDeletedAt(schedulerName: string, roomId: string): number | undefined {
    return this.deletedRooms.get(`${schedulerName}/${roomId}`);
  }

  findVersion(schedulerName: string, version: string): SchedulerVersion | undefined {
    const v = this.versions.get(`${schedulerName}-${version}`);
    return v ? structuredClone(v) : undefined;
  }

  patchRoomStatus(schedulerName: string, roomId: string, resourceVersion: string | undefined, patch: RoomPingStatusPatch): Promise<void> {
    const room = this.rooms.get(`${schedulerName}/${roomId}`);
    if (!room) return Promise.reject(Object.assign(new Error(`gameroom ${roomId} not found`), { code: 404 }));
    if (resourceVersion !== undefined && room.metadata.resourceVersion !== resourceVersion) return Promise.reject(Object.assign(new Error(`Operation cannot be fulfilled on gamerooms.roomkeeper.io "${roomId}": the object has been modified`), { code: 409 }));
    // A merge patch: null removes the field.
    const { allocationTakenAt, allocationRunningMatches, pingTimestamp, ...fields } = patch;
    const allocation = room.status?.allocation;
    const { pingTimestamp: _removed, ...kept } = room.status ?? {};
    const allocationPatch = { ...(allocationTakenAt !== undefined ? { takenAt: allocationTakenAt } : {}), ...(allocationRunningMatches !== undefined ? { runningMatches: allocationRunningMatches } : {}) };
    room.status = { ...kept, ...fields, ...(pingTimestamp !== null ? { pingTimestamp } : {}), ...(allocation ? { allocation: { ...allocation, ...allocationPatch } } : {}) };
    room.metadata.resourceVersion = String(this.rv++);
    this.writes.push({ kind: 'gameroom-status', verb: 'patch', name: `${schedulerName}/${roomId}` });
    return Promise.resolve();
  }

  // ---- RoomAllocationStore ----

  listAllocatableGroups(schedulerName: string): AllocatableGroup[] {
    return groupAllocatable(this.listRooms(schedulerName));
  }

  countBusyRooms(schedulerName: string, host: string): number {
    return this.listRooms(schedulerName).filter((r) => isBusyRoom(r) && (r.status?.host ?? '') === host).length;
  }

  silentRooms(schedulerName: string): GameRoom[] {
    return this.listRooms(schedulerName).filter((r) => r.status?.silentSince !== undefined);
  }

  roomsWithAllocationId(schedulerName: string, allocationId: string): GameRoom[] {
    return this.listRooms(schedulerName).filter((r) => allocationRecord(r.status, allocationId));
  }

  commitAllocation(schedulerName: string, roomId: string, resourceVersion: string, commit: AllocationCommit): Promise<GameRoom> {
    const room = this.rooms.get(`${schedulerName}/${roomId}`);
    if (!room) return Promise.reject(new StoreNotFoundError('gameroom', roomId));
    if (room.metadata.resourceVersion !== resourceVersion) return Promise.reject(new StoreConflictError('gameroom', roomId));
    room.status = { ...room.status, status: commit.status, allocation: structuredClone(commit.allocation), previousAllocations: structuredClone(commit.previousAllocations) };
    room.metadata.resourceVersion = String(this.rv++);
    this.writes.push({ kind: 'gameroom-status', verb: 'patch', name: `${schedulerName}/${roomId}` });
    return Promise.resolve(structuredClone(room));
  }

  getRoom(schedulerName: string, roomId: string): Promise<GameRoom | undefined> {
    const room = this.rooms.get(`${schedulerName}/${roomId}`);
    return Promise.resolve(room ? structuredClone(room) : undefined);
  }

  listRoomsFresh(schedulerName: string): Promise<GameRoom[]> {
    return Promise.resolve(this.listRooms(schedulerName).map((r) => structuredClone(r)));
  }

  restoreAllocation(schedulerName: string, roomId: string, resourceVersion: string, restore: AllocationRestore): Promise<GameRoom> {
    const room = this.rooms.get(`${schedulerName}/${roomId}`);
    if (!room) return Promise.reject(new StoreNotFoundError('gameroom', roomId));
    if (room.metadata.resourceVersion !== resourceVersion) return Promise.reject(new StoreConflictError('gameroom', roomId));
    // A merge patch: null removes a field; the allocation object merges, the list is replaced.
    const status: Record<string, unknown> = { ...room.status, status: restore.status };
    if (restore.allocation === null) delete status.allocation;
    else {
      const fields: Record<string, unknown> = { ...room.status?.allocation, ...restore.allocation };
      const merged = Object.entries(fields).filter(([, value]) => value !== null);
      status.allocation = Object.fromEntries(merged);
    }
    if (restore.previousAllocations === null) delete status.previousAllocations;
    else status.previousAllocations = structuredClone(restore.previousAllocations);
    room.status = status;
    room.metadata.resourceVersion = String(this.rv++);
    this.writes.push({ kind: 'gameroom-status', verb: 'patch', name: `${schedulerName}/${roomId}` });
    return Promise.resolve(structuredClone(room));
  }

  /** The in-memory store is its own cache: always caught up. */
  roomsCacheCaughtUp(): Promise<boolean> {
    return Promise.resolve(true);
  }

  claimAllocationId(schedulerName: string, allocationId: string, holder: { requestHash: string; replica: string }): Promise<AllocationIdClaimResult> {
    const key = `${schedulerName}/${allocationId}`;
    const existing = this.claims.get(key);
    if (existing) return Promise.resolve({ created: false, claim: { ...existing } });
    const claim: AllocationIdClaim = { uid: `claim-${this.rv++}`, ...holder, createdAt: Math.floor(this.now() / 1000) * 1000 };
    this.claims.set(key, claim);
    this.writes.push({ kind: 'allocationclaim', verb: 'create', name: key });
    return Promise.resolve({ created: true, claim: { ...claim } });
  }

  readAllocationClaim(schedulerName: string, allocationId: string): Promise<AllocationIdClaim | undefined> {
    const claim = this.claims.get(`${schedulerName}/${allocationId}`);
    return Promise.resolve(claim ? { ...claim } : undefined);
  }

  releaseAllocationClaim(schedulerName: string, allocationId: string, claim: AllocationIdClaim, afterMs = 0): Promise<void> {
    if (afterMs > 0) {
      setTimeout(() => void this.releaseAllocationClaim(schedulerName, allocationId, claim), afterMs).unref();
      return Promise.resolve();
    }
    const key = `${schedulerName}/${allocationId}`;
    if (this.claims.get(key)?.uid === claim.uid) {
      this.claims.delete(key);
      this.writes.push({ kind: 'allocationclaim', verb: 'delete', name: key });
    }
    return Promise.resolve();
  }

  // ---- PingDigestWriter ----

  /** Namespaces that are gone or being deleted: digest writes there answer `namespace-gone`. */
  readonly goneNamespaces = new Set<string>();

  writeDigest({ namespace, name, labels, spec, status }: PingDigestWrite): Promise<'written' | 'namespace-gone'> {
    if (this.goneNamespaces.has(namespace)) return Promise.resolve('namespace-gone');
    this.digests.set(`${namespace}/${name}`, { labels: { ...labels }, spec: { ...spec }, status: { ...status } });
    this.writes.push({ kind: 'ping-digest', verb: 'update', name: `${namespace}/${name}` });
    return Promise.resolve('written');
  }

  writeRoomLastPing(namespace: string, roomId: string, lastPingAt: string): Promise<void> {
    const room = this.rooms.get(`${namespace}/${roomId}`);
    if (!room) return Promise.reject(Object.assign(new Error(`gameroom ${roomId} not found`), { code: 404 }));
    room.status = { ...room.status, lastPingAt };
    room.metadata.resourceVersion = String(this.rv++);
    this.writes.push({ kind: 'gameroom-status', verb: 'patch', name: `${namespace}/${roomId}` });
    return Promise.resolve();
  }
}
