/**
 * A Scheduler's status, computed from the scheduler, its operations and its rooms (pure). This is
 * the one writer of the Scheduler's state and of its Ready, PendingChanges, Progressing and
 * Degraded conditions.
 *
 * State (Maestro's values, which a Maestro client reads): terminating while deleted or while a
 * delete_scheduler operation is queued or running; creating until a version exists (on-error if
 * the create failed: the scheduler has no version, nothing of it can serve); pending-changes while a
 * version operation is queued or running or the spec moved on; in-sync otherwise: the active
 * version is the scheduler, as Maestro sets in-sync after a new version's rollback.
 *
 * Ready (what `kubectl wait --for=condition=Ready` waits for) is True when the scheduler serves on
 * its active version at the desired count in force (`desiredInForce`: the spec's roomsReplicas the
 * moment it moves, or the autoscaler's decision) in ready, allocated, active or occupied rooms, and no
 * version change is in flight. A failed operation, a failed or refused version change included,
 * does not take Ready away: the rooms serve on the active version all the same. Degraded tells the
 * failure (what failed, why, what to do), PendingChanges a spec change that was not applied.
 * An operation that its scheduler's deletion stopped failed nothing (commit 7ca52a4): Degraded
 * stays False and says so.
 */
import type { Condition, GameRoom, Operation, Scheduler, SchedulerState, SchedulerStatus } from '../../../common/src/generated/resources';
import { ConditionReason, SchedulerConditionType } from '../../../common/src/resources/condition-types';
import { isOtherMajor } from '../rooms/domain/version-major';
import { heldRoomsWords } from '../rooms/domain/health-plan';
import { HEALING_DEFINITIONS, incidentOf, type Incident } from '../rooms/domain/repeated-failure';
import { countedStatus, openAllocation } from '../../../common/src/rooms/allocation';
import { isMarkedSilent, isServing, roomMatchCount, roomsMaxMatches } from '../../../common/src/rooms/room-status';
import { activeDefinition, type FindVersion } from '../../../common/src/resources/scheduler-version';
import { desiredRooms } from '../rooms/domain/desired-count';
import { describeChange } from '../../../common/src/resources/scheduler-change';
import { withCountInForce } from '../../../common/src/operations/refused-spec';
import { isStuck } from '../../../common/src/operations/attempts';
import { compareQueueOrder } from '../../../common/src/operations/queue-order';
import { operationStatusOf } from '../../../common/src/resources/operation-names';
import { stableStringify } from '../../../common/src/json/stable-stringify';
import { stoppedByDeletion } from '../operations/operation-ending';
import { failureCause, refusedByTheCluster } from '../../../common/src/operations/failure-cause';
import { ATTEMPT_BACKOFF_MAX_MS, ATTEMPT_BACKOFF_MS } from '../../../common/src/operations/attempts';
import { counted } from '../../../common/src/text/counted';
import { CONFIG_ERROR } from '../rooms/domain/failing-rooms';

const VERSION_OPS = new Set(['create_new_scheduler_version', 'switch_active_version']);

const isActive = (op: Operation): boolean => ['pending', 'in_progress'].includes(operationStatusOf(op));

export function isVersionOperationActive(ops: readonly Operation[]): boolean {
  return ops.some((op) => VERSION_OPS.has(op.spec.definitionName) && isActive(op));
}

/** The latest operation that ended, by finish time. */
function lastFinal(ops: readonly Operation[]): Operation | undefined {
  let best: Operation | undefined;
  let at = -1;
  for (const op of ops) {
    const s = operationStatusOf(op);
    if (s === 'pending' || s === 'in_progress') continue;
    const t = Date.parse(op.status?.finishedAt ?? op.spec.enqueuedAt) || 0;
    if (t > at) {
      at = t;
      best = op;
    }
  }
  return best;
}

/** The scheduler's latest create_scheduler, in queue order. */
function lastCreate(ops: readonly Operation[]): Operation | undefined {
  const creates = ops.filter((op) => op.spec.definitionName === 'create_scheduler').sort(compareQueueOrder);
  return creates[creates.length - 1];
}

