/**
 * One operation's execution: its history, its lease, cancellation, and the status writes that
 * go with them. The executor of a definition sees only `ExecutionContext`.
 */
import type { ExecutionHistoryEntry, Operation, OperationStatus } from '../../../common/src/generated/resources';
import { apiErrorFields, apiStatus, isJsonPatchNotApplied, isWriteFenced, retryTransient } from '../../../common/src/kube/clients';
import type { Logger } from '../../../common/src/logger';
import { describeInputErrors, parseOperationInput, type InputBounds, type OperationInputs } from '../../../common/src/operations/operation-inputs';
import type { OperationDefinitionName } from '../../../common/src/resources/operation-names';
import type { OperatorDeps } from '../deps';
import { OPERATION_RUNNING_FINALIZER } from '../../../common/src/resources/labels';
import { holdForClaim } from './operation-finalizer';

/** Thrown inside an executor when the operation was canceled. */
export class OperationCanceled extends Error {
  constructor() {
    super('operation canceled');
    this.name = 'OperationCanceled';
  }
}

/**
 * Thrown by an executor whose scheduler is being deleted: nothing is left for the operation to do
 * (the deletion removes the scheduler's rooms and versions). It ends in error, told as a stop by
 * the deletion, not as a failure that needs anyone.
 */
export class SchedulerBeingDeleted extends Error {
  constructor(schedulerName: string) {
    super(`scheduler ${schedulerName} is being deleted`);
    this.name = 'SchedulerBeingDeleted';
  }
}

/** Thrown when this replica lost leadership: stop at once, write nothing more. */
export class ExecutionAbandoned extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ExecutionAbandoned';
  }
}

/**
 * Thrown at a safe point once a graceful stop of the operator (SIGTERM) stopped the execution:
 * the runner hands the operation over (the definition's `handOver`), writing what it did.
 */
export class ExecutionStopped extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ExecutionStopped';
  }
}

/** Thrown when an operation's input breaks its definition's rules (the operation ends in error). */
class InvalidOperationInput extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidOperationInput';
  }
}

/**
 * How an execution stopped by a graceful stop of the operator is handed to the next leader:
 * `finished`, what it did is the operation's result and the level-based loops do the rest; or
 * `requeued`, it goes back to the queue's head and runs again from its first step. `account`
 * says in the history what it did and what happens next.
 */
export interface HandOver {
  outcome: 'finished' | 'requeued';
  account: string;
}

export interface OperationDefinition {
  readonly name: string;
  execute(ctx: ExecutionContext): Promise<void>;
  /** Undo what `execute` did; runs after a failure or a cancel. Absent: nothing to undo. */
  rollback?(ctx: ExecutionContext): Promise<void>;
  /**
   * After a graceful stop stopped `execute` at a safe point. Absent: requeued, for a definition
   * whose steps are safe to run again (each finds what an earlier run made: the version, the
   * namespace, a switch already done, rooms already gone).
   */
  handOver?(ctx: ExecutionContext): HandOver;
  /**
   * The part of a rollback that can still be done once the operation got stuck (its operator
   * stopped) after a cancel was asked, derived from the operation object alone; the lines for its
   * history. Absent: nothing is undone.
   */
  undoStuckCancel?(deps: OperatorDeps, op: Operation): Promise<string[]>;
  /**
   * The lines a cancel before the operation started adds to its history, beyond the cancel itself:
   * what of the request took effect anyway. Absent: none.
   */
  canceledBeforeStart?(deps: OperatorDeps, op: Operation): string[];
}

export class ExecutionContext {
  private readonly history: ExecutionHistoryEntry[];
  private endWritten = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly abort = new AbortController();
  private abandoned: string | undefined;
  private stopped: string | undefined;
  private userCanceled = false;
  /** The Operation object was deleted while this ran: nothing is written any more. */
  private objectDeleted = false;
  /** The operation's scheduler is being deleted: the next checkpoint throws SchedulerBeingDeleted. */
  private schedulerGoing = false;
  /** Bookkeeping an executor leaves for its rollback (what it created). */
  readonly state: Record<string, unknown> = {};

  constructor(
    readonly op: Operation,
    readonly deps: OperatorDeps,
    readonly logger: Logger,
    private readonly leaseTtlMs: number,
    private readonly onWritten: (op: Operation) => void,
  ) {
    this.history = [...(op.status?.executionHistory ?? [])];
  }

  get schedulerName(): string {
    return this.op.spec.schedulerName;
  }

  /** The input as stored, untyped: for definitions outside the shared table (tests add one). */
  get input(): Record<string, unknown> {
    return this.op.spec.input ?? {};
  }

