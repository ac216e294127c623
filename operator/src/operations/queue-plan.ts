/**
 * What one reconcile of a scheduler's operation queue does, decided from the Operation objects
 * alone (pure; operation-runner.ts applies it): which operations end without running (a cancel
 * asked before they started, an unknown definition, an expired or missing lease), which one
 * starts next, whether another replica's lease holds the queue, and when to look again.
 */
import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { toIsoString } from '../../../common/src/kube/timestamps';
import { ConditionReason, OperationConditionType } from '../../../common/src/resources/condition-types';
import { OperationDefinition, OperationStatusName, operationStatusOf } from '../../../common/src/resources/operation-names';
import { MAX_CLOCK_SKEW_MS } from '../../../common/src/runtime/clock';
import { inProgress, leaseState, pendingQueue } from './queue-order';
import { enqueuedBeforeScheduler } from '../../../common/src/operations/queue-order';
import { CANCELED_END, ERROR_END, FINISHED_END } from './operation-ending';
import { counted } from '../../../common/src/text/counted';

/** An operation that ends without (more) running, and what its history and conditions say. */
export interface QueueEnding {
  op: Operation;
  status: typeof OperationStatusName.Canceled | typeof OperationStatusName.Evicted | typeof OperationStatusName.Error | typeof OperationStatusName.Finished;
  /** Lines appended to its history. */
  events: string[];
  condition?: { type: string; reason: string; message: string };
  /** Set for an operation found stuck: the scheduler Event to tell. */
  stuck?: string;
  /** An ended operation whose status was edited back to pending or in_progress: its end is written again as it was (`finishedAt` kept). */
  restored?: true;
  /** Its end was counted and told when it came (only its write is late). */
  counted?: true;
}

export interface QueuePlan {
  /** Operations to end, in queue order (pending ones first, then stuck ones). */
  end: QueueEnding[];
  /** The operation to start, when nothing else of the scheduler runs. */
  start?: Operation;
  /** Nothing runs, nothing is pending: finished operations may be pruned. */
  idle: boolean;
  /** When to reconcile again (another replica's lease expires then). */
  requeueAfterMs?: number;
}

export interface QueueView {
  /** Whether this replica has an executor for the definition. */
  isKnown(definitionName: string): boolean;
  /** The operation this replica is executing for the scheduler, if any. */
  runningHere?: string;
  /** How far ahead a replica writes an operation's lease (ROOMKEEPER_OPERATION_LEASE_TTL). */
  leaseTtlMs: number;
  /**
   * The scheduler's rooms as this replica sees them now, for the line of a stuck add_rooms or
   * remove_rooms (its own account went with the process that ran it).
   */
  fleetNow?: () => { rooms: number; roomsReplicas: number | undefined };
  /**
   * The Scheduler of this name, if it exists: an operation enqueued before it was created was
   * asked of an earlier scheduler of the same name (`enqueuedBeforeScheduler`).
   */
  scheduler?: Pick<Scheduler, 'metadata'>;
}

/** What happens after an operation of a definition got stuck (schedulers/attempts.ts, the health check). */
const AFTER_STUCK: Readonly<Record<string, string>> = {
  [OperationDefinition.DeleteScheduler]: '; the scheduler controller enqueues another attempt of the deletion.',
  [OperationDefinition.CreateScheduler]: '; if it had not made the scheduler\'s first version yet, the scheduler controller enqueues another attempt of the creation, else the health check makes its rooms.',
  [OperationDefinition.AddRooms]: '; the health check brings the rooms to the desired count.',
  [OperationDefinition.RemoveRooms]: '; the health check brings the rooms to the desired count.',
  [OperationDefinition.CreateNewSchedulerVersion]: '; the scheduler controller enqueues another attempt unless a later version operation was enqueued.',
  [OperationDefinition.SwitchActiveVersion]: '; the scheduler controller enqueues another attempt unless a later version operation was enqueued.',
};

/** What follows an operation of the definition getting stuck, as a sentence of its own ('' when nothing does). */
export function whatFollowsStuck(definition: string): string {
  const clause = AFTER_STUCK[definition]?.slice(2);
  return clause ? `${clause.charAt(0).toUpperCase()}${clause.slice(1)}` : '';
}

/** The definitions whose stuck line says how many rooms the scheduler has (they make or remove rooms). */
const ROOM_COUNT_DEFINITIONS: ReadonlySet<string> = new Set([OperationDefinition.AddRooms, OperationDefinition.RemoveRooms]);

