/**
 * add_rooms and remove_rooms.
 *
 * add_rooms creates `amount` rooms of the active version in parallel (bounded), with progress in
 * the history; if a room cannot be created the operation fails and its rollback deletes the rooms
 * it created (spec). A user's add_rooms that would take roomsReplicas above
 * ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER, as the count is when it runs, ends in error before it changes
 * anything (addRoomsOverLimit). A cancel starts no further room (the requests in flight complete) and the
 * rollback deletes what was created. remove_rooms removes `amount` rooms in the order error,
 * expired, pending/unready, ready — never an occupied one (DESIGN.md) — or the rooms named by id
 * that are the scheduler's (the others are named in the history as skipped, and never touched).
 * A user's add or removal by amount moves roomsReplicas first, so a crash mid-way leaves the count
 * asked for; its rollback (a cancel, a failure) sets it back, unless it was changed meanwhile.
 */
import { roomEvent } from '../../events';
import { chooseRoomsToRemove } from '../../rooms/domain/removal-order';
import { RoomManager, type RoomRemovalById } from '../../rooms/room-manager';
import { forEachConcurrent } from '../../../../common/src/runtime/concurrent';
import { SchedulerBeingDeleted, type ExecutionContext, type HandOver, type OperationDefinition } from '../execution';
import type { GameRoom, Operation, Scheduler } from '../../../../common/src/generated/resources';
import { instanceFromPod, isServing, roomsMaxMatches } from '../../../../common/src/rooms/room-status';
import { apiStatus, describeApiError, isApiUnavailable, isJsonPatchNotApplied, retryTransient } from '../../../../common/src/kube/clients';
import { OperationDefinition as OperationName, OperationSourceName, RemoveRoomsReason } from '../../../../common/src/resources/operation-names';
import { specChangeSource, specChangeSourcePatch } from '../../../../common/src/resources/labels';
import { addAboveLimit } from '../../../../common/src/validation/room-limits';
import { awaitSpecObserved, loadActiveVersion, loadScheduler, pollUntil } from './shared';
import { refusedSpecBase, schedulerSpecsDiffer } from '../../../../common/src/operations/refused-spec';
import { activeDefinition, type FindVersion } from '../../../../common/src/resources/scheduler-version';
import { cachedVersions, type OperatorDeps } from '../../deps';
import { agreeing, counted } from '../../../../common/src/text/counted';
import { nameList } from '../../../../common/src/text/name-list';
import { cancelAsked } from '../queue-plan';
import { keptCreatedLine } from '../operation-ending';
import { rolloutBounds } from '../../rooms/domain/health-plan';
import { isOtherMajor } from '../../rooms/domain/version-major';
import { summarizeFleet } from '../../rooms/domain/fleet-summary';
import { desiredRooms } from '../../rooms/domain/desired-count';

/**
 * A user's add-rooms or remove-rooms (not the operator's own healing) changes how many rooms the
 * scheduler keeps: roomsReplicas moves by the amount, so the health check does not undo it. Like
 * every change of the scheduler, that makes a (minor) version. With autoscaling on, the
 * autoscaler keeps deciding the count, and the change lasts until its next decision.
 */
const REPLICAS_WRITE_DEADLINE_MS = 60_000;

/** The line adjustReplicas writes for each move of the count, and how it is read back (undoStuckCancel). */
function countMovedLine(before: number, after: number): string {
  return `roomsReplicas changed from ${before} to ${after}`;
}
const COUNT_MOVED = /^roomsReplicas changed from (\d+) to (\d+)$/;

/**
 * Moves roomsReplicas by `delta`, from the count read now. With `onlyFrom`, only while the count
 * still is that value (the one this operation set): a user's change meanwhile is not built on.
 * Records the count before the operation's first move (`replicasBefore`, what its rollback sets
 * back) and the count it set last (`replicasSet`, on which the rollback is conditional).
 */
