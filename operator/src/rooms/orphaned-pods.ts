/**
 * Deletes the room pods that ran on without their GameRoom (domain/orphaned-pods.ts decides which):
 * a GameRoom deleted with `kubectl delete gameroom --cascade=orphan` leaves its pod running, with
 * its host ports and its game server, and nothing else would ever delete it. The health check runs
 * a pass for each scheduler it checks (only the leader's, only while the scheduler and its
 * namespace are not being deleted: their pods go with them).
 *
 * A pod is deleted once it has been seen without its GameRoom for ROOMKEEPER_ORPHANED_POD_GRACE
 * on current caches; one whose ownerReference still names a GameRoom is deleted only when a fresh
 * read finds that GameRoom gone. The deletion is an ordinary one (the pod's grace period, so its
 * game server is told to stop) with the pod's uid as precondition. Each pass that deleted some
 * tells them in one Warning Event on the Scheduler (`OrphanedRoomPodsDeleted`) and one log line. A
 * deletion that fails is logged once per pod and tried again by the next pass.
 */
import { apiStatus, describeApiError, retryTransient } from '../../../common/src/kube/clients';
import { forEachConcurrent } from '../../../common/src/runtime/concurrent';
import type { OperatorDeps } from '../deps';
import { schedulerEvent } from '../events';
import { orphanedPodsNote, planOrphanedPods, type OrphanedPod } from './domain/orphaned-pods';

/** The names a log line carries; the rest are counted. */
const NAMES_LOGGED = 20;

export class OrphanedPods {
  /** Per scheduler: since when each pod (by uid) has been seen without its GameRoom. */
  private readonly seen = new Map<string, Map<string, number>>();
  /** Pods (uid) whose failed deletion was logged: logged once each. */
  private readonly failureLogged = new Set<string>();
  private readonly counted: { inc(labels: { result: string }): void };

  constructor(private readonly deps: OperatorDeps) {
    this.counted = deps.metrics.counter('roomkeeper_orphaned_room_pods_total', 'Room pods found running without their GameRoom (deleted with --cascade=orphan, or not collected) that the operator deleted (result="deleted") or failed to delete (result="failed": tried again by the next health check).', { labelNames: ['result'] });
  }

  /** One pass over the scheduler's pods: deletes those due, and tells them. */
  async sweep(scheduler: string): Promise<void> {
    const ns = this.deps.caches.namespaces.get(scheduler);
    if (!ns || ns.metadata?.deletionTimestamp) {
      this.forget(scheduler);
      return;
    }
    // Not on caches that may be behind (the health check waits for them too); what was seen before
    // counts only from when they are current again (`sightSince`).
    const sight = this.deps.sight?.() ?? { impaired: false, since: 0 };
    if (sight.impaired) return;
    const plan = planOrphanedPods({
      scheduler,
      pods: this.deps.caches.pods.list(scheduler),
      roomUid: (name) => this.deps.caches.rooms.get(name, scheduler)?.metadata.uid,
      roomKept: (name) => {
        const room = this.deps.caches.rooms.get(name, scheduler);
        return room !== undefined && !room.metadata.deletionTimestamp;
      },
      seenSince: this.seen.get(scheduler) ?? new Map<string, number>(),
      now: this.deps.now(),
      sightSince: sight.since,
      graceMs: this.deps.config.orphanedPodGrace,
    });
    for (const uid of this.seen.get(scheduler)?.keys() ?? []) if (!plan.seenSince.has(uid)) this.failureLogged.delete(uid);
    if (plan.seenSince.size > 0) this.seen.set(scheduler, plan.seenSince);
    else this.seen.delete(scheduler);
    if (plan.due.length === 0) return;

    // Bounded as a removal is; the next pass takes the rest.
    const deleted: OrphanedPod[] = [];
    await forEachConcurrent(plan.due.slice(0, this.deps.config.removeRoomsLimit), this.deps.config.addRoomsConcurrency, async (pod) => {
      if (await this.delete(scheduler, pod)) deleted.push(pod);
    });
    if (deleted.length === 0) return;
    deleted.sort((a, b) => a.name.localeCompare(b.name));
    const graceMs = this.deps.config.orphanedPodGrace;
    this.deps.logger.info('deleted room pods that ran without their GameRoom (deleted with --cascade=orphan, or not collected)', {
      scheduler,
      count: deleted.length,
      pods: deleted.slice(0, NAMES_LOGGED).map((p) => p.name),
      orphaned: deleted.filter((p) => p.kind === 'orphaned').length,
      ownerGone: deleted.filter((p) => p.kind === 'owner-gone').length,
      validation: deleted.filter((p) => p.validation).length,
      graceS: graceMs / 1000,
    });
    schedulerEvent(this.deps, scheduler, 'OrphanedRoomPodsDeleted', 'DeletePod', orphanedPodsNote(deleted, graceMs));
  }

  /** The scheduler or its namespace goes, and its pods with them: nothing seen counts any more. */
  forget(scheduler: string): void {
    for (const uid of this.seen.get(scheduler)?.keys() ?? []) this.failureLogged.delete(uid);
    this.seen.delete(scheduler);
  }

  /** Deletes one pod; true when this deletion did it (not when it was gone, replaced, or its GameRoom is there). */
  private async delete(scheduler: string, pod: OrphanedPod): Promise<boolean> {
    try {
      // The ownerReference names a GameRoom the cache does not hold: read afresh whether it is there.
      for (const owner of pod.owners) {
        const room = await this.deps.api.getGameRoom(scheduler, owner.name).catch((err: unknown) => {
          if (apiStatus(err) === 404) return undefined;
          throw err;
        });
        if (room?.metadata.uid === owner.uid) {
          this.deps.logger.debug('a room pod\'s GameRoom is there though the cache does not show it; its pod is kept', { scheduler, pod: pod.name, room: owner.name });
          return false;
        }
      }
      await retryTransient(() => this.deps.core.deleteNamespacedPod({ name: pod.name, namespace: scheduler, body: { preconditions: { uid: pod.uid } } }));
      this.counted.inc({ result: 'deleted' });
      this.failureLogged.delete(pod.uid);
      return true;
    } catch (err) {
      // Gone already, or another pod holds the name now (409 on the uid precondition): not ours to delete.
      if (apiStatus(err) === 404 || apiStatus(err) === 409) return false;
      this.counted.inc({ result: 'failed' });
      if (!this.failureLogged.has(pod.uid)) {
        this.failureLogged.add(pod.uid);
        this.deps.logger.warn('could not delete a room pod that runs without its GameRoom; the next health check tries again (the operator needs get on gamerooms and delete on pods: see the chart\'s operator ClusterRole)', {
          scheduler, pod: pod.name, kind: pod.kind, error: describeApiError(err),
        });
      }
      return false;
    }
  }
}