/** How an operation that did not finish ended, as a condition's message says it. */
const ENDED_WORDS = { error: 'failed', canceled: 'was canceled', evicted: 'was evicted' } as const;

export function computeState(s: Scheduler, ops: readonly Operation[]): SchedulerState {
  if (s.metadata.deletionTimestamp || ops.some((op) => op.spec.definitionName === 'delete_scheduler' && isActive(op))) return 'terminating';
  if (!s.status?.version) {
    const last = lastCreate(ops);
    return last && ['error', 'canceled', 'evicted'].includes(operationStatusOf(last)) ? 'on-error' : 'creating';
  }
  if (isVersionOperationActive(ops) || (s.metadata.generation ?? 1) > (s.status.versionedGeneration ?? 0)) return 'pending-changes';
  // A failed operation leaves the active version serving: Degraded tells it, not the state.
  return 'in-sync';
}

/** How many rooms serve, against the desired count when one is decided: "1 of 2 rooms", "3 rooms (1 desired)". */
/** The Ready condition's words for rooms marked silent (counted in their status too): they are not allocated. */
function silentWords(silent: number): string {
  if (silent === 0) return '';
  return `; ${counted(silent, 'room')} marked silent (no ping seen for ROOMKEEPER_ROOM_SILENCE_TIMEOUT: ${silent === 1 ? 'it is' : 'they are'} not allocated until ${silent === 1 ? 'it pings' : 'they ping'} again, the health check makes a room in ${silent === 1 ? 'its place' : 'the place of each'} (up to maxSurge; not while a rolling update runs), and ${silent === 1 ? 'it is' : 'they are'} removed at the ping timeout if still silent; kubectl get rkgr -o wide shows which)`;
}

function servingCount(ready: number, desired: number | undefined): string {
  if (desired === undefined) return counted(ready, 'room');
  return ready <= desired ? `${ready} of ${counted(desired, 'room')}` : `${counted(ready, 'room')} (${desired} desired)`;
}

/**
 * The desired count in force (`status.rooms.desired`, `DESIRED`, written by the scheduler
 * controller alone) and why, as the health check words it (desired-count.ts): when the active
 * version autoscales, the autoscaler's decision (`status.autoscaling.desired`, the health check's);
 * otherwise the spec's roomsReplicas (a count above `maxRooms` is refused there and the count last
 * decided kept), read from the spec itself: the health check decides only while no operation
 * runs, and an add_rooms or remove_rooms moves roomsReplicas while it runs. Undefined until the
 * health check's first decision (README: Ready waits for it).
 */
export function desiredInForce(s: Scheduler, findVersion: FindVersion, maxRooms?: number): { desired?: number; reason?: string } {
  const decided = s.status?.autoscaling?.desired;
  const { autoscaling } = activeDefinition(s, findVersion);
  if (decided === undefined || autoscaling?.enabled === true) return { desired: decided };
  // Without autoscaling the count depends on no room: the counts are left out.
  const { desired, reason } = desiredRooms({
    roomsReplicas: s.spec.roomsReplicas, autoscaling, counts: { ready: 0, occupied: 0 }, available: 0, now: 0, maxRooms, lastDesired: decided,
  });
  return { desired, reason };
}

/**
 * `findVersion` reads the active version (from the cache), whose maxMatches and autoscaling the
 * rooms run with; `maxRooms`: ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER (desiredInForce).
 */
