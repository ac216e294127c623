/**
 * Level-based repair of what only an operation can do (pure). The Scheduler says what is wanted
 * (deleted: a deletionTimestamp; created: no active version yet); when the last operation that
 * should have done it ended without doing it, another attempt is due, after a backoff:
 *  - `delete_scheduler`: any end but `finished` (error, canceled, evicted, or stuck: its operator
 *    died), so a Scheduler never stays terminating for good;
 *  - `create_scheduler`: only when stuck (the operator died mid-way); an error is the operation's
 *    verdict on the definition, repaired by a new spec generation (a new operation id).
 * Each attempt's id is derived from the one before it, so two replicas enqueue the same one.
 */
import type { Operation } from '../../../common/src/generated/resources';
import { deterministicOperationId } from '../../../common/src/operations/operation-id';
import { OperationConditionType } from '../../../common/src/resources/condition-types';
import { exponentialBackoff } from '../../../common/src/runtime/backoff';
import { statusOf } from '../operations/queue-order';

export const ATTEMPT_BACKOFF_MS = 5_000;
export const ATTEMPT_BACKOFF_MAX_MS = 5 * 60_000;

export type AttemptDecision =
  | { action: 'none' }
  | { action: 'wait'; ms: number }
  | { action: 'enqueue'; id: string; input: Record<string, unknown> };

export interface AttemptRule {
  definitionName: 'delete_scheduler' | 'create_scheduler';
  /** The first attempt's id (the one the gateway and the scheduler controller both derive). */
  firstId: string;
  /** The input of a new attempt. */
  input: Record<string, unknown>;
}

function isStuck(op: Operation): boolean {
  return op.status?.conditions?.some((c) => c.type === OperationConditionType.Stuck && c.status === 'True') ?? false;
}

/** The attempts of one cause: the first id, then each attempt's successor, in order. */
function chain(ops: readonly Operation[], firstId: string): Operation[] {
  const byName = new Map(ops.map((op) => [op.metadata.name as string, op]));
  const out: Operation[] = [];
  let id = firstId;
  for (let op = byName.get(id); op; op = byName.get(id)) {
    out.push(op);
    id = nextAttemptId(id);
  }
  return out;
}

export function nextAttemptId(previousId: string): string {
  return deterministicOperationId(`${previousId}/next-attempt`);
}

export function decideAttempt(ops: readonly Operation[], rule: AttemptRule, now: number): AttemptDecision {
  const attempts = chain(ops.filter((op) => op.spec.definitionName === rule.definitionName), rule.firstId);
  const last = attempts[attempts.length - 1];
  if (!last) return { action: 'enqueue', id: rule.firstId, input: rule.input };
  const status = statusOf(last);
  if (status === 'pending' || status === 'in_progress' || status === 'finished') return { action: 'none' };
  const stuck = isStuck(last);
  if (rule.definitionName === 'create_scheduler' && !stuck) return { action: 'none' };
  const failures = attempts.length;
  const delay = exponentialBackoff(ATTEMPT_BACKOFF_MS, failures, ATTEMPT_BACKOFF_MAX_MS);
  const endedAt = Date.parse(last.status?.finishedAt ?? '') || now;
  if (now < endedAt + delay) return { action: 'wait', ms: endedAt + delay - now };
  const how = stuck ? 'got stuck (its operator stopped mid-way)' : `ended ${status}`;
  const lastEvent = last.status?.executionHistory?.at(-1)?.event;
  // The runner writes `attemptNote` as the new operation's first history entry.
  const attemptNote = `Attempt ${failures + 1}: attempt ${failures} (${last.metadata.name}) ${how}${lastEvent ? `; its last entry: ${lastEvent}` : ''}`;
  return {
    action: 'enqueue',
    id: nextAttemptId(last.metadata.name as string),
    input: { ...rule.input, attempt: failures + 1, previousAttempt: last.metadata.name, attemptNote },
  };
}
