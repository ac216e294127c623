/**
 * create_new_scheduler_version: compare the new definition with the active version, number the
 * new version as Maestro does, validate a major change with a validation room that must report
 * ready, store the SchedulerVersion and enqueue `switch_active_version`. The rollback deletes what
 * the operation created for the new version (validation room, version), except the operation.
 */
import { schedulerEvent } from '../../events';
import type { GameRoom, GameRoomStatus, Operation } from '../../../../common/src/generated/resources';
import { buildOperation } from '../../../../common/src/operations/operation-factory';
import { newOperationId, newVersionOperationId } from '../../../../common/src/operations/operation-id';
import { switchEnqueuedLine } from '../../../../common/src/operations/refused-spec';
import { CREATED_BY_OPERATION_ANNOTATION } from '../../../../common/src/resources/labels';
import { classifyChange, describeChange, unusedRoomsReplicas } from '../../../../common/src/resources/scheduler-change';
import { describeApiError, isApiUnavailable, isNamespaceTerminating, retryTransient } from '../../../../common/src/kube/clients';
import { nextVersion } from '../../domain/versioning';
import { RoomManager } from '../../rooms/room-manager';
import { roomLimitViolations } from '../../../../common/src/validation/room-limits';
import { CONTAINERS_NOT_READY } from '../../../../common/src/rooms/room-status';
import { CONFIG_ERROR } from '../../rooms/domain/failing-rooms';
import { SchedulerBeingDeleted, type ExecutionContext, type OperationDefinition } from '../execution';
import { OperationDefinition as OperationName, OperationSourceName } from '../../../../common/src/resources/operation-names';
import { parseOperationInput, REQUEST_BOUNDS, specOfDefinitionInput, type OperationInputs } from '../../../../common/src/operations/operation-inputs';
import { deleteVersionOfRollback, listVersions, loadScheduler, loadVersion, newVersionObject, waitUntil } from './shared';
import { activeDefinition } from '../../../../common/src/resources/scheduler-version';
import { cachedVersions, type OperatorDeps } from '../../deps';

