/**
 * The account of an operation whose Operation object was deleted while it ran (kubectl delete
 * rkop), or after its operator had stopped running it: its history went with the object, so a
 * Scheduler Event tells what it did; and of one deleted before it started. Pure.
 */

import { OperationDefinition } from '../../../common/src/resources/operation-names';

/** Events are cut at 1 kB (common/src/kube/event-recorder.ts): the account keeps its first and last lines. */
const MAX_NOTE = 1024;

/**
 * The note of the `OperationDeleted` Event: which operation, that no part of Roomkeeper deleted
 * it, how it ended (`result`), and the history lines its execution recorded (`lines`, from its
 * first step to the end of its rollback). Lines in the middle give way first when the note would
 * be cut: how far it got and what its rollback left are the last ones.
 */
export function deletedOperationNote(operation: string, definition: string, took: string, result: 'finished' | 'error' | 'canceled', lines: readonly string[], scheduler: string, max = MAX_NOTE): string {
  const next = result === 'finished' ? '' : enqueuedAgain(definition, scheduler);
  const ended = result === 'canceled'
    ? `it stopped ${took} as a cancel does`
    : result === 'error'
      ? `it ended in error ${took}`
      : `it had done its work and ended ${took}`;
  const head = `Operation ${operation} (${definition}) was deleted while it ran (by kubectl or another client, not by Roomkeeper); ${ended}.`;
  return `${recordedNote(head, lines, max - next.length)}${next}`;
}

/**
 * The note of the `OperationDeleted` Event of an operation deleted after its operator had stopped
 * running it (killed, or its leadership lost; `why`): its finalizer held it for the next leader,
 * which ended it as a cancel does, as far as what it had written lets a rollback go. `lines`:
 * what its execution wrote, then what was undone now; `next`, what follows (the stuck line's).
 */
export function deletedStuckNote(operation: string, definition: string, why: string, lines: readonly string[], next: string, max = MAX_NOTE): string {
  const head = `Operation ${operation} (${definition}) was deleted (by kubectl or another client, not by Roomkeeper) after its operator had stopped running it (${why}); it ended as a cancel does, as far as its written history allows.`;
  const after = next ? ` ${next}` : '';
  return `${recordedNote(head, lines, max - after.length)}${after}`;
}

/**
 * What follows the deletion of an operation the scheduler controller enqueues from the
 * Scheduler's own state (level-based), when it had not done its work: it is enqueued again.
 */
function enqueuedAgain(definition: string, scheduler: string): string {
  if (definition === OperationDefinition.CreateScheduler) return ` Scheduler ${scheduler} still has no version, so the scheduler controller enqueues its creation again; to stop it, delete the scheduler (DELETE /schedulers/${scheduler}, or kubectl delete rks ${scheduler}).`;
  if (definition === OperationDefinition.DeleteScheduler) return ` Scheduler ${scheduler} stays marked for deletion, so the scheduler controller enqueues its deletion again.`;
  return '';
}

/** `head`, then the lines recorded (cut in the middle to fit `max`). */
function recordedNote(head: string, lines: readonly string[], max: number): string {
  if (lines.length === 0) return `${head} Its history went with it; it recorded nothing.`;
  const text = (shown: readonly string[]) => `${head} Its history went with it; it recorded: ${shown.join('; ')}.`;
  const all = text(lines);
  if (all.length <= max || lines.length < 3) return all;
  // Drop lines from the middle, keeping the first and as many of the last as fit.
  for (let last = lines.length - 2; last >= 1; last--) {
    const left = lines.length - 1 - last;
    const shown = [lines[0] as string, `(${left} more)`, ...lines.slice(lines.length - last)];
    const candidate = text(shown);
    if (candidate.length <= max) return candidate;
  }
  return text([lines[0] as string, `(${lines.length - 2} more)`, lines[lines.length - 1] as string]);
}

/** The note of the `OperationDeleted` Event of an operation deleted while it waited in the queue. */
export function deletedPendingNote(operation: string, definition: string, enqueuedAt: string, scheduler: string): string {
  const next = enqueuedAgain(definition, scheduler);
  return `Operation ${operation} (${definition}) was deleted before it started (by kubectl or another client, not by Roomkeeper); it did nothing${next ? '' : ' and will not run'}. It had waited in the scheduler's queue since ${enqueuedAt}.${next}`;
}