async function adjustReplicas(ctx: ExecutionContext, delta: number, onlyFrom?: { value: number; skipped: (now: number | undefined) => string }): Promise<void> {
  if (ctx.op.spec.priority || delta === 0) return;
  // Conditional on roomsReplicas alone (a JSON Patch `test`), so the status writes that move the
  // Scheduler's resourceVersion all the time at scale never make it lose; it loses only to
  // another change of roomsReplicas, and then reads again, for up to a minute.
  const deadline = ctx.deps.now() + REPLICAS_WRITE_DEADLINE_MS;
  /** The last move sent, and the generation it was conditional on. */
  let sent: { generation: number; before: number; after: number; refused?: string } | undefined;
  const moved = async (m: { before: number; after: number; refused?: string }, generation: number | undefined): Promise<void> => {
    // Recorded before anything else can throw (a cancel while waiting): the rollback restores it.
    ctx.state.replicasBefore ??= m.before;
    ctx.state.replicasSet = m.after;
    if (m.refused) ctx.event(m.refused);
    ctx.event(countMovedLine(m.before, m.after));
    await awaitSpecObserved(ctx, generation);
  };
  for (let attempt = 1; ; attempt++) {
    // Transient answers (429, 5xx) are retried (loadScheduler too): the rooms may already be
    // added or removed, and a roomsReplicas left behind would have the health check undo them.
    const s: Scheduler = await loadScheduler(ctx);
    // The last move was applied though its answer was lost (a connection reset, a timeout; its
    // retry then failed its own `test`): the generation after it is this operation's, with the
    // count it set. Moved again from the count read now, a removal of 2 took 4 rooms.
    if (sent && s.metadata.generation === sent.generation + 1 && s.spec.roomsReplicas === sent.after
      && specChangeSource(s.metadata.annotations, sent.generation + 1)?.operation === ctx.op.metadata.name) {
      await moved(sent, s.metadata.generation);
      return;
    }
    const active = await loadActiveVersion(ctx, s);
    if (autoscaled(s, () => active)) {
      ctx.state.autoscaled = true;
      ctx.event('Autoscaling is enabled: it decides the number of rooms from now on');
      return;
    }
    // A spec whose version change was refused is not built on: it is replaced whole by the active
    // version's definition with the count in force moved (conditional on the spec's generation).
    // The refusal is read from the operations cache: it ended before this operation started.
    const refused = await refusedSpecBase(s, {
      operation: (id) => ctx.deps.caches.operations.get(id),
      activeDefinition: () => Promise.resolve(active?.spec.definition),
      differs: schedulerSpecsDiffer,
    });
    if (onlyFrom && s.spec.roomsReplicas !== onlyFrom.value) {
      ctx.event(onlyFrom.skipped(s.spec.roomsReplicas));
      return;
    }
    const before = s.spec.roomsReplicas ?? 0;
    const after = Math.max(0, before + delta);
    if (after === before) {
      // A removal from a count already 0 (a user's scale-down to 0 landed first): nothing to move,
      // and nothing this removal took for the rooms it keeps to give back.
      ctx.state.replicasBefore ??= before;
      ctx.state.replicasSet = after;
      ctx.event(`roomsReplicas is already ${before}: this removal does not lower it`);
      return;
    }
    // Checked here, on the count read now: the gateway checked the amount against the count when
    // it accepted the request, and add-rooms queued behind one another each passed that check.
    const overLimit = delta > 0 ? addRoomsOverLimit({ scheduler: ctx.schedulerName, before, amount: delta, maxRooms: ctx.deps.config.maxRoomsPerScheduler }) : undefined;
    if (overLimit !== undefined) throw new Error(overLimit);
    const change = refused
      ? [{ op: 'replace', path: '/spec', value: { ...refused.definition, roomsReplicas: after } }]
      : s.spec.roomsReplicas === undefined
        ? [{ op: 'add', path: '/spec/roomsReplicas', value: after }]
        : [{ op: 'test', path: '/spec/roomsReplicas', value: before }, { op: 'replace', path: '/spec/roomsReplicas', value: after }];
    const ops = [...change, ...sourceOfChange(ctx, s)];
    const move = { before, after, ...(refused ? { refused: `The scheduler's spec held a definition whose version change ${refused.how}; it now holds the active version ${refused.version}'s, with this change` } : {}) };
    sent = { ...move, generation: s.metadata.generation ?? 1 };
    let patched: Scheduler;
    try {
      patched = await retryTransient(() => ctx.deps.api.jsonPatchScheduler(ctx.schedulerName, ops), 10);
    } catch (err) {
      // Unanswered after the retries (the API server restarting, overloaded): the move may have
      // landed with its answer lost, which only the next read can tell (above); thrown from here,
      // a landed move went unrecorded and the rollback could not set it back.
      const unanswered = isApiUnavailable(err);
      if (!unanswered && !isJsonPatchNotApplied(err) && apiStatus(err) !== 409) throw err;
      if (ctx.deps.now() > deadline) {
        throw new Error(unanswered
          ? `could not update roomsReplicas: the API server did not answer for ${REPLICAS_WRITE_DEADLINE_MS / 1000} s (${attempt} tries; last: ${describeApiError(err)})`
          : `could not update roomsReplicas: it kept changing under this operation (${attempt} tries in ${REPLICAS_WRITE_DEADLINE_MS / 1000} s)`, { cause: err });
      }
      continue;
    }
    await moved(move, patched.metadata.generation);
    return;
  }
}

/**
 * Why an add of `amount` rooms is refused at run time, or undefined when it fits: it would take
 * roomsReplicas (`before`, read when the operation runs) above the most rooms one scheduler may
 * have. Said in the gateway's words for the same refusal, with what to do next.
 */
export function addRoomsOverLimit(a: { scheduler: string; before: number; amount: number; maxRooms: number }): string | undefined {
  const above = addAboveLimit(a.before, a.amount, a.maxRooms);
  if (above === undefined) return undefined;
  const raise = 'raise ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER (the chart\'s limits.maxRoomsPerScheduler)';
  const room = a.maxRooms - a.before;
  const next = room > 0
    ? `send add-rooms again for at most ${room} more (POST /schedulers/${a.scheduler}/add-rooms with {"amount": ${room}}), or ${raise}`
    : a.before === a.maxRooms
      ? `the scheduler already has the most rooms it may have: add no more, or ${raise}`
      : `roomsReplicas is already above the limit (the operator keeps the count last decided): set it to at most ${a.maxRooms} (PATCH /schedulers/${a.scheduler}, or kubectl scale rks/${a.scheduler} --replicas=<n>), or ${raise}`;
  return `no room added: adding ${counted(a.amount, 'room')} ${above}; roomsReplicas stays ${a.before}: ${next}`;
}

/**
 * Whether autoscaling decides the scheduler's room count: the active version's autoscaling, as the
 * health check reads it (not a refused change's in the spec).
 */
function autoscaled(s: Scheduler, findVersion: FindVersion): boolean {
  return activeDefinition(s, findVersion).autoscaling?.enabled === true;
}

/** JSON Patch operations that say this operation made the spec change (specChangeSourcePatch). */
function sourceOfChange(ctx: ExecutionContext, s: Scheduler): { op: string; path: string; value: unknown }[] {
  return specChangeSourcePatch(s, ctx.op.spec.source ?? OperationSourceName.Kubectl, ctx.op.metadata.name as string);
}

/**
 * Whether the scheduler's room count already says what the operation asked for: roomsReplicas
 * moved (a user's add or remove), or nothing to move (the health check's own operations, or
 * autoscaling deciding). From then on the fleet converges on it without this execution.
 */
function countSettled(ctx: ExecutionContext): boolean {
  return Boolean(ctx.op.spec.priority) || ctx.state.replicasBefore !== undefined || ctx.state.autoscaled === true;
}