export const newVersionDefinition: OperationDefinition = {
  name: OperationName.CreateNewSchedulerVersion,

  async execute(ctx: ExecutionContext): Promise<void> {
    const scheduler = await loadScheduler(ctx);
    const name = ctx.schedulerName;
    if (scheduler.metadata.deletionTimestamp) throw new SchedulerBeingDeleted(name);
    const input = ctx.inputOf(OperationName.CreateNewSchedulerVersion);
    const definition = specOfDefinitionInput(input) ?? scheduler.spec;
    const activeVersion = scheduler.status?.version;
    if (!activeVersion) throw new Error(`scheduler ${name} has no active version yet`);
    const active = await loadVersion(ctx, activeVersion);
    if (!active) throw new Error(`active version ${activeVersion} of scheduler ${name} not found`);
    // The spec was written again after this definition was taken (an add-rooms' rollback restoring
    // roomsReplicas, a second kubectl edit) and that generation is not versioned yet: its own
    // operation follows this one. A version of a definition the spec no longer holds would be
    // active for a moment, and the health check could add or remove rooms for it.
    const generation = scheduler.metadata.generation ?? 1;
    if (generation > (scheduler.status?.versionedGeneration ?? 0) && classifyChange(definition, scheduler.spec) !== 'none') {
      ctx.event(`The spec changed again (generation ${generation}) before this operation ran; no version made from its definition: the latest spec is versioned next`);
      return;
    }
    // An Operation written by hand with a definition of its own, not the spec's: versioned, it
    // would run while the spec, GET /schedulers and the game filters said otherwise. (Roomkeeper's
    // own, for a generation the spec has moved on from, keep their definition, as they always have.)
    if (classifyChange(scheduler.spec, definition) !== 'none' && !madeForGeneration(ctx.op, scheduler.metadata.uid ?? '', generation)) {
      throw new Error(`no version made: this operation's input.scheduler is not the Scheduler's spec (it differs in ${describeChange(scheduler.spec, definition)}), `
        + `and a version is made only from the spec, so that the spec always says what runs; to change scheduler ${name}, change its spec `
        + `(kubectl edit scheduler ${name}, or POST /schedulers/${name}): that enqueues a create_new_scheduler_version with it; an Operation written by hand may leave input.scheduler out to version the spec as it is`);
    }

    const change = classifyChange(active.spec.definition, definition);
    if (change === 'none') {
      ctx.event(`No change from the active version ${activeVersion}; no version created`);
      return;
    }
    // The gateway refuses such a definition; one written past it (kubectl edit or scale) is refused
    // here, before any version is made, naming the field.
    const tooMany = roomLimitViolations(definition, ctx.deps.config.maxRoomsPerScheduler);
    if (tooMany.length > 0) {
      throw new Error(`no version made: ${tooMany.map((v) => `spec.${v.field} ${v.message}`).join('; ')}; the active version ${activeVersion} runs: set the spec back to at most ${ctx.deps.config.maxRoomsPerScheduler}`);
    }
    const versions = await listVersions(ctx);
    // Another attempt after one that got stuck keeps the version that one made (same numbering).
    const firstAttempt: string = input.firstAttempt ?? (ctx.op.metadata.name as string); // a stored operation has a name
    const made = versions.find((v) => v.metadata.annotations?.[CREATED_BY_OPERATION_ANNOTATION] === firstAttempt && v.spec.version !== activeVersion);
    if (made && classifyChange(made.spec.definition, definition) === 'none') {
      ctx.event(`Version ${made.spec.version} was made by an earlier attempt of this change (${firstAttempt}); kept`);
      await enqueueSwitch(ctx, made.spec.version);
      return;
    }
    const version = nextVersion(versions.map((v) => v.spec.version), activeVersion, change);
    const unused = unusedRoomsReplicas(active.spec.definition, definition);
    const told = unused ? `; ${unused}` : '';
    ctx.event(`${change === 'major' ? 'Major' : 'Minor'} change detected (${describeChange(active.spec.definition, definition)}): new version ${version}${told}`);
    const replaced = new RoomManager(ctx.deps).replacedOnRooms(definition);
    if (replaced) ctx.event(replaced);

    if (change === 'major') {
      await validateWithRoom(ctx, scheduler, version, definition);
    }
    ctx.checkpoint();
    const object = newVersionObject(scheduler, version, change, definition);
    object.metadata.annotations = { ...object.metadata.annotations, [CREATED_BY_OPERATION_ANNOTATION]: firstAttempt };
    await ctx.deps.api.createSchedulerVersion(object);
    ctx.state.createdVersion = version;
    ctx.event(`Created version ${version}`);
    schedulerEvent(ctx.deps, ctx.schedulerName, 'VersionCreated', 'CreateVersion', `Created ${change} version ${version} (from ${activeVersion}) by operation ${ctx.op.metadata.name as string}${told}`);
    await enqueueSwitch(ctx, version);
  },

  async rollback(ctx: ExecutionContext): Promise<void> {
    const rooms = new RoomManager(ctx.deps);
    const validationRoom = ctx.state.validationRoom as string | undefined;
    if (validationRoom) {
      await rooms.deleteRoom(ctx.schedulerName, validationRoom, undefined, 'Background');
      ctx.event(`Deleted validation room ${validationRoom}`);
    }
    const version = ctx.state.createdVersion as string | undefined;
    if (version) {
      await deleteVersionOfRollback(ctx, version);
    }
    for (const line of countKept(ctx.deps, ctx.op)) ctx.event(line);
  },

  canceledBeforeStart: countKept,
};

/**
 * What a refused change through the HTTP API that moved roomsReplicas says of its count (the lines
 * of its rollback, or of its cancel before it started): written
 * into the spec with the change, it took effect then (the spec's count is the count in force,
 * whatever the version), and the rollback of the version change leaves it, as the spec still
 * holds it. None when the change moved no count, or the count has changed since, or
 * autoscaling decides the number of rooms.
 */
