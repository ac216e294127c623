/**
 * The order of a scheduler's operation queue (pure), one comparison for every reader: the
 * operator runs pending operations in it, the gateway lists them in it. Priority operations
 * (enqueued by the operator to heal or scale) come first, then enqueue time, then name, so every
 * replica computes the same order.
 */
import type { Operation, Scheduler } from '../generated/resources';
import { toMillis } from '../kube/timestamps';
import { isFinalOperationStatus, OperationDefinition, OperationStatusName } from '../resources/operation-names';

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
