/**
 * The I/O around rooms: create a room (GameRoom + Pod, the Pod owned by the GameRoom), delete
 * rooms (with a resourceVersion precondition when they might be occupied), and read the fleet as
 * `RoomView`s for the pure rules in `domain/`.
 */
import { randomUUID } from 'node:crypto';
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, Scheduler, SchedulerSpec } from '../../../common/src/generated/resources';
import { apiStatus, describeApiError, isJsonPatchNotApplied, isNamespaceTerminating, isServiceAccountMissing, retryTransient } from '../../../common/src/kube/clients';
import type { DeletePreconditions } from '../../../common/src/kube/roomkeeper-api';
import { toMillis } from '../../../common/src/kube/timestamps';
import { API_VERSION } from '../../../common/src/resources/api-group';
import { CREATE_REQUEST_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL, VALIDATION_ROOM_LABEL, VERSION_LABEL } from '../../../common/src/resources/labels';
import { openAllocation } from '../../../common/src/rooms/allocation';
import { instanceFromPod, podNotReadySince, podStartedAt } from '../../../common/src/rooms/room-status';
import { decodePingDigest } from '../../../common/src/rooms/ping-digest';
import { MAX_CLOCK_SKEW_MS } from '../../../common/src/runtime/clock';
import { roomToken, roomTokenKeyId } from '../../../common/src/rooms/room-token';
import { podRefusals } from '../../../common/src/validation';
import type { OperatorDeps } from '../deps';
import { roomEvent } from '../events';
import { pickHostPorts } from './domain/host-ports';
import { isNodeReady } from './domain/node-availability';
import { podWasSeen } from './domain/lost-rooms';
import { buildRoomPod, replacedByRoomkeeper, roomName } from './domain/pod-template';
import type { RoomTimeouts, RoomView } from './domain/types';
import { isSilent } from './domain/expiry';
import { isRemovable } from './domain/removal-order';

export interface CreateRoomsRequest {
  scheduler: Scheduler;
  version: string;
  definition: SchedulerSpec;
  count: number;
  validation?: boolean;
  concurrency?: number;
  signal?: AbortSignal;
  /** Called after each room is created (for progress in the history). */
  onCreated?: (name: string, created: number) => void;
  /**
   * Called once, at once, when `signal` aborts the creation: the rooms created by then, the
   * requests in flight (they complete) and those never started.
   */
  onAbort?: (at: { created: number; inFlight: number; notStarted: number }) => void;
}

export interface CreateRoomsResult {
  created: string[];
  failure?: string;
  /** Set when `signal` aborted the creation: how many rooms were being created at that moment (they completed). */
  inFlightAtAbort?: number;
}

/** What a deletion did: deleted it, found it already gone, or kept it (changed since the caller decided). */
export type RoomDeletion = 'deleted' | 'absent' | 'changed';

/**
 * What removing a room by id did; `not-found` when no room of that id belongs to the scheduler;
 * `changed` when the room changed since the version the caller decided on (it is kept);
 * `deleting` when its deletion had started within the deletion timeout (it is left to finish);
 * `forced` when it had been terminating longer and its pod was deleted without grace.
 */
export type RoomRemovalById = 'deleted' | 'forced' | 'deleting' | 'not-found' | 'changed';

/** A deletion's outcome as a removal by id tells it: a room already gone was not found. */
function byIdOutcome(outcome: RoomDeletion): RoomRemovalById {
  return outcome === 'absent' ? 'not-found' : outcome;
}

/** The finalizer the API server puts on an object deleted with propagationPolicy Foreground. */
export const FOREGROUND_DELETION = 'foregroundDeletion';

/** Names tried for one room before its creation fails (a collision twice in a row is rare already). */
const NAME_TRIES = 5;
/** How long a room's pod waits for its namespace's ServiceAccount before its creation fails. */
const SERVICE_ACCOUNT_WAIT_MS = 120_000;

