/**
 * The Scheduler reconciler (key: scheduler name). It turns what kubectl users do into the same
 * operations the HTTP API enqueues, and keeps the Scheduler's status current:
 *  - a new Scheduler gets `create_scheduler` (id derived from uid and generation);
 *  - a spec edit (a new generation) gets `create_new_scheduler_version` (id derived from uid and
 *    generation, so the gateway's and ours are one and the same operation);
 *  - `kubectl delete` runs `delete_scheduler` through the Scheduler's finalizer.
 * Level-based: running it twice in a row changes nothing the second time.
 */
import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { apiStatus } from '../../../common/src/kube/clients';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { createSchedulerOperationId, deleteSchedulerOperationId, newVersionOperationId } from '../../../common/src/operations/operation-id';
import { SCHEDULER_FINALIZER } from '../../../common/src/resources/labels';
import type { OperatorDeps } from '../deps';
import type { ReconcileResult } from '../runtime/work-queue';
import { computeSchedulerStatus, isVersionOperationActive, statusChanged } from './scheduler-status';

export interface SchedulerControllerOptions {
  /** The scheduler's operations, including writes the cache has not caught up with. */
  operationsOf: (schedulerName: string) => Operation[];
  /** Makes an operation just created (or found) visible to `operationsOf` before the cache has it. */
  track?: (op: Operation) => void;
}

export class SchedulerController {
  constructor(private readonly deps: OperatorDeps, private readonly opts: SchedulerControllerOptions) {}

  async reconcile(name: string): Promise<ReconcileResult> {
    const s = this.deps.caches.schedulers.get(name);
    if (!s) return {};
    const uid = s.metadata.uid as string;
    const generation = s.metadata.generation ?? 1;
    const ops = this.opts.operationsOf(name);
    const has = (id: string) => ops.some((op) => op.metadata.name === id);

    if (s.metadata.deletionTimestamp) {
      if (s.metadata.finalizers?.includes(SCHEDULER_FINALIZER)) {
        const id = deleteSchedulerOperationId(uid);
        if (!has(id)) await this.enqueue(name, id, 'delete_scheduler', {});
      }
      return this.writeStatus(s, ops);
    }

    if (!s.metadata.finalizers?.includes(SCHEDULER_FINALIZER)) {
      await this.deps.api.patchScheduler(name, {
        metadata: { finalizers: [...(s.metadata.finalizers ?? []), SCHEDULER_FINALIZER], resourceVersion: s.metadata.resourceVersion },
      });
      return {}; // the update event brings us back with the new object
    }

    let requeueAfterMs: number | undefined;
    if (!s.status?.version) {
      const creating = ops.some((op) => op.spec.definitionName === 'create_scheduler' && ['pending', 'in_progress'].includes(op.status?.status ?? 'pending'));
      const id = createSchedulerOperationId(uid, generation);
      if (!creating && !has(id)) await this.enqueue(name, id, 'create_scheduler', { scheduler: { name, ...s.spec } });
    } else if (generation > (s.status.versionedGeneration ?? 0)) {
      const id = newVersionOperationId(uid, generation);
      if (has(id)) {
        await this.deps.api.patchSchedulerStatus(name, { status: { versionedGeneration: generation } });
      } else if (isVersionOperationActive(ops)) {
        requeueAfterMs = 1000; // an earlier version change is still running; this edit queues after it
      } else if (await this.enqueue(name, id, 'create_new_scheduler_version', { scheduler: { name, ...s.spec } }) === 'created') {
        await this.deps.api.patchSchedulerStatus(name, { status: { versionedGeneration: generation } });
      } else {
        // The gateway's operation for this generation exists but is not in the cache yet: the
        // generation is marked versioned once it is (above), so the status never shows the change
        // as done (in-sync) while its operation is still invisible here.
        requeueAfterMs = 100;
      }
    }
    const written = await this.writeStatus(s, this.opts.operationsOf(name));
    return requeueAfterMs === undefined ? written : { requeueAfterMs };
  }

  /** `exists`: the gateway enqueued the same operation first (this cache has not seen it yet). */
  private async enqueue(schedulerName: string, id: string, definitionName: string, input: Record<string, unknown>): Promise<'created' | 'exists'> {
    try {
      const created = await this.deps.api.createOperation(buildOperation({ id, schedulerName, definitionName, input, source: 'kubectl', enqueuedAt: this.deps.now() }));
      this.opts.track?.(created);
      this.deps.logger.info('enqueued operation for a change made to the Scheduler object', { scheduler: schedulerName, operation: id, definition: definitionName });
      return 'created';
    } catch (err) {
      if (apiStatus(err) !== 409) throw err;
      return 'exists';
    }
  }

  private async writeStatus(s: Scheduler, ops: readonly Operation[]): Promise<ReconcileResult> {
    const name = s.metadata.name as string;
    const next = computeSchedulerStatus(s, ops, this.deps.caches.rooms.list(name), this.deps.now());
    if (!statusChanged(s.status, next)) return {};
    try {
      // A merge patch merges maps: versions no longer present must be removed explicitly.
      const gone = Object.keys(s.status?.roomsByVersion ?? {}).filter((v) => !(v in (next.roomsByVersion ?? {})));
      const roomsByVersion = { ...next.roomsByVersion, ...Object.fromEntries(gone.map((v) => [v, null])) };
      await this.deps.api.patchSchedulerStatus(name, { status: { ...next, roomsByVersion } });
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
    return {};
  }
}