  /**
   * The input, parsed by the definition's rules (common/src/operations/operation-inputs.ts, the
   * ones the management API applies). An operation may ask for as many rooms as one scheduler may
   * have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER) and name twice as many (a rollout's surge on top):
   * the health check's own operations go beyond one request's bounds. Throws
   * InvalidOperationInput naming the field.
   */
  inputOf<D extends OperationDefinitionName>(definition: D): OperationInputs[D] {
    const max = this.deps.config.maxRoomsPerScheduler;
    const bounds: InputBounds = { maxAmount: max, maxRoomIds: 2 * max };
    const parsed = parseOperationInput(definition, this.op.spec.input ?? {}, bounds);
    if (!parsed.ok) throw new InvalidOperationInput(describeInputErrors(parsed.errors));
    return parsed.value;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Its final status (or its requeue) is being written: nothing more happens to it. */
  get ended(): boolean {
    return this.endWritten;
  }

  /** Canceled by the user (not stopped by the operator, nor abandoned). */
  get canceled(): boolean {
    return this.userCanceled && this.abandoned === undefined;
  }

  /** Why a graceful stop of the operator stopped this execution (e.g. `SIGTERM`), if it did. */
  get stopping(): string | undefined {
    return this.abandoned === undefined ? this.stopped : undefined;
  }

  /** Throws if the operation was canceled, stopped or abandoned; executors call it between steps. */
  checkpoint(): void {
    if (this.abandoned !== undefined) throw new ExecutionAbandoned(this.abandoned);
    if (this.userCanceled) throw new OperationCanceled();
    if (this.stopped !== undefined) throw new ExecutionStopped(this.stopped);
    if (this.schedulerGoing) throw new SchedulerBeingDeleted(this.schedulerName);
  }

  /**
   * The scheduler is being deleted (kubectl delete rks) while this runs: its deletion removes
   * every room and version, so no further step starts (the signal aborts, the requests in flight
   * complete) and the next checkpoint ends it as stopped by the deletion. An add_rooms of 1,000
   * rooms otherwise made them all for the deletion to remove, which waited for it.
   */
  schedulerDeleted(): void {
    if (this.schedulerGoing) return;
    this.schedulerGoing = true;
    this.abort.abort();
  }

  /**
   * The user's cancel: the signal aborts (its listeners record how far the work got) and the
   * history is written at once, not after the coalescing delay of `event`.
   */
  cancel(): void {
    this.userCanceled = true;
    this.abort.abort();
    this.flushNow();
  }

  /**
   * The Operation object was deleted while this ran (kubectl delete; its finalizer holds it until
   * the runner releases it): it stops at its next safe point and is rolled back as a cancel is,
   * and writes nothing more, the object's history going with it (the lease is no longer renewed).
   * The runner tells its account in a Scheduler Event.
   */
  deleted(): void {
    this.objectDeleted = true;
    this.stopTimers();
    this.cancel();
  }

  /** Whether the Operation object was deleted while this ran. */
  get wasDeleted(): boolean {
    return this.objectDeleted;
  }

  /** What stopped a canceled execution, as its history says it: the cancel, or the operation's deletion. */
  get cancelCause(): string {
    return this.objectDeleted ? 'the deletion of the operation' : 'the cancel';
  }

  /**
   * A graceful stop of the operator: no further step starts (the signal aborts, as a cancel's
   * does, so the requests in flight complete), the next checkpoint throws ExecutionStopped. The
   * lease is still renewed until the runner has written the hand-over.
   */
  stop(reason: string): void {
    this.stopped ??= reason;
    this.abort.abort();
  }

  abandon(reason: string): void {
    this.abandoned = reason;
    this.stopTimers();
    this.abort.abort();
  }

  get isAbandoned(): boolean {
    return this.abandoned !== undefined;
  }

  /** Why the runner abandoned this execution, if it did. */
  get abandonedBecause(): string | undefined {
    return this.abandoned;
  }

  /**
   * Enqueues another operation of this scheduler (e.g. the switch a new version makes). The
   * runner sees it at once, so nothing reads the scheduler's queue without it in between.
   */
  async createOperation(op: Operation): Promise<Operation> {
    const created = await this.deps.api.createOperation(op);
    this.onWritten(created);
    return created;
  }

  /** Every history line recorded so far, written or not (the abandoned execution's account). */
  get recorded(): readonly ExecutionHistoryEntry[] {
    return this.history;
  }

  /** Records an event in the execution history (written within ~250 ms, coalesced). */
  event(text: string): void {
    this.history.push({ createdAt: new Date(this.deps.now()).toISOString(), event: text });
    // An abandoned execution's lines are its own account, never written: the log says so.
    const abandoned = this.abandoned === undefined ? {} : { notWritten: `this execution was abandoned (${this.abandoned}); the replica that leads next ends the operation` };
    this.logger.info(text, { operation: this.op.metadata.name, definition: this.op.spec.definitionName, ...abandoned });
    if (!this.flushTimer && this.abandoned === undefined && !this.objectDeleted) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        void this.write({}).catch(() => undefined);
      }, 250);
    }
  }

  /** Writes the history recorded so far now, instead of when the coalescing timer of `event` fires. */
  private flushNow(): void {
    if (!this.flushTimer) return;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    void this.write({}).catch(() => undefined);
  }

  /** Marks the operation in progress with a fresh lease; fails (409) if it changed meanwhile. */
  async claim(): Promise<void> {
    const now = this.deps.now();
    this.history.push({ createdAt: new Date(now).toISOString(), event: 'Starting operation' });
    // The finalizer first, on the version planned (a 409 or 422 when it changed: not claimed), so
    // that an operation shown in progress is held, and the execution reads what it works on right
    // after the claim (a change written once it shows in progress is not its own).
    const held = await this.holdObject();
    await this.write({ status: 'in_progress', startedAt: new Date(now).toISOString(), lease: this.lease(now) }, held.metadata.resourceVersion);
    // Each renewal says in_progress again: a status edited to an end while this runs (kubectl) is
    // set back within a third of the lease, so the operation can be canceled and is listed active.
    this.leaseTimer = setInterval(() => {
      void this.write({ status: 'in_progress', lease: this.lease(this.deps.now()) }).catch((err: unknown) => {
        this.logger.warn('could not renew operation lease', { operation: this.op.metadata.name, ...apiErrorFields(err) });
      });
    }, Math.max(50, Math.floor(this.leaseTtlMs / 3)));
  }

  /**
   * Puts the finalizer of a running operation on it (operation-finalizer.ts), so that its deletion
   * waits to be rolled back, also by the next leader after a crash. Throws a 409 when the
   * operation changed since it was planned (or is gone): it is not claimed. Any other
   * refusal is logged: the operation runs all the same, without it (a deletion is then told when
   * the object is gone).
   */
  private async holdObject(): Promise<Operation> {
    try {
      const held = await holdForClaim(this.deps.api, this.op);
      if (held !== this.op) this.onWritten(held);
      return held;
    } catch (err) {
      const status = apiStatus(err);
      if (status === 404 || status === 409 || isJsonPatchNotApplied(err)) throw Object.assign(new Error(`operation ${this.op.metadata.name as string} changed before it was claimed`), { code: 409, cause: err });
      // Not sent: this replica lost its leader Lease meanwhile (a pause); the claim would not be either.
      if (isWriteFenced(err)) throw err;
      this.logger.warn(`could not put the finalizer ${OPERATION_RUNNING_FINALIZER} on the operation; it runs all the same, but a deletion of it while no operator runs it is not rolled back`, { operation: this.op.metadata.name, ...apiErrorFields(err) });
      return this.op;
    }
  }

  /** Writes the final status, revoking the lease. */
  async finish(status: 'finished' | 'error' | 'canceled', lastEvent?: string): Promise<void> {
    this.endWritten = true;
    this.stopTimers();
    if (lastEvent) this.history.push({ createdAt: new Date(this.deps.now()).toISOString(), event: lastEvent });
    // The final status is retried through transient answers: an operation that did its work must
    // not be reported failed because one write of its end was refused.
    const finishedAt = new Date(this.deps.now()).toISOString();
    await retryTransient(() => this.write({ status, finishedAt, lease: null }), 10);
  }

  /**
   * Puts the operation back at the head of its queue (pending, no lease), for the next leader to
   * run again; the history keeps every line of this execution.
   */
  async requeue(lastEvent: string): Promise<void> {
    this.endWritten = true;
    this.stopTimers();
    this.history.push({ createdAt: new Date(this.deps.now()).toISOString(), event: lastEvent });
    await retryTransient(() => this.write({ status: 'pending', startedAt: null, lease: null }), 10);
  }

  private lease(now: number): NonNullable<OperationStatus['lease']> {
    return { holder: this.deps.identity, ttl: new Date(now + this.leaseTtlMs).toISOString(), renewedAt: new Date(now).toISOString() };
  }

  private stopTimers(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.flushTimer = undefined;
    this.leaseTimer = undefined;
  }

  /**
   * Serialised status writes: history always goes along, so no write loses an event. Each sends
   * the history as it was when it was asked for: a renewal or flush queued behind a slow write
   * must not carry the end line that `finish` added meanwhile with the status still in_progress
   * (a reader saw an operation in progress whose history said it finished).
   */
  private write(fields: Record<string, unknown>, resourceVersion?: string): Promise<void> {
    const history = [...this.history];
    const run = async (): Promise<void> => {
      if (this.abandoned !== undefined || this.objectDeleted) return;
      const body: Record<string, unknown> = { status: { ...fields, executionHistory: history } };
      if (resourceVersion) body.metadata = { resourceVersion };
      const written = await this.deps.api.patchOperationStatus(this.op.metadata.name as string, body);
      this.onWritten(written);
    };
    const next = this.writing.then(run, run);
    this.writing = next.catch(() => undefined);
    return next;
  }
}