export function computeSchedulerStatus(s: Scheduler, ops: readonly Operation[], rooms: readonly GameRoom[], now: number, findVersion: FindVersion, maxRooms?: number): SchedulerStatus {
  const state = computeState(s, ops);
  const counts = { current: 0, pending: 0, unready: 0, ready: 0, occupied: 0, allocated: 0, active: 0, terminating: 0, error: 0, matches: 0, matchSlots: 0, silent: 0 };
  const maxMatches = roomsMaxMatches(s, findVersion);
  const byVersion: Record<string, number> = {};
  // Rooms a rolling update never replaces while they are held: by version, then by status.
  const heldByVersion: Record<string, Record<string, number>> = {};
  /** Why pending rooms wait (their GameRooms' status.reason: `Unschedulable: 0/3 nodes are available: …`), by how many. */
  const pendingWhy = new Map<string, number>();
  for (const room of rooms) {
    if (room.spec.validation) continue;
    const st = room.metadata.deletionTimestamp ? 'terminating' : countedStatus(room.status) ?? 'pending';
    if (st === 'terminated') continue;
    if (st in counts) counts[st as keyof typeof counts]++;
    const why = st === 'pending' ? room.status?.reason : undefined;
    if (why) pendingWhy.set(why, (pendingWhy.get(why) ?? 0) + 1);
    if (st !== 'terminating') {
      counts.current++;
      if (isMarkedSilent(room)) counts.silent++;
      counts.matches += roomMatchCount({ status: st, runningMatches: room.status?.runningMatches, allocationOpen: openAllocation(room.status) !== undefined }, maxMatches);
      if (isServing(st)) counts.matchSlots += maxMatches;
      byVersion[room.spec.version] = (byVersion[room.spec.version] ?? 0) + 1;
      if (st === 'occupied' || st === 'allocated' || st === 'active') {
        const held = (heldByVersion[room.spec.version] ??= {});
        held[st] = (held[st] ?? 0) + 1;
      }
    }
  }
  // Majors are read once a version, not once a room (thousands of rooms share a few versions).
  let oldMajor = 0;
  const oldHeld: Record<string, number> = {};
  const activeVersion = s.status?.version;
  for (const [version, n] of Object.entries(byVersion)) {
    if (!activeVersion || !isOtherMajor(version, { activeVersion })) continue;
    oldMajor += n;
    for (const [st, m] of Object.entries(heldByVersion[version] ?? {})) oldHeld[st] = (oldHeld[st] ?? 0) + m;
  }
  const { desired } = desiredInForce(s, findVersion, maxRooms);
  const last = [...ops].sort(compareQueueOrder).reduce<Operation | undefined>((acc, op) => {
    const t = (o: Operation) => Date.parse(o.status?.startedAt ?? o.spec.enqueuedAt) || 0;
    return !acc || t(op) >= t(acc) ? op : acc;
  }, undefined);
  const lastDone = lastFinal(ops);
  // A spec change whose version operation failed stays in the spec (kubectl shows it), while the
  // active version, not the spec, runs: nothing is pending, and the spec is not what runs either.
  // So does one whose version operation was canceled (or evicted) before it made the version.
  const lastVersioning = lastFinal(ops.filter((op) => op.spec.definitionName === 'create_new_scheduler_version'));
  const unapplied = state !== 'pending-changes' && lastVersioning && ['error', 'canceled', 'evicted'].includes(operationStatusOf(lastVersioning)) ? lastVersioning : undefined;
  const failedChange = unapplied?.metadata.name;
  const howEnded = unapplied ? ENDED_WORDS[operationStatusOf(unapplied) as 'error' | 'canceled' | 'evicted'] : '';
  // A change whose operation is gone (deleted while it ran, which stops it as a cancel does)
  // leaves the spec holding what no version has, with no operation to say so.
  const activeDefinition = activeVersion && !unapplied && state === 'in-sync' ? findVersion(s.metadata.name as string, activeVersion)?.spec.definition : undefined;
  // The fields changed ('' for none), as a change asked for through the API would build on them.
  const orphanChange = activeDefinition === undefined ? undefined : describeChange(withCountInForce(activeDefinition, s.spec), s.spec) || undefined;
  // Or one whose version was made, but whose switch to it ended without making it active.
  const declined = orphanChange ? declinedSwitch(ops, lastVersioning, activeVersion) : undefined;
  // Stuck: an operation whose lease expired, while it is the latest outcome (Degraded follows the
  // latest outcome: a failover long ago, followed by finished operations, degrades nothing now).
  const stuck = ops.find((op) => isActive(op) && isStuck(op)) ?? (lastDone && isStuck(lastDone) ? lastDone : undefined);
  // The operation that ended last, when it failed (one its scheduler's deletion stopped did not).
  const failure = lastDone && failed(lastDone) ? lastDone : undefined;
  const nowIso = new Date(now).toISOString();
  const generation = s.metadata.generation ?? 1;
  const cond = (type: string, ok: boolean, reason: string, message: string): Condition => ({
    type, status: ok ? 'True' : 'False', reason, message, observedGeneration: generation, lastTransitionTime: nowIso,
  });
  const ready = counts.ready + counts.occupied + counts.allocated + counts.active;
  // No version yet: nothing of the spec is applied and nothing rolls out, whatever the rooms.
  const create = state === 'creating' || state === 'on-error' ? lastCreate(ops) : undefined;
  const createEnded = create && state === 'on-error'
    ? `operation ${create.metadata.name as string} (create_scheduler) ${ENDED_WORDS[operationStatusOf(create) as 'error' | 'canceled' | 'evicted']}; Degraded says why and what to do` : '';
  const conditions = [
    // No desired count yet (create_scheduler ended, the health check has not decided): nothing
    // says the rooms are enough, so `kubectl wait --for=condition=Ready` must not pass on 0 rooms.
    cond(SchedulerConditionType.Ready, state === 'in-sync' && desired !== undefined && ready >= desired,
      state === 'in-sync' ? (desired !== undefined && ready >= desired ? ConditionReason.InSync : ConditionReason.RoomsNotReady) : stateReason(state),
      `${servingCount(ready, desired)} ready, allocated, active or occupied${desired === undefined ? ' (no desired count decided yet)' : ''}${silentWords(counts.silent)}; state ${state}${desired !== undefined && ready < desired ? pendingWords(pendingWhy, s.metadata.name as string) : ''}`),
    // Each reason explains the condition's current status (True and False have their own).
    state === 'creating' ? cond(SchedulerConditionType.PendingChanges, true, ConditionReason.Creating, 'no version yet: create_scheduler, queued or running, makes v1.0.0 from the spec')
      : state === 'on-error' ? cond(SchedulerConditionType.PendingChanges, false, ConditionReason.CreateFailed, `the spec was not applied: no version was made, as ${createEnded}`)
      // A change made now (kubectl scale, edit or patch) is accepted by the API server and never applied.
      : state === 'terminating' ? cond(SchedulerConditionType.PendingChanges, false, ConditionReason.Terminating,
        `the scheduler is being deleted: no change of its spec is applied any more (kubectl scale, edit and patch are accepted and ignored); its rooms are removed, then the Scheduler; to run the game again, create the scheduler again once it is gone`)
      : cond(SchedulerConditionType.PendingChanges, state === 'pending-changes',
      state === 'pending-changes' ? ConditionReason.SpecChanged : failedChange || orphanChange ? ConditionReason.SpecChangeFailed : ConditionReason.VersionMatchesSpec,
      state === 'pending-changes' ? 'a version operation is queued or running'
        : failedChange ? `the spec's last change was not applied: operation ${failedChange} (create_new_scheduler_version) ${howEnded} (kubectl get rkop ${failedChange} -o yaml shows why); `
          + `the active version ${s.status?.version ?? '(none)'} runs: fix the spec, or set it back to that version's`
          : declined ? `the spec's last change (${orphanChange ?? ''}) was not applied: version ${declined.version} was made of it, but operation ${declined.id} (switch_active_version) ${declined.how}; `
            + `the active version ${s.status?.version ?? '(none)'} runs: switch to ${declined.version} (PUT /schedulers/${s.metadata.name as string} with {"version": "${declined.version}"}), or set the spec back to the active version's; a change sent now builds on the active version`
          : orphanChange ? `the spec's last change (${orphanChange}) was not applied: its create_new_scheduler_version is gone (deleted while it ran, which stops it as a cancel does); `
            + `the active version ${s.status?.version ?? '(none)'} runs: send the change again (POST or PATCH /schedulers/${s.metadata.name as string}), or set the spec back to that version's`
          : 'the active version matches the spec'),
    state === 'creating' ? cond(SchedulerConditionType.Progressing, true, ConditionReason.Creating, 'no version is active yet: create_scheduler, queued or running, makes v1.0.0; its rooms follow')
      : state === 'on-error' ? cond(SchedulerConditionType.Progressing, false, ConditionReason.CreateFailed, `no version is active, so no rooms roll out: ${createEnded}`)
      : cond(SchedulerConditionType.Progressing, oldMajor > 0, oldMajor > 0 ? ConditionReason.ReplacingRooms : ConditionReason.RolloutComplete,
        progressMessage(counts.current - oldMajor, counts.current, oldHeld, s.status?.version, oldMajor > 0 ? heldBy(ops) : undefined)),
    cond(SchedulerConditionType.Degraded, stuck !== undefined || failure !== undefined,
      stuck ? ConditionReason.OperationStuck : failure ? ConditionReason.OperationFailed
        : lastDone && stoppedByDeletion(lastDone) ? ConditionReason.OperationStoppedByDeletion : ConditionReason.LastOperationDidNotFail,
      stuck ? stuckMessage(stuck) : failure
        ? failedMessage(failure, s.status?.version)
        : notFailedMessage(lastDone, lastFinal(ops.filter(failed)))),
  ];
  return {
    state,
    observedGeneration: generation,
    conditions: mergeConditions(s.status?.conditions ?? [], conditions),
    rooms: { ...(desired !== undefined ? { desired } : {}), ...counts, updated: counts.current - oldMajor },
    roomsByVersion: byVersion,
    ...(last ? { lastOperation: { id: last.metadata.name, definitionName: last.spec.definitionName, status: operationStatusOf(last) } } : {}),
  };
}

