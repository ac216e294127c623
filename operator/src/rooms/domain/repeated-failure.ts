/**
 * A failure that repeats is told once (pure). The health check's own operations (source
 * `operator`) carry two annotations: which try of an incident they are, and a fingerprint of what
 * the health check saw when it enqueued them (namespace, active version, spec generation, nodes).
 * From those objects alone — not from memory, so a new leader reads the same story — this decides
 * whether another operation of the same definition may be enqueued now:
 *  - no incident (the last one of that definition did not fail, or failed after it changed the
 *    fleet: an add_rooms whose rollback kept rooms it made, e.g. a rollout refused part-way by a
 *    ResourceQuota): yes, try 1;
 *  - something changed since the last failed try (another fingerprint): yes, try 1 of a new incident;
 *  - otherwise once the backoff after the last try has passed (base * 2^(tries-1), capped at a
 *    minute, at a few seconds when the API server caused the failure): the next try.
 * Of the failed operations of one incident at most `keep` stay in the history (the first and the
 * latest ones); the condition on the Scheduler carries the count and the time of the last try.
 */
import type { Operation } from '../../../../common/src/generated/resources';
import { ATTEMPT_ANNOTATION, HEALTH_FINGERPRINT_ANNOTATION } from '../../../../common/src/resources/labels';
import { exponentialBackoff } from '../../../../common/src/runtime/backoff';
import { keptCreatedRooms } from '../../operations/operation-ending';
import { failureCause } from '../../../../common/src/operations/failure-cause';

/** The operations the health check enqueues (and whose repeated failures it holds back). */
export const HEALING_DEFINITIONS = ['add_rooms', 'remove_rooms'] as const;

export interface Incident {
  definitionName: string;
  /** Tries that failed in a row (the latest try's attempt number). */
  tries: number;
  /** When the incident's first recorded try failed, and the last (epoch ms). */
  firstAt: number;
  lastAt: number;
  /** The latest failure's reason, from its history. */
  message: string;
  fingerprint: string | undefined;
  /** The incident's failed operations still in the history, oldest first. */
  failed: Operation[];
}

export interface RetryPolicy { baseMs: number; capMs: number; keep: number; transientCapMs: number }

/**
 * A failure the API server caused (throttling, a 5xx, a timeout, a lost connection) passes with the
 * server's trouble, not with a change the fingerprint sees: it is tried again sooner (transientCapMs).
 */
const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 1_000, capMs: 60_000, keep: 3, transientCapMs: 5_000 };

const TRANSIENT = /(^|[^0-9])(429|5\d\d) |too many requests|internal error|timed? ?out|timeout|fetch failed|no answer from the Kubernetes API|ECONN[A-Z]+|socket hang up|service unavailable/i;

export function isTransientFailure(message: string): boolean {
  return TRANSIENT.test(message);
}

export type RetryDecision =
  | { action: 'enqueue'; attempt: number; reason: 'first' | 'changed' | 'backoff-passed' }
  | { action: 'wait'; retryAt: number; incident: Incident };

const at = (op: Operation): number => Date.parse(op.status?.finishedAt ?? op.spec.enqueuedAt) || 0;

function attemptOf(op: Operation): number | undefined {
  const n = Number(op.metadata.annotations?.[ATTEMPT_ANNOTATION]);
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}

/**
 * Whether an operation that ended in error still moved the fleet on: its rollback kept rooms it had
 * made (the scheduler, or its rolling update, wants them). What the next try meets is not what this
 * one met, so it is no repeat of the failure: the try after it is made at once, and a failure after
 * it starts a new incident (a rollout held by a quota moves on a batch at a time, not once a minute).
 */
function movedTheFleet(op: Operation): boolean {
  return op.spec.definitionName === 'add_rooms' && keptCreatedRooms(op) > 0;
}

/**
 * The ongoing incident of one definition: the health check's operations of that definition that
 * ended in error since the last one that did not, or that failed but moved the fleet on
 * (`movedTheFleet`). Undefined when the latest one did not fail, or moved the fleet on.
 */
export function incidentOf(ops: readonly Operation[], definitionName: string): Incident | undefined {
  const mine = ops
    .filter((op) => op.spec.source === 'operator' && op.spec.definitionName === definitionName && !['pending', 'in_progress'].includes(op.status?.status ?? 'pending'))
    .sort((a, b) => at(a) - at(b));
  const failed: Operation[] = [];
  for (let i = mine.length - 1; i >= 0; i--) {
    const op = mine[i] as Operation;
    if (op.status?.status !== 'error' || movedTheFleet(op)) break;
    failed.unshift(op);
  }
  const last = failed[failed.length - 1];
  const first = failed[0];
  if (!last || !first) return undefined;
  return {
    definitionName,
    tries: Math.max(attemptOf(last) ?? failed.length, failed.length),
    firstAt: at(first),
    lastAt: at(last),
    message: failureCause(last) ?? 'unknown error',
    fingerprint: last.metadata.annotations?.[HEALTH_FINGERPRINT_ANNOTATION],
    failed,
  };
}

export function backoffMs(tries: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY, transient = false): number {
  return exponentialBackoff(policy.baseMs, tries, transient ? policy.transientCapMs : policy.capMs);
}

const incidentBackoff = (i: Incident, policy: RetryPolicy): number => backoffMs(i.tries, policy, isTransientFailure(i.message));

export function decideRetry(input: { ops: readonly Operation[]; definitionName: string; fingerprint: string; now: number; policy?: RetryPolicy }): RetryDecision {
  const policy = input.policy ?? DEFAULT_RETRY_POLICY;
  const incident = incidentOf(input.ops, input.definitionName);
  if (!incident) return { action: 'enqueue', attempt: 1, reason: 'first' };
  if (incident.fingerprint !== input.fingerprint) return { action: 'enqueue', attempt: 1, reason: 'changed' };
  const retryAt = incident.lastAt + incidentBackoff(incident, policy);
  if (input.now >= retryAt) return { action: 'enqueue', attempt: incident.tries + 1, reason: 'backoff-passed' };
  return { action: 'wait', retryAt, incident };
}

/** Failed operations of the incident beyond `keep`: all but the first and the latest `keep - 1`. */
export function prunableFailures(incident: Incident, keep: number = DEFAULT_RETRY_POLICY.keep): string[] {
  if (incident.failed.length <= keep || keep < 1) return [];
  const middle = incident.failed.slice(1, incident.failed.length - (keep - 1));
  return middle.map((op) => op.metadata.name as string);
}

/** One line for a Scheduler condition: what failed, how often, when last, and what happens next. */
export function describeIncident(incident: Incident, policy: RetryPolicy = DEFAULT_RETRY_POLICY): string {
  const next = new Date(incident.lastAt + incidentBackoff(incident, policy)).toISOString();
  const times = incident.tries === 1 ? 'once' : `${incident.tries} times`;
  return `${incident.definitionName} failed ${times} in a row (first at ${new Date(incident.firstAt).toISOString()}, last try at ${new Date(incident.lastAt).toISOString()}): ${incident.message}; `
    + `not enqueued again until something it depends on changes or the backoff passes (next try at ${next})`;
}
