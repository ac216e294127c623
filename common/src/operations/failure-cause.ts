/**
 * The history line an operation that ended in error writes with its cause (the operator's runner
 * writes it), and reading it back (pure): whoever tells that end again (the scheduler's Degraded
 * condition, the health check's incidents, another attempt of a create) reads it from the
 * Operation object, not from memory, so a new leader reads the same story.
 */
import type { Operation } from '../generated/resources';

/** The history line that carries an error's cause: the prefix, then the cause. */
export const FAILURE_PREFIX = 'Operation execution failed: ';

/** The cause of an operation's error, as its history tells it; undefined when no line tells one. */
export function failureCause(op: Operation): string | undefined {
  const events = op.status?.executionHistory ?? [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]?.event ?? '';
    if (e.startsWith(FAILURE_PREFIX)) return e.slice(FAILURE_PREFIX.length);
  }
  return undefined;
}

/**
 * Whether a cause says the cluster refused a write for a reason of its own that may be lifted
 * without a change of the definition: a 403 (a ResourceQuota's `exceeded quota`, a Pod Security
 * or admission policy, RBAC), or a namespace still being deleted. A 422 (the object is invalid)
 * is the definition's fault, and is not.
 */
export function refusedByTheCluster(cause: string | undefined): boolean {
  return cause !== undefined && /\b403\b|\bforbidden\b|exceeded quota|denied the request|being terminated|still terminating/i.test(cause);
}