/** Degraded's words for a stuck operation: still shown running, or ended in error for it. */
function stuckMessage(op: Operation): string {
  const name = op.metadata.name as string;
  return isActive(op) ? `operation ${name} is stuck (its lease expired)`
    : `operation ${name} (${op.spec.definitionName}) ended in error: its operator stopped running it and its lease expired, so it was not resumed; its history (kubectl get rkop ${name} -o yaml) says what it did and what follows`;
}

/**
 * The switch a spec's version operation (`versioning`, finished) enqueued, when it ended without
 * making its version active (canceled, failed, evicted); undefined otherwise.
 */
function declinedSwitch(ops: readonly Operation[], versioning: Operation | undefined, activeVersion: string | undefined): { id: string; version: string; how: string } | undefined {
  if (!versioning || operationStatusOf(versioning) !== 'finished') return undefined;
  const after = Date.parse(versioning.spec.enqueuedAt) || 0;
  const sw = lastFinal(ops.filter((op) => op.spec.definitionName === 'switch_active_version' && (Date.parse(op.spec.enqueuedAt) || 0) >= after));
  const version = (sw?.spec.input as { newActiveVersion?: unknown } | undefined)?.newActiveVersion;
  const status = sw ? operationStatusOf(sw) : undefined;
  if (!sw || typeof version !== 'string' || version === activeVersion || (status !== 'error' && status !== 'canceled' && status !== 'evicted')) return undefined;
  return { id: sw.metadata.name as string, version, how: ENDED_WORDS[status] };
}

