/**
 * The per-scheduler operation queue, computed from the Operation objects themselves (pure), in
 * the order of `compareQueueOrder` (common/src/operations/queue-order.ts).
 */
import type { Operation } from '../../../common/src/generated/resources';
import { compareQueueOrder } from '../../../common/src/operations/queue-order';
import { isFinalOperationStatus, OperationDefinition, OperationSourceName, operationStatusOf } from '../../../common/src/resources/operation-names';

/** Pending operations in the order they will run. */
export function pendingQueue(ops: readonly Operation[]): Operation[] {
  return ops.filter((op) => operationStatusOf(op) === 'pending' && !op.metadata.deletionTimestamp).sort(compareQueueOrder);
}

export function inProgress(ops: readonly Operation[]): Operation[] {
  return ops.filter((op) => operationStatusOf(op) === 'in_progress');
}

export interface RetentionPolicy { maxCount: number; maxAgeMs: number }

/** The operations of the operator's own that a rollout and the health check make by the hundred. */
const HEALING: ReadonlySet<string> = new Set([OperationDefinition.AddRooms, OperationDefinition.RemoveRooms]);

/**
 * Final operations to prune: finished longer than `maxAgeMs` ago, or beyond the newest `maxCount`
 * of their kind. The operator's own add_rooms and remove_rooms (source `operator`: the health
 * check's, a rollout's steps) and everything else (the changes asked over HTTP or with kubectl,
 * and the switch a version change enqueues, of source `operator` too) are counted apart: a rollout
 * of 150 rooms one at a time makes about 300 operations of its own, which pushed out the version
 * change that started it, its switch and the scheduler's creation.
 */
export function operationsToPrune(ops: readonly Operation[], now: number, policy: RetentionPolicy): Operation[] {
  const finished = ops.filter((op) => isFinalOperationStatus(op.status?.status)).sort((a, b) => finishedAt(b) - finishedAt(a));
  const seen = { operator: 0, asked: 0 };
  return finished.filter((op) => {
    const kind = op.spec.source === OperationSourceName.Operator && HEALING.has(op.spec.definitionName) ? 'operator' : 'asked';
    seen[kind]++;
    return seen[kind] > policy.maxCount || now - finishedAt(op) > policy.maxAgeMs;
  });
}

function finishedAt(op: Operation): number {
  return Date.parse(op.status?.finishedAt ?? op.spec.enqueuedAt) || 0;
}

/**
 * Whether an in-progress operation's lease has expired (or it has none: invalid). A lease that
 * expires further ahead than `maxAheadMs` is no replica's (an edit of the status): held, it
 * blocked the scheduler's queue until then (year 9999).
 */
export function leaseState(op: Operation, now: number, maxAheadMs = Infinity): 'valid' | 'expired' | 'missing' | 'too-far-ahead' {
  const ttl = op.status?.lease?.ttl;
  if (!ttl) return 'missing';
  const at = Date.parse(ttl);
  if (!Number.isFinite(at) || at <= now) return 'expired';
  return at - now > maxAheadMs ? 'too-far-ahead' : 'valid';
}
