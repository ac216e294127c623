/**
 * Runs each scheduler's operations one at a time, in queue order, on the leader only.
 *
 * The reconcile key is a scheduler name. A reconcile looks at that scheduler's Operation objects
 * and: cancels pending operations that asked for it; marks in-progress operations whose lease
 * expired as stuck (never re-running them: the scheduler controller enqueues another attempt of
 * a stuck create or delete, schedulers/attempts.ts, and the health check re-derives rooms); evicts unknown definitions; and starts the next
 * pending operation when nothing else of the scheduler runs. Execution itself runs outside the
 * reconcile, so a long operation does not hold a worker.
 */
import type { ExecutionHistoryEntry, Operation } from '../../../common/src/generated/resources';
import { apiErrorFields, apiStatus, describeApiError } from '../../../common/src/kube/clients';
import type { OperatorDeps } from '../deps';
import type { ReconcileResult } from '../runtime/work-queue';
import { ExecutionAbandoned, ExecutionContext, ExecutionStopped, OperationCanceled, SchedulerBeingDeleted, type HandOver, type OperationDefinition } from './execution';
import { schedulerEvent } from '../events';
import { CANCELED_END, END_LINES, ERROR_END, FINISHED_END, STOPPED_BY_DELETION_END } from './operation-ending';
import { FAILURE_PREFIX } from '../../../common/src/operations/failure-cause';
import { deletedOperationNote, deletedPendingNote, deletedStuckNote } from './deleted-operation';
import { heldWhileRunning, releasable, releaseOperation } from './operation-finalizer';
import { operationsToPrune } from './queue-order';
import { afterCancel, cancelAsked, planQueue, whatFollowsStuck, type QueueEnding } from './queue-plan';
import { OPERATION_RUNNING_FINALIZER } from '../../../common/src/resources/labels';
import { labelsToWrite } from '../../../common/src/operations/operation-factory';
import { ofEarlierScheduler } from '../../../common/src/operations/queue-order';
import { OperationDefinition as DefinitionName, isFinalOperationStatus, OperationStatusName, operationStatusOf } from '../../../common/src/resources/operation-names';
import { TAKEOVER_SETTLE_MS } from '../runtime/leader-election';

/** The history line of a cancel the runner saw (the start of the line of a cancel that came too late). */
const CANCEL_REQUESTED = 'Cancel requested by the user';

/** The history line of an execution whose Operation object was deleted (never written: the object is gone). */
const DELETED_WHILE_RUNNING = 'Operation deleted while it ran';

type ExecutionResult = typeof OperationStatusName.Finished | typeof OperationStatusName.Error | typeof OperationStatusName.Canceled;

/** How soon the labels of an operation are written again after a write was refused. */
const LABEL_RETRY_MS = 5_000;

/** How long the account of an abandoned execution is kept for the one who ends its operation. */
const ABANDONED_KEPT_MS = 10 * 60_000;

/**
 * What this process knows of an execution whose end it did not write (leadership lost, or every
 * write of its end refused), for whoever here ends its operation once its lease has expired.
 */
interface Abandoned {
  /** Every history line it recorded: the writes that carried the last of them may have been refused. */
  recorded: readonly ExecutionHistoryEntry[];
  /** Why it stopped, in the parentheses of "The operator stopped running this operation (…)". */
  why: string;
  /** What it did, as its definition tells a stop at a safe point (`handOver`); undefined without one. */
  handOver?: HandOver;
  /**
   * Set when the execution ended (failed, finished or canceled) but its end could not be written
   * (the API server did not answer): that end, and the last line of its history (`recorded` holds
   * the lines before it).
   */
  end?: { status: ExecutionResult; lastLine?: string };
}

export interface OperationRunnerOptions {
  definitions: readonly OperationDefinition[];
  /** Asks for another reconcile of a scheduler (the work queue's add). */
  enqueue: (schedulerName: string) => void;
  /** An execution here ended (its last status written): the health check may decide its next step at once. */
  ended?: (schedulerName: string) => void;
  /** Most operations executing at once across all schedulers. */
  maxConcurrent?: number;
}

export class OperationRunner {
  private readonly definitions: Map<string, OperationDefinition>;
  private readonly running = new Map<string, ExecutionContext>();
  /** What we last wrote, until the informer cache catches up with it. */
  private readonly overlay = new Map<string, Operation>();
  /**
   * The executions abandoned here (leadership lost, e.g. while the API server did not answer), or
   * whose end could not be written, by operation. When this process leads again and ends the operation, its history gets every line
   * the execution recorded, why it stopped, and, when the definition can tell it (`handOver`),
   * what it did: an operation whose work stands (an add_rooms that moved roomsReplicas) ends
   * finished, as a graceful stop ends it, instead of stuck.
   */
  private readonly abandonedHere = new Map<string, Abandoned>();
  /**
   * Operations deleted while they ran here, rolled back and told, whose finalizer could not be
   * released: the next reconcile only ends and releases them.
   */
  private readonly rolledBackHere = new Set<string>();
  private leading = false;
  /** When this replica last started leading (deps.now). */
  private leadingSince = 0;
  /** A graceful stop began: no operation starts here any more. */
  private draining = false;
  /** Each execution running here, until its last status is written. */
  private readonly executions = new Map<ExecutionContext, Promise<void>>();
  private readonly maxConcurrent: number;