function countKept(deps: OperatorDeps, op: Operation): string[] {
  const parsed = parseOperationInput(OperationName.CreateNewSchedulerVersion, op.spec.input ?? {}, REQUEST_BOUNDS);
  if (!parsed.ok) return [];
  const { countBefore } = parsed.value;
  const count = specOfDefinitionInput(parsed.value)?.roomsReplicas;
  const name = op.spec.schedulerName;
  const s = deps.caches.schedulers.get(name);
  if (countBefore === undefined || count === undefined || !s || s.spec.roomsReplicas !== count || s.metadata.deletionTimestamp) return [];
  if (activeDefinition(s, cachedVersions(deps.caches)).autoscaling?.enabled === true) return [];
  return [`roomsReplicas ${count}, which this change set (it was ${countBefore}), took effect when the change was written and stays: the spec's roomsReplicas is the count in force whatever the version, `
    + `so it is not undone with the rest of the change; to go back, PATCH /schedulers/${name} with {"roomsReplicas": ${countBefore}}`];
}

async function enqueueSwitch(ctx: ExecutionContext, version: string): Promise<void> {
  const switchOp = buildOperation({
    id: newOperationId(ctx.deps.now()),
    schedulerName: ctx.schedulerName,
    definitionName: OperationName.SwitchActiveVersion,
    input: { newActiveVersion: version } satisfies OperationInputs['switch_active_version'],
    source: OperationSourceName.Operator,
    enqueuedAt: ctx.deps.now(),
  });
  await ctx.createOperation(switchOp);
  // Maestro's exact text (lower case): clients find the switch operation by parsing it.
  ctx.event(switchEnqueuedLine(switchOp.metadata.name as string));
}

/**
 * What the validation room last reported when its time ran out, said after "did not report ready
 * within ...": its pod's own reason when the pod never ran (not scheduled, an image not pulled
 * yet); the game server's last ping when it pinged but its pod never became ready (a readiness
 * probe that never passed: the game server is not to blame); the game server, when it never
 * pinged; and what it reported when that was not ready. A game server that pings `occupied` at
 * start (one a matchmaker holds at once) is running, yet not validated: only `ready` is, so the
 * line says what it reported rather than leave it read as silence. The room is deleted before the
 * line is written: what to look at is what outlives it (the pod's Events).
 */
export function lastStatusNote(last: Pick<GameRoomStatus, 'status' | 'reason' | 'pingStatus' | 'lastPingAt'> | undefined, room: string, namespace: string): string {
  const status = last?.status;
  const reason = last?.reason ?? undefined;
  if (status === undefined || status === 'pending' || status === 'unready') {
    if (reason && reason !== CONTAINERS_NOT_READY) {
      const unschedulable = /^Unschedulable\b/.test(reason);
      return ` (it never reported ready: its pod ${unschedulable ? 'was never scheduled on a node' : 'never ran'}: ${reason}; ${unschedulable ? 'check the version\'s affinity, toleration and resource requests against the cluster\'s nodes' : 'fix what that names'}, then send the change again)`;
    }
    const ping = last?.pingStatus;
    if (last?.lastPingAt || (ping !== undefined && ping !== 'unknown')) {
      const at = last?.lastPingAt ? `, last at ${last.lastPingAt},` : '';
      return ` (the game server pinged ${ping ?? 'unknown'}${at} but its pod never became ready: ${reason ?? `room ${status ?? 'pending'}`}; `
        + `check the readiness probe of the version's containers against the game server: the pod's Events, kept about an hour after the room is deleted, show its failed probes `
        + `(kubectl get events -n ${namespace} --field-selector involvedObject.name=${room}); then send the change again)`;
    }
    return ' (it never reported ready: check that the game server starts and pings the rooms API)';
  }
  const occupied = status === 'occupied' ? ', or set ROOMKEEPER_VALIDATION_ACCEPT_OCCUPIED (the chart\'s operator.validation.acceptOccupied) to true if it is taken by a matchmaker as soon as it starts' : '';
  return ` (it reported ${status}; only ready validates a version: the game server must ping ready once it can take players${occupied})`;
}

