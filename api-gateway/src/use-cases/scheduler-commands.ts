/**
 * The management API's writes. Each one validates, checks the scheduler's state, writes the
 * Scheduler (when the request changes it) and enqueues one Operation; the operator does the work.
 * Operation ids for create, new version and delete are derived from the Scheduler's uid and
 * generation, so the kubectl path (the operator enqueues on a spec change) and the HTTP path
 * leave one operation per cause, whichever writes first.
 */
import { CONFIG_SCHEMA } from '../../../common/src/config';
import type { Logger } from '../../../common/src/logger';
import type { Operation, Scheduler, SchedulerSpec } from '../../../common/src/generated/resources';
import { isRecord } from '../../../common/src/json/is-record';
import { classifyChange } from '../../../common/src/resources/scheduler-change';
import { SCHEDULER_FINALIZER } from '../../../common/src/resources/labels';
import { nextAttempt } from '../../../common/src/operations/attempts';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import {
  parseAddRoomsInput,
  parseRemoveRoomsInput,
  parseSwitchActiveVersionInput,
  REQUEST_BOUNDS,
  schedulerDefinitionInput,
  specOfDefinitionInput,
  type SchedulerDefinitionInput,
  type OperationInputs,
} from '../../../common/src/operations/operation-inputs';
import { createSchedulerOperationId, deleteSchedulerOperationId, newOperationId, newVersionOperationId } from '../../../common/src/operations/operation-id';
import { refusedSpecBase, schedulerSpecsDiffer, withCountInForce } from '../../../common/src/operations/refused-spec';
import { nextAttemptId } from '../../../common/src/operations/attempts';
import { isFinalOperationStatus, OperationDefinition, OperationSourceName, RemoveRoomsReason, type OperationDefinitionName } from '../../../common/src/resources/operation-names';
import type { FieldError } from '../../../common/src/validation/result';
import { addAboveLimit, roomLimitViolations } from '../../../common/src/validation/room-limits';
import { applySchedulerPatch, isEmptyPatch } from '../../../common/src/resources/scheduler-patch';
import {
  AbortedError,
  ConflictError,
  FailedPreconditionError,
  NotFoundError,
  StoreAlreadyExistsError,
  StoreConflictError,
  StoreInvalidError,
  ValidationError,
  type FieldViolation,
} from '../errors';
import { gatewayAccessError, kubeRefusalOf, refusedAs, roomkeeperRequest } from '../adapters/kube-refusal';
import { schedulerView } from '../maestro-views';
import type { SchedulerValidator } from '../scheduler-validator';
import { cachedVersions, type OperationStore, type RoomStore, type SchedulerStore } from '../store-ports';
import { activeDefinition } from '../../../common/src/resources/scheduler-version';
import type { Clock } from '../../../common/src/runtime/clock';

/**
 * Maestro's code-9 refusal of a version change while another runs (`what`: the operation and its
 * state), with both ways on: wait for it, or cancel it (a validation of a major version that never
 * becomes ready holds every change for minutes).
 */
function ongoingVersionWords(name: string, operationId: string, what: string): string {
  return `scheduler ${name} has an ongoing version operation (${what}); retry once it has finished (GET /schedulers/${name}/operations), or cancel it (POST /schedulers/${name}/operations/${operationId}/cancel)`;
}

const VERSION_DEFINITIONS: readonly string[] = [OperationDefinition.CreateNewSchedulerVersion, OperationDefinition.SwitchActiveVersion];

/** Told the fields of a request body that are not a scheduler's, which are read as not sent (the route says so in a `Warning` header). */
export type IgnoredFields = (fields: readonly string[]) => void;

export interface SchedulerCommandsDeps {
  schedulers: SchedulerStore;
  operations: OperationStore;
  /** The versions cache: the autoscaling in force is the active version's. */
  rooms: Pick<RoomStore, 'findVersion'>;
  validator: SchedulerValidator;
  /** Milliseconds since the epoch. */
  now: Clock;
  logger: Logger;
  /** Most rooms one scheduler may ask for (default CONFIG_SCHEMA's ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER). */
  maxRoomsPerScheduler?: number;
}

/** How many schedulers' last version operation are remembered (see assertNoOngoingVersionOperation). */
const REMEMBERED_VERSION_OPS = 10_000;

/**
 * Whether a version operation still holds up the next version change. A switch whose version is
 * already active (GET shows it) has done its work: only its final status is left to write, and a
 * client that waited for GET to show the version may go on, as with Maestro.
 */
