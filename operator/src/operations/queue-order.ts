/**
 * The per-scheduler operation queue, computed from the Operation objects themselves (pure).
 * Pending operations run in enqueue order; priority operations (enqueued by the operator to
 * heal or scale) go to the head, in their own enqueue order. Ties are broken by name, so every
 * replica computes the same order.
 */
import type { Operation } from '../../../common/src/generated/resources';
import { isFinalOperationStatus, operationStatusOf } from '../../../common/src/resources/operation-names';

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

/** Pending operations in the order they will run. */
export function pendingQueue(ops: readonly Operation[]): Operation[] {
  return ops.filter((op) => operationStatusOf(op) === 'pending' && !op.metadata.deletionTimestamp).sort(compareQueueOrder);
}

export function inProgress(ops: readonly Operation[]): Operation[] {
  return ops.filter((op) => operationStatusOf(op) === 'in_progress');
}

export function finalOperations(ops: readonly Operation[]): Operation[] {
  return ops.filter((op) => isFinalOperationStatus(op.status?.status));
}

export interface RetentionPolicy { maxCount: number; maxAgeMs: number }

/**
 * Final operations to prune: beyond the newest `maxCount`, or finished longer than `maxAgeMs` ago.
 */
export function operationsToPrune(ops: readonly Operation[], now: number, policy: RetentionPolicy): Operation[] {
  const finished = finalOperations(ops).sort((a, b) => finishedAt(b) - finishedAt(a));
  return finished.filter((op, i) => i >= policy.maxCount || now - finishedAt(op) > policy.maxAgeMs);
}

function finishedAt(op: Operation): number {
  return Date.parse(op.status?.finishedAt ?? op.spec.enqueuedAt) || 0;
}

/** Whether an in-progress operation's lease has expired (or it has none: invalid). */
export function leaseState(op: Operation, now: number): 'valid' | 'expired' | 'missing' {
  const ttl = op.status?.lease?.ttl;
  if (!ttl) return 'missing';
  const at = Date.parse(ttl);
  return Number.isFinite(at) && at > now ? 'valid' : 'expired';
}
