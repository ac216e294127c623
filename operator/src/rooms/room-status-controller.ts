/**
 * The GameRoom reconciler (key: `namespace/name`). It writes what the pod says about a room —
 * instance status, host address, host ports, error reason — and the composed room status
 * (Maestro's table), leaving the ping fields to the gateway. A room whose pod is gone is over: it
 * is recorded in its Scheduler's `status.lostRooms` (the health check names it in the add_rooms
 * that replaces it), `terminated` is forwarded, and its GameRoom is deleted. A room whose pod went
 * with its namespace (the scheduler's deletion) is not lost: its GameRoom is only deleted.
 */
import { roomEvent, schedulerEvent } from '../events';
import type * as k8s from '@kubernetes/client-node';
import type { GameRoom, GameRoomStatus, Scheduler } from '../../../common/src/generated/resources';
import { apiStatus, isJsonPatchNotApplied, isTooManyItems } from '../../../common/src/kube/clients';
import { toIsoString, toMillis } from '../../../common/src/kube/timestamps';
import { TERMINATED_FORWARDED_ANNOTATION } from '../../../common/src/resources/labels';
import { allocationStep, withAllocation } from '../../../common/src/rooms/allocation';
import { composeMatchStatus, composeRoomStatus, instanceFromPod, roomsMaxMatches, whileDeleting } from '../../../common/src/rooms/room-status';
import { cachedVersions, type ForwardedRoom, type OperatorDeps } from '../deps';
import { heldPlayers, lostRoomPatch, lostRoomPlace, lostWithPlayersNote, podWasSeen } from './domain/lost-rooms';
import { hostOf } from './domain/room-address';
import type { ReconcileResult } from '../runtime/work-queue';
import { activeDefinition } from '../../../common/src/resources/scheduler-version';
import { stableStringify } from '../../../common/src/json/stable-stringify';

/** How long a GameRoom may wait for its pod to appear before it counts as lost. */
const POD_APPEAR_GRACE_MS = 30_000;
/** Tries of a lost room's record whose condition failed (another loss created the list first), each on a fresh read. */
const LOSS_RECORD_TRIES = 4;
/** Lost rooms remembered as told (RoomStatusController.toldLost); the oldest are forgotten first beyond it. */
const MAX_TOLD_LOST = 10_000;
/** After a conflicting status write, when the room is looked at again if no newer version came by then. */
const CONFLICT_REQUEUE_MS = 2_000;

/** What a GameRoom made by hand outside any scheduler's namespace is told: why nothing happens, and what to do. */
function notManagedNote(namespace: string, name: string): string {
  return `Not managed: namespace ${namespace} is no scheduler's (no Scheduler ${namespace}), so Roomkeeper makes no pod for this room, keeps no status and never deletes it. `
    + 'Rooms are made by their scheduler, in the namespace named as it: add rooms to a scheduler with POST /schedulers/<name>/add-rooms or '
    + `kubectl scale scheduler <name> --replicas=<n>, and delete this one with kubectl delete gameroom ${name} -n ${namespace}`;
}

/**
 * Why an allocated room is ready again, when its allocation's TTL ended without the match: the
 * matchmaker's players never came, which the Event should say (not only "was allocated").
 */
function readyAgainWhy(before: string, room: GameRoom): string {
  const a = room.status?.allocation;
  if (before !== 'allocated' || !a || a.endReason !== 'expired') return '';
  if (a.endedAt !== undefined && Date.parse(a.endedAt) < Date.parse(a.expiresAt)) {
    // Ended before its expiresAt: one no allocate call wrote (common/src/rooms/allocation.ts).
    return `: allocation ${a.id} was ended at ${a.endedAt}: its expiresAt ${a.expiresAt} is further ahead than the longest allocation TTL (a year) allows, so no allocate call wrote it; it can be allocated again`;
  }
  return `: allocation ${a.id} expired at ${a.endedAt ?? a.expiresAt}, as the room did not report its match (an occupied ping, or one more runningMatches) before ${a.expiresAt}; it can be allocated again`;
}

export class RoomStatusController {
  /**
   * The last status seen per room (`namespace/name`), to tell a room's becoming ready or occupied
   * as an Event. A room first seen with a status (a new leader's first look) is only remembered.
   */
  private readonly lastStatus = new Map<string, string>();

