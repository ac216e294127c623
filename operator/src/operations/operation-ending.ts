/**
 * How an operation's execution ends, in its history (pure; the line that carries an error's cause
 * is common/src/operations/failure-cause.ts): the runner writes these lines, and whoever tells that operation's end again (the scheduler's Degraded condition, the
 * health check's incidents) reads them back from the Operation object, not from memory, so a new
 * leader reads the same story.
 */
import type { Operation } from '../../../common/src/generated/resources';

/** The last history line of each way an execution ends (the runner writes them; queue-plan.ts reads them back). */
export const FINISHED_END = 'Operation finished';
export const CANCELED_END = 'Operation canceled';
export const ERROR_END = 'Operation ended in error';

/**
 * The last history line of an operation that found its scheduler being deleted: it ends in error,
 * yet nothing failed (the deletion removes the rooms and versions it was working on).
 */
export const STOPPED_BY_DELETION_END = "Operation ended in error: stopped by its scheduler's deletion (nothing to do)";

/** Every last line above: whether a history line is the end an execution wrote. */
export const END_LINES: ReadonlySet<string> = new Set([FINISHED_END, CANCELED_END, ERROR_END, STOPPED_BY_DELETION_END]);

/** Whether the operation ended in error because its scheduler's deletion stopped it. */
export function stoppedByDeletion(op: Operation): boolean {
  const events = op.status?.executionHistory ?? [];
  return op.status?.status === 'error' && events[events.length - 1]?.event === STOPPED_BY_DELETION_END;
}

/**
 * The history line of an add_rooms rollback that kept rooms it created, because the fleet wants
 * them (the desired count, or a rolling update's bound): `why` says so. Read back by
 * `keptCreatedRooms`: a failed try that kept rooms changed the fleet (repeated-failure.ts).
 */
export function keptCreatedLine(kept: number, why: string): string {
  return `Kept ${kept} of the rooms created by this operation: ${why}`;
}
const KEPT_CREATED = /^Kept (\d+) of the rooms created by this operation: /;

/** How many rooms the operation's rollback kept of those it created, as its history tells it (0 when none). */
export function keptCreatedRooms(op: Operation): number {
  for (const h of op.status?.executionHistory ?? []) {
    const m = KEPT_CREATED.exec(h.event);
    if (m) return Number(m[1]);
  }
  return 0;
}