/** Whether a room's reason is the kubelet's for a container it cannot create yet: a Secret or ConfigMap (or a key of it) its environment reads is missing. */
function isConfigWait(reason: string): boolean {
  return reason.startsWith(`${CONFIG_ERROR}:`);
}

/** Runs validation-room attempts; throws when every attempt fails. */
async function validateWithRoom(ctx: ExecutionContext, scheduler: Parameters<RoomManager['createRoom']>[0]['scheduler'], version: string, definition: Parameters<RoomManager['createRoom']>[0]['definition']): Promise<void> {
  const rooms = new RoomManager(ctx.deps);
  const attempts = ctx.deps.config.validationAttempts;
  const timeoutMs = ctx.deps.config.validationTimeout;
  const acceptOccupied = ctx.deps.config.validationAcceptOccupied;
  ctx.event('Major version detected, starting game room validation process...');
  // One version operation runs at a time per scheduler: a validation room there now was left by
  // an earlier run of this one, stopped with its operator (a restart, a failover). It goes first.
  // Listed from the API server, not the cache, which a restarted operator may not have filled yet.
  const listed = await retryTransient(() => ctx.deps.api.listGameRooms(ctx.schedulerName), 3);
  for (const left of listed.items.filter((r) => r.spec.validation && !r.metadata.deletionTimestamp)) {
    await rooms.deleteRoom(ctx.schedulerName, left.metadata.name as string, undefined, 'Background');
    ctx.event(`Deleted validation room ${left.metadata.name as string}, left by an earlier validation that stopped before deleting it (its operator stopped)`);
  }
  let lastFailure = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    ctx.checkpoint();
    let room: string;
    try {
      room = await rooms.createRoom({ scheduler, version, definition, validation: true, signal: ctx.signal });
    } catch (err) {
      // Only a refusal is the validation room's: an API server that cannot be reached or is
      // overloaded (its retries spent) fails the operation as any other step would.
      if (ctx.signal.aborted || isApiUnavailable(err)) throw err;
      // Refused by the API server: another attempt would be refused the same way, so none is
      // made, and the history says it was the validation room.
      const why = `the validation room could not be created: ${describeApiError(err)}`;
      ctx.event(`${attempt}º Attempt: ${why}`);
      const fix = isNamespaceTerminating(err)
        ? `namespace ${ctx.schedulerName} is being deleted (kubectl delete namespace, or the scheduler's deletion): once the operator has made it again (the Scheduler's NamespaceReady condition), send the change again`
        : `fix what it names (the spec; a ResourceQuota, LimitRange or admission policy of namespace ${ctx.schedulerName}; or what the operator sets on every room pod: runAsNonRoot by ROOMKEEPER_ROOM_RUN_AS_NON_ROOT, the namespace's Pod Security labels by ROOMKEEPER_ROOM_NAMESPACE_PSA_*), then send the change again`;
      throw new Error(`validation failed: ${why}; ${fix}; the active version keeps running`, { cause: err });
    }
    ctx.state.validationRoom = room;
    let last: GameRoomStatus | undefined;
    let seen = false;
    let toldUnscheduled = false;
    let toldConfigWait = false;
    const until = new Date(ctx.deps.now() + timeoutMs).toISOString();
    const outcome = await waitUntil(ctx, () => {
      const r: GameRoom | undefined = ctx.deps.caches.rooms.get(room, ctx.schedulerName);
      // Deleted by someone else (kubectl, its namespace's deletion) once the cache showed it: it
      // will never report; the attempt ends now, not when its time runs out.
      if (seen && (!r || r.metadata.deletionTimestamp)) return { ok: false as const, failure: `the validation room ${room} was deleted before it reported ready, not by Roomkeeper (kubectl delete, or a deletion of namespace ${ctx.schedulerName}); nothing says the game server failed` };
      seen ||= r !== undefined;
      const s = r?.status?.status;
      last = r?.status;
      if (s === 'ready' || (s === 'occupied' && acceptOccupied)) return { ok: true as const, status: s };
      const reason = r?.status?.reason ?? '';
      if (s === 'error' && isConfigWait(reason)) {
        // The kubelet creates the container once the Secret or ConfigMap exists (it tries again
        // every few seconds): one created just after the change was sent still validates it.
        if (!toldConfigWait) {
          toldConfigWait = true;
          ctx.event(`Validation room ${room} (attempt ${attempt} of ${attempts}) waits for what its environment reads: ${reason}; the kubelet starts its container once that exists in namespace ${ctx.schedulerName} `
            + `(kubectl -n ${ctx.schedulerName} create secret generic <name> --from-literal=<key>=<value>); it waits until ${until}, or cancel this operation`);
        }
        return undefined;
      }
      if (s === 'error') return { ok: false as const, failure: `the validation room failed: ${reason || 'room in error'}` };
      if (!toldUnscheduled && s === 'pending' && /^Unschedulable\b/.test(reason)) {
        // Said now, not only when the attempt's time runs out: meanwhile no lost room is replaced.
        toldUnscheduled = true;
        ctx.event(`Validation room ${room} (attempt ${attempt} of ${attempts}) is not scheduled on a node: ${reason}; it waits until ${until}, and meanwhile the health check replaces no lost room of this scheduler; check the version's affinity, toleration and resource requests against the cluster's nodes, or cancel this operation`);
      }
      return undefined;
    }, timeoutMs);
    await rooms.deleteRoom(ctx.schedulerName, room, undefined, 'Background');
    ctx.state.validationRoom = undefined;
    if (outcome?.ok) {
      // Maestro's exact text; a room that validated by occupied says so after it.
      ctx.event(`${attempt}º Attempt: Game room validation success!${outcome.status === 'occupied' ? ' (the room reported occupied, which ROOMKEEPER_VALIDATION_ACCEPT_OCCUPIED accepts)' : ''}`);
      return;
    }
    const configWait = !outcome && last?.status === 'error' && isConfigWait(last.reason ?? '');
    lastFailure = outcome ? outcome.failure
      : configWait ? `the validation room's container was never created within ${Math.round(timeoutMs / 1000)}s: ${last?.reason ?? ''}; create it in namespace ${ctx.schedulerName}, then send the change again`
        : `the validation room did not report ready within ${Math.round(timeoutMs / 1000)}s${lastStatusNote(last, room, ctx.schedulerName)}`;
    ctx.event(`${attempt}º Attempt: ${lastFailure}`);
    if (configWait && attempt < attempts) {
      // Another attempt would wait for the same missing object: the change fails now.
      ctx.event(`No further attempt: each would wait for the same missing Secret or ConfigMap`);
      throw new Error(`validation failed: ${lastFailure}`);
    }
  }
  ctx.event('All validation attempts have failed, operation aborted!');
  throw new Error(`validation failed: ${lastFailure}`);
}

/**
 * How many generations back an operation of Roomkeeper's is looked for: one queued behind others
 * is a few generations old, and each look is a hash (a Scheduler scaled by kubectl for months has
 * tens of thousands of generations).
 */
const GENERATIONS_LOOKED_BACK = 1_000;

/**
 * Whether Roomkeeper enqueued `op` for one of the last GENERATIONS_LOOKED_BACK spec generations
 * up to `generation` (the gateway and the scheduler controller name it after the generation), or
 * as another attempt of one.
 */
function madeForGeneration(op: Operation, schedulerUid: string, generation: number): boolean {
  const input = op.spec.input as { firstAttempt?: unknown; previousAttempt?: unknown } | undefined;
  if (typeof input?.firstAttempt === 'string' || typeof input?.previousAttempt === 'string') return true;
  for (let g = generation; g >= Math.max(1, generation - GENERATIONS_LOOKED_BACK); g--) if (newVersionOperationId(schedulerUid, g) === op.metadata.name) return true;
  return false;
}