/** What the health check does for the rest once the count is settled. */
function restByHealthCheck(ctx: ExecutionContext, verb: 'adds' | 'removes', rest: number): string {
  if (rest <= 0) return '';
  if (ctx.state.autoscaled === true) return `; autoscaling decides the number of rooms from now on`;
  const wants = ctx.op.spec.priority ? ' if the scheduler still wants it' : '';
  return `; the health check ${verb} the other ${rest}${wants}`;
}

/**
 * How far an add_rooms got when it was canceled (`cause`: "the cancel", "the deletion of the
 * operation"). A cancel that comes once every room was requested stopped nothing: it says so.
 */
export function creationStoppedNote(cause: string, created: number, count: number, inFlight: number): string {
  return created === count
    ? `All ${counted(count, 'room')} had been requested when ${cause} came: ${created}/${counted(count, 'room')} created`
    : `Room creation stopped by ${cause}: ${created}/${counted(count, 'room')} created (the ${counted(inFlight, 'request')} in flight completed)`;
}

/**
 * How far an add_rooms had got at the moment it was canceled, told then (the progress lines come
 * only every tenth of the rooms): created, in flight (they complete), and never started.
 */
function creationStoppingNote(cause: string, at: { created: number; inFlight: number; notStarted: number }, count: number): string {
  const rest = at.notStarted === 0 ? `all ${count} had been requested` : `the other ${at.notStarted} are not started`;
  return `When ${cause} came: ${at.created}/${count} rooms created and ${at.inFlight} being created, which complete; ${rest}`;
}

/**
 * Why a remove_rooms by amount removed fewer rooms than asked, each cause that applied: the
 * scheduler had fewer rooms it may remove by amount (`fleet`, given then: the rooms it had, of
 * which those not `chosen` are held by players or a matchmaker), rooms that changed before their
 * deletion, or the remove limit.
 */
export function removalShortNote(a: { amount: number; limit: number; removed: number; changed: number; fleet?: number; chosen: number }): string {
  const causes: string[] = [];
  if (a.fleet !== undefined) {
    const held = Math.max(0, a.fleet - a.chosen);
    causes.push(`the scheduler had ${counted(a.fleet, 'room')}${held > 0 ? `, ${held} of them held by players or a matchmaker, which a removal by amount never takes` : ''}`);
  }
  if (a.changed > 0) causes.push(a.changed === 1 ? '1 was taken by players or a matchmaker before its deletion and was kept' : `${a.changed} were taken by players or a matchmaker before their deletion and were kept`);
  if (a.limit < a.amount) causes.push(`one operation removes at most ${a.limit} (ROOMKEEPER_REMOVE_ROOMS_LIMIT): send remove-rooms again for more`);
  return `Asked to remove ${counted(a.amount, 'room')}; ${a.removed} could be removed: ${causes.join('; ')}`;
}

/** After a cancel: records how far the work got, then ends the execution as canceled. */
function stopIfCanceled(ctx: ExecutionContext, howFar: string): void {
  if (!ctx.canceled) return;
  ctx.event(howFar);
  ctx.checkpoint();
}