/**
 * The health check's repeated failure that holds its healing back (repeated-failure.ts), if any: a
 * rollout replaces nothing while its add_rooms or remove_rooms fails again and again. A failed
 * add_rooms that kept the rooms it made moved the rollout on, and is no such failure.
 */
function heldBy(ops: readonly Operation[]): Incident | undefined {
  return HEALING_DEFINITIONS.map((d) => incidentOf(ops, d)).find((i) => i !== undefined);
}

/**
 * Why rooms wait, for the Ready condition while rooms are missing: the reason most pending rooms
 * give (their pod's own, e.g. the scheduler's `Unschedulable: 0/3 nodes are available: 3 node(s)
 * didn't match Pod's node affinity/selector.`), and where each room's is read.
 */
function pendingWords(pendingWhy: ReadonlyMap<string, number>, scheduler: string): string {
  let top: [string, number] | undefined;
  for (const e of pendingWhy) if (!top || e[1] > top[1]) top = e;
  if (!top) return '';
  const rooms = top[1] === 1 ? '1 room is pending' : `${top[1]} rooms are pending`;
  // The Kubernetes scheduler placed none of them: what decides where rooms may go is the room
  // template's and the nodes'.
  const toDo = top[0].startsWith('Unschedulable')
    ? `; no node can take ${top[1] === 1 ? 'it' : 'them'}: check the room template's affinity, toleration, nodeSelector and requests (GET /schedulers/${scheduler}) against the nodes' labels, taints and free CPU and memory (kubectl describe nodes), or add nodes`
    : '';
  return `; ${rooms}: ${top[0]} (each GameRoom's status.reason gives its own: kubectl describe rkgr -n ${scheduler})${toDo}`;
}