  /**
   * GameRooms made by hand in a namespace no Scheduler holds, by `namespace/name`, with the uid
   * told about: each gets one Warning, not one per update (roomDeleted forgets it).
   */
  private readonly toldNotManaged = new Map<string, string>();

  /**
   * Lost rooms (`namespace/name` -> uid) this replica told of (log line, Events): a room looked at
   * again before its deletion shows in the cache is deleted again, not told twice (roomDeleted forgets it).
   */
  private readonly toldLost = new Map<string, string>();

  constructor(private readonly deps: OperatorDeps) {}

  private tellStatusChange(key: string, room: GameRoom): void {
    const status = room.status?.status ?? 'pending';
    const before = this.lastStatus.get(key);
    this.lastStatus.set(key, status);
    if (before === undefined || before === status || room.metadata.deletionTimestamp) return;
    if (status === 'ready') roomEvent(this.deps, room, 'GameRoomReady', 'ReportStatus', `Room is ready (was ${before})${readyAgainWhy(before, room)}`);
    else if (status === 'occupied') roomEvent(this.deps, room, 'GameRoomOccupied', 'ReportStatus', `Room is occupied (was ${before})`);
    const change = allocationStatusChange(before, room);
    if (change) void this.forward(room, change.status, change.metadata);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = key.split('/') as [string, string];
    const room = this.deps.caches.rooms.get(name, namespace);
    if (!room) {
      this.lastStatus.delete(key);
      return {};
    }
    const scheduler = this.deps.caches.schedulers.get(namespace);
    // Neither a Scheduler nor a namespace of Roomkeeper's by that name: a room made by hand.
    if (!scheduler && !this.deps.caches.namespaces.get(namespace)) return this.notManaged(key, room);
    this.tellStatusChange(key, room);
    const pod = this.deps.caches.pods.get(name, namespace);
    if (!pod) return this.podMissing(room);

    const instance = instanceFromPod(pod);
    const ping = room.status?.pingStatus ?? 'unknown';
    const now = this.deps.now();
    const step = allocationStep(room, now);
    const maxMatches = roomsMaxMatches(scheduler, cachedVersions(this.deps.caches));
    let status: NonNullable<GameRoomStatus['status']> = composeMatchStatus(composeRoomStatus(ping, instance.status), room.status?.runningMatches ?? 0, maxMatches);
    if (step.kind !== 'end') status = withAllocation(status, room.status, now);
    status = whileDeleting(status, room.metadata.deletionTimestamp !== undefined);
    const next: GameRoomStatus = {
      status,
      instanceStatus: instance.status,
      // The pod's hostIP while the cache does not show its node: the node's arrival, or a change
      // of its address, brings the room back here (controller-watches.ts, `nodes`).
      host: hostOf(pod, this.deps.caches.nodes.get(pod.spec?.nodeName ?? '')),
      ports: portsOf(pod),
      reason: instance.reason ?? (status === 'error' ? 'the room is in error' : undefined),
      createdAt: room.status?.createdAt ?? (toIsoString(room.metadata.creationTimestamp) || undefined),
    };
    const current = room.status ?? {};
    // A room that is still just pending (not scheduled or still starting, nothing wrong) reads as
    // pending without a status; writing it would only spend API writes while a fleet is created.
    if (next.status === 'pending' && !instance.reason && (current.status ?? 'pending') === 'pending' && !current.instanceStatus) return {};
    const mine = (s: GameRoomStatus) => stableStringify({
      status: s.status, instanceStatus: s.instanceStatus, host: s.host ?? '', ports: s.ports ?? [], reason: s.reason ?? null, createdAt: s.createdAt,
    });
    const later: ReconcileResult = step.kind === 'wait' ? { requeueAfterMs: Math.max(0, step.untilMs - now) + 50 } : {};
    if (mine(current) === mine(next) && step.kind !== 'end') return later;
    // Ending an allocation is one write with the resourceVersion: it happens once, and loses to
    // any write the operator has not seen (an occupied ping, a new allocation), then recomputes.
    const ended = step.kind === 'end' ? { allocation: { endedAt: new Date(now).toISOString(), endReason: step.reason } } : {};
    try {
      await this.deps.api.patchGameRoomStatus(namespace, name, {
        metadata: { resourceVersion: room.metadata.resourceVersion },
        status: { ...next, reason: next.reason ?? null, ...ended },
      });
    } catch (err) {
      if (apiStatus(err) === 404) return {};
      // 409: the room changed since the cached version this was computed from (the gateway wrote
      // a ping). That newer version's watch event requeues the room at once; retrying sooner, as
      // an error would (5 ms, doubling), only met the same stale cache again: 1.3 conflicts per
      // room when 450 rooms were deleted. The delayed requeue keeps it level-based.
      if (apiStatus(err) === 409) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
      throw err;
    }
    // Written in error by this replica: a failure it saw (room-failures.ts).
    if (next.status === 'error' && current.status !== 'error') this.deps.roomFailures?.record(room, 'error', next.reason);
    if (step.kind === 'end') {
      this.deps.logger.info(step.reason === 'expired' ? 'allocation TTL over without an occupied report; the room is allocatable again' : 'allocated room reported occupied; allocation ended',
        { scheduler: namespace, room: name, allocationId: room.status?.allocation?.id, status });
    }
    return later;
  }