export const addRoomsDefinition: OperationDefinition = {
  name: OperationName.AddRooms,

  async execute(ctx: ExecutionContext): Promise<void> {
    const input = ctx.inputOf(OperationName.AddRooms);
    const { amount } = input;
    const limit = ctx.deps.config.addRoomsLimit;
    let count = Math.min(amount, limit);
    const scheduler = await loadScheduler(ctx);
    if (scheduler.metadata.deletionTimestamp) throw new SchedulerBeingDeleted(ctx.schedulerName);
    const named = scheduler.status?.version;
    if (!named) throw new Error(`scheduler ${ctx.schedulerName} has no active version`);
    // The version the operator's record says is active, whatever status.version was edited to.
    const version = await loadActiveVersion(ctx, scheduler);
    if (!version) throw new Error(`active version ${named} not found, and not exactly one other SchedulerVersion of the scheduler says it is active (the Scheduler's ActiveVersionAvailable condition tells which): switch to the version to run (PUT /schedulers/${ctx.schedulerName} with {"version": "..."})`);
    const active = version.spec.version;
    if (active !== named) ctx.event(`status.version names ${named}, which no switch_active_version made active: the rooms are made of ${active}, the version whose SchedulerVersion says it is active; the scheduler controller sets status.version back to it`);
    const rooms = new RoomManager(ctx.deps);
    // A cancel that came meanwhile stops it before it changes anything: the change of roomsReplicas
    // would make a version and a switch, and its rollback two more, for nothing.
    ctx.checkpoint();
    // roomsReplicas moves by the whole amount; one operation creates at most the add limit, and
    // the health check adds the rest, as the scheduler now wants them (autoscaling: it decides).
    await adjustReplicas(ctx, amount);
    // Autoscaling decides the count: rooms above its max would be removed at once (desired-count.ts).
    const max = ctx.state.autoscaled === true && !ctx.op.spec.priority ? version.spec.definition.autoscaling?.max : undefined;
    const have = max !== undefined && max >= 0 ? rooms.liveCount(ctx.schedulerName) : undefined;
    const belowMax = have === undefined ? Number.POSITIVE_INFINITY : Math.max(0, (max as number) - have);
    if (have !== undefined && belowMax < count) {
      ctx.event(`Adding ${counted(belowMax, 'room')} of the ${amount} asked: autoscaling's max is ${String(max)} and the scheduler has ${counted(have, 'room')}, and rooms above max would be removed at once; to have more, raise autoscaling.max`);
      count = belowMax;
    } else if (count < amount) {
      const rest = ctx.state.replicasBefore !== undefined || ctx.op.spec.priority ? `; the health check adds the other ${amount - count}` : '';
      ctx.event(`Asked for ${counted(amount, 'room')}; adding ${count} now (the add limit, ROOMKEEPER_ADD_ROOMS_LIMIT)${rest}`);
    }
    const step = Math.max(1, Math.ceil(count / 10));
    const result = await rooms.createRooms({
      scheduler, version: active, definition: version.spec.definition, count, signal: ctx.signal,
      onCreated: (_n, created) => {
        // After a cancel only the requests in flight complete; the line below counts them.
        if (ctx.signal.aborted) return;
        if (created % step === 0 || created === count) ctx.event(`Created ${created}/${counted(count, 'room')}`);
      },
      // The progress lines come every tenth: how far it got when the cancel came, said with it.
      onAbort: (at) => {
        if (ctx.canceled) ctx.event(creationStoppingNote(ctx.cancelCause, at, count));
      },
    });
    ctx.state.createdRooms = result.created;
    ctx.state.createCount = count;
    if (result.failure) ctx.state.creationFailure = result.failure;
    stopIfCanceled(ctx, creationStoppedNote(ctx.cancelCause, result.created.length, count, result.inFlightAtAbort ?? 0));
    if (result.failure) throw new Error(`room creation failed after ${result.created.length}/${counted(count, 'room')}: ${result.failure}`);
    ctx.checkpoint(); // stopped by the operator's shutdown: handOver says how far it got
    ctx.event(`Added ${counted(result.created.length, 'room')}${input.reason !== undefined ? ` (reason: ${input.reason})` : ''}`);
  },

  async rollback(ctx: ExecutionContext): Promise<void> {
    await restoreCount(ctx);
    // The rooms created so far are deleted (the spec), except those the scheduler wants anyway:
    // the desired count decides, not the operation's list (a health-check add_rooms keeps its
    // rooms; a user's, after roomsReplicas is restored, keeps none unless rooms went missing). A
    // rolling update's add_rooms keeps its new rooms up to the rollout's bound (createdRoomsKept).
    const created = (ctx.state.createdRooms as string[] | undefined) ?? [];
    if (created.length === 0) return;
    const rooms = new RoomManager(ctx.deps);
    // Counted once the cache shows every room this operation created (expectations.ts).
    for (const until = ctx.deps.now() + 10_000; ctx.deps.expectations && !ctx.deps.expectations.satisfied(ctx.schedulerName) && ctx.deps.now() < until;) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const rollout = rolloutBound(ctx, rooms);
    const live = rollout ? rollout.available : rooms.liveCount(ctx.schedulerName);
    const desired = rollout ? rollout.desired : desiredAfterRollback(ctx);
    const kept = createdRoomsKept({ created: created.length, live, desired, rollout });
    const surplus = created.length - kept;
    let deleted = 0;
    for (const id of [...created].reverse().slice(0, surplus)) {
      if ((await rooms.deleteRoomReporting(ctx.schedulerName, id, undefined, 'Background')) === 'deleted') deleted++;
    }
    const gone = surplus - deleted;
    if (surplus > 0) ctx.event(`Deleted the ${counted(deleted, 'room')} created by this operation${gone > 0 ? ` (${gone} ${gone === 1 ? 'was' : 'were'} already gone)` : ''}`);
    if (kept === 0) return;
    if (!rollout) {
      ctx.event(keptCreatedLine(kept, `the scheduler wants ${desired === undefined ? '? rooms' : counted(desired, 'room')}`));
      return;
    }
    // The refusal is in the failure line above; said again here with what the kept rooms are for.
    const asked = ctx.state.createCount as number | undefined;
    const failure = ctx.state.creationFailure as string | undefined;
    const refused = failure !== undefined && asked !== undefined && asked > created.length ? `; the other ${asked - created.length} could not be created (${failure})` : '';
    const them = kept === 1 ? 'it' : 'them';
    const left = live - deleted;
    ctx.event(keptCreatedLine(kept, `the rolling update to ${rollout.version} wants ${them}: the scheduler has ${counted(left, 'room')} of the ${rollout.upper} the rollout allows (${rollout.desired} desired + surge ${rollout.surge}), ${rollout.newLive - deleted} of the ${rollout.desired} desired on ${rollout.version}'s major; the health check removes older rooms for ${them}, then adds the next batch${refused}`));
  },

  undoStuckCancel,

  /**
   * roomsReplicas moves by the whole amount first (adjustReplicas), before any room is made.
   * Running the operation again would move it a second time and add the rooms twice; and a
   * rollback would delete rooms the user asked for. So once the count is settled the operation
   * ends finished with the rooms made so far, and the health check makes the rest, exactly as it
   * does for an amount above the add limit: the count stays exact whatever the stop interrupted.
   * Before that nothing was changed, and the operation runs again whole under the next leader.
   */
  handOver(ctx: ExecutionContext): HandOver {
    const made = (ctx.state.createdRooms as string[] | undefined)?.length ?? 0;
    if (!countSettled(ctx)) return { outcome: 'requeued', account: 'nothing yet (roomsReplicas not changed, no room created)' };
    const { amount } = ctx.inputOf(OperationName.AddRooms);
    const count = ctx.state.replicasBefore === undefined ? '' : `roomsReplicas is ${(ctx.state.replicasBefore as number) + amount}, `;
    return { outcome: 'finished', account: `${count}${made} of the ${counted(amount, 'room')} asked for ${made === 1 ? 'was' : 'were'} created${restByHealthCheck(ctx, 'adds', amount - made)}` };
  },
};

/**
 * Sets roomsReplicas back to `before` on condition that it still holds `set`, the count the
 * operation made it (a JSON Patch `test`), saying the operation made the change: a count changed
 * since (a user's PATCH, kubectl scale) is left as it is. A spec changed meanwhile otherwise is
 * read again (a few times).
 */