/**
 * What follows the cancel of an operation whose goal a cancel does not undo, or undefined: a
 * Scheduler marked for deletion stays marked, so its deletion is attempted again (attempts.ts).
 */
export function afterCancel(op: Operation): string | undefined {
  if (op.spec.definitionName !== OperationDefinition.DeleteScheduler) return undefined;
  const name = op.spec.schedulerName;
  return `A cancel does not undo a deletion: scheduler ${name} stays marked for deletion, and the scheduler controller enqueues another delete_scheduler after a backoff (DELETE /schedulers/${name} enqueues it at once)`;
}

/**
 * Whether what a cancel does is asked of the operation: a cancel was requested, or the object is
 * being deleted (kubectl delete rkop; the finalizer of a running operation holds it meanwhile).
 */
export function cancelAsked(op: Operation): boolean {
  return op.spec.cancelRequested === true || op.metadata.deletionTimestamp !== undefined;
}

/** The decision of one reconcile of a scheduler's queue at `now`. */
export function planQueue(all: readonly Operation[], now: number, view: QueueView): QueuePlan {
  const end: QueueEnding[] = [];
  // An operation that ended has a finishedAt (the runner writes it with the final status, and a
  // requeue never does): one shown pending or in progress again was edited so, and never runs again.
  const reopened = (op: Operation): boolean => op.status?.finishedAt !== undefined && op.metadata.name !== view.runningHere
    && (op.status.status === undefined || op.status.status === OperationStatusName.Pending || op.status.status === OperationStatusName.InProgress);
  for (const op of all.filter(reopened)) end.push(restoredEnd(op));
  const ops = all.filter((op) => !reopened(op));
  const pending = pendingQueue(ops);
  // Marked for deletion before it started (another tool's finalizer holds it): out of the queue, never run.
  for (const op of ops.filter((o) => o.metadata.deletionTimestamp && operationStatusOf(o) === OperationStatusName.Pending)) {
    end.push({ op, status: OperationStatusName.Canceled, events: ['Operation deleted before it started (by kubectl or another client, not by Roomkeeper): it does not run'] });
  }
  for (const op of pending) {
    if (op.spec.cancelRequested) {
      const next = afterCancel(op);
      end.push({ op, status: OperationStatusName.Canceled, events: ['Operation canceled by the user before it started', ...(next === undefined ? [] : [next])] });
    } else if (view.scheduler && enqueuedBeforeScheduler(op, view.scheduler)) {
      const text = notAskedOfThisScheduler(op, view.scheduler);
      end.push({ op, status: OperationStatusName.Evicted, events: [text], condition: { type: OperationConditionType.Invalid, reason: ConditionReason.EnqueuedBeforeScheduler, message: text } });
    } else if (!view.isKnown(op.spec.definitionName)) {
      end.push({
        op, status: OperationStatusName.Evicted, events: [`Unknown operation definition "${op.spec.definitionName}": evicted`],
        condition: { type: OperationConditionType.Invalid, reason: ConditionReason.UnknownDefinition, message: `unknown definition name "${op.spec.definitionName}"` },
      });
    }
  }

  let requeueAfterMs: number | undefined;
  let blocked = view.runningHere !== undefined;
  for (const op of inProgress(ops)) {
    if (op.metadata.name === view.runningHere) continue;
    const lease = leaseState(op, now, view.leaseTtlMs + MAX_CLOCK_SKEW_MS);
    if (lease === 'valid') {
      blocked = true;
      const ms = Math.max(50, Date.parse(op.status?.lease?.ttl ?? '') - now + 50);
      requeueAfterMs = requeueAfterMs === undefined ? ms : Math.min(requeueAfterMs, ms);
      continue;
    }
    const seen = view.fleetNow && ROOM_COUNT_DEFINITIONS.has(op.spec.definitionName) ? view.fleetNow() : undefined;
    const fleet = seen ? ` When it was found stuck, the scheduler had ${counted(seen.rooms, 'room')}${seen.roomsReplicas === undefined ? '' : ` for roomsReplicas ${seen.roomsReplicas}`}.` : '';
    const after = `${AFTER_STUCK[op.spec.definitionName] ?? '.'}${fleet}${cancelAsked(op) ? cancelLost(op) : ''}`;
    const holder = `(holder ${op.status?.lease?.holder ?? 'unknown'})`;
    const text = lease === 'missing'
      ? `Operation is in progress without a lease, which is invalid: its execution and rollback are not guaranteed. It is not resumed${after}`
      : lease === 'too-far-ahead'
        ? `Operation lease expires at ${new Date(Date.parse(op.status?.lease?.ttl ?? '')).toISOString()} ${holder}, further ahead than any operator replica writes one (${seconds(view.leaseTtlMs)}, ROOMKEEPER_OPERATION_LEASE_TTL, plus ${seconds(MAX_CLOCK_SKEW_MS)} of clock skew): `
          + `it was not written by a running operation (an edit of the status?), so the operation is taken as stuck, its execution and rollback are not guaranteed. It is not resumed${after}`
        : `Operation lease expired at ${op.status?.lease?.ttl ?? 'an unrecorded time'} ${holder}: the operation is stuck, its execution and rollback are not guaranteed. It is not resumed${after}`;
    end.push({
      op, status: OperationStatusName.Error, events: [text],
      condition: lease === 'missing'
        ? { type: OperationConditionType.Invalid, reason: ConditionReason.NoLease, message: text }
        : lease === 'too-far-ahead'
          ? { type: OperationConditionType.Invalid, reason: ConditionReason.LeaseTooFarAhead, message: text }
          : { type: OperationConditionType.Stuck, reason: ConditionReason.LeaseExpired, message: text },
      stuck: `Operation ${op.metadata.name as string} (${op.spec.definitionName}) ended in error: ${text}`,
    });
  }
  const withRequeue = (plan: Omit<QueuePlan, 'requeueAfterMs'>): QueuePlan => (requeueAfterMs === undefined ? plan : { ...plan, requeueAfterMs });
  if (blocked) return withRequeue({ end, idle: false });
  const start = pending.find((op) => !cancelAsked(op) && view.isKnown(op.spec.definitionName) && !(view.scheduler && enqueuedBeforeScheduler(op, view.scheduler)));
  return withRequeue(start ? { end, start, idle: false } : { end, idle: true });
}