  /**
   * Informer hook: a GameRoom is gone for good; tell the forwarders, unless its last state says
   * `terminated` was told already (a lost room, by whichever replica found it lost).
   */
  async roomDeleted(room: GameRoom): Promise<void> {
    const key = `${room.metadata.namespace as string}/${room.metadata.name as string}`;
    this.lastStatus.delete(key);
    this.toldLost.delete(key);
    if (this.toldNotManaged.delete(key) || terminatedForwarded(room)) return;
    await this.forward(room, 'terminated');
  }

  /**
   * A GameRoom in a namespace that is no scheduler's (made with kubectl): Roomkeeper neither makes
   * its pod nor keeps its status nor deletes it. Said once, in a Warning on the room.
   */
  private notManaged(key: string, room: GameRoom): ReconcileResult {
    const uid = room.metadata.uid ?? '';
    if (this.toldNotManaged.get(key) === uid) return {};
    this.toldNotManaged.set(key, uid);
    const { namespace, name } = room.metadata as { namespace: string; name: string };
    this.deps.logger.info('GameRoom in a namespace that is no scheduler\'s: not managed', { namespace, room: name });
    roomEvent(this.deps, room, 'GameRoomNotManaged', 'IgnoreRoom', notManagedNote(namespace, name));
    return {};
  }

  private async podMissing(room: GameRoom): Promise<ReconcileResult> {
    const namespace = room.metadata.namespace as string;
    const name = room.metadata.name as string;
    const age = this.deps.now() - (toMillis(room.metadata.creationTimestamp) ?? this.deps.now());
    const sawPod = podWasSeen(room);
    if (!sawPod && age < POD_APPEAR_GRACE_MS) return { requeueAfterMs: POD_APPEAR_GRACE_MS - age + 100 };
    // The pod cache can lag far behind on a loaded API server (seen at 10,000 rooms: rooms deleted
    // as lost whose pods existed): a room never seen with a pod is checked with a fresh read.
    if (!sawPod && !room.metadata.deletionTimestamp && await this.exists(() => this.deps.core.readNamespacedPod({ name, namespace }))) {
      this.deps.logger.debug('room pod not in the cache yet; it exists', { scheduler: namespace, room: name });
      return { requeueAfterMs: POD_APPEAR_GRACE_MS };
    }
    if (!room.metadata.deletionTimestamp) {
      if (this.goesWithItsNamespace(namespace)) {
        // The scheduler's deletion (or a user's) deletes the namespace, and the namespace controller
        // its pods: nothing was lost and no add_rooms replaces the room. Events can no longer be
        // created there; the room's own deletion tells the forwarders `terminated` (roomDeleted).
        this.deps.logger.debug('room pod deleted with its namespace; deleting the room', { scheduler: namespace, room: name });
        await this.deleteRoom(namespace, name);
        return {};
      }
      // Told `terminated` already, by this replica or the leader before: its deletion may be done
      // and not yet in the cache (the annotation's own update event brings the room back here).
      if (terminatedForwarded(room) && !await this.exists(() => this.deps.api.getGameRoom(namespace, name))) return {};
      const why = sawPod ? 'its pod was deleted' : 'its pod never appeared';
      await this.recordLoss(namespace, name, why);
      const key = `${namespace}/${name}`;
      const uid = room.metadata.uid ?? '';
      if (this.toldLost.get(key) === uid) {
        // Told already; its deletion (below, before) is not in the cache yet, or failed.
        await this.forwardTerminatedOnce(room);
        await this.deleteRoom(namespace, name);
        return {};
      }
      if (this.toldLost.size >= MAX_TOLD_LOST) this.toldLost.delete(this.toldLost.keys().next().value as string);
      this.toldLost.set(key, uid);
      this.deps.logger.info('room lost, deleting it', { scheduler: namespace, room: name, why });
      const s = this.deps.caches.schedulers.get(namespace);
      const next = lostRoomPlace(namespace, s, s && activeDefinition(s, cachedVersions(this.deps.caches)).autoscaling);
      // A scheduler being deleted loses no room: its rooms go with it.
      if (s && !s.metadata.deletionTimestamp && this.deps.roomFailures?.record(room, 'pod_deleted', why) === true && heldPlayers(room)) {
        const words = lostWithPlayersNote(room, why, next);
        this.deps.logger.warn('room lost while players or a matchmaker held it', { scheduler: namespace, room: name, why, host: room.status?.host });
        schedulerEvent(this.deps, namespace, 'RoomLostWithPlayers', 'DeleteRoom', words);
      }
      roomEvent(this.deps, room, 'GameRoomDeleted', 'DeleteRoom', `Room deleted: ${why}; ${next}`);
      await this.forwardTerminatedOnce(room);
      await this.deleteRoom(namespace, name);
    }
    return {};
  }