async function setCountBack(deps: OperatorDeps, op: Operation, before: number, set: number): Promise<{ outcome: 'restored'; generation: number | undefined } | { outcome: 'already' } | { outcome: 'changed'; now: number | undefined }> {
  const name = op.spec.schedulerName;
  for (let attempt = 1; ; attempt++) {
    const s = await retryTransient(() => deps.api.getScheduler(name), 3);
    // Set back by an earlier try whose ending was not written (the operation's status lost a race).
    if (s.spec.roomsReplicas === before) return { outcome: 'already' };
    if (s.spec.roomsReplicas !== set) return { outcome: 'changed', now: s.spec.roomsReplicas };
    try {
      const patched = await deps.api.jsonPatchScheduler(name, [{ op: 'test', path: '/spec/roomsReplicas', value: set }, { op: 'replace', path: '/spec/roomsReplicas', value: before },
        ...specChangeSourcePatch(s, op.spec.source ?? OperationSourceName.Kubectl, op.metadata.name as string)]);
      return { outcome: 'restored', generation: patched.metadata.generation };
    } catch (err) {
      if ((!isJsonPatchNotApplied(err) && apiStatus(err) !== 409) || attempt >= 5) throw err;
    }
  }
}

/** Why a count was not set back, and how the user undoes the operation. */
function countChangedLine(name: string, before: number, set: number, now: number | undefined, asked: string): string {
  return `roomsReplicas was not set back to ${before}${asked}: it is ${String(now)} now, not the ${set} this operation made it, so it changed since; to undo this operation, ${undoBy(name, before)}`;
}

function undoBy(name: string, before: number): string {
  return `PATCH /schedulers/${name} with {"roomsReplicas": ${before}}, or kubectl scale rks/${name} --replicas=${before}`;
}

/** The rollback of a user's add or removal by amount: roomsReplicas set back, unless it changed since. */
async function restoreCount(ctx: ExecutionContext): Promise<void> {
  const before = ctx.state.replicasBefore as number | undefined;
  const set = ctx.state.replicasSet as number | undefined;
  if (before === undefined || set === undefined) return;
  const back = await setCountBack(ctx.deps, ctx.op, before, set);
  if (back.outcome === 'changed') {
    // The count someone set since is the one the rollback's room deletions keep to.
    ctx.state.countLeft = back.now;
    ctx.event(countChangedLine(ctx.schedulerName, before, set, back.now, ''));
    return;
  }
  ctx.event(`roomsReplicas restored to ${before}`);
  if (back.outcome === 'restored') await awaitSpecObserved(ctx, back.generation, { duringRollback: true });
}

/** The scheduler's desired count once the rollback restored roomsReplicas (the autoscaler's when it decides). */
function desiredAfterRollback(ctx: ExecutionContext): number | undefined {
  const s = ctx.deps.caches.schedulers.get(ctx.schedulerName);
  if (!s) return undefined;
  if (autoscaled(s, cachedVersions(ctx.deps.caches))) return s.status?.autoscaling?.desired;
  const left = ctx.state.countLeft as number | undefined;
  const restored = ctx.state.replicasBefore as number | undefined;
  return left ?? restored ?? s.spec.roomsReplicas;
}

/**
 * How many of the rooms an add_rooms created its rollback keeps: those the fleet wants anyway, so
 * the desired count decides, not the operation's list (issue 19). `live`: the scheduler's rooms now,
 * the created ones that are still there among them; `desired`: its desired count after the
 * rollback (none known: none kept). During a rolling update (`rollout`), the health check's
 * add_rooms makes rooms of the active major that replace older ones: they are wanted up to the
 * rollout's bound, `upper` rooms in all (desired + surge) and `desired` rooms of the active major
 * (`newLive`), never above either. So a rollout whose add_rooms was refused part-way (a
 * ResourceQuota, say) keeps the rooms it made and moves on a batch at a time.
 */
export function createdRoomsKept(a: { created: number; live: number; desired: number | undefined; rollout?: { upper: number; newLive: number } }): number {
  if (a.desired === undefined) return 0;
  const above = a.rollout ? Math.max(a.live - a.rollout.upper, a.rollout.newLive - a.desired) : a.live - a.desired;
  return a.created - Math.min(a.created, Math.max(0, above));
}

/**
 * The rolling update's bound, when the health check's own add_rooms rolls back while rooms of
 * another major than the active version are available, counted as the health check counts it
 * (health-controller.ts, health-plan.ts): its available rooms (`available`: not expired, not
 * terminating, the ones just made included) and those of the active major (`newLive`); `desired`,
 * the count before the downscale gate that a rolling update sizes its batches on; surge =
 * upper as the health check bounds it (rolloutBounds: desired + the active version's maxSurge,
 * capped at autoscaling.max, one room always allowed to surge). Undefined outside a
 * rolling update, and for a user's add_rooms.
 */
function rolloutBound(ctx: ExecutionContext, rooms: RoomManager): { version: string; desired: number; surge: number; upper: number; available: number; newLive: number } | undefined {
  const name = ctx.schedulerName;
  const s = ctx.deps.caches.schedulers.get(name);
  const activeVersion = s?.status?.version;
  if (!ctx.op.spec.priority || !s || !activeVersion) return undefined;
  const now = ctx.deps.now();
  const config = ctx.deps.config;
  const findVersion = cachedVersions(ctx.deps.caches);
  const maxMatches = roomsMaxMatches(s, findVersion);
  const summary = summarizeFleet(rooms.views(name), now, { initTimeoutMs: config.roomInitTimeout, pingTimeoutMs: config.roomPingTimeout, deletionTimeoutMs: config.roomDeletionTimeout }, maxMatches);
  const available = summary.available;
  const newLive = available.filter((r) => !isOtherMajor(r.version, { activeVersion })).length;
  if (newLive === available.length) return undefined;
  const { maxSurge, autoscaling } = activeDefinition(s, findVersion);
  const decision = desiredRooms({
    roomsReplicas: s.spec.roomsReplicas, autoscaling, counts: summary.counts, available: summary.available.length, now, maxMatches,
    lastDownscaleAt: Date.parse(s.status?.autoscaling?.lastDownscaleAt ?? '') || undefined, maxRooms: config.maxRoomsPerScheduler, lastDesired: s.status?.autoscaling?.desired,
  });
  const desired = decision.target;
  const { surge, upper } = rolloutBounds(maxSurge, desired, autoscaling?.enabled === true && autoscaling.max >= 0 ? autoscaling.max : undefined);
  return { version: activeVersion, desired, surge, upper, available: available.length, newLive };
}