export class RoomManager {
  constructor(private readonly deps: OperatorDeps, private readonly rand: () => number = deps.random ?? Math.random) {}

  /**
   * Creates `count` rooms with bounded concurrency; stops at the first failure and reports it (the
   * spec: a room that fails to be created fails add_rooms). A name taken is not a failure
   * (`createRoom`). An abort of `signal` starts no further room: only the requests in flight
   * complete.
   */
  async createRooms(req: CreateRoomsRequest): Promise<CreateRoomsResult> {
    const created: string[] = [];
    let failure: string | undefined;
    let next = 0;
    let inFlight = 0;
    let inFlightAtAbort: number | undefined;
    const onAbort = (): void => {
      inFlightAtAbort = inFlight;
      req.onAbort?.({ created: created.length, inFlight, notStarted: req.count - next });
    };
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener('abort', onAbort, { once: true });
    const used = this.usedHostPorts(req.scheduler.metadata.name as string);
    const worker = async (): Promise<void> => {
      while (next < req.count && failure === undefined && !req.signal?.aborted) {
        next++;
        inFlight++;
        try {
          const name = await this.createRoom(req, used);
          created.push(name);
          req.onCreated?.(name, created.length);
        } catch (err) {
          // A namespace being deleted refuses every room: say so, and when to ask again.
          failure ??= isNamespaceTerminating(err)
            ? `${describeApiError(err)} (namespace ${req.scheduler.metadata.name as string} is being deleted: the operator makes it again once it is gone, as the Scheduler's NamespaceReady condition says)`
            : describeApiError(err);
        } finally {
          inFlight--;
        }
      }
    };
    const concurrency = Math.max(1, Math.min(req.concurrency ?? this.deps.config.addRoomsConcurrency, req.count));
    try {
      await Promise.all(Array.from({ length: concurrency }, () => worker()));
    } finally {
      req.signal?.removeEventListener('abort', onAbort);
    }
    return { created, ...(failure === undefined ? {} : { failure }), ...(inFlightAtAbort === undefined ? {} : { inFlightAtAbort }) };
  }