function progressMessage(updated: number, current: number, oldHeld: Record<string, number>, version: string | undefined, failing?: Incident): string {
  const active = version ?? '(none)';
  if (updated === current) return `every room (${current}) runs the major of the active version ${active}`;
  // Occupied, active and allocated older rooms are never replaced while held (DESIGN.md "Rooms
  // with players are protected"): saying only "replacing" would leave a user waiting on them.
  const total = Object.values(oldHeld).reduce((a, b) => a + b, 0);
  const held = total > 0 ? `; of the older rooms, ${heldRoomsWords(oldHeld)} ${total === 1 ? 'is' : 'are'} replaced once free` : '';
  if (failing) {
    const times = failing.tries === 1 ? 'once' : `${failing.tries} times in a row`;
    return `${updated} of ${counted(current, 'room')} run the major of the active version ${active}; the health check replaces the others, but its ${failing.definitionName} failed ${times} (${failing.message}): `
      + `it tries again once its backoff passes or something it depends on changes (the HealingHeld condition says when)${held}`;
  }
  return `${updated} of ${counted(current, 'room')} run the major of the active version ${active}; the health check is replacing the others${held}`;
}

function stateReason(state: SchedulerState): string {
  return state.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
}

/** Keeps lastTransitionTime of a condition whose status did not change. */
export function mergeConditions(old: readonly Condition[], next: readonly Condition[]): Condition[] {
  return next.map((c) => {
    const prev = old.find((o) => o.type === c.type);
    return prev && prev.status === c.status ? { ...c, lastTransitionTime: prev.lastTransitionTime } : c;
  });
}

/**
 * Whether `next` differs from `current` only in what counts rooms: the counts, the rooms by version
 * and the condition messages that quote them. State, generation, desired count, last operation and
 * each condition's status and reason are the same.
 */
export function onlyRoomCountsChanged(current: SchedulerStatus | undefined, next: SchedulerStatus): boolean {
  const pick = (st: SchedulerStatus | undefined) => ({
    state: st?.state,
    observedGeneration: st?.observedGeneration,
    // The count in force is no count of rooms: it is written at once.
    desired: st?.rooms?.desired,
    lastOperation: st?.lastOperation,
    conditions: (st?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })),
  });
  return stableStringify(pick(current)) === stableStringify(pick(next));
}

/** Whether the fields this controller owns differ (ignoring transition times, which merge keeps). */
export function statusChanged(current: SchedulerStatus | undefined, next: SchedulerStatus): boolean {
  const pick = (st: SchedulerStatus | undefined) => ({
    state: st?.state,
    observedGeneration: st?.observedGeneration,
    conditions: st?.conditions,
    rooms: st?.rooms,
    roomsByVersion: st?.roomsByVersion ?? {},
    lastOperation: st?.lastOperation,
  });
  return stableStringify(pick(current)) !== stableStringify(pick(next));
}