export const removeRoomsDefinition: OperationDefinition = {
  name: OperationName.RemoveRooms,

  async execute(ctx: ExecutionContext): Promise<void> {
    const name = ctx.schedulerName;
    const input = ctx.inputOf(OperationName.RemoveRooms);
    const reason = input.reason ?? (ctx.op.spec.source === OperationSourceName.Kubectl ? RemoveRoomsReason.Kubectl : RemoveRoomsReason.Api);
    const rooms = new RoomManager(ctx.deps);
    if ('roomsIds' in input) {
      const ids = input.roomsIds;
      // A rollout's replacement and the health check's removal of expired rooms name the version
      // of each room they decided on: a room changed since (a player joined, a ping changed its
      // status) is kept.
      const decidedOn = (id: string): string | undefined => input.resourceVersions?.[id];
      // Rooms are removed in parallel (as add_rooms creates them); the history lists them in the
      // order asked.
      const outcomes: (RoomRemovalById | 'floor' | 'unsure' | undefined)[] = ids.map(() => undefined);
      const floor = servingFloor(ctx, input.keepServing, input.keepServing === undefined || await sightSettled(ctx));
      let handled = 0;
      await forEachConcurrent(ids, ctx.deps.config.addRoomsConcurrency, async (id, index) => {
        if (ctx.stopping) return; // handled below
        ctx.checkpoint();
        handled++;
        const room = ctx.deps.caches.rooms.get(id, name);
        const kept = floor.take(room);
        if (kept !== undefined) {
          outcomes[index] = kept;
          return;
        }
        outcomes[index] = await rooms.removeRoomById(name, id, decidedOn(id));
        if (room && (outcomes[index] === 'deleted' || outcomes[index] === 'forced')) roomEvent(ctx.deps, room, 'GameRoomDeleted', 'DeleteRoom', `Room deleted by operation ${ctx.op.metadata.name as string} (reason: ${reason})${detailOf(input.details, id)}`);
      }, () => ctx.canceled || ctx.stopping !== undefined);
      const idsWith = (pred: (o: RoomRemovalById | 'floor' | 'unsure') => boolean) => ids.filter((_id, i) => outcomes[i] !== undefined && pred(outcomes[i]));
      const removed = idsWith((o) => o === 'deleted' || o === 'forced');
      const changed = idsWith((o) => o === 'changed');
      const forced = idsWith((o) => o === 'forced');
      const notFound = idsWith((o) => o === 'not-found');
      if (notFound.length > 0) ctx.event(`${notFound.length === 1 ? 'Room' : 'Rooms'} ${notFound.join(', ')} not found in scheduler ${name}: skipped`);
      ctx.event(`Removed ${counted(removed.length, 'room')} by id (reason: ${reason})${removed.length > 0 ? `: ${removed.join(', ')}` : ''}`);
      const why = removed.slice(0, WHY_LISTED).flatMap((id) => { const d = detailOf(input.details, id); return d === '' ? [] : [`${id}${d}`]; });
      if (why.length > 0) ctx.event(`Why: ${why.join('; ')}${removed.length > WHY_LISTED ? `; the other ${counted(removed.length - WHY_LISTED, "room's", "rooms'")} reasons are in their DeleteRoom events` : ''}`);
      if (changed.length > 0) ctx.event(`Kept ${counted(changed.length, 'room')} that changed since they were chosen (a status-changing ping, or a player joined): the health check judges them again: ${changed.join(', ')}`);
      const kept = idsWith((o) => o === 'floor');
      if (kept.length > 0) ctx.event(`Kept ${counted(kept.length, 'ready room')}: removing ${kept.length === 1 ? 'it' : 'them'} would leave fewer than ${String(input.keepServing)} serving rooms, as the fleet is now (the health check replaces ${kept.length === 1 ? 'it' : 'them'} once more rooms serve): ${kept.join(', ')}`);
      const unsure = idsWith((o) => o === 'unsure');
      if (unsure.length > 0) ctx.event(`Kept ${counted(unsure.length, 'serving room')}: for the ${FLOOR_SIGHT_WAIT_MS / 1000} s this removal waited, the operator's view of rooms and pods was not current, or not yet for ${FLOOR_SIGHT_SETTLE_MS / 1000} s after a lost watch, so it could not tell that removing them would leave at least ${String(input.keepServing)} serving (the health check replaces them once it can): ${unsure.join(', ')}`);
      if (forced.length > 0) ctx.event(`Force-deleted the pods of ${counted(forced.length, 'room')} stuck terminating: ${forced.join(', ')}`);
      const deleting = idsWith((o) => o === 'deleting');
      if (deleting.length > 0) ctx.event(`${deleting.length === 1 ? 'Room' : 'Rooms'} ${deleting.join(', ')} already being deleted: left to finish (a pod still there after ROOMKEEPER_ROOM_DELETION_TIMEOUT is force-deleted)`);
      stopIfCanceled(ctx, `Removal stopped by ${ctx.cancelCause} after ${handled}/${counted(ids.length, 'room id')}; the rooms of the others were not touched`);
      ctx.checkpoint(); // stopped by the operator's shutdown: handOver says how far it got
      return;
    }
    const { amount } = input;
    const count = Math.min(amount, ctx.deps.config.removeRoomsLimit);
    // Not in the cache: read (a scheduler that does not exist ends the removal in error, as an add's).
    const scheduler = ctx.deps.caches.schedulers.get(name) ?? await loadScheduler(ctx);
    const fleet = rooms.views(name).filter((r) => !r.validation);
    const choice = chooseRoomsToRemove(fleet, count, ctx.deps.now(), {
      pingTimeoutMs: ctx.deps.config.roomPingTimeout,
      activeVersion: scheduler.status?.version,
    });
    // roomsReplicas goes down by the rooms chosen before any is deleted: a stop or a crash
    // mid-way leaves the count asked for, and the health check removes the rest (never a room
    // with players), where deleting first had it add back the rooms already removed.
    ctx.checkpoint();
    await adjustReplicas(ctx, -choice.remove.length);
    const removedNames: string[] = [];
    let gone = 0;
    let changed = 0;
    // How far it got, kept as it goes: a stop or a lost leadership mid-way (a checkpoint throws
    // inside the loop) hands over what was removed (handOver), not "nothing yet".
    const account = { removed: 0, unreached: choice.remove.length };
    ctx.state.removeAccount = account;
    await forEachConcurrent(choice.remove, ctx.deps.config.addRoomsConcurrency, async (room) => {
      if (ctx.stopping) return; // handled below
      ctx.checkpoint();
      const cached = ctx.deps.caches.rooms.get(room.name, name);
      // The version decided on (not the cache's now: a room allocated since must be kept).
      const rv = room.resourceVersion;
      let outcome = await rooms.deleteRoomReporting(name, room.name, rv ? { resourceVersion: rv } : undefined);
      // Changed since it was chosen: kept only when a player or a matchmaker took it.
      if (outcome === 'changed') outcome = await rooms.deleteIfStillRemovable(name, room.name);
      if (outcome === 'deleted' && cached) roomEvent(ctx.deps, cached, 'GameRoomDeleted', 'DeleteRoom', `Room deleted by operation ${ctx.op.metadata.name as string} (reason: ${reason})`);
      if (outcome === 'deleted') removedNames.push(room.name);
      else if (outcome === 'absent') gone++;
      else changed++;
      account.unreached--;
      if (outcome === 'deleted' || outcome === 'absent') account.removed++;
    }, () => ctx.canceled || ctx.stopping !== undefined);
    const removed = removedNames.length;
    ctx.event(`Removed ${counted(removed, 'room')} (reason: ${reason})${removed > 0 ? `: ${nameList(removedNames, { max: NAMES_LISTED })}` : ''}${gone > 0 ? `; ${gone} more ${agreeing(gone).was} already gone` : ''}${input.kept !== undefined ? `; ${input.kept}` : ''}`);
    const restored = ctx.state.replicasBefore === undefined ? 'roomsReplicas is left as it was' : `the rollback sets roomsReplicas back to ${ctx.state.replicasBefore as number}`;
    stopIfCanceled(ctx, `Removal stopped by ${ctx.cancelCause} after ${removed + gone + changed}/${counted(choice.remove.length, 'room')}; ${restored}`);
    // Stopped by the operator's shutdown: roomsReplicas went down by every room chosen, and the
    // health check removes those not reached. Running it again would remove `amount` rooms more.
    if (!ctx.stopping) account.unreached = 0;
    const set = ctx.state.replicasSet as number | undefined;
    // What this removal took from the count: less than the rooms chosen when the count was already
    // lower (a user's scale-down to 0 landed before it ran). Only that is given back.
    const taken = set === undefined ? 0 : (ctx.state.replicasBefore as number) - set;
    const back = Math.min(changed, taken);
    if (back > 0 && set !== undefined) {
      // The rooms kept because they changed (a player joined) stay in the count: it goes up again
      // by them, unless the count changed since this removal set it (a user's scale-down to 0 is
      // not raised). The rollback's count is still the one before the removal.
      await adjustReplicas(ctx, back, {
        value: set,
        skipped: (now) => `roomsReplicas is ${String(now)} now, not the ${set} this removal set, so it changed meanwhile: it is left so, and the ${counted(back, 'room')} kept ${agreeing(back).is} not added back to it`,
      });
    }
    ctx.checkpoint(); // stopped by the operator's shutdown: handOver says how far it got
    if (choice.shortBy > 0 || changed > 0 || count < amount) {
      const had = fleet.filter((r) => !r.terminating).length;
      ctx.event(removalShortNote({ amount, limit: count, removed: removed + gone, changed, fleet: choice.shortBy > 0 ? had : undefined, chosen: choice.remove.length }));
    }
  },

  undoStuckCancel,

  /** A cancel (or a failure) after roomsReplicas went down sets it back, as the count was before (restoreCount). */
  async rollback(ctx: ExecutionContext): Promise<void> {
    await restoreCount(ctx);
  },

  /**
   * By ids: running it again is safe (the rooms already gone are skipped), so it is requeued.
   * By amount: running it again would remove the amount once more. Once roomsReplicas went down
   * by the rooms chosen, the health check removes those the stop left unreached; before that
   * nothing was removed, and it runs again whole.
   */
  handOver(ctx: ExecutionContext): HandOver {
    if ('roomsIds' in (ctx.op.spec.input ?? {})) return { outcome: 'requeued', account: 'the removals above; running it again skips the rooms already gone' };
    const account = ctx.state.removeAccount as { removed: number; unreached: number } | undefined;
    if (!account || (!countSettled(ctx) && account.removed === 0)) return { outcome: 'requeued', account: 'nothing yet (no room removed)' };
    const count = ctx.state.replicasBefore === undefined ? '' : `roomsReplicas went down by ${account.removed + account.unreached}, `;
    return { outcome: 'finished', account: `${count}${counted(account.removed, 'room')} ${account.removed === 1 ? 'was' : 'were'} removed${restByHealthCheck(ctx, 'removes', account.unreached)}` };
  },
};