function isOngoing(op: Operation, activeVersion: string | undefined): boolean {
  if (!VERSION_DEFINITIONS.includes(op.spec.definitionName) || !['pending', 'in_progress', undefined].includes(op.status?.status)) return false;
  const target = (op.spec.input as { newActiveVersion?: unknown } | undefined)?.newActiveVersion;
  const switched = op.spec.definitionName === OperationDefinition.SwitchActiveVersion && op.status?.status === 'in_progress'
    && activeVersion !== undefined && target === activeVersion;
  return !switched;
}

export class SchedulerCommands {
  /** The last version operation this gateway enqueued per scheduler: the operations cache may not show it yet. */
  private readonly lastVersionOp = new Map<string, string>();

  /**
   * The version changes (POST, PATCH, PUT) of each scheduler being handled here, chained: one
   * waits for the one before it to be enqueued, so its guard sees it (two sent at once both passed
   * it). Across gateway replicas, a PATCH or POST that loses its spec write is refused the same way.
   */
  private readonly versionChanges = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: SchedulerCommandsDeps) {}

  private oneAtATime<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.versionChanges.get(name) ?? Promise.resolve()).then(fn);
    const settled = run.catch(() => undefined);
    this.versionChanges.set(name, settled);
    void settled.then(() => {
      if (this.versionChanges.get(name) === settled) this.versionChanges.delete(name);
    });
    return run;
  }

  private get maxRooms(): number {
    return this.deps.maxRoomsPerScheduler ?? CONFIG_SCHEMA.maxRoomsPerScheduler.default;
  }

  private assertWithinRoomLimit(spec: SchedulerSpec): void {
    const violations = roomLimitViolations(spec, this.maxRooms);
    if (violations.length > 0) throw new ValidationError(violations);
  }

  /** POST /schedulers; `ignored` is told the body's fields that are not a scheduler's (read as not sent). */
  async create(body: unknown, ignored?: IgnoredFields): Promise<{ scheduler: Record<string, unknown>; operationId: string }> {
    const result = this.deps.validator.validateCreateBody(body);
    if (!result.ok) throw new ValidationError(bodyFields(result.errors));
    if (result.dropped) ignored?.(result.dropped);
    const { name, spec } = result.value;
    this.assertWithinRoomLimit(spec);
    const alreadyExists = new ConflictError(`error creating scheduler ${name}: name already exists`);
    const existing = await this.deps.schedulers.getScheduler(name);
    if (existing?.metadata.deletionTimestamp) {
      // Maestro's words first (clients match on them), then why this one is passing and when to retry.
      const foreign = (existing.metadata.finalizers ?? []).filter((f) => f !== SCHEDULER_FINALIZER);
      const held = foreign.length > 0 ? `; it is also held by ${foreign.length === 1 ? 'the finalizer' : 'the finalizers'} ${foreign.join(', ')} of another tool, which must remove ${foreign.length === 1 ? 'it' : 'them'}` : '';
      throw new ConflictError(`error creating scheduler ${name}: name already exists: scheduler ${name} is being deleted (its rooms and namespace go first${held}); `
        + `create it again once GET /schedulers/${name} answers 404`);
    }
    if (existing) throw alreadyExists;
    let created: Scheduler;
    try {
      created = await this.deps.schedulers.createScheduler(name, spec).catch(refusedAs(roomkeeperRequest('create', 'Scheduler')));
    } catch (err) {
      if (err instanceof StoreAlreadyExistsError) throw alreadyExists;
      throw err;
    }
    const operationId = createSchedulerOperationId(created.metadata.uid ?? name, created.metadata.generation ?? 1);
    await this.enqueue(operationId, name, OperationDefinition.CreateScheduler, schedulerDefinitionInput(name, spec)).catch((err: unknown) => {
      throw afterWrite(err, `scheduler ${name} was created, but not its operation: the operator enqueues the same create_scheduler operation ${operationId} itself for a new Scheduler, and creates its rooms `
        + `(GET /schedulers/${name}/operations/${operationId} follows it once enqueued); do not send the creation again (it is answered 409)`, { operationId });
    });
    this.deps.logger.info('scheduler created', { scheduler: name, operationId });
    const createdAt = created.status?.createdAt ?? (typeof created.metadata.creationTimestamp === 'string' ? created.metadata.creationTimestamp : new Date(this.deps.now()).toISOString());
    return { scheduler: schedulerView(created.spec, { name, state: 'creating', version: 'v1.0.0', createdAt }), operationId };
  }

  /** POST /schedulers/{name}: a whole new definition. */
  async newVersion(name: string, body: unknown, ignored?: IgnoredFields): Promise<{ operationId: string }> {
    return this.oneAtATime(name, () => this.newVersionNow(name, body, ignored));
  }

  private async newVersionNow(name: string, body: unknown, ignored?: IgnoredFields): Promise<{ operationId: string }> {
    const current = await this.mustExist(name);
    const result = this.deps.validator.validateCreateBody(isRecord(body) ? { ...body, name } : body);
    if (!result.ok) throw new ValidationError(bodyFields(result.errors));
    if (result.dropped) ignored?.(result.dropped);
    this.assertWithinRoomLimit(result.value.spec);
    return this.changeSpec(current, () => result.value.spec);
  }

  /** PATCH /schedulers/{name}: fields merged into the current definition. */
  async patch(name: string, body: unknown, ignored?: IgnoredFields): Promise<{ operationId: string }> {
    return this.oneAtATime(name, () => this.patchNow(name, body, ignored));
  }

  private async patchNow(name: string, body: unknown, ignored?: IgnoredFields): Promise<{ operationId: string }> {
    const parsed = this.deps.validator.validatePatchBody(body);
    if (!parsed.ok) throw new ValidationError(bodyFields(parsed.errors));
    if (parsed.dropped) ignored?.(parsed.dropped);
    const current = await this.mustExist(name);
    const isField = (key: string) => this.deps.validator.patchField(key) !== undefined;
    if (isEmptyPatch(parsed.value)) throw new ConflictError(`no change found to scheduler ${name}${ignoredPatchFields(name, body, isField)}`);
    const emptied = emptyListPaths(body, isField);
    return this.changeSpec(current, (spec) => {
      const merged = this.deps.validator.validateSpec(applySchedulerPatch(spec, parsed.value));
      if (!merged.ok) throw new ValidationError(merged.errors);
      this.assertWithinRoomLimit(merged.value);
      return merged.value;
    }, emptied.length > 0 ? `: PATCH ignores ${emptied.join(', ')}; ${emptyListWords(name, emptied)}` : '');
  }

  /** PUT /schedulers/{name}: switch the active version, one the scheduler has (404 otherwise). */
  async switchActiveVersion(name: string, body: unknown): Promise<{ operationId: string }> {
    return this.oneAtATime(name, () => this.switchNow(name, body));
  }

  private async switchNow(name: string, body: unknown): Promise<{ operationId: string }> {
    // Maestro's body names the version `version`; the operation's input (and the spec), `newActiveVersion`: either is taken.
    const given = requestFields(body);
    if (given.version !== undefined && given.newActiveVersion !== undefined && given.version !== given.newActiveVersion) {
      throw new ValidationError([{ field: 'newActiveVersion', message: `is ${JSON.stringify(given.newActiveVersion).slice(0, 80)} while version is ${JSON.stringify(given.version).slice(0, 80)}; send the version to make active once, as version (Maestro) or newActiveVersion` }]);
    }
    const field = given.version === undefined && given.newActiveVersion !== undefined ? 'newActiveVersion' : 'version';
    const parsed = parseSwitchActiveVersionInput({ newActiveVersion: given[field] });
    if (!parsed.ok) throw new ValidationError(bodyFields(parsed.errors, { newActiveVersion: field }));
    const version = parsed.value.newActiveVersion;
    await this.assertNoOngoingVersionOperation(await this.mustExist(name));
    // Checked here, where Maestro lets the operation fail later (and the scheduler read Degraded):
    // with no version operation pending, no other version can appear before the switch runs.
    if (!(await this.deps.schedulers.getVersion(name, version))) {
      throw new NotFoundError(`version ${version} of scheduler ${name} not found; nothing was enqueued: GET /schedulers/${name}/versions lists its versions`);
    }
    const operationId = newOperationId();
    await this.enqueue(operationId, name, OperationDefinition.SwitchActiveVersion, { newActiveVersion: version });
    this.deps.logger.info('switch of active version enqueued', { scheduler: name, version, operationId });
    return { operationId };
  }

  /** DELETE /schedulers/{name} */
  async delete(name: string): Promise<{ operationId: string }> {
    const current = await this.deps.schedulers.getScheduler(name);
    if (!current) throw new NotFoundError(`no scheduler found, can not delete nonexistent scheduler: ${name}`);
    const firstId = deleteSchedulerOperationId(current.metadata.uid ?? name);
    if (current.metadata.deletionTimestamp) return { operationId: await this.deleteAgain(name, firstId) };
    // The operation first: refused, nothing changed. Once it exists, the operator deletes the
    // scheduler whether or not the delete below goes through (it only marks the Scheduler deleted
    // at once, so that no change is taken meanwhile).
    await this.enqueue(firstId, name, OperationDefinition.DeleteScheduler, {});
    await this.deps.schedulers.deleteScheduler(name).catch(refusedAs(roomkeeperRequest('delete', 'Scheduler'))).catch((err: unknown) => {
      throw afterWrite(err, `operation ${firstId} (delete_scheduler) was created and the operator carries it out: it deletes scheduler ${name}, its rooms and its namespace `
        + `(GET /schedulers/${name}/operations/${firstId} follows it); only the gateway's own delete of the Scheduler, which marks it deleted at once, was refused, so until the operation runs the scheduler still takes changes`, { operationId: firstId });
    });
    this.deps.logger.info('scheduler deletion enqueued', { scheduler: name, operationId: firstId });
    return { operationId: firstId };
  }

  /**
   * DELETE of a scheduler already being deleted: the id of its delete_scheduler attempt that is
   * pending, running or done. When the latest ended without deleting (canceled, error), the next
   * attempt is enqueued now, the one the operator enqueues after its backoff (same id, same
   * input), so the answer names an operation that deletes the scheduler, not one that is over.
   */
  private async deleteAgain(name: string, firstId: string): Promise<string> {
    const ops = await this.deps.operations.listOperations(name);
    const decision = nextAttempt(ops, { definitionName: OperationDefinition.DeleteScheduler, firstId, input: {} });
    if (decision.action === 'none') return decision.latest;
    await this.enqueue(decision.id, name, OperationDefinition.DeleteScheduler, decision.input);
    if (decision.id !== firstId) {
      this.deps.logger.info('scheduler deletion asked again; enqueued another attempt, the last ended without deleting', { scheduler: name, operationId: decision.id, previousAttempt: decision.input.previousAttempt });
    }
    return decision.id;
  }

  /**
   * The same definition sent again to a scheduler whose creation the cluster refused (a
   * ResourceQuota, a policy: attempts.ts): the next create_scheduler attempt, enqueued now (the
   * one the operator enqueues after its backoff, same id and input), and its id. Undefined when
   * the creation failed for another reason (the definition's: only a change repairs it).
   */
  private async createAgain(s: Scheduler): Promise<string | undefined> {
    const name = s.metadata.name ?? '';
    const firstId = createSchedulerOperationId(s.metadata.uid ?? name, s.metadata.generation ?? 1);
    const ops = await this.deps.operations.listOperations(name);
    const decision = nextAttempt(ops, { definitionName: OperationDefinition.CreateScheduler, firstId, input: { ...schedulerDefinitionInput(name, s.spec) } });
    if (decision.action === 'none') {
      const latest = ops.find((op) => op.metadata.name === decision.latest);
      return latest && ['pending', 'in_progress'].includes(latest.status?.status ?? 'pending') ? decision.latest : undefined;
    }
    try {
      await this.enqueue(decision.id, name, OperationDefinition.CreateScheduler, decision.input);
    } catch (err) {
      if (!(err instanceof StoreAlreadyExistsError)) throw err; // sent twice at once: the first one enqueued it
    }
    this.deps.logger.info('scheduler creation refused by the cluster asked again; enqueued another attempt', { scheduler: name, operationId: decision.id, previousAttempt: decision.input.previousAttempt });
    return decision.id;
  }

  /** POST /schedulers/{name}/add-rooms */
  async addRooms(name: string, body: unknown): Promise<{ operationId: string }> {
    const parsed = parseAddRoomsInput({ amount: requestFields(body).amount }, REQUEST_BOUNDS);
    if (!parsed.ok) throw new ValidationError(bodyFields(parsed.errors));
    const { amount } = parsed.value;
    const current = await this.mustExist(name);
    // The count in force: the spec's roomsReplicas, unless the active version's autoscaling decides it.
    const replicas = current.spec.roomsReplicas ?? 0;
    const above = activeDefinition(current, cachedVersions(this.deps.rooms)).autoscaling?.enabled ? undefined : addAboveLimit(replicas, amount, this.maxRooms);
    if (above !== undefined) throw new ValidationError([{ field: 'amount', message: above }]);
    const operationId = newOperationId();
    await this.enqueue(operationId, name, OperationDefinition.AddRooms, { amount });
    return { operationId };
  }

  /** POST /schedulers/{name}/remove-rooms: `{amount}` or `{roomsIds}`. */
  async removeRooms(name: string, body: unknown): Promise<{ operationId: string }> {
    // Only the fields a request may set: a rollout's resourceVersions or details are the operator's.
    const given = requestFields(body);
    const requested = isRecord(body) ? { amount: given.amount, roomsIds: given.roomsIds ?? given.rooms_ids ?? given.roomIds } : body;
    const parsed = parseRemoveRoomsInput(requested, REQUEST_BOUNDS);
    if (!parsed.ok) throw new ValidationError(bodyFields(parsed.errors));
    const input: OperationInputs['remove_rooms'] = 'roomsIds' in parsed.value
      ? { roomsIds: parsed.value.roomsIds, reason: RemoveRoomsReason.Api }
      : { amount: parsed.value.amount };
    await this.mustExist(name);
    const operationId = newOperationId();
    await this.enqueue(operationId, name, OperationDefinition.RemoveRooms, input);
    return { operationId };
  }

  /**
   * The scheduler a change is for. One being deleted takes no more changes: 404, as Maestro answers
   * once its delete removed the scheduler (an operation enqueued now would be deleted with it).
   */
  private async mustExist(name: string): Promise<Scheduler> {
    const s = await this.deps.schedulers.getScheduler(name);
    if (!s) throw new NotFoundError(`scheduler ${name} not found`);
    if (s.metadata.deletionTimestamp) throw new NotFoundError(`scheduler ${name} is being deleted`);
    return s;
  }

  /**
   * Maestro's guard (PR #692): one version change at a time. The operations list comes from a
   * cache: an operation it shows ongoing is read again directly before the request is refused
   * (the cache may lag the scheduler's, which already shows the switch), and the version operation
   * this gateway enqueued last is read directly when the cache does not show it yet.
   */
  private async assertNoOngoingVersionOperation(scheduler: Scheduler): Promise<void> {
    const name = scheduler.metadata.name ?? '';
    const active = scheduler.status?.version;
    const ops = await this.deps.operations.listOperations(name);
    let ongoing: Operation | undefined;
    let activeDefinition: Promise<SchedulerSpec | undefined> | undefined;
    for (const cached of ops.filter((op) => isOngoing(op, active))) {
      const fresh = await this.deps.operations.getOperation(cached.metadata.name ?? '');
      // The active version is read once, and only when an operation is ongoing.
      activeDefinition ??= active ? this.deps.schedulers.getVersion(name, active).then((v) => v?.spec.definition) : Promise.resolve(undefined);
      if (fresh && isOngoing(fresh, active) && !(await this.movesCountOnly(fresh, name, await activeDefinition))) {
        ongoing = fresh;
        break;
      }
    }
    const remembered = this.lastVersionOp.get(name);
    if (!ongoing && remembered && !ops.some((op) => op.metadata.name === remembered)) {
      const op = await this.deps.operations.getOperation(remembered);
      if (op && isOngoing(op, active)) ongoing = op;
      else this.lastVersionOp.delete(name);
    }
    if (ongoing) {
      throw new FailedPreconditionError(ongoingVersionWords(name, ongoing.metadata.name ?? '', `${ongoing.spec.definitionName} ${ongoing.metadata.name ?? ''} is ${ongoing.status?.status ?? 'pending'}`));
    }
  }

  /**
   * Whether a version operation only carries a move of the room count, as an add-rooms or
   * remove-rooms makes one (a minor version of the active definition with another roomsReplicas,
   * and its switch): no version change a user asked for, so it holds up none (Maestro's add and
   * remove make no version at all). A change sent meanwhile supersedes it.
   */
  private async movesCountOnly(op: Operation, name: string, activeDefinition: SchedulerSpec | undefined): Promise<boolean> {
    if (!activeDefinition) return false;
    const target = op.spec.definitionName === OperationDefinition.SwitchActiveVersion && op.spec.source === OperationSourceName.Operator
      ? (await this.deps.schedulers.getVersion(name, String((op.spec.input as { newActiveVersion?: unknown } | undefined)?.newActiveVersion)))?.spec.definition
      : op.spec.definitionName === OperationDefinition.CreateNewSchedulerVersion ? specOfDefinitionInput((op.spec.input ?? {}) as SchedulerDefinitionInput) : undefined;
    return target !== undefined && classifyChange(withCountInForce(activeDefinition, target), target) === 'none';
  }

  /**
   * The guard for a change that lost its write to another change of the definition (`fresh` holds
   * it): that change's version operation, read directly (it may not be in the cache, or not even
   * enqueued yet, on another replica or by the operator for a kubectl edit), is ongoing unless it
   * has already ended.
   */
  private async refuseAfterLostWrite(fresh: Scheduler): Promise<void> {
    const name = fresh.metadata.name ?? '';
    const generation = fresh.metadata.generation ?? 0;
    const id = newVersionOperationId(fresh.metadata.uid ?? name, generation);
    const op = await this.deps.operations.getOperation(id);
    if (op && !isOngoing(op, fresh.status?.version)) return;
    throw new FailedPreconditionError(ongoingVersionWords(name, id, `create_new_scheduler_version ${id} ${op ? `is ${op.status?.status ?? 'pending'}` : 'is being enqueued'}, for a change written just before this one, generation ${generation}`));
  }

  /**
   * Writes the spec `change` computes from the current one (resourceVersion precondition; up to
   * four retries on a conflict, each with a fresh read: the operator writes status often), then enqueues the operation of the new generation.
   * A version operation still running refuses the change (FailedPrecondition), once `change` has
   * validated it: an invalid change is told its validation errors, whether or not one runs (see
   * refuseWhileVersionOperation for the rules only the API server judges).
   */
  /** `unchanged`: words the 409 of a change that changes nothing adds (what a PATCH read as not set). */
  private async changeSpec(initial: Scheduler, change: (spec: SchedulerSpec) => SchedulerSpec, unchanged = ''): Promise<{ operationId: string }> {
    const name = initial.metadata.name ?? '';
    let current = initial;
    for (let attempt = 0; ; attempt++) {
      const refused = await this.refusedBase(current);
      const spec = change(refused?.definition ?? current.spec);
      // After the change is validated (its 400 comes first: a refused change would start nothing), once.
      if (attempt === 0) await this.refuseWhileVersionOperation(current, spec);
      // Compared as the operator compares versions (defaults applied, key order and empty values
      // ignored): a GET answer POSTed back is no change, as its bytes differ only in those.
      if (classifyChange(current.spec, spec) === 'none') {
        // The spec already holds it, but its version change was refused (canceled, failed, its
        // operation deleted): sent again, it is tried again, as Maestro makes a version of it anew.
        if (refused && classifyChange(refused.definition, spec) !== 'none') return this.tryAgain(current, refused.lastAttempt, spec);
        // A scheduler whose creation failed (no version): the same definition makes no new generation.
        const neverCreated = current.status?.state === 'on-error' && current.status.version === undefined;
        if (neverCreated) {
          // The cluster refused it (a quota, a policy): the attempt the operator makes after its backoff, made now.
          const again = await this.createAgain(current);
          if (again !== undefined) return { operationId: again };
        }
        throw new ConflictError(`no change found to scheduler ${name}${neverCreated
          ? `: its creation failed (its Degraded condition says why) and no version was made; once the cause is fixed, delete it (DELETE /schedulers/${name}) and create it again with this definition, or send a definition that changes a field` : unchanged}`);
      }
      try {
        const { operationId, recreate } = await this.nextGenerationOperation(current);
        const updated = await this.deps.schedulers.updateSchedulerSpec(current, spec, operationId).catch(refusedAs(roomkeeperRequest('patch', 'Scheduler')));
        const before = current.spec.roomsReplicas ?? 0;
        const countBefore = !recreate && (spec.roomsReplicas ?? 0) !== before ? { countBefore: before } : {};
        await this.enqueue(operationId, name, recreate ? OperationDefinition.CreateScheduler : OperationDefinition.CreateNewSchedulerVersion, { ...schedulerDefinitionInput(name, spec), ...countBefore }).catch((err: unknown) => {
          throw afterWrite(err, `scheduler ${name}'s definition was changed (generation ${updated.metadata.generation ?? '?'}), but its operation was not enqueued: the operator enqueues the same operation ${operationId} itself for the changed definition, within about 10 seconds `
            + `(GET /schedulers/${name}/operations/${operationId} follows it once enqueued); do not send the change again (it is answered 409: no change)`, { operationId });
        });
        this.deps.logger.info(recreate ? 'scheduler creation enqueued again for the changed spec (the last one failed)' : 'new scheduler version enqueued', { scheduler: name, generation: updated.metadata.generation, operationId });
        return { operationId };
      } catch (err) {
        if (!(err instanceof StoreConflictError) || attempt >= 4) {
          if (err instanceof StoreConflictError) throw new AbortedError(`scheduler ${name} was changed concurrently; retry the request`);
          throw err;
        }
        const fresh = await this.deps.schedulers.getScheduler(name);
        if (!fresh) throw new NotFoundError(`scheduler ${name} not found`);
        // Lost to another change of the definition (not to a status write, nor to a move of the
        // count alone: an add-rooms, a scale, whose count this change replaces as a later scale
        // would): a version change under way, which this one waits for, as it would have had it
        // come a moment later.
        if (classifyChange(withCountInForce(fresh.spec, current.spec), current.spec) !== 'none') await this.refuseAfterLostWrite(fresh);
        current = fresh;
      }
    }
  }

  /**
   * The operation a spec write enqueues, named by the generation the write makes (its
   * precondition is the one read): a new version, or, when the scheduler's creation failed, a new
   * creation (the create_scheduler the operator would enqueue for that generation: same id, same input).
   */
  private async nextGenerationOperation(current: Scheduler): Promise<{ operationId: string; recreate: boolean }> {
    const generation = (current.metadata.generation ?? 0) + 1;
    const uid = current.metadata.uid ?? current.metadata.name ?? '';
    const recreate = await this.creationFailed(current);
    return { operationId: recreate ? createSchedulerOperationId(uid, generation) : newVersionOperationId(uid, generation), recreate };
  }

  /**
   * assertNoOngoingVersionOperation for a spec change, which the API server may still refuse: the
   * CRD's CEL rules (autoscaling min <= max, unique names, ...) are judged by it alone, when the
   * spec is written. So before a change is told to wait (code 9), the write it would make is sent
   * as a dry run (only then: no other request pays for it), and a refusal as invalid is answered
   * as the write's would be (400, code 3, the fields named): waiting would not make it valid.
   * Any other answer (a conflict, the API server busy) gives no verdict, and code 9 stands.
   */
  private async refuseWhileVersionOperation(current: Scheduler, spec: SchedulerSpec): Promise<void> {
    try {
      await this.assertNoOngoingVersionOperation(current);
    } catch (err) {
      if (!(err instanceof FailedPreconditionError)) throw err;
      try {
        const { operationId } = await this.nextGenerationOperation(current);
        await this.deps.schedulers.updateSchedulerSpec(current, spec, operationId, { dryRun: true });
      } catch (dryRunErr) {
        if (dryRunErr instanceof StoreInvalidError) throw dryRunErr;
        this.deps.logger.debug('dry run of a spec change gave no verdict; the change is told to wait for the version operation', { scheduler: current.metadata.name, error: String(dryRunErr) });
      }
      throw err;
    }
  }

  /**
   * Whether the scheduler was never created: no active version, and every create_scheduler it
   * has ended without creating it (error, canceled). Its next spec is then created, not versioned
   * (a version operation would fail: there is no version to change).
   */
  private async creationFailed(s: Scheduler): Promise<boolean> {
    if (s.status?.version) return false;
    const creations = (await this.deps.operations.listOperations(s.metadata.name ?? ''))
      .filter((op) => op.spec.definitionName === OperationDefinition.CreateScheduler);
    return creations.length > 0 && creations.every((op) => isFinalOperationStatus(op.status?.status) && op.status?.status !== 'finished');
  }

  /**
   * What a change builds on when the version change made from the Scheduler's current spec was
   * refused (its validation failed, it was canceled, its operation deleted): the active version's
   * definition (`withCountInForce`), so that a PATCH of maxSurge after a refused image is a minor
   * change of what runs, as in Maestro; undefined when a change builds on the spec.
   */
  private refusedBase(s: Scheduler): Promise<{ definition: SchedulerSpec; lastAttempt: string } | undefined> {
    const name = s.metadata.name ?? '';
    return refusedSpecBase(s, {
      operation: (id) => this.deps.operations.getOperation(id),
      activeDefinition: async (version) => (await this.deps.schedulers.getVersion(name, version))?.spec.definition,
      differs: schedulerSpecsDiffer,
    });
  }

  /**
   * The spec's refused change sent again: another attempt of its version operation (the refused
   * one's successor, which `refusedSpecBase` follows), with no write of the spec, which holds it.
   */
  private async tryAgain(s: Scheduler, previous: string, spec: SchedulerSpec): Promise<{ operationId: string }> {
    const name = s.metadata.name ?? '';
    const operationId = nextAttemptId(previous);
    const attemptNote = `The same change was sent again through the API after operation ${previous} did not apply it: tried again`;
    try {
      await this.enqueue(operationId, name, OperationDefinition.CreateNewSchedulerVersion, { ...schedulerDefinitionInput(name, spec), previousAttempt: previous, attemptNote });
    } catch (err) {
      // Sent twice at once: the first one enqueued it.
      if (!(err instanceof StoreAlreadyExistsError)) throw err;
    }
    this.deps.logger.info('refused scheduler change sent again; version operation enqueued', { scheduler: name, operationId });
    return { operationId };
  }

  private rememberVersionOperation(schedulerName: string, id: string): void {
    this.lastVersionOp.delete(schedulerName);
    this.lastVersionOp.set(schedulerName, id);
    if (this.lastVersionOp.size > REMEMBERED_VERSION_OPS) {
      const oldest = this.lastVersionOp.keys().next().value;
      if (oldest !== undefined) this.lastVersionOp.delete(oldest);
    }
  }

  private async enqueue<D extends OperationDefinitionName>(id: string, schedulerName: string, definitionName: D, input: OperationInputs[D]): Promise<void> {
    await this.deps.operations.createOperation(buildOperation({
      id, schedulerName, definitionName, input, priority: false, source: OperationSourceName.Api, enqueuedAt: this.deps.now(),
    })).catch(refusedAs(roomkeeperRequest('create', 'Operation')));
    if (VERSION_DEFINITIONS.includes(definitionName)) this.rememberVersionOperation(schedulerName, id);
  }
}