  constructor(private readonly deps: OperatorDeps, private readonly opts: OperationRunnerOptions) {
    this.definitions = new Map(opts.definitions.map((d) => [d.name, d]));
    this.maxConcurrent = opts.maxConcurrent ?? 64;
  }

  /** Called by leader election. Losing leadership (`why`) abandons every execution without writing. */
  setLeading(leading: boolean, why = 'this replica stopped leading'): void {
    if (leading && !this.leading) this.leadingSince = this.deps.now();
    this.leading = leading;
    if (!leading) for (const ctx of this.running.values()) ctx.abandon(why);
  }

  get runningCount(): number {
    return this.running.size;
  }

  isRunning(schedulerName: string): boolean {
    return this.running.has(schedulerName);
  }

  /** Informer hook: keeps the overlay honest and forwards cancel requests to a running execution. */
  observe(op: Operation): void {
    const mine = this.overlay.get(op.metadata.name as string);
    if (mine && cacheCaughtUp(mine.metadata.resourceVersion, op.metadata.resourceVersion)) this.overlay.delete(op.metadata.name as string);
    const ctx = this.running.get(op.spec.schedulerName);
    // Deleted while it runs here: its finalizer holds the object until its rollback has run.
    if (ctx && ctx.op.metadata.name === op.metadata.name && op.metadata.deletionTimestamp) {
      this.deletedWhileRunning(ctx);
      return;
    }
    // A cancel that lands as the execution writes its end (admission saw it running) cancels nothing, and says nothing.
    if (ctx && ctx.op.metadata.name === op.metadata.name && op.spec.cancelRequested && !ctx.canceled && !ctx.ended) {
      ctx.event(CANCEL_REQUESTED);
      ctx.cancel();
    }
  }

  /**
   * Informer hook: a scheduler is being deleted (or is gone). The operation running for it, other
   * than its delete_scheduler, stops at its next safe point, as stopped by the deletion.
   */
  schedulerDeleting(schedulerName: string): void {
    const ctx = this.running.get(schedulerName);
    if (ctx && ctx.op.spec.definitionName !== DefinitionName.DeleteScheduler) ctx.schedulerDeleted();
  }

  /**
   * An operation this replica just created or read (the scheduler controller's, one an executor
   * enqueued): seen at once by `operationsOf`, before the cache has it, and its scheduler's queue
   * looked at.
   */
  track(op: Operation): void {
    const cached = this.deps.caches.operations.list().find((o) => o.metadata.name === op.metadata.name);
    if (!cached || !cacheCaughtUp(op.metadata.resourceVersion, cached.metadata.resourceVersion)) this.remember(op);
    // Not once the watch brings the operation back: on a loaded API server that took up to a
    // second, for each of a rollout's operations.
    this.opts.enqueue(op.spec.schedulerName);
  }

  /**
   * Informer hook: an operation was deleted. One running here (kubectl delete of a running
   * operation; one that carried the finalizer is seen marked first, by `observe`) stops at its
   * next safe point as a cancel does, its rollback included, and its account goes to a Scheduler
   * Event (its history goes with the object). One deleted before it started is told in a
   * Scheduler Event too, so whoever enqueued it learns why it never ran.
   */
  forget(op: Operation): void {
    this.overlay.delete(op.metadata.name as string);
    const ctx = this.running.get(op.spec.schedulerName);
    if (ctx && ctx.op.metadata.name === op.metadata.name) {
      this.deletedWhileRunning(ctx);
    } else if (this.deletedOutsideBeforeStart(op)) {
      schedulerEvent(this.deps, op.spec.schedulerName, 'OperationDeleted', 'DequeueOperation', deletedPendingNote(op.metadata.name as string, op.spec.definitionName, op.spec.enqueuedAt, op.spec.schedulerName));
    }
  }

  /** The operation running here was deleted (marked, or gone when it had no finalizer): it stops as a cancel does. */
  private deletedWhileRunning(ctx: ExecutionContext): void {
    if (ctx.isAbandoned || ctx.wasDeleted || ctx.ended) return;
    ctx.event(DELETED_WHILE_RUNNING);
    ctx.deleted();
  }