  /**
   * Creates one room: its GameRoom, then its Pod (owned by the GameRoom). Retries throttling.
   * Never fails on a name: a name another room holds, or whose pod another pod still holds (an
   * earlier room of that name being deleted, or a pod another client made, which is left alone),
   * gets a new one (up to 5 names), and a create whose
   * answer was lost but which landed (the retry answers 409) is recognised as this one by its
   * request annotation (the GameRoom) or owner (the Pod) and counted as made.
   */
  async createRoom(req: Omit<CreateRoomsRequest, 'count'>, used: Set<number> = new Set()): Promise<string> {
    const schedulerName = req.scheduler.metadata.name as string;
    // A definition the API server took (kubectl; a version stored before the gateway checked it)
    // may still ask for pods kube-apiserver refuses: no GameRoom is made for a pod that cannot be.
    const refused = podRefusals(req.definition, 'spec');
    if (refused.length > 0) throw new Error(`no room was created for version ${req.version} of scheduler ${schedulerName}: ${refused.map((e) => `${e.field} ${e.message}`).join('; ')} (kubectl edit scheduler ${schedulerName}, or PATCH /schedulers/${schedulerName})`);
    const ports = pickHostPorts(req.definition, used, this.rand);
    if ('error' in ports) throw new Error(`cannot pick host ports: ${ports.error}`);
    for (const p of ports.flat()) used.add(p);
    const secret = this.deps.config.roomTokenSecret;
    for (let tries = 1; ; tries++) {
      const createdRoom = await this.createGameRoomNamed(req, schedulerName);
      const name = createdRoom.metadata.name as string;
      const pod = buildRoomPod({
        schedulerName,
        roomName: name,
        version: req.version,
        definition: req.definition,
        hostPorts: ports,
        ...this.roomkeeperSettings(),
        roomToken: secret ? roomToken(secret, schedulerName, name) : undefined,
        roomTokenKeyId: secret ? roomTokenKeyId(secret) : undefined,
        runAsNonRoot: this.deps.config.roomRunAsNonRoot,
        validation: req.validation,
        ownerRef: {
          apiVersion: API_VERSION, kind: 'GameRoom', name, uid: createdRoom.metadata.uid as string, controller: true, blockOwnerDeletion: true,
        },
      });
      try {
        await this.createPod(schedulerName, pod);
      } catch (err) {
        // A create that landed and whose answer was lost: the pod is there, owned by this room.
        const existing = apiStatus(err) === 409
          ? (await this.deps.core.listNamespacedPod({ namespace: schedulerName, fieldSelector: `metadata.name=${name}` }).catch(() => undefined))?.items[0]
          : undefined;
        if (!existing?.metadata?.ownerReferences?.some((o) => o.uid === createdRoom.metadata.uid)) {
          await this.deleteRoom(schedulerName, name, undefined, 'Background').catch(() => undefined);
          // The pod's name is held by another pod (that of an earlier room of the same name, still
          // being deleted, or one another client made): a name, not a failure; the room is made
          // again under another name, and that pod is left alone.
          if (existing !== undefined && tries < NAME_TRIES) {
            const earlierRoom = existing.metadata?.ownerReferences?.some((o) => o.kind === 'GameRoom' && o.apiVersion === API_VERSION) === true;
            this.deps.logger.info(`room pod name held by another pod (${earlierRoom ? 'an earlier room of that name, still going' : 'not a room\'s: another client made it, and it is left alone'}); trying another name`, { scheduler: schedulerName, room: name });
            continue;
          }
          throw err;
        }
      }
      roomEvent(this.deps, createdRoom, 'GameRoomCreated', 'CreateRoom', `Room created for version ${req.version}${req.validation ? ' (a validation room)' : ''}`);
      return name;
    }
  }

  /**
   * Creates the GameRoom of a new room under a fresh name: a name another room holds gets a new
   * one (up to NAME_TRIES), and a create whose answer was lost but which landed is recognised by
   * its request annotation.
   */
  private async createGameRoomNamed(req: Omit<CreateRoomsRequest, 'count'>, schedulerName: string): Promise<GameRoom> {
    for (let tries = 1; ; tries++) {
      const name = roomName(schedulerName, this.rand);
      const request = randomUUID();
      const labels: Record<string, string> = {
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [SCHEDULER_LABEL]: schedulerName,
        [VERSION_LABEL]: req.version,
        ...(req.validation ? { [VALIDATION_ROOM_LABEL]: 'true' } : {}),
      };
      const room: GameRoom = {
        apiVersion: API_VERSION,
        kind: 'GameRoom',
        metadata: { name, namespace: schedulerName, labels, annotations: { [CREATE_REQUEST_ANNOTATION]: request } },
        spec: { scheduler: schedulerName, version: req.version, validation: req.validation ?? false },
      };
      this.deps.expectations?.expectAdd(schedulerName, name);
      try {
        return await retryTransient(() => this.deps.api.createGameRoom(room));
      } catch (err) {
        const existing = apiStatus(err) === 409 ? await this.deps.api.getGameRoom(schedulerName, name).catch(() => undefined) : undefined;
        if (existing?.metadata.annotations?.[CREATE_REQUEST_ANNOTATION] === request) return existing; // this request landed; its first answer was lost
        this.deps.expectations?.cancel(schedulerName, name);
        if (apiStatus(err) !== 409 || tries >= NAME_TRIES) throw err;
        this.deps.logger.info('room name taken by another room; trying another name', { scheduler: schedulerName, room: name });
      }
    }
  }

  /** What of the rooms' environment the settings decide, as createRoom gives it. */
  private roomkeeperSettings(): { roomsApiUrl: string | undefined; maestroEnv: boolean } {
    return { roomsApiUrl: this.deps.config.roomsApiUrl || undefined, maestroEnv: this.deps.config.maestroEnv };
  }

