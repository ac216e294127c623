/**
 * The order of a scheduler's operation queue (pure), one comparison for every reader: the
 * operator runs pending operations in it, the gateway lists them in it. Priority operations
 * (enqueued by the operator to heal or scale) come first, then enqueue time, then name, so every
 * replica computes the same order.
 */
import type { Operation, Scheduler } from '../generated/resources';
import { toMillis } from '../kube/timestamps';
import { isFinalOperationStatus, OperationDefinition, OperationStatusName } from '../resources/operation-names';
import { MAX_CLOCK_SKEW_MS } from '../runtime/clock';

export function compareQueueOrder(a: Operation, b: Operation): number {
  const pa = a.spec.priority ? 0 : 1;
  const pb = b.spec.priority ? 0 : 1;
  if (pa !== pb) return pa - pb;
  const ta = Date.parse(a.spec.enqueuedAt) || 0;
  const tb = Date.parse(b.spec.enqueuedAt) || 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/**
 * Whether `op`, an operation under `scheduler`'s name, was an earlier Scheduler's of that name
 * (deleted, then created again): a final one created before `scheduler` was, or the finished
 * delete_scheduler that deleted that one. Operations outlive their Scheduler (the retention keeps
 * a deletion's history readable), so these are not part of the new one's history. Both
 * creationTimestamps are the API server's, whole seconds: one made in the same second as
 * `scheduler` is not judged by time.
 */
export function ofEarlierScheduler(op: Operation, scheduler: Scheduler): boolean {
  if (!isFinalOperationStatus(op.status?.status)) return false;
  if (op.spec.definitionName === OperationDefinition.DeleteScheduler && op.status?.status === OperationStatusName.Finished && !scheduler.metadata.deletionTimestamp) return true;
  const made = toMillis(op.metadata.creationTimestamp);
  const born = toMillis(scheduler.metadata.creationTimestamp);
  return made !== undefined && born !== undefined && made < born;
}

/**
 * Whether `op` was enqueued before `scheduler`, under its name, was created (by more than clocks
 * drift: the gateway writes enqueuedAt by its clock, kube-apiserver the creationTimestamp by its
 * own, to the second): it was asked of an earlier scheduler of that name and written back later,
 * restored from a backup (the API server drops the status of an object it creates, so a restored
 * record looks pending) or applied again from an old manifest. The operator runs no such pending
 * operation (queue-plan.ts): run, a restored delete_scheduler deleted the live scheduler of its
 * name, and restored add_rooms and switches moved a fleet away from its manifests.
 */
export function enqueuedBeforeScheduler(op: Operation, scheduler: Pick<Scheduler, 'metadata'>): boolean {
  const born = toMillis(scheduler.metadata.creationTimestamp);
  const enqueuedAt = Date.parse(op.spec.enqueuedAt);
  return born !== undefined && Number.isFinite(enqueuedAt) && enqueuedAt < born - MAX_CLOCK_SKEW_MS;
}