  /**
   * Whether a deleted operation had not started and no part of Roomkeeper deleted it. Only
   * delete_scheduler deletes operations that have not started (its scheduler's, as it goes), so
   * none is told while a scheduler has one, or is going. Judged, as deletions of rooms are, by a
   * leader past its first TAKEOVER_SETTLE_MS: not by a standby, nor for a predecessor's deletions.
   */
  private deletedOutsideBeforeStart(op: Operation): boolean {
    if (!this.leading || this.deps.now() - this.leadingSince < TAKEOVER_SETTLE_MS) return false;
    if (operationStatusOf(op) !== OperationStatusName.Pending) return false;
    return !this.schedulerDeletionUnderWay(op.spec.schedulerName);
  }

  /** Whether the scheduler is gone, being deleted, or has a delete_scheduler: its deletion removes its waiting operations. */
  private schedulerDeletionUnderWay(schedulerName: string): boolean {
    const scheduler = this.deps.caches.schedulers.get(schedulerName);
    if (!scheduler || scheduler.metadata.deletionTimestamp) return true;
    return this.operationsOf(schedulerName).some((o) => o.spec.definitionName === DefinitionName.DeleteScheduler);
  }

  /** The scheduler's operations: the cache, with our own newer writes laid over it. */
  operationsOf(schedulerName: string): Operation[] {
    const byName = new Map<string, Operation>();
    for (const op of this.deps.caches.operations.list()) {
      if (op.spec.schedulerName === schedulerName) byName.set(op.metadata.name as string, op);
    }
    for (const op of this.overlay.values()) {
      if (op.spec.schedulerName === schedulerName) byName.set(op.metadata.name as string, op);
    }
    // An operation deleted while it runs here still runs until its rollback ends: the queue stays
    // busy meanwhile, so the health check does not decide on counts the rollback is changing.
    const ctx = this.running.get(schedulerName);
    if (ctx?.wasDeleted && !byName.has(ctx.op.metadata.name as string)) {
      byName.set(ctx.op.metadata.name as string, { ...ctx.op, status: { ...ctx.op.status, status: OperationStatusName.InProgress } });
    }
    return [...byName.values()];
  }

  async reconcile(schedulerName: string): Promise<ReconcileResult> {
    if (!this.leading) return {};
    const now = this.deps.now();
    const unlabeled = await this.label(this.operationsOf(schedulerName));
    await this.release(schedulerName);
    await this.tellLateCancels(schedulerName);
    // Read again: the queue is planned on the labeled and released objects (their resourceVersion preconditions).
    const ops = this.operationsOf(schedulerName);
    const plan = planQueue(ops, now, {
      isKnown: (name) => this.definitions.has(name), runningHere: this.running.get(schedulerName)?.op.metadata.name, leaseTtlMs: this.deps.config.operationLeaseTtl,
      fleetNow: () => this.fleetNow(schedulerName),
      scheduler: this.deps.caches.schedulers.get(schedulerName),
    });
    const requeue = unlabeled > 0 ? Math.min(plan.requeueAfterMs ?? LABEL_RETRY_MS, LABEL_RETRY_MS) : plan.requeueAfterMs;
    const after = requeue === undefined ? {} : { requeueAfterMs: requeue };
    for (const planned of plan.end) {
      const name = planned.op.metadata.name as string;
      const abandoned = planned.stuck && planned.op.status?.lease?.holder === this.deps.identity ? this.abandonedHere.get(name) : undefined;
      const ending = abandoned ? endingOfAbandoned(planned, abandoned) : planned;
      // Deleted (kubectl delete rkop) and held by its finalizer: told by one OperationDeleted Event below.
      const deleting = ending.op.metadata.deletionTimestamp !== undefined;
      if (deleting && this.rolledBackHere.has(name)) {
        await this.finishWithoutRunning({ op: ending.op, status: OperationStatusName.Canceled, events: [], counted: true });
        continue;
      }
      if (ending.stuck && !deleting) schedulerEvent(this.deps, schedulerName, 'OperationStuck', 'ExecuteOperation', ending.stuck);
      else if (abandoned && ending.status === OperationStatusName.Finished) {
        schedulerEvent(this.deps, schedulerName, 'OperationFinished', 'ExecuteOperation', `Operation ${name} (${ending.op.spec.definitionName}) finished when the operator stopped running it (${abandoned.why}): ${abandoned.handOver?.account ?? ''}`);
      }
      // A cancel (or a deletion) its stopped operator never rolled back: what the definition can still undo is undone now.
      const definition = ending.stuck && cancelAsked(ending.op) ? this.definitions.get(ending.op.spec.definitionName) : undefined;
      const undone = (await definition?.undoStuckCancel?.(this.deps, ending.op)) ?? [];
      const anyway = !ending.stuck && !ending.restored && ending.status === OperationStatusName.Canceled
        ? this.definitions.get(ending.op.spec.definitionName)?.canceledBeforeStart?.(this.deps, ending.op) ?? [] : [];
      await this.finishWithoutRunning({ ...ending, events: [...ending.events, ...undone, ...anyway] }, abandoned?.recorded);
      if (deleting && !ending.restored) this.tellDeletedWithoutRunning(ending, [...undone, ...anyway], abandoned);
      if (abandoned) this.abandonedHere.delete(name);
    }
    // Those ended now go at once (a deleted one is waited for by kubectl), not at the next reconcile.
    const ended = new Set(plan.end.map((e) => e.op.metadata.name));
    await this.release(schedulerName, (op) => ended.has(op.metadata.name));
    if (plan.idle) {
      await this.prune(schedulerName, now);
      return after;
    }
    if (!plan.start || this.draining) return after;
    if (this.running.size >= this.maxConcurrent) return { requeueAfterMs: 200 };
    this.start(plan.start, this.definitions.get(plan.start.spec.definitionName) as OperationDefinition);
    return after;
  }