  /** Whether the operator's cache shows the room's namespace being deleted. */
  private goesWithItsNamespace(namespace: string): boolean {
    return Boolean(this.deps.caches.namespaces.get(namespace)?.metadata?.deletionTimestamp);
  }

  private async deleteRoom(namespace: string, name: string): Promise<void> {
    this.deps.expectations?.noteOwnDeletion(namespace, name);
    try {
      await this.deps.api.deleteGameRoom(namespace, name, undefined, 'Background');
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
  }

  /**
   * Records the lost room in its Scheduler's status (domain/lost-rooms.ts) before the room goes, so
   * the health check names it in the add_rooms that replaces it, whichever replica leads by then.
   */
  private async recordLoss(scheduler: string, room: string, why: string): Promise<void> {
    const s = this.deps.caches.schedulers.get(scheduler);
    if (!s || s.metadata.deletionTimestamp) return; // no add_rooms replaces the rooms of a scheduler that goes
    // Recorded by an earlier try whose room deletion failed, not yet in the cache: not twice.
    if (this.deps.expectations?.lossRecordPending(scheduler, room)) return;
    const entry = { name: room, reason: why, lostAt: new Date(this.deps.now()).toISOString() };
    let current: Scheduler = s;
    for (let attempt = 1; ; attempt++) {
      const patch = lostRoomPatch(current, entry);
      if (!patch) {
        // Recorded already, as a fresh read shows: the health check waits for its cache to show it too.
        if (current !== s) this.deps.expectations?.expectLossRecorded(scheduler, room);
        return;
      }
      // The health check waits until its cache shows the record (expectations.ts).
      this.deps.expectations?.expectLossRecorded(scheduler, room);
      try {
        await this.deps.api.jsonPatchSchedulerStatus(scheduler, patch);
        return;
      } catch (err) {
        this.deps.expectations?.cancelLossRecord(scheduler, room);
        if (apiStatus(err) === 404) return;
        // The first record is conditional on there being no list yet: another room's loss may
        // have created it meanwhile; and an append decided on a cache that was behind may make the
        // list longer than its maxItems. Either way, decide again on a fresh read at once, rather
        // than on the cache after a backoff.
        const decidedOnStale = isJsonPatchNotApplied(err) || isTooManyItems(err, 'lostRooms');
        if (!decidedOnStale || attempt >= LOSS_RECORD_TRIES) throw err; // the retry decides again, the room still there
        current = await this.deps.api.getScheduler(scheduler);
        if (current.metadata.deletionTimestamp) return;
      }
    }
  }

  /** Whether a fresh read finds the object (the cache may be behind). */
  private async exists(read: () => Promise<unknown>): Promise<boolean> {
    try {
      await read();
      return true;
    } catch (err) {
      if (apiStatus(err) === 404) return false;
      throw err;
    }
  }

  /**
   * Tells a lost room's `terminated` before its GameRoom is deleted, and writes on the room that it
   * did, so neither the deletion's informer event nor a next leader that finds the room still there
   * tells it again. A replica that dies between the two tells it twice: a second `terminated` is
   * harmless to a receiver, a missing one leaves it offering a room that is gone.
   */
  private async forwardTerminatedOnce(room: GameRoom): Promise<void> {
    if (terminatedForwarded(room) || !await this.forward(room, 'terminated')) return;
    const at = new Date(this.deps.now()).toISOString();
    const patch = room.metadata.annotations
      ? [{ op: 'add', path: `/metadata/annotations/${TERMINATED_FORWARDED_ANNOTATION.replaceAll('/', '~1')}`, value: at }] // JSON Pointer: / is ~1
      : [{ op: 'add', path: '/metadata/annotations', value: { [TERMINATED_FORWARDED_ANNOTATION]: at } }];
    try {
      await this.deps.api.jsonPatchGameRoom(room.metadata.namespace as string, room.metadata.name as string, patch);
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
  }

  /**
   * Sends a status to the scheduler's forwarders; a failure is logged, never thrown. False when
   * there was none to tell (no forwarder configured, or a validation room).
   */
  private async forward(room: GameRoom, status: 'terminated' | 'ready' | 'occupied', metadata?: Record<string, unknown>): Promise<boolean> {
    const forwarder = this.deps.forwarder;
    if (!forwarder || room.spec.validation) return false;
    const schedulerName = room.metadata.namespace as string;
    const scheduler: Scheduler | undefined = this.deps.caches.schedulers.get(schedulerName);
    // The active version's forwarders, as the gateway forwards pings and events: the spec may hold
    // a change that is not a version yet (validation under way) or never will be (refused).
    const definition = scheduler ? activeDefinition(scheduler, cachedVersions(this.deps.caches)) : undefined;
    const forwarders = definition?.forwarders ?? [];
    if (forwarders.length === 0) return false;
    const target: ForwardedRoom = {
      game: definition?.game ?? '',
      schedulerName: room.metadata.namespace as string,
      roomId: room.metadata.name as string,
      host: room.status?.host ?? '',
      ports: (room.status?.ports ?? []).map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? '', port: p.port ?? 0 })),
      validation: false, // validation rooms returned above
    };
    await forwarder.forwardStatus(forwarders, target, status, metadata).catch((err: unknown) => {
      this.deps.logger.warn(`could not forward ${status} status`, { scheduler: target.schedulerName, room: target.roomId, error: String(err) });
    });
    return true;
  }
}