/**
 * A rollout's floor of serving rooms (`keepServing`), checked as the removal runs: `take(room)`
 * says why a room is kept (`floor`; `unsure` for a serving room while the caches are not
 * `settled`), or undefined when it may go, counting it gone if it is serving. Without a floor
 * every room may go. The serving rooms are counted again at most every `FLOOR_RECOUNT_MS` (a count is a pass
 * over the scheduler's rooms; a removal takes up to hundreds of rooms of a 10,000-room fleet),
 * less the rooms taken since.
 *
 * A room serves if its status says so and its pod, as the pod cache shows it now, is ready: a room
 * status is written from the pod (the GameRoom reconciler), so the pod cache is ahead of the rooms
 * cache. After an outage, kube-controller-manager marks pods not ready for 20-30 s; a removal that
 * counted only the rooms cache, which had not shown those rooms' `pending` yet, left one serving
 * room fewer than desired. A full list of the server's rooms at the start of each removal also
 * closed that gap, but cost a consistent list of every GameRoom twice per rollout batch (at
 * 3,000 rooms, most of a removal's time); the pod cache closes it for free.
 */
const FLOOR_RECOUNT_MS = 250;

/**
 * How long the operator's caches of rooms and pods must have been current again, after losing
 * their watch, before a floor counts on them. After an outage, a watch restarted shows the pods as
 * they were, and kube-controller-manager marks the pods of nodes whose heartbeats it missed not
 * ready only seconds later (its next node monitor pass): a removal that counted then deleted
 * serving rooms below the floor (CI, the outage test, 2026-12-02). A removal waits for it, up to
 * FLOOR_SIGHT_WAIT_MS. Caches that never lost their watch since their first list need no wait.
 */