  /** The scheduler's rooms (not validation rooms, not being deleted) and its roomsReplicas, as the caches show them. */
  private fleetNow(schedulerName: string): { rooms: number; roomsReplicas: number | undefined } {
    const rooms = this.deps.caches.rooms.list(schedulerName).filter((r) => r.spec.scheduler === schedulerName && !r.spec.validation && !r.metadata.deletionTimestamp).length;
    return { rooms, roomsReplicas: this.deps.caches.schedulers.get(schedulerName)?.spec.roomsReplicas };
  }

  /**
   * Gives each operation the labels the gateway's and the operator's carry (`labelsToWrite`): one
   * written with kubectl has none, so `kubectl get rkop -l roomkeeper.io/scheduler=<name>` (and
   * `kubectl wait`) did not find it. A metadata patch, once per operation: what is written is
   * remembered until the cache has it. Returns how many could not be labeled now (tried again
   * later; the queue does not wait for them).
   */
  private async label(ops: readonly Operation[]): Promise<number> {
    let failed = 0;
    for (const op of ops) {
      const labels = labelsToWrite(op);
      if (!labels) continue;
      const name = op.metadata.name as string;
      try {
        this.remember(await this.deps.api.patchOperation(name, { metadata: { labels } }));
        this.deps.logger.info('labeled an operation written without the labels of its scheduler and definition', { operation: name, scheduler: op.spec.schedulerName, labels });
      } catch (err) {
        if (apiStatus(err) === 404) continue;
        failed++;
        this.deps.logger.warn(`could not label operation ${name}; it runs all the same, and the labels are written again in ${LABEL_RETRY_MS / 1000} s`, { operation: name, ...apiErrorFields(err) });
      }
    }
    return failed;
  }

  /**
   * A graceful stop (SIGTERM), while still leading: no operation starts any more; the ones
   * running go on until `drainMs` has passed, so most end as they would have. Those still running
   * then stop at their next safe point and are handed over (`handOver`: finished with what they
   * did, or put back at the head of the queue), their history saying so; this waits up to
   * `handOverMs` for those writes. Whatever has not ended by then is abandoned, as in a crash.
   */
  async shutDown(reason: string, { drainMs, handOverMs }: { drainMs: number; handOverMs: number }): Promise<void> {
    this.draining = true;
    if (!(await this.settled(drainMs))) {
      for (const ctx of this.running.values()) ctx.stop(reason);
      if (!(await this.settled(handOverMs))) this.abandonAll(`${reason}: its hand-over was not written in time`);
    }
  }