/** Whether a replica told the forwarders this room's `terminated` already (forwardTerminatedOnce). */
function terminatedForwarded(room: GameRoom): boolean {
  return room.metadata.annotations?.[TERMINATED_FORWARDED_ANNOTATION] !== undefined;
}

/**
 * The status change an allocation made without a ping, as the forwarders are told it (their
 * protocol has no `allocated`): a ready room allocated is `occupied` (taken), an allocated room
 * whose TTL ended is `ready` again. The metadata says what happened. Changes a ping made (an
 * allocated room reporting occupied) are forwarded by the gateway with the ping; a multi-match
 * room's slot allocation changes no status (it stays active) and is not forwarded.
 */
export function allocationStatusChange(before: string, room: GameRoom): { status: 'ready' | 'occupied'; metadata: Record<string, unknown> } | undefined {
  const status = room.status?.status;
  const a = room.status?.allocation;
  if (!a) return undefined;
  if (before === 'ready' && status === 'allocated') {
    return { status: 'occupied', metadata: { roomStatus: 'allocated', allocationId: a.id, expiresAt: a.expiresAt } };
  }
  if (before === 'allocated' && status === 'ready' && a.endReason === 'expired') {
    return { status: 'ready', metadata: { roomStatus: 'ready', allocationId: a.id, allocationEnded: 'expired' } };
  }
  return undefined;
}

function portsOf(pod: k8s.V1Pod): NonNullable<GameRoomStatus['ports']> {
  const out: NonNullable<GameRoomStatus['ports']> = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.hostPort) out.push({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.hostPort, containerPort: p.containerPort });
    }
  }
  return out;
}