function notAskedOfThisScheduler(op: Operation, scheduler: Pick<Scheduler, 'metadata'>): string {
  const name = op.spec.schedulerName;
  return `Not run, evicted: enqueued at ${op.spec.enqueuedAt}, before scheduler ${name} was created (at ${toIsoString(scheduler.metadata.creationTimestamp)}), so it was asked of an earlier scheduler of that name `
    + `and written back later (restored from a backup, or applied again from an old record); an operation never acts on a scheduler it was not asked of. `
    + `To do it now, send the request again, or create a new Operation whose enqueuedAt is the time you create it`;
}

/**
 * The status an ended operation's history says it ended with: its last line that tells an end, as
 * the runner writes them (lines may follow it: what a cancel leaves, a stuck cancel's undo).
 */
function endedStatus(op: Operation): QueueEnding['status'] | undefined {
  const history = op.status?.executionHistory ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const line = history[i]?.event ?? '';
    if (line === FINISHED_END) return OperationStatusName.Finished;
    if (line.startsWith(CANCELED_END)) return OperationStatusName.Canceled;
    if (line.startsWith('Unknown operation definition') || line.startsWith('Not run, evicted')) return OperationStatusName.Evicted;
    if (line.startsWith(ERROR_END) || line.startsWith('Operation lease') || line.startsWith('Operation is in progress without a lease')) return OperationStatusName.Error;
  }
  return undefined;
}

function restoredEnd(op: Operation): QueueEnding {
  const was = endedStatus(op);
  const status = was ?? OperationStatusName.Error;
  const shown = op.status?.status ?? '(none)';
  const how = was ? `it is set back to ${was}, as its history ends` : 'its history does not say how it ended, so it is set to error';
  return {
    op, status, restored: true,
    events: [`status.status was set to ${shown} after the operation had ended (at ${String(op.status?.finishedAt)}), an edit of its status: ${how}, and it does not run again; to do the same again, send a new request (or create a new Operation)`],
  };
}

/**
 * What a stuck operation whose cancel was requested (or which is being deleted) is told: its
 * operator stopped before the rollback the cancel asked for. A user's add_rooms or remove_rooms then has the count it moved set
 * back by the runner (`undoStuckCancel`), which says so on the next line.
 */
function cancelLost(op: Operation): string {
  if (op.metadata.deletionTimestamp) return ' It was deleted (by kubectl or another client, not by Roomkeeper), which asks for what a cancel does, and no rollback ran: its operator had stopped first.';
  return ' The cancel requested for it ran no rollback: its operator stopped first.';
}

/** `5 s`, `1.5 s`: a duration of the message above. */
function seconds(ms: number): string {
  return `${ms / 1000} s`;
}