  /** Whether every execution here ended within `ms`. */
  private async settled(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([Promise.all(this.executions.values()).then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Abandons every execution (stop without cleanup: leases expire, nothing is rolled back). */
  abandonAll(reason: string): void {
    for (const ctx of this.running.values()) ctx.abandon(reason);
  }

  private start(op: Operation, definition: OperationDefinition): void {
    const schedulerName = op.spec.schedulerName;
    const logger = this.deps.logger.child({ operation: op.metadata.name, scheduler: schedulerName, definition: op.spec.definitionName });
    // Whatever the operation's code logs (room creation included) carries the operation's fields.
    const ctx = new ExecutionContext(op, { ...this.deps, logger }, logger, this.deps.config.operationLeaseTtl, (written) => this.remember(written));
    this.running.set(schedulerName, ctx);
    const execution = this.execute(ctx, definition).finally(() => {
      if (this.running.get(schedulerName) === ctx) this.running.delete(schedulerName);
      this.executions.delete(ctx);
      this.opts.enqueue(schedulerName);
      this.opts.ended?.(schedulerName);
    });
    this.executions.set(ctx, execution);
  }

  private async execute(ctx: ExecutionContext, definition: OperationDefinition): Promise<void> {
    const timer = this.deps.metrics.histogram('roomkeeper_operation_duration_seconds', 'Operation execution time by definition and result.');
    const stop = timer.startTimer({ definition: definition.name });
    try {
      await ctx.claim();
    } catch (err) {
      if (apiStatus(err) !== 409) ctx.logger.warn('could not start operation', apiErrorFields(err));
      stop({ result: 'not_started' });
      return;
    }
    const opName = ctx.op.metadata.name as string;
    // The lines this execution records from here on (an operation run again keeps its earlier ones).
    const firstLine = ctx.recorded.length;
    schedulerEvent(this.deps, ctx.schedulerName, 'OperationStarted', 'ExecuteOperation', `Operation ${opName} (${definition.name}) started`);
    let result: ExecutionResult = OperationStatusName.Finished;
    let failure = '';
    // Ended in error because its scheduler is being deleted: expected, told as a stop, not a failure.
    let byDeletion = false;
    try {
      // Another attempt of an operation that ended without doing its work says why it runs.
      if (typeof ctx.input.attemptNote === 'string') ctx.event(ctx.input.attemptNote);
      ctx.checkpoint();
      await definition.execute(ctx);
      // An execution that returned did all its work: a stop that came meanwhile changes nothing.
      if (!ctx.stopping) ctx.checkpoint();
      await ctx.finish(OperationStatusName.Finished, FINISHED_END);
      // Leadership lost while its end was being written (retried through an outage): not written.
      if (ctx.isAbandoned) this.rememberUnwrittenEnd(ctx, OperationStatusName.Finished, ctx.abandonedBecause ?? 'this replica stopped leading');
    } catch (err) {
      if (err instanceof ExecutionStopped && !ctx.isAbandoned) {
        await this.handOver(ctx, definition, err.message);
        stop({ result: 'handed_over' });
        return;
      }
      if (err instanceof ExecutionAbandoned || ctx.isAbandoned) {
        const name = ctx.op.metadata.name as string;
        let handOver: HandOver | undefined;
        try {
          handOver = definition.handOver?.(ctx);
        } catch (accountErr) {
          ctx.logger.warn('could not tell what an abandoned execution did', apiErrorFields(accountErr));
        }
        this.abandonedHere.set(name, { recorded: [...ctx.recorded], why: ctx.abandonedBecause ?? 'this replica stopped leading', ...(handOver ? { handOver } : {}) });
        setTimeout(() => this.abandonedHere.delete(name), ABANDONED_KEPT_MS).unref();
        stop({ result: 'abandoned' });
        return;
      }
      result = err instanceof OperationCanceled || ctx.canceled ? OperationStatusName.Canceled : OperationStatusName.Error;
      failure = describeApiError(err);
      byDeletion = result === OperationStatusName.Error && err instanceof SchedulerBeingDeleted;
      // A deleted operation's stop is told by the Scheduler Event below, not as the user's cancel.
      if (byDeletion) ctx.event(`Operation stopped: ${failure}, which removes its rooms and versions; nothing is left for this operation to do`);
      else if (result === OperationStatusName.Error) ctx.event(`${FAILURE_PREFIX}${describeApiError(err)}`);
      else if (!ctx.wasDeleted) {
        ctx.event('Operation canceled by the user');
        const next = afterCancel(ctx.op);
        if (next !== undefined) ctx.event(next);
      }
      // Stopped by its scheduler's deletion: that removes what a rollback would (rooms, versions).
      if (definition.rollback && !byDeletion) {
        ctx.event('Starting operation rollback');
        try {
          await definition.rollback(ctx);
          ctx.event('Operation rollback flow execution finished with success');
        } catch (rollbackErr) {
          ctx.event(`Operation rollback flow execution failed, reason: ${describeApiError(rollbackErr)}`);
        }
      }
      try {
        // The last line says how the operation ended: only a finished one says "finished".
        // (A deleted operation's end is its Scheduler Event's first sentence.)
        if (ctx.wasDeleted) await ctx.finish(result);
        else await ctx.finish(result, result === OperationStatusName.Canceled ? CANCELED_END : byDeletion ? STOPPED_BY_DELETION_END : ERROR_END);
      } catch (writeErr) {
        ctx.logger.error('could not write the final status of an operation; it is written once the API server answers and the operation\'s lease has expired', apiErrorFields(writeErr));
        if (!ctx.wasDeleted) this.rememberUnwrittenEnd(ctx, result, describeApiError(writeErr));
      }
      // Leadership lost while its end was being written (retried through an outage): not written.
      // (Read again: the check above ran before the write, which leadership may have outlived.)
      const abandonedSince = ctx.abandonedBecause;
      if (abandonedSince !== undefined && !ctx.wasDeleted && !this.abandonedHere.has(ctx.op.metadata.name as string)) {
        this.rememberUnwrittenEnd(ctx, result, abandonedSince);
      }
    }
    this.deps.metrics.counter('roomkeeper_operations_total', 'Operations executed by definition and result.').inc({ definition: definition.name, result });
    const seconds = stop({ result });
    const took = `after ${seconds.toFixed(1)}s`;
    if (ctx.wasDeleted) {
      const lines = ctx.recorded.slice(firstLine).map((h) => h.event).filter((e) => e !== DELETED_WHILE_RUNNING);
      schedulerEvent(this.deps, ctx.schedulerName, 'OperationDeleted', 'ExecuteOperation', deletedOperationNote(opName, definition.name, took, result, lines, ctx.schedulerName));
      // Its account told, the object goes (nothing more was written to it: its history goes along).
      const held = this.operationsOf(ctx.schedulerName).find((o) => o.metadata.name === opName);
      if (held && heldWhileRunning(held)) {
        // Should the release be refused, the next reconcile finds it stuck: its rollback ran and is told.
        this.rolledBackHere.add(opName);
        setTimeout(() => this.rolledBackHere.delete(opName), ABANDONED_KEPT_MS).unref();
        await this.releaseOne(held);
      }
    } else if (result === OperationStatusName.Finished) schedulerEvent(this.deps, ctx.schedulerName, 'OperationFinished', 'ExecuteOperation', `Operation ${opName} (${definition.name}) finished ${took}`);
    else if (result === OperationStatusName.Canceled) schedulerEvent(this.deps, ctx.schedulerName, 'OperationCanceled', 'ExecuteOperation', `Operation ${opName} (${definition.name}) canceled by the user ${took}`);
    else if (byDeletion) schedulerEvent(this.deps, ctx.schedulerName, 'OperationStopped', 'ExecuteOperation', `Operation ${opName} (${definition.name}) stopped ${took}: ${failure}, which removes its rooms and versions; nothing to do`);
    else schedulerEvent(this.deps, ctx.schedulerName, 'OperationFailed', 'ExecuteOperation', `Operation ${opName} (${definition.name}) failed ${took}: ${failure}`);
  }

  /**
   * An execution that ended but could not write its end (the API server did not answer its
   * retries): when this replica finds the operation stuck (its lease expired), it writes that end
   * with the lines recorded, instead of the stuck account that says nothing of them.
   */
  private rememberUnwrittenEnd(ctx: ExecutionContext, status: ExecutionResult, why: string): void {
    const name = ctx.op.metadata.name as string;
    const lines = [...ctx.recorded];
    const last = lines.at(-1)?.event;
    const endLine = last !== undefined && END_LINES.has(last) ? lines.pop()?.event : undefined;
    this.abandonedHere.set(name, { recorded: lines, why, end: { status, ...(endLine ? { lastLine: endLine } : {}) } });
    setTimeout(() => this.abandonedHere.delete(name), ABANDONED_KEPT_MS).unref();
  }

  /**
   * Writes how a stopped execution is handed to the next leader. The history says that the
   * operator stopped, what the execution did (it stays: nothing is rolled back), and whether the
   * operation ends with that or runs again; the lease goes with the write, so the next leader
   * takes it up at once and never finds it stuck.
   */
  private async handOver(ctx: ExecutionContext, definition: OperationDefinition, reason: string): Promise<void> {
    const opName = ctx.op.metadata.name as string;
    const last = ctx.recorded.at(-1)?.event ?? 'Starting operation';
    try {
      const plan: HandOver = definition.handOver?.(ctx) ?? { outcome: 'requeued', account: 'its steps are safe to run again' };
      const stopped = `The operator stopped (${reason}) during this operation, after "${last}"; what it did stays: ${plan.account}`;
      if (plan.outcome === 'finished') {
        ctx.event(stopped);
        await ctx.finish(OperationStatusName.Finished, FINISHED_END);
        this.deps.metrics.counter('roomkeeper_operations_total', 'Operations executed by definition and result.').inc({ definition: definition.name, result: OperationStatusName.Finished });
        schedulerEvent(this.deps, ctx.schedulerName, 'OperationFinished', 'ExecuteOperation', `Operation ${opName} (${definition.name}) finished when the operator stopped (${reason}): ${plan.account}`);
      } else {
        await ctx.requeue(`${stopped}. Put back at the head of the queue: the next leader runs it again`);
        schedulerEvent(this.deps, ctx.schedulerName, 'OperationRequeued', 'ExecuteOperation', `Operation ${opName} (${definition.name}) put back in the queue when the operator stopped (${reason}): the next leader runs it again`);
      }
    } catch (err) {
      // Not written: the lease expires and the next leader finds it stuck, as after a crash.
      ctx.logger.error('could not hand over an operation stopped by the shutdown', apiErrorFields(err));
    }
  }

  /** Writes the end of an operation that does not (or no longer) run; `recorded`, an abandoned execution's account. */
  private async finishWithoutRunning({ op, status, events, condition, restored, counted }: QueueEnding, recorded?: readonly ExecutionHistoryEntry[]): Promise<void> {
    const nowIso = new Date(this.deps.now()).toISOString();
    const written = op.status?.executionHistory ?? [];
    // Lines an execution here recorded after the last it could write (it started from the
    // written ones, so they are its prefix), with the times they happened.
    const late = recorded && recorded.length > written.length ? recorded.slice(written.length) : [];
    const history = [...written, ...late, ...events.map((event) => ({ createdAt: nowIso, event }))];
    const conditions = condition
      ? [...(op.status?.conditions ?? []).filter((c) => c.type !== condition.type), { ...condition, status: 'True', lastTransitionTime: nowIso }]
      : op.status?.conditions;
    try {
      const written = await this.deps.api.patchOperationStatus(op.metadata.name as string, {
        metadata: { resourceVersion: op.metadata.resourceVersion },
        status: { status, executionHistory: history, finishedAt: restored ? op.status?.finishedAt : nowIso, lease: null, ...(conditions ? { conditions } : {}) },
      });
      this.remember(written);
      if (restored || counted) return; // counted and told when it ended
      // An unknown definition name is user input: it never becomes a label value.
      const definition = this.definitions.has(op.spec.definitionName) ? op.spec.definitionName : 'unknown';
      this.deps.metrics.counter('roomkeeper_operations_total', 'Operations executed by definition and result.').inc({ definition, result: status });
      // Told as a cancel of a running one is (runOperation), so kubectl describe shows every cancel.
      if (status === OperationStatusName.Canceled && !op.metadata.deletionTimestamp) {
        schedulerEvent(this.deps, op.spec.schedulerName, 'OperationCanceled', 'ExecuteOperation', `Operation ${op.metadata.name as string} (${definition}) canceled by the user before it started: it did nothing`);
      }
    } catch (err) {
      if (apiStatus(err) !== 409 && apiStatus(err) !== 404) throw err;
    }
  }

  /**
   * The OperationDeleted Event of an operation deleted while it did not run here: before it
   * started, or after its operator had stopped running it (its finalizer held it for this
   * leader, which ended it as a cancel does: `undone`, what that undid).
   */
  private tellDeletedWithoutRunning(ending: QueueEnding, undone: readonly string[], abandoned: Abandoned | undefined): void {
    const { op } = ending;
    const name = op.metadata.name as string;
    const definition = this.definitions.has(op.spec.definitionName) ? op.spec.definitionName : 'unknown';
    if (!ending.stuck && !abandoned) {
      // Held by another tool's finalizer; not told when its scheduler's deletion deleted it.
      if (this.schedulerDeletionUnderWay(op.spec.schedulerName)) return;
      schedulerEvent(this.deps, op.spec.schedulerName, 'OperationDeleted', 'DequeueOperation', deletedPendingNote(name, definition, op.spec.enqueuedAt, op.spec.schedulerName));
      return;
    }
    const written = (abandoned?.recorded.length ?? 0) > (op.status?.executionHistory?.length ?? 0) ? abandoned?.recorded ?? [] : op.status?.executionHistory ?? [];
    const events = written.map((h) => h.event);
    // Its last execution's lines: an operation run again keeps the earlier ones.
    const lines = events.slice(events.lastIndexOf('Starting operation') + 1).filter((e) => e !== DELETED_WHILE_RUNNING);
    if (abandoned?.end) {
      // It had ended here; only the write of its end had been refused.
      schedulerEvent(this.deps, op.spec.schedulerName, 'OperationDeleted', 'ExecuteOperation', deletedOperationNote(name, definition, `before its end could be written (${abandoned.why})`, abandoned.end.status, [...lines, ...(abandoned.end.lastLine ? [abandoned.end.lastLine] : [])], op.spec.schedulerName));
      return;
    }
    const lease = op.status?.lease;
    const why = abandoned?.why ?? (lease?.ttl ? `its lease expired at ${lease.ttl}, holder ${lease.holder ?? 'unknown'}` : 'it had no lease');
    schedulerEvent(this.deps, op.spec.schedulerName, 'OperationDeleted', 'ExecuteOperation', deletedStuckNote(name, definition, why, [...lines, ...undone], whatFollowsStuck(definition)));
  }

  /**
   * Releases the finalizer of every operation of the scheduler that no longer runs (ended, or put
   * back in the queue): level-based, so one left by a crash between an end and its release goes
   * too. A refusal is logged and tried again at the next reconcile.
   */
  private async release(schedulerName: string, only: (op: Operation) => boolean = () => true): Promise<void> {
    for (const op of this.operationsOf(schedulerName).filter((o) => releasable(o) && only(o))) {
      if (this.running.get(schedulerName)?.op.metadata.name === op.metadata.name) continue;
      await this.releaseOne(op);
    }
  }

  /**
   * A cancel admitted while the operation ran that landed as its end was written (the execution
   * had done its work): nothing was canceled, and its history says so, once, so that the 200 the
   * cancel got is not followed by silence.
   */
  private async tellLateCancels(schedulerName: string): Promise<void> {
    for (const op of this.operationsOf(schedulerName)) {
      const status = op.status?.status;
      if (!op.spec.cancelRequested || status === undefined || !isFinalOperationStatus(status) || status === OperationStatusName.Canceled) continue;
      if (this.running.get(schedulerName)?.op.metadata.name === op.metadata.name) continue;
      const history = op.status?.executionHistory ?? [];
      // Told already: seen while it ran, or in the account of a stuck operation's cancel.
      if (history.some((h) => /cancel/i.test(h.event))) continue;
      const ended = status === OperationStatusName.Finished ? 'it had done its work and ended finished' : `it had already ended ${status}`;
      const line = `${CANCEL_REQUESTED} as the operation ended: ${ended}, so nothing was canceled`;
      try {
        this.remember(await this.deps.api.patchOperationStatus(op.metadata.name as string, {
          metadata: { resourceVersion: op.metadata.resourceVersion },
          status: { executionHistory: [...history, { createdAt: new Date(this.deps.now()).toISOString(), event: line }] },
        }));
      } catch (err) {
        if (apiStatus(err) !== 409 && apiStatus(err) !== 404) this.deps.logger.warn(`could not tell in the history of operation ${op.metadata.name as string} that its cancel came as it ended`, { operation: op.metadata.name, ...apiErrorFields(err) });
      }
    }
  }

  private async releaseOne(op: Operation): Promise<void> {
    try {
      const written = await releaseOperation(this.deps.api, op);
      // Released while being deleted, the object is gone: remembered, it would count as running
      // (its last status says in progress) until the overlay's safety net, for the scheduler's status too.
      if (!written || (written.metadata.deletionTimestamp && (written.metadata.finalizers ?? []).length === 0)) this.overlay.delete(op.metadata.name as string);
      else this.remember(written);
    } catch (err) {
      this.deps.logger.warn(`could not release the finalizer ${OPERATION_RUNNING_FINALIZER} of operation ${op.metadata.name as string}; tried again at the next reconcile of its scheduler`, { operation: op.metadata.name, scheduler: op.spec.schedulerName, ...apiErrorFields(err) });
    }
  }

  private async prune(schedulerName: string, now: number): Promise<void> {
    const ops = this.operationsOf(schedulerName);
    const victims = operationsToPrune(ops, now, {
      maxCount: this.deps.config.operationRetentionCount,
      maxAgeMs: this.deps.config.operationRetentionAge,
    });
    // A scheduler deleted and created again under the same name: the old one's finished
    // operations (its delete_scheduler last) are not part of the new one's history.
    const scheduler = this.deps.caches.schedulers.get(schedulerName);
    if (scheduler) victims.push(...ops.filter((op) => ofEarlierScheduler(op, scheduler) && !victims.includes(op)));
    for (const op of victims) {
      try {
        await this.deps.api.deleteOperation(op.metadata.name as string);
      } catch (err) {
        if (apiStatus(err) !== 404) throw err;
      }
      this.overlay.delete(op.metadata.name as string);
    }
  }

  private remember(op: Operation): void {
    const name = op.metadata.name as string;
    this.overlay.set(name, op);
    // A safety net: the cache is authoritative again after a while whatever happened.
    setTimeout(() => {
      if (this.overlay.get(name) === op) this.overlay.delete(name);
    }, 15_000).unref();
  }
}

/**
 * Whether the cache has seen our write: the same resourceVersion, or a later one. Resource
 * versions are opaque by convention; every API server we know uses increasing integers, and when
 * they don't parse we only trust equality (the 15 s safety net covers the rest).
 */
function cacheCaughtUp(ours: string | undefined, cached: string | undefined): boolean {
  if (ours === cached) return true;
  if (!ours || !cached || !/^\d+$/.test(ours) || !/^\d+$/.test(cached)) return false;
  return BigInt(cached) > BigInt(ours);
}

/**
 * How an operation whose execution this process abandoned ends, once its lease has expired: as a
 * graceful stop would have handed it over when its definition says its work stands (`finished`:
 * e.g. an add_rooms that moved roomsReplicas; the health check makes the rest), else stuck, as
 * planned, with why it stopped. Never run again: a write in flight when it stopped may have landed.
 */
function endingOfAbandoned(planned: QueueEnding, abandoned: Abandoned): QueueEnding {
  if (abandoned.end) {
    const note = `Its end could not be written when it came (${abandoned.why}); written once the API server answered again`;
    return { op: planned.op, status: abandoned.end.status, events: [note, ...(abandoned.end.lastLine ? [abandoned.end.lastLine] : [])], counted: true };
  }
  const last = abandoned.recorded.at(-1)?.event ?? 'Starting operation';
  const stopped = `The operator stopped running this operation (${abandoned.why}), after "${last}"`;
  if (abandoned.handOver?.outcome === 'finished' && !cancelAsked(planned.op)) {
    return { op: planned.op, status: OperationStatusName.Finished, events: [`${stopped}; what it did stays: ${abandoned.handOver.account}`, FINISHED_END] };
  }
  return { ...planned, events: [stopped, ...planned.events] };
}