/**
 * A write refused after an earlier write of the same request went through: when the API server
 * refused the gateway itself (401, 403), the answer says what went through (`outcome`); any other
 * error is left as it is.
 */
function afterWrite(err: unknown, outcome: string, details: Record<string, unknown>): unknown {
  const refusal = kubeRefusalOf(err);
  // What was asked goes ahead (the operator does the rest): not to be sent again.
  return refusal ? gatewayAccessError(refusal, outcome, details, false) : err;
}

/** Input field errors as the request body's: `(body)` for the whole, and renamed fields. */
/** A body's fields but those sent as null, which protojson (Maestro) reads as not set; {} for a body that is no object. */
function requestFields(body: unknown): Record<string, unknown> {
  return isRecord(body) ? Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)) : {};
}

function bodyFields(errors: readonly FieldError[], renamed: Readonly<Record<string, string>> = {}): FieldViolation[] {
  return errors.map((e) => ({ field: e.field === '' ? '(body)' : renamed[e.field] ?? e.field, message: e.message }));
}

/**
 * Where a PATCH body holds an empty list, read as not set (`forwarders`, `spec.containers`,
 * `spec.containers[0].command`), under the fields of a scheduler; the first 10 found.
 */
function emptyListPaths(body: unknown, isField: (key: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (value: unknown, path: string, depth: number): void => {
    if (found.length >= 10 || depth > 8) return;
    if (Array.isArray(value)) {
      if (value.length === 0) found.push(path);
      else value.forEach((item, i) => walk(item, `${path}[${i}]`, depth + 1));
    } else if (isRecord(value)) {
      for (const [key, item] of Object.entries(value)) walk(item, `${path}.${key}`, depth + 1);
    }
  };
  if (isRecord(body)) for (const [key, value] of Object.entries(body)) if (isField(key)) walk(value, key, 0);
  return found;
}

/** What a PATCH makes of the empty lists at `paths`, and how to empty a list instead. */
function emptyListWords(name: string, paths: readonly string[]): string {
  return `sent as an empty list, which is read as not set (as Maestro reads it): ${paths.join(', ')}; to remove every item of a list, send the whole definition without them: POST /schedulers/${name} (GET /schedulers/${name} gives it)`;
}

/**
 * What a PATCH body that changed nothing named that PATCH does not take (Maestro drops such fields
 * too, and answers the same 409): `game` is changed by a whole definition, `name` is the path's
 * (a scheduler is never renamed), a field of the scheduler sent as null or as an empty list is not set, and any other key
 * is not a field of the scheduler, whatever its value. Empty when the body named nothing; otherwise told after the 409's words.
 */
function ignoredPatchFields(name: string, body: unknown, isField: (key: string) => boolean): string {
  const fields = isRecord(body) ? Object.keys(body) : [];
  if (fields.length === 0) return '';
  const wholeDefinition = `POST /schedulers/${name} (GET /schedulers/${name} gives it)`;
  const game = fields.includes('game')
    ? `; game is changed with the whole definition: ${wholeDefinition}, or kubectl edit rks ${name}` : '';
  const renamed = fields.includes('name')
    ? '; the path names the scheduler, and a scheduler is never renamed: create one under the new name (POST /schedulers) and delete this one' : '';
  const sentAs = (test: (v: unknown) => boolean) => fields.filter((f) => isField(f) && isRecord(body) && test(body[f]));
  const nulls = sentAs((v) => v === null);
  const asNull = nulls.length > 0 ? `; sent as null, which is read as not set (as Maestro reads it): ${nulls.join(', ')}` : '';
  const emptyLists = emptyListPaths(body, isField);
  const asEmpty = emptyLists.length > 0 ? `; ${emptyListWords(name, emptyLists)}` : '';
  const unknown = fields.filter((f) => f !== 'game' && f !== 'name' && !isField(f));
  const others = unknown.length > 0 ? `; not fields of a scheduler: ${unknown.join(', ')} (the fields are listed in GET /openapi.json)` : '';
  return `: PATCH ignores ${fields.join(', ')}${game}${renamed}${asNull}${asEmpty}${others}`;
}