/** Whether the operation failed: it ended in error, and not because its scheduler's deletion stopped it. */
function failed(op: Operation): boolean {
  return op.status?.status === 'error' && !stoppedByDeletion(op);
}

/** The longest cause quoted from an operation's history in a condition's message. */
const CAUSE_LIMIT = 400;

/**
 * Degraded True's message: which operation failed and why (its history's cause), that the active
 * version still serves when a version change failed, and what to do.
 */
function failedMessage(op: Operation, activeVersion: string | undefined): string {
  const name = op.metadata.name as string;
  const cause = failureCause(op);
  const why = cause ? `: ${cause.length > CAUSE_LIMIT ? `${cause.slice(0, CAUSE_LIMIT)}…` : cause}` : '';
  const history = `kubectl get rkop ${name} -o yaml shows its history`;
  const active = activeVersion ?? '(none)';
  const scheduler = op.spec.schedulerName;
  const next = op.spec.definitionName === 'create_new_scheduler_version' && cause?.includes(CONFIG_ERROR) === true
    ? `the change was not applied and the active version ${active} still serves (${history}): its validation room could not start, as a Secret or ConfigMap its environment reads is missing (the error names it): `
      + `create it in the rooms' namespace ${scheduler} (kubectl -n ${scheduler} create secret generic <name> --from-literal=<key>=<value>), then apply the change (or send it) again; or drop the reference from the spec`
    : op.spec.definitionName === 'create_new_scheduler_version'
    ? `the change was not applied and the active version ${active} still serves (${history}): fix the spec and apply it again, or set it back to that version's`
    : op.spec.definitionName === 'switch_active_version'
      ? `the active version ${active} still serves (${history}): switch to a version that exists and can run`
      : op.spec.definitionName === 'create_scheduler' && activeVersion === undefined && refusedByTheCluster(cause)
        ? `no version was made (${history}). The cluster refused it (a ResourceQuota, a Pod Security or admission policy, a PriorityClass it does not have, a namespace being deleted): once that is lifted, the operator's next attempt creates the scheduler (after a backoff from ${ATTEMPT_BACKOFF_MS / 1000} s, doubling up to ${ATTEMPT_BACKOFF_MAX_MS / 60_000} min; sending the same definition again, POST /schedulers/${op.spec.schedulerName}, makes it at once)`
      : op.spec.definitionName === 'create_scheduler' && activeVersion === undefined
        ? `no version was made (${history}). Once its cause is fixed, create the scheduler again: change its spec (a new generation: PATCH /schedulers/${op.spec.schedulerName}, kubectl edit), or delete it and create it again with the same definition (the same definition sent again is no change)`
        : `${history}; this clears once a later operation of the scheduler ends without failing`;
  return `operation ${name} (${op.spec.definitionName}) failed${why}; ${next}`;
}

/**
 * Degraded False's message: the operation that ended last and how (it did not fail, or the
 * scheduler's deletion stopped it), and the last failure still in the history, which no longer
 * degrades the scheduler.
 */
function notFailedMessage(lastDone: Operation | undefined, lastFailed: Operation | undefined): string {
  if (!lastDone) return 'no ended operation of this scheduler is kept (none has ended yet, or their history was deleted: by the retention of operations or with kubectl delete rkop); none is stuck';
  const status = operationStatusOf(lastDone);
  const how = stoppedByDeletion(lastDone) ? "was stopped by the scheduler's deletion, which removes its rooms and versions: nothing failed and nothing is left to do"
    : status === 'canceled' || status === 'evicted' ? `was ${status}` : status;
  const earlier = lastFailed ? `; operation ${lastFailed.metadata.name as string} (${lastFailed.spec.definitionName}) failed before it` : '';
  return `the operation that ended last, ${lastDone.metadata.name as string} (${lastDone.spec.definitionName}), ${how}${earlier}; none is stuck`;
}
