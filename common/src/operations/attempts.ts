/**
 * Level-based repair of what only an operation can do (pure). The Scheduler says what is wanted
 * (deleted: a deletionTimestamp; created: no active version yet); when the last operation that
 * should have done it ended without doing it, another attempt is due, after a backoff:
 *  - `delete_scheduler`: any end but `finished` (error, canceled, evicted, or stuck: its operator
 *    died), so a Scheduler never stays terminating for good;
 *  - `create_scheduler`: when stuck (the operator died mid-way), or when it ended in error because
 *    the cluster refused a write for a reason of its own (`refusedByTheCluster`: a ResourceQuota,
 *    a Pod Security or admission policy, a namespace still being deleted), which may be lifted
 *    without a change of the definition, as a Deployment's pods are tried again (trial M: a
 *    scheduler created under a quota stayed uncreated after the quota was lifted). Any other
 *    error is the operation's verdict on the definition, repaired by a new spec generation;
 *  - `create_new_scheduler_version` and `switch_active_version`: only when stuck, and only the
 *    scheduler's latest version operation (`stuckVersionOperation`): a later one supersedes it.
 * Each attempt's id is derived from the one before it, so two replicas enqueue the same one, and
 * the gateway, asked again (a second DELETE), enqueues the one the operator would (without the
 * backoff: the user asked for it now) and answers its id.
 */
import type { Operation } from '../generated/resources';
import { deterministicOperationId } from './operation-id';
import { compareQueueOrder } from './queue-order';
import { OperationConditionType } from '../resources/condition-types';
import { operationStatusOf } from '../resources/operation-names';
import { exponentialBackoff } from '../runtime/backoff';
import { failureCause, refusedByTheCluster } from './failure-cause';

export const ATTEMPT_BACKOFF_MS = 5_000;
export const ATTEMPT_BACKOFF_MAX_MS = 5 * 60_000;

export type AttemptDecision =
  /** `latest`: the attempt that is pending, running or done (its id is what a caller answers). */
  | { action: 'none'; latest: string }
  | { action: 'wait'; ms: number }
  | { action: 'enqueue'; id: string; input: Record<string, unknown> };

export interface AttemptRule {
  definitionName: 'delete_scheduler' | 'create_scheduler' | 'create_new_scheduler_version' | 'switch_active_version';
  /** The first attempt's id (the one the gateway and the scheduler controller both derive). */
  firstId: string;
  /** The input of a new attempt. */
  input: Record<string, unknown>;
}

/** Whether the operation is shown stuck: its lease expired (its operator stopped, or lost the API server, mid-way). */
export function isStuck(op: Pick<Operation, 'status'>): boolean {
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

/** The next attempt before its backoff, and that backoff (from when the latest ended, if it says). */
type NextAttempt =
  | { action: 'none'; latest: string }
  | { action: 'enqueue'; id: string; input: Record<string, unknown>; backoff?: { endedAt?: number; ms: number } };

/**
 * The attempt due once any backoff is over: what a user asking again (a second DELETE) gets at
 * once, and what `decideAttempt` waits for.
 */
export function nextAttempt(ops: readonly Operation[], rule: AttemptRule): NextAttempt {
  const attempts = chain(ops.filter((op) => op.spec.definitionName === rule.definitionName), rule.firstId);
  const last = attempts[attempts.length - 1];
  if (!last) return { action: 'enqueue', id: rule.firstId, input: rule.input };
  const status = operationStatusOf(last);
  const latest = last.metadata.name as string;
  if (status === 'pending' || status === 'in_progress' || status === 'finished') return { action: 'none', latest };
  const stuck = isStuck(last);
  const refused = rule.definitionName === 'create_scheduler' && status === 'error' && refusedByTheCluster(failureCause(last));
  if (rule.definitionName !== 'delete_scheduler' && !stuck && !refused) return { action: 'none', latest };
  const failures = attempts.length;
  const how = stuck ? 'got stuck (its lease was not renewed in time: its operator stopped, or could not reach the API server)'
    : refused ? `ended ${status}, refused by the cluster (${failureCause(last) ?? ''}), which may have lifted the refusal since` : `ended ${status}`;
  const lastEvent = last.status?.executionHistory?.at(-1)?.event;
  // The runner writes `attemptNote` as the new operation's first history entry.
  const attemptNote = `Attempt ${failures + 1}: attempt ${failures} (${latest}) ${how}${lastEvent ? `; its last entry: ${lastEvent}` : ''}`;
  const endedAt = Date.parse(last.status?.finishedAt ?? '') || undefined;
  return {
    action: 'enqueue',
    id: nextAttemptId(latest),
    input: { ...rule.input, attempt: failures + 1, previousAttempt: latest, attemptNote },
    backoff: { ...(endedAt !== undefined ? { endedAt } : {}), ms: exponentialBackoff(ATTEMPT_BACKOFF_MS, failures, ATTEMPT_BACKOFF_MAX_MS) },
  };
}

/** The next attempt once its backoff is over (the scheduler controller's, level-based). */
export function decideAttempt(ops: readonly Operation[], rule: AttemptRule, now: number): AttemptDecision {
  const next = nextAttempt(ops, rule);
  if (next.action === 'none') return next;
  const { backoff, ...attempt } = next;
  if (backoff) {
    const due = (backoff.endedAt ?? now) + backoff.ms;
    if (now < due) return { action: 'wait', ms: due - now };
  }
  return attempt;
}

const VERSION_DEFINITIONS = ['create_new_scheduler_version', 'switch_active_version'] as const;
const ATTEMPT_INPUT_KEYS = new Set(['attempt', 'previousAttempt', 'attemptNote']);

/**
 * The rule for another attempt of the scheduler's latest version operation when that one got
 * stuck: the same input, the chain starting at its first attempt. Undefined when there is none,
 * or the latest did not get stuck.
 */
/** The name of the attempt an operation retries, or '' when it is a first attempt. */
function previousAttemptOf(op: Operation): string {
  const previous = op.spec.input?.previousAttempt;
  return typeof previous === 'string' ? previous : '';
}

export function stuckVersionOperation(ops: readonly Operation[]): AttemptRule | undefined {
  const versionOps = ops.filter((op) => (VERSION_DEFINITIONS as readonly string[]).includes(op.spec.definitionName));
  const latest = versionOps.reduce<Operation | undefined>((acc, op) => (!acc || compareQueueOrder(acc, op) < 0 ? op : acc), undefined);
  if (!latest || !isStuck(latest)) return undefined;
  const byName = new Map(versionOps.map((op) => [op.metadata.name as string, op]));
  // The chain back to the first attempt. `previousAttempt` is an Operation's input, which anyone who
  // may create Operations can write, so a chain that loops ends where it comes back.
  let first = latest;
  const seen = new Set<Operation>([latest]);
  for (let prev = byName.get(previousAttemptOf(first)); prev && !seen.has(prev); prev = byName.get(previousAttemptOf(prev))) {
    seen.add(prev);
    first = prev;
  }
  const input = Object.fromEntries(Object.entries(latest.spec.input ?? {}).filter(([k]) => !ATTEMPT_INPUT_KEYS.has(k)));
  // create_new_scheduler_version finds the version an earlier attempt made by its first id.
  if (latest.spec.definitionName === 'create_new_scheduler_version') input.firstAttempt = first.metadata.name;
  return { definitionName: latest.spec.definitionName as AttemptRule['definitionName'], firstId: first.metadata.name as string, input };
}
