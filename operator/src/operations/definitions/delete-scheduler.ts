/**
 * delete_scheduler: rooms (occupied ones too: deleting the scheduler is explicit), the namespace,
 * the versions, the scheduler's other operations, then the Scheduler itself (by releasing its
 * finalizer). This operation's own history stays readable until it finishes; it goes with the
 * retention of operations afterwards.
 */
import { apiErrorFields, apiStatus, describeApiError, isNotFound, isWriteFenced } from '../../../../common/src/kube/clients';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_FINALIZER, SCHEDULER_LABEL } from '../../../../common/src/resources/labels';
import type { ExecutionContext, OperationDefinition } from '../execution';
import { OperationDefinition as OperationName } from '../../../../common/src/resources/operation-names';
import { deletionStartedAt, RoomManager } from '../../rooms/room-manager';
import { awaitNamespaceRemoved, listVersions, namespaceRemovalBudgetMs, waitUntil } from './shared';
import { counted } from '../../../../common/src/text/counted';

const ignoreNotFound = (err: unknown): void => {
  if (!isNotFound(err)) throw err;
};

/**
 * The deletion waits for the rooms and their pods for as long as some keep going: it gives up
 * only when none went for this long. (Benchmark 10 deleted a 15,000-room scheduler in 15 minutes
 * on a loaded 2-core control plane, past the fixed 10-minute limit this wait had before.)
 */
const DELETION_STALL_MS = 10 * 60_000;

/**
 * Up to this many room pods, the deletion deletes them itself (one deletecollection) right after
 * the namespace: kube-controller-manager takes a deleted namespace up only 5 s later and, finding
 * pods still terminating, looks again after half their grace period (a 30-room scheduler went in
 * 5.5-6.3 s instead of 10.7-11.6 s on kube-apiserver). A larger fleet's pods are the namespace
 * controller's alone: such a deletion takes minutes, which 5 s do not change (a 4,500-room
 * scheduler: 179.4 s with this request, 179.6 s without, benchmark 10 at 3,000 rooms), and over
 * thousands of pods the one request outlived the client's 30 s.
 */
const PODS_DELETED_AT_ONCE = 100;