  /**
   * A history line naming the labels and env of `definition` that Roomkeeper's own replace on
   * every room (pod-template.ts), or undefined when there are none.
   */
  replacedOnRooms(definition: Pick<SchedulerSpec, 'spec' | 'labels'>): string | undefined {
    const replaced = replacedByRoomkeeper(definition, { ...this.roomkeeperSettings(), roomToken: this.deps.config.roomTokenSecret ? 'set' : undefined });
    if (replaced.length === 0) return undefined;
    return `Roomkeeper sets ${replaced.join(', ')} on every room itself, so the definition's own ${replaced.length === 1 ? 'value is' : 'values are'} not used: rename ${replaced.length === 1 ? 'it' : 'them'} to pass ${replaced.length === 1 ? 'it' : 'them'} to the rooms`;
  }

  /**
   * Creates a room's pod; retries throttling, and waits (up to SERVICE_ACCOUNT_WAIT_MS) for the
   * namespace's ServiceAccount, which kube-apiserver requires and kube-controller-manager creates.
   */
  private async createPod(namespace: string, pod: k8s.V1Pod): Promise<void> {
    const deadline = this.deps.now() + SERVICE_ACCOUNT_WAIT_MS;
    for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 5000)) {
      try {
        await retryTransient(() => this.deps.core.createNamespacedPod({ namespace, body: pod }));
        return;
      } catch (err) {
        if (!isServiceAccountMissing(err)) throw err;
        if (this.deps.now() >= deadline) {
          throw new Error(`${describeApiError(err)} (for ${SERVICE_ACCOUNT_WAIT_MS / 1000} s: kube-controller-manager creates a namespace's default ServiceAccount; check that it runs)`, { cause: err });
        }
        this.deps.logger.info('pod refused until the namespace\'s default ServiceAccount exists (kube-controller-manager creates it); trying again', { scheduler: namespace, room: pod.metadata?.name, retryInMs: delayMs });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  /**
   * Deletes a room. With `resourceVersion`, the deletion only happens if the room has not changed
   * since the caller decided (so a room that turned occupied meanwhile is kept): returns false then.
   */
  async deleteRoom(namespace: string, name: string, resourceVersion?: string, propagation: 'Foreground' | 'Background' = 'Foreground'): Promise<boolean> {
    return (await this.deleteRoomReporting(namespace, name, resourceVersion ? { resourceVersion } : undefined, propagation)) !== 'changed';
  }

  /** Deletes a room and says what happened (for a history that counts only what it deleted). */
  async deleteRoomReporting(namespace: string, name: string, preconditions?: DeletePreconditions, propagation: 'Foreground' | 'Background' = 'Foreground'): Promise<RoomDeletion> {
    try {
      this.deps.expectations?.expectDelete(namespace, name);
      await retryTransient(() => this.deps.api.deleteGameRoom(namespace, name, preconditions, propagation));
      // In the foreground the GameRoom waits for its pod, which the garbage collector would delete
      // at kube-controller-manager's pace (20 requests per second by default): at 10,000 rooms a
      // rollout waited minutes on it. The operator deletes the pod itself (with its grace period).
      if (propagation === 'Foreground') await this.deletePod(namespace, name);
      return 'deleted';
    } catch (err) {
      const status = apiStatus(err);
      // Already gone, but the cache still shows it: the expectation holds the health check until
      // the cache shows the deletion (deciding on that cache would remove the room again).
      if (status === 404 && this.deps.caches.rooms.get(name, namespace)) return 'absent';
      this.deps.expectations?.cancel(namespace, name);
      if (status === 404) return 'absent';
      if (status === 409) {
        if (preconditions?.resourceVersion) this.expectNewerThanCache(namespace, name, preconditions.resourceVersion);
        await this.forgetRefusedDeletion(namespace, name);
        return 'changed';
      }
      throw err;
    }
  }

  /**
   * After a deletion refused because the room changed since it was chosen (a removal by amount):
   * reads it again, and deletes it at that version when it is still one a removal by amount may
   * take (`isRemovable`: a start-up step or a status write moved it, not a player nor a
   * matchmaker). `changed` when it is not, or changed once more.
   */
  async deleteIfStillRemovable(namespace: string, name: string): Promise<RoomDeletion> {
    let room: GameRoom;
    try {
      room = await retryTransient(() => this.deps.api.getGameRoom(namespace, name));
    } catch (err) {
      if (apiStatus(err) === 404) return 'absent';
      throw err;
    }
    if (room.metadata.deletionTimestamp) return 'absent';
    if (!isRemovable(toView(room, this.deps.caches.pods.get(name, namespace), new Map()))) return 'changed';
    return this.deleteRoomReporting(namespace, name, { resourceVersion: room.metadata.resourceVersion as string });
  }

  /**
   * A deletion refused on its preconditions (the room changed) did not land: when the room is
   * there, not being deleted, it is no longer noted as this replica's, so a later deletion of it
   * with kubectl is told as one outside Roomkeeper. Kept noted when that cannot be told (a retried
   * request whose first try landed is refused too, the deletion having changed the room).
   */
  private async forgetRefusedDeletion(namespace: string, name: string): Promise<void> {
    if (!this.deps.expectations) return;
    try {
      const room = await this.deps.api.getGameRoom(namespace, name);
      if (!room.metadata.deletionTimestamp) this.deps.expectations.forgetOwnDeletion(namespace, name);
    } catch {
      // Gone or unreadable: whose deletion it was cannot be told; it stays this replica's.
    }
  }

  /**
   * Removes the room `id` of `schedulerName` whatever its status (remove-rooms by id). A room that
   * does not exist, or belongs to another scheduler, is not touched. A room already being deleted
   * that is removed again has outlived its grace period (its node is gone, or its kubelet is
   * stuck): its pod is deleted without grace.
   *
   * With `resourceVersion` (the version of the room the caller decided on, e.g. a rollout's
   * replacement chosen from the cache), a room that changed since — a player joined it — is not
   * deleted (`changed`): neither when the read shows a newer version, nor when it changes between
   * the read and the deletion (the deletion carries the precondition, and fails 409). While the
   * cache shows that version, the room is not read first.
   */
  async removeRoomById(schedulerName: string, id: string, resourceVersion?: string): Promise<RoomRemovalById> {
    // The cache still shows the version decided on: its deletion, conditional on that version, is
    // exact without a read (it fails 409 if the room changed, 404 if it is gone); a rollout's
    // removal spends two requests a room instead of three.
    const cached = resourceVersion === undefined ? undefined : this.deps.caches.rooms.get(id, schedulerName);
    if (cached && cached.metadata.resourceVersion === resourceVersion && !cached.metadata.deletionTimestamp && cached.spec.scheduler === schedulerName) {
      return byIdOutcome(await this.deleteRoomReporting(schedulerName, id, { uid: cached.metadata.uid as string, resourceVersion }));
    }
    let room: GameRoom;
    try {
      room = await this.deps.api.getGameRoom(schedulerName, id);
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
      // Gone, though the cache may still show it: wait for the cache before deciding again.
      if (this.deps.caches.rooms.get(id, schedulerName)) this.deps.expectations?.expectDelete(schedulerName, id);
      return 'not-found';
    }
    if (room.spec.scheduler !== schedulerName) return 'not-found';
    if (room.metadata.deletionTimestamp) {
      // Stuck only once its deletion has outlasted the deletion timeout; before that its pod has
      // its grace period to stop, as any deleted room's has.
      const since = deletionStartedAt(room.metadata);
      if (since !== undefined && this.deps.now() - since <= this.deps.config.roomDeletionTimeout) return 'deleting';
      await this.forceDeletePod(schedulerName, id);
      await this.releaseForegroundDeletion(room);
      return 'forced';
    }
    if (resourceVersion !== undefined && room.metadata.resourceVersion !== resourceVersion) {
      this.expectNewerThanCache(schedulerName, id, resourceVersion);
      return 'changed';
    }
    // The uid precondition: a room of the same name made since the read is not deleted.
    return byIdOutcome(await this.deleteRoomReporting(schedulerName, id, { uid: room.metadata.uid as string, ...(resourceVersion !== undefined ? { resourceVersion } : {}) }));
  }

  /** The room changed since `decidedOn`: while the cache still shows that version, the health check waits. */
  private expectNewerThanCache(namespace: string, name: string, decidedOn: string): void {
    if (this.deps.caches.rooms.get(name, namespace)?.metadata.resourceVersion === decidedOn) this.deps.expectations?.expectChange(namespace, name);
  }

  /**
   * A GameRoom deleted in the foreground waits for the garbage collector (kube-controller-manager)
   * to see its pod gone and remove the `foregroundDeletion` finalizer. When the collector lags
   * (seen at 10,000 rooms: minutes behind, at its default 20 requests per second), a room whose
   * pod is gone stays terminating, and each health check would remove it again. Once the pod is
   * gone from the cache, nothing is left for the finalizer to wait for: the operator removes it (a JSON
   * Patch conditional on the room's resourceVersion; a room that changed is left to the next check).
   * The health check calls it for every such room it sees, so the collector is never on the path.
   */
  async releaseForegroundDeletion(room: GameRoom): Promise<void> {
    const finalizers = room.metadata.finalizers ?? [];
    if (!finalizers.includes(FOREGROUND_DELETION)) return;
    const namespace = room.metadata.namespace as string;
    const name = room.metadata.name as string;
    // Still in the cache: just force-deleted (the next check sees it gone), or held by a finalizer
    // of its own, in which case the collector's wait is real.
    if (this.deps.caches.pods.get(name, namespace)) return;
    try {
      await this.deps.api.jsonPatchGameRoom(namespace, name, [
        { op: 'test', path: '/metadata/resourceVersion', value: room.metadata.resourceVersion },
        { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter((f) => f !== FOREGROUND_DELETION) },
      ]);
    } catch (err) {
      if (apiStatus(err) !== 404 && apiStatus(err) !== 409 && !isJsonPatchNotApplied(err)) throw err;
    }
  }

  /** Deletes a room's pod with its grace period (gone already is fine). */
  private async deletePod(namespace: string, name: string): Promise<void> {
    try {
      await retryTransient(() => this.deps.core.deleteNamespacedPod({ name, namespace }));
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
  }

  /** Deletes a room's pod at once (grace period 0): for rooms stuck terminating. */
  async forceDeletePod(namespace: string, name: string): Promise<void> {
    try {
      await this.deps.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
  }

  /** Host ports held by the scheduler's rooms, so new rooms avoid them while the range allows. */
  usedHostPorts(schedulerName: string): Set<number> {
    const used = new Set<number>();
    for (const pod of this.deps.caches.pods.list(schedulerName)) {
      for (const c of pod.spec?.containers ?? []) for (const p of c.ports ?? []) if (p.hostPort) used.add(p.hostPort);
    }
    return used;
  }

  /** The scheduler's rooms that count towards its fleet: not validation rooms, not terminating. */
  liveCount(schedulerName: string): number {
    return this.views(schedulerName).filter((r) => !r.validation && !r.terminating).length;
  }

  /**
   * The scheduler's rooms as the pure rules see them (validation rooms included, flagged). A
   * GameRoom of another scheduler written into this one's namespace (kubectl) is no room of it:
   * no rule counts it or decides to remove it (a removal by id finds rooms by spec.scheduler, so
   * it skipped that one, and the health check enqueued the same removal twenty times a second).
   */
  views(schedulerName: string): RoomView[] {
    const latest = this.latestPingTime();
    const rooms = this.deps.caches.rooms.list(schedulerName).filter((room) => room.spec.scheduler === schedulerName);
    const digest = this.heardSoFar(schedulerName, this.lastPings(schedulerName), rooms);
    return rooms.map((room) => {
      const pod = this.deps.caches.pods.get(room.metadata.name as string, schedulerName);
      const nodeName = pod?.spec?.nodeName;
      return toView(room, pod, digest, latest, nodeName ? this.deps.caches.nodes.get(nodeName) : undefined);
    });
  }

  /**
   * The latest time a gateway can have heard a room: further ahead than clocks drift apart is no
   * ping (a digest or a GameRoom `lastPingAt` written by hand with a year-2100 time would keep a
   * dead room alive for ever).
   */
  private latestPingTime(): number {
    return this.deps.now() + MAX_CLOCK_SKEW_MS;
  }

  /**
   * `digests` (the pings the digests show now) with, for each of `rooms`, any later ping this
   * process read before: a PingDigest deleted or garbled (kubectl) takes no ping already heard
   * away (its rooms, pinging all along, expired at once, occupied ones too; the gateway writes the
   * digest again at its next flush). Kept only for the rooms the cache holds, and only pings after
   * a room's creation (a room made again under the same name is not heard by its predecessor's).
   */
  private heardSoFar(schedulerName: string, digests: Map<string, number>, rooms: readonly GameRoom[]): Map<string, number> {
    let byScheduler = HEARD.get(this.deps.caches.digests);
    if (!byScheduler) HEARD.set(this.deps.caches.digests, (byScheduler = new Map<string, Map<string, number>>()));
    const before = byScheduler.get(schedulerName);
    const heard = new Map<string, number>();
    for (const room of rooms) {
      const name = room.metadata.name as string;
      const now = digests.get(name);
      const then = before?.get(name);
      const kept = then !== undefined && then >= (toMillis(room.metadata.creationTimestamp) ?? 0) ? then : undefined;
      const at = now === undefined ? kept : kept === undefined ? now : Math.max(now, kept);
      if (at !== undefined) heard.set(name, at);
    }
    if (heard.size === 0) byScheduler.delete(schedulerName);
    else byScheduler.set(schedulerName, heard);
    return heard;
  }

  /**
   * The share of the rooms of schedulers other than `schedulerName` that are not silent
   * (`isSilent` with `halfTimeouts`), among those that have pinged and are not leaving; undefined
   * when there are none. A pass over the cluster's rooms: asked only when a wide silence is judged.
   */
  heardShareOutside(schedulerName: string, now: number, halfTimeouts: RoomTimeouts): number | undefined {
    let pinged = 0;
    let heard = 0;
    for (const s of this.deps.caches.schedulers.list()) {
      const other = s.metadata.name as string;
      if (other === schedulerName) continue;
      for (const room of this.views(other)) {
        if (room.validation || room.terminating || room.lastPingAt === undefined) continue;
        pinged++;
        if (!isSilent(room, now, halfTimeouts)) heard++;
      }
    }
    return pinged === 0 ? undefined : heard / pinged;
  }

  /**
   * When a gateway last flushed a PingDigest of any scheduler (epoch ms, none after
   * `latestPingTime`); undefined when the cache holds none. A gateway flushes the digest of a
   * scheduler only when it heard one of its rooms since its last flush.
   */
  lastDigestFlush(): number | undefined {
    const latest = this.latestPingTime();
    let last: number | undefined;
    for (const digest of this.deps.caches.digests.list()) {
      const at = Number(digest.status?.flushedAt);
      if (Number.isFinite(at) && at <= latest && (last === undefined || at > last)) last = at;
    }
    return last;
  }

  /**
   * Last ping per room from the gateways' digests (max over replicas; see
   * common/src/rooms/ping-digest.ts), none after `latestPingTime`.
   */
  lastPings(schedulerName: string): Map<string, number> {
    const out = new Map<string, number>();
    const latest = this.latestPingTime();
    for (const digest of this.deps.caches.digests.list(schedulerName)) {
      for (const [room, at] of decodePingDigest(digest.status)) {
        if (at <= latest && at > (out.get(room) ?? 0)) out.set(room, at);
      }
    }
    return out;
  }
}


/** The pings each process's RoomManagers have read, by digest cache (one per operator), scheduler and room. */
const HEARD = new WeakMap<object, Map<string, Map<string, number>>>();

/**
 * When an object's deletion was asked for, epoch ms. The API server sets `deletionTimestamp` to
 * the END of the grace period (the time of the request plus `deletionGracePeriodSeconds`): a pod
 * deleted with a 600 s grace carries a deletionTimestamp 600 s in the future.
 */
export function deletionStartedAt(meta: { deletionTimestamp?: unknown; deletionGracePeriodSeconds?: number } | undefined): number | undefined {
  const at = toMillis(meta?.deletionTimestamp);
  if (at === undefined) return undefined;
  return at - Math.max(0, meta?.deletionGracePeriodSeconds ?? 0) * 1000;
}

/** `latestPingAt`: a `status.lastPingAt` after it is no ping (see `RoomManager.latestPingTime`). */
export function toView(room: GameRoom, pod: k8s.V1Pod | undefined, digest: Map<string, number>, latestPingAt = Infinity, node?: k8s.V1Node): RoomView {
  const status = room.status;
  const written = toMillis(status?.lastPingAt);
  const fromRoom = written !== undefined && written <= latestPingAt ? written : undefined;
  const fromDigest = digest.get(room.metadata.name as string);
  const lastPingAt = fromRoom === undefined ? fromDigest : fromDigest === undefined ? fromRoom : Math.max(fromRoom, fromDigest);
  const silentSince = toMillis(status?.silentSince);
  const deletion = deletionStartedAt(room.metadata) ?? deletionStartedAt(pod?.metadata);
  const instance = instanceFromPod(pod);
  const stored = status?.status ?? (instance.status === 'error' ? 'error' : 'pending');
  const notReadySince = isNodeReady(node) ? podNotReadySince(pod) : undefined;
  // A room whose pod was seen and is gone is leaving (the room status controller records the loss
  // and deletes it): counted as a room still serving between its replacement's creation and its
  // own deletion, it made the fleet look one above desired, and a healthy room was scaled down.
  const podGone = pod === undefined && podWasSeen(room);
  return {
    name: room.metadata.name as string,
    // An allocation the operator has not ended protects the room from removal by amount, even
    // while a ping written from a stale cache still shows `ready`.
    status: stored === 'ready' && openAllocation(status) ? 'allocated' : stored,
    runningMatches: status?.runningMatches ?? 0,
    allocationOpen: openAllocation(status) !== undefined,
    version: room.spec.version,
    createdAt: toMillis(room.metadata.creationTimestamp) ?? 0,
    startedAt: podStartedAt(pod),
    ...(notReadySince !== undefined ? { notReadySince } : {}),
    lastPingAt,
    ...(silentSince !== undefined ? { silentSince } : {}),
    ...(status?.pingStatus !== undefined ? { pingStatus: status.pingStatus } : {}),
    // A room whose status is not written yet is in error by its pod: the pod says why.
    ...(status?.reason !== undefined ? { reason: status.reason } : !status?.status && instance.reason !== undefined ? { reason: instance.reason } : {}),
    terminating: deletion !== undefined || podGone || status?.status === 'terminating' || status?.status === 'terminated',
    terminatingSince: deletion,
    validation: room.spec.validation === true,
    resourceVersion: room.metadata.resourceVersion,
  };
}