const FLOOR_SIGHT_SETTLE_MS = 15_000;
const FLOOR_SIGHT_WAIT_MS = 60_000;

/**
 * Whether the caches have been current for FLOOR_SIGHT_SETTLE_MS, waited for (at most
 * FLOOR_SIGHT_WAIT_MS, less when canceled or stopping). Without a sight (tests), they are.
 */
async function sightSettled(ctx: ExecutionContext): Promise<boolean> {
  const sight = ctx.deps.floorSight;
  if (!sight) return true;
  // The informers' clock: the system's.
  const settled = (): boolean => {
    const now = sight();
    return !now.impaired && (now.recoveredAt === 0 || Date.now() - now.recoveredAt >= FLOOR_SIGHT_SETTLE_MS);
  };
  return pollUntil(settled, { timeoutMs: FLOOR_SIGHT_WAIT_MS, intervalMs: 250, stop: () => ctx.canceled || ctx.stopping !== undefined, now: Date.now });
}

function servingFloor(ctx: ExecutionContext, keepServing: number | undefined, settled: boolean): { take(room: GameRoom | undefined): 'floor' | 'unsure' | undefined } {
  if (keepServing === undefined) return { take: () => undefined };
  const name = ctx.schedulerName;
  const serves = (r: GameRoom): boolean => !r.metadata.deletionTimestamp && !r.spec.validation && isServing(r.status?.status)
    && instanceFromPod(ctx.deps.caches.pods.get(r.metadata.name as string, name)).status === 'ready';
  const taken = new Set<string>();
  let serving = 0;
  let countedAt = -Infinity;
  return {
    take(room) {
      if (!room || !serves(room)) return undefined;
      if (!settled) return 'unsure';
      const now = ctx.deps.now();
      if (now - countedAt >= FLOOR_RECOUNT_MS) {
        serving = ctx.deps.caches.rooms.list(name).filter((r) => serves(r) && !taken.has(r.metadata.name as string)).length;
        countedAt = now;
      }
      if (serving - 1 < keepServing) return 'floor';
      taken.add(room.metadata.name as string);
      serving--;
      return undefined;
    },
  };
}

/** How many removed rooms' reasons an operation's history lists (each room's Event has its own). */
const WHY_LISTED = 20;
/** Rooms a removal by amount names in its history (the Events of the rest name them: GameRoomDeleted). */
const NAMES_LISTED = 50;

/** `: <why>` for a room the health check listed in `details` (`<room>: <why>`), else nothing. */
function detailOf(details: readonly string[] | undefined, id: string): string {
  const line = details?.find((d) => d.startsWith(`${id}: `));
  return line ? `: ${line.slice(id.length + 2)}` : '';
}

/**
 * The rollback a cancel (or the operation's deletion) asked for, when a user's add_rooms or
 * remove_rooms got stuck before it could run it (its operator killed mid-way): roomsReplicas set back to what the operation's own
 * history says it was, on condition that it still holds what the operation made it. The health
 * check then removes (or adds) the rooms, never one with players. The lines for its history.
 */
async function undoStuckCancel(deps: OperatorDeps, op: Operation): Promise<string[]> {
  const definition = op.spec.definitionName;
  if (op.spec.priority || !cancelAsked(op)) return [];
  // From its first move to its last (a removal moves it twice when rooms it chose were kept).
  const moves = (op.status?.executionHistory ?? []).map((h) => COUNT_MOVED.exec(h.event)).filter((m) => m !== null);
  const [first, last] = [moves[0], moves[moves.length - 1]];
  if (!first || !last) return [];
  const [before, set] = [Number(first[1]), Number(last[2])];
  const name = op.spec.schedulerName;
  const asked = op.metadata.deletionTimestamp ? ', as the operation\'s deletion asked' : ', as the cancel asked';
  try {
    const back = await setCountBack(deps, op, before, set);
    if (back.outcome === 'changed') return [countChangedLine(name, before, set, back.now, asked)];
    return [`roomsReplicas restored to ${before}${asked}; the health check ${definition === OperationName.AddRooms ? 'removes the rooms above it, never one with players' : 'adds rooms up to it'}`];
  } catch (err) {
    return [`roomsReplicas was not set back to ${before}${asked} (${describeApiError(err)}); to undo this operation, ${undoBy(name, before)}`];
  }
}