export const deleteSchedulerDefinition: OperationDefinition = {
  name: OperationName.DeleteScheduler,

  async execute(ctx: ExecutionContext): Promise<void> {
    const name = ctx.schedulerName;
    // The scheduler's room pods, as Roomkeeper labels them.
    const roomPods = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${SCHEDULER_LABEL}=${name}`;
    // The state (terminating) is the scheduler controller's, from this operation and the deletion.
    const ns = await ctx.deps.core.readNamespace({ name }).catch((err: unknown) => {
      ignoreNotFound(err);
      return undefined;
    });
    if (ns && ns.metadata?.labels?.[SCHEDULER_LABEL] === name) {
      // What there was to delete (the caches follow the deletions below within milliseconds).
      const roomsAtStart = ctx.deps.caches.rooms.list(name).length;
      const podsAtStart = ctx.deps.caches.pods.list(name).length;
      await ctx.deps.core.deleteNamespace({ name }).catch(ignoreNotFound);
      // A small fleet's room pods start terminating now, not when the cluster's namespace
      // controller gets to them (see PODS_DELETED_AT_ONCE).
      const atOnce = podsAtStart <= PODS_DELETED_AT_ONCE;
      ctx.event(`Deleting namespace ${name}${atOnce ? ' and its room pods' : ''}: ${counted(roomsAtStart, 'room')}, ${counted(podsAtStart, 'room pod')}`);
      const refused = !atOnce ? undefined : await ctx.deps.core.deleteCollectionNamespacedPod({ namespace: name, labelSelector: roomPods })
        .then(() => undefined, (err: unknown) => (isNotFound(err) ? undefined : err));
      // Not a failure of the deletion, only slower: the namespace controller deletes what is left
      // (forbidden: an operator newer than its chart's RBAC).
      // Not sent, this replica having lost its leader Lease: not the cluster's doing; it stops here.
      if (isWriteFenced(refused)) throw refused;
      if (refused !== undefined) {
        const why = apiStatus(refused) === 403 ? `${describeApiError(refused)}: the operator may not deletecollection pods; upgrade the chart's RBAC` : describeApiError(refused);
        ctx.logger.warn('could not delete the room pods of a deleted scheduler at once; the namespace controller deletes them', { scheduler: name, ...apiErrorFields(refused) });
        ctx.event(`Could not delete the room pods at once (${why}); the cluster's namespace controller deletes them, later`);
      }
      // The pods left at once, then every tenth of them, as add_rooms does: each status write
      // carries the whole history, and an entry per count seen made thousands for a large fleet.
      const step = Math.max(1, Math.ceil(podsAtStart / 10));
      let lastReported: number | undefined;
      let roomsToldLeft = false;
      const rooms = new RoomManager(ctx.deps);
      const forced = new Set<string>();
      // What is left, counted once per check (each list copies the cache's objects).
      const left = { pods: podsAtStart, rooms: 0 };
      const gone = await waitUntil(ctx, () => {
        const pods = ctx.deps.caches.pods.list(name);
        // Pods still terminating after the deletion timeout (a stuck node) are deleted without grace.
        for (const pod of pods) {
          const since = deletionStartedAt(pod.metadata);
          const podName = pod.metadata?.name as string;
          if (since !== undefined && ctx.deps.now() - since > ctx.deps.config.roomDeletionTimeout && !forced.has(podName)) {
            forced.add(podName);
            void rooms.forceDeletePod(name, podName).catch(() => forced.delete(podName));
          }
        }
        left.pods = pods.length;
        const roomsLeft = ctx.deps.caches.rooms.list(name);
        left.rooms = roomsLeft.length;
        if (left.pods > 0 && (lastReported === undefined || Math.abs(lastReported - left.pods) >= step)) {
          lastReported = left.pods;
          ctx.event(`Waiting for room pods to be deleted: ${left.pods}`);
        }
        // The pods are gone, GameRooms held by another tool's finalizer are not: say what holds them.
        const foreign = left.pods === 0 && !roomsToldLeft ? [...new Set(roomsLeft.flatMap((r) => (r.metadata.finalizers ?? []).filter((f) => f !== 'foregroundDeletion')))] : [];
        if (foreign.length > 0) {
          roomsToldLeft = true;
          ctx.event(`Every room pod is gone; waiting for ${counted(left.rooms, 'GameRoom')} to be deleted, held by ${foreign.length === 1 ? 'the finalizer' : 'the finalizers'} ${foreign.join(', ')}, `
            + `which Roomkeeper does not remove: the tool that set ${foreign.length === 1 ? 'it' : 'them'} must (kubectl get gamerooms -n ${name} -o yaml)`);
        }
        return left.pods === 0 && left.rooms === 0 ? true : undefined;
      }, DELETION_STALL_MS, { intervalMs: 200, remaining: () => left.pods + left.rooms });
      if (!gone) {
        throw new Error(`rooms of ${name} were not deleted: ${counted(left.pods, 'room pod')} and ${counted(left.rooms, 'room')} `
          + `left, none gone in the last ${DELETION_STALL_MS / 60_000} minutes (kubectl get pods -n ${name} shows what holds them); the Scheduler's deletion tries again after a backoff`);
      }
      if (forced.size > 0) ctx.event(`Force-deleted ${counted(forced.size, 'pod')} stuck terminating past the deletion timeout`);
      // The scheduler is only reported deleted once its namespace is gone: a scheduler created
      // again under the same name needs that namespace anew.
      if (!await awaitNamespaceRemoved(ctx, name)) {
        ctx.event(`Namespace ${name} is still terminating after ${Math.round(namespaceRemovalBudgetMs(ctx) / 1000)}s (an object in it is held by a finalizer?); it is left to the cluster`);
      }
    } else if (ns) {
      // Not labelled as ours (Roomkeeper never made it, or its label was removed by hand): left in
      // place. The scheduler's own rooms in it, made by Roomkeeper, go with the scheduler all the
      // same: left, they ran on, holding host ports, with nothing to remove them ever.
      const madeHere = (labels: Record<string, string> | undefined) => labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE && labels[SCHEDULER_LABEL] === name;
      const own = ctx.deps.caches.rooms.list(name).filter((r) => r.spec.scheduler === name && madeHere(r.metadata.labels));
      const pods = ctx.deps.caches.pods.list(name).filter((p) => madeHere(p.metadata?.labels));
      if (own.length + pods.length === 0) ctx.event(`Namespace ${name} is not managed by Roomkeeper; left in place`);
      else {
        for (const room of own) await ctx.deps.api.deleteGameRoom(name, room.metadata.name as string, undefined, 'Background').catch(ignoreNotFound);
        if (pods.length > 0) await ctx.deps.core.deleteCollectionNamespacedPod({ namespace: name, labelSelector: roomPods }).catch(ignoreNotFound);
        ctx.event(`Namespace ${name} is not labelled as Roomkeeper's (${SCHEDULER_LABEL}=${name}: the label was removed, or Roomkeeper did not make it), so it is left in place; `
          + `deleting the ${counted(own.length, 'room')} and ${counted(pods.length, 'room pod')} of this scheduler in it, which Roomkeeper made`);
      }
    }

    for (const v of await listVersions(ctx)) {
      await ctx.deps.api.deleteSchedulerVersion(v.metadata.name as string).catch(ignoreNotFound);
    }
    ctx.event('Deleted the scheduler versions');
    let kept = 0;
    for (const op of (await ctx.deps.api.listOperations(name)).items) {
      if (op.metadata.name === ctx.op.metadata.name) continue;
      // Earlier attempts of this deletion stay: their history tells why it took another one.
      if (op.spec.definitionName === 'delete_scheduler') {
        kept++;
        continue;
      }
      await ctx.deps.api.deleteOperation(op.metadata.name as string).catch(ignoreNotFound);
    }
    ctx.event(kept > 0 ? `Deleted the scheduler's other operations, except ${counted(kept, 'earlier attempt')} of this deletion` : 'Deleted the scheduler\'s other operations');

    // Finalizers of other tools, which hold the Scheduler object once Roomkeeper's is released.
    let foreign: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      let scheduler;
      try {
        scheduler = await ctx.deps.api.getScheduler(name);
      } catch (err) {
        ignoreNotFound(err);
        break;
      }
      try {
        const finalizers = (scheduler.metadata.finalizers ?? []).filter((f) => f !== SCHEDULER_FINALIZER);
        await ctx.deps.api.patchScheduler(name, { metadata: { finalizers, resourceVersion: scheduler.metadata.resourceVersion } });
        if (!scheduler.metadata.deletionTimestamp) await ctx.deps.api.deleteScheduler(name);
        foreign = finalizers;
        break;
      } catch (err) {
        if (apiStatus(err) === 409) continue;
        ignoreNotFound(err);
        break;
      }
    }
    ctx.event(foreign.length === 0 ? `Scheduler ${name} deleted`
      : `Everything of scheduler ${name} is deleted; the Scheduler object itself waits on ${foreign.length === 1 ? 'the finalizer' : 'the finalizers'} ${foreign.join(', ')}, `
        + `which Roomkeeper does not remove: the tool that set ${foreign.length === 1 ? 'it' : 'them'} must (kubectl get scheduler ${name} -o yaml); it can be created again once it is gone`);
  },
};
