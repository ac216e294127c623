/**
 * switch_active_version: make a version the service created the active one, and end. A switch
 * replaces no room itself: rooms of another major are replaced by the health check's rollout
 * (health-plan.ts; maxSurge at a time, occupied rooms last, never below the desired ready rooms),
 * as Maestro and a Deployment do, so a switch never holds up the next version change. The
 * Scheduler's Progressing condition and `status.rooms.updated` show the rollout. Then the versions
 * beyond the history limit go. No rollback (spec).
 */
import type { Scheduler, SchedulerSpec } from '../../../../common/src/generated/resources';
import { apiStatus, isJsonPatchNotApplied, isNotFound } from '../../../../common/src/kube/clients';
import { classifyChange, describeChange } from '../../../../common/src/resources/scheduler-change';
import { SCHEDULER_LABEL } from '../../../../common/src/resources/labels';
import { nameList } from '../../../../common/src/text/name-list';
import { isOtherMajor } from '../../rooms/domain/version-major';
import { RoomManager } from '../../rooms/room-manager';
import { SchedulerBeingDeleted, type ExecutionContext, type OperationDefinition } from '../execution';
import { isFinalOperationStatus, OperationDefinition as OperationName, operationStatusOf } from '../../../../common/src/resources/operation-names';
import { newVersionOperationId } from '../../../../common/src/operations/operation-id';
import { schedulerEvent } from '../../events';
import { versionObjectName } from '../../../../common/src/resources/scheduler-version';
import { listVersions, loadScheduler, loadVersion, madeForScheduler } from './shared';
import { withCountInForce } from '../../../../common/src/operations/refused-spec';
import { versionsBeyondHistory } from '../../domain/version-history';
import { counted } from '../../../../common/src/text/counted';

export const switchVersionDefinition: OperationDefinition = {
  name: OperationName.SwitchActiveVersion,

  async execute(ctx: ExecutionContext): Promise<void> {
    const name = ctx.schedulerName;
    const target = ctx.inputOf(OperationName.SwitchActiveVersion).newActiveVersion;
    let scheduler = await loadScheduler(ctx);
    if (scheduler.metadata.deletionTimestamp) throw new SchedulerBeingDeleted(name);
    const version = await loadVersion(ctx, target);
    if (!version) throw new Error(`version ${target} of scheduler ${name} not found: only versions the service created can be activated; GET /schedulers/${name}/versions (or kubectl get rksv -l ${SCHEDULER_LABEL}=${name}) lists them`);
    if (!madeForScheduler(version, scheduler)) {
      const object = version.metadata.name as string;
      throw new Error(`version ${target} of scheduler ${name} was not made by Roomkeeper for this scheduler: SchedulerVersion ${object} has no ownerReference to Scheduler ${name} (uid ${scheduler.metadata.uid ?? 'unknown'}); `
        + `it was written by hand, or left by an earlier scheduler of the same name, and was never validated. Only versions the service created can be activated: to run that definition, change the Scheduler's spec `
        + `(kubectl edit rks ${name}, or POST /schedulers/${name}), which makes and validates a version of it; kubectl delete rksv ${object} removes the object`);
    }
    const previous = scheduler.status?.version;
    const definition = version.spec.definition;

    // An explicit switch makes Scheduler.spec the version's definition (what kubectl then shows).
    // The switch a new version enqueues leaves spec alone: it already matches, or the user has
    // edited it again since, and that newer edit must not be overwritten.
    // The room count stays the one in force (the spec's, whatever the version: README "Versions").
    if (ctx.op.spec.source !== 'operator') {
      const running = previous && previous !== target ? (await loadVersion(ctx, previous))?.spec.definition : undefined;
      scheduler = await makeSpecMatch(ctx, scheduler, target, definition, running);
      const count = scheduler.spec.roomsReplicas;
      if (definition.roomsReplicas !== undefined && count !== undefined && definition.roomsReplicas !== count) {
        ctx.event(`roomsReplicas stays ${count}, the count in force (version ${target} was made with ${definition.roomsReplicas}): a switch adds or removes no room; to change it, PATCH /schedulers/${name} with {"roomsReplicas": n} or kubectl scale`);
      }
    }
    // Whether the spec is versioned by this switch. An explicit switch keeps the count in force,
    // whatever the version was made with. The switch a new version enqueued, only when the spec is
    // that version's definition, its count included: a count changed while the change was
    // validated (kubectl scale, an add_rooms) is a change of its own, versioned next by the
    // scheduler controller as any count change is (the version said one count, the spec another).
    const specMatches = classifyChange(scheduler.spec, ctx.op.spec.source === 'operator' ? definition : withCountInForce(definition, scheduler.spec)) === 'none';
    // The versions' flags first and the scheduler's active version last: once GET shows the new
    // version, nothing of the switch but its final status is left to write.
    if (previous && previous !== target) {
      await ctx.deps.api.patchSchedulerVersionStatus(versionObjectName(name, previous), { status: { active: false } }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await ctx.deps.api.patchSchedulerVersionStatus(versionObjectName(name, target), { status: { active: true } });
    await ctx.deps.api.patchSchedulerStatus(name, {
      status: { version: target, ...(specMatches ? { versionedGeneration: scheduler.metadata.generation } : {}) },
    });
    if (previous === target) {
      ctx.event(`${target} was already the active version: nothing switched`);
    } else {
      ctx.event(`Switched the active version from ${previous ?? '(none)'} to ${target}`);
      schedulerEvent(ctx.deps, name, 'VersionSwitched', 'SwitchActiveVersion', `Active version switched from ${previous ?? '(none)'} to ${target} by operation ${ctx.op.metadata.name as string}`);
    }
    const older = new RoomManager(ctx.deps).views(name)
      .filter((r) => !r.validation && !r.terminating && isOtherMajor(r.version, { activeVersion: target })).length;
    if (older > 0) {
      ctx.event(`${counted(older, 'room')} ${older === 1 ? 'runs' : 'run'} another major version than ${target}'s; the health check replaces ${older === 1 ? 'it' : 'them'} (maxSurge ${String(definition.maxSurge)}, occupied rooms once free): see the Scheduler's Progressing condition`);
    }
    // The switch is done: a version that cannot be deleted now is said, not an error of the switch.
    await pruneVersionHistory(ctx, target).catch((err: unknown) => {
      ctx.event(`Could not delete the versions beyond the history limit: ${err instanceof Error ? err.message : String(err)}; the next switch tries again`);
    });
  },
};

/** The most version names one history line lists. */
const NAMES_LISTED = 10;

/**
 * Deletes the versions beyond ROOMKEEPER_VERSION_HISTORY_LIMIT that nothing keeps
 * (domain/version-history.ts): not the active one, one a room runs, one an operation names (those
 * carry the protection finalizer) or the greatest of a major. After each switch, so the next
 * switch finishes what a crash left.
 */
async function pruneVersionHistory(ctx: ExecutionContext, active: string): Promise<void> {
  const limit = ctx.deps.config.versionHistoryLimit;
  const versions = await listVersions(ctx);
  if (versions.length <= limit) return;
  const keep = new Set<string>([active]);
  for (const v of versions) {
    if ((v.metadata.finalizers ?? []).length > 0 || v.metadata.deletionTimestamp) keep.add(v.spec.version);
  }
  for (const room of new RoomManager(ctx.deps).views(ctx.schedulerName)) keep.add(room.version);
  const victims = versionsBeyondHistory(versions.map((v) => ({ version: v.spec.version, createdAt: v.metadata.creationTimestamp as string | undefined })), { limit, keep });
  const deleted: string[] = [];
  for (const version of victims) {
    try {
      await ctx.deps.api.deleteSchedulerVersion(versionObjectName(ctx.schedulerName, version));
      deleted.push(version);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  if (deleted.length === 0) return;
  const listed = nameList(deleted, { max: NAMES_LISTED });
  ctx.event(`Deleted ${counted(deleted.length, 'old version')} beyond the history limit of ${limit} (ROOMKEEPER_VERSION_HISTORY_LIMIT; no room runs them): ${listed}`);
  schedulerEvent(ctx.deps, ctx.schedulerName, 'VersionsPruned', 'SwitchActiveVersion', `Deleted ${counted(deleted.length, 'old version')} beyond the history limit of ${limit}: ${listed}`);
}

/**
 * The fields of a change the spec holds that no version has yet, beyond the count (in force
 * whatever the version): a generation the scheduler controller has not versioned (it waits while
 * a version operation, this switch, is queued or running; kubectl edits it so), or one whose
 * create_new_scheduler_version is still to run (the HTTP API enqueues its own with the write).
 * `running` is the definition of the version active before the switch. Undefined when none.
 */
function unversionedChange(ctx: ExecutionContext, scheduler: Scheduler, running: SchedulerSpec | undefined): string | undefined {
  if (!running || !scheduler.metadata.uid) return undefined;
  const generation = scheduler.metadata.generation ?? 1;
  const versioning = ctx.deps.caches.operations.get(newVersionOperationId(scheduler.metadata.uid, generation));
  const pending = generation > (scheduler.status?.versionedGeneration ?? 0) || (versioning !== undefined && !isFinalOperationStatus(operationStatusOf(versioning)));
  return pending ? describeChange(withCountInForce(running, scheduler.spec), scheduler.spec) || undefined : undefined;
}

/**
 * Writes the version's definition into Scheduler.spec, so kubectl shows what is active, with the
 * spec's roomsReplicas: the count in force whatever the version (a switch adds or removes no room).
 * A spec holding a change not versioned yet (`unversionedChange`) is left as it is: replacing it
 * would lose that change without a word; it is versioned after the switch, on the new version.
 */
async function makeSpecMatch(ctx: ExecutionContext, scheduler: Scheduler, target: string, definition: SchedulerSpec, running: SchedulerSpec | undefined): Promise<Scheduler> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const spec = withCountInForce(definition, scheduler.spec);
    if (classifyChange(scheduler.spec, spec) === 'none') return scheduler;
    const unversioned = unversionedChange(ctx, scheduler, running);
    if (unversioned !== undefined) {
      ctx.event(`Left the spec as it is, not replaced by ${target}'s definition: it holds a change no version has yet (generation ${scheduler.metadata.generation ?? 1}: ${unversioned}); `
        + `the scheduler controller takes it up once no version operation is queued or running, on ${target}`);
      return scheduler;
    }
    // Conditional on the spec's generation (a JSON Patch `test`), not on the resourceVersion: the
    // status writes that move it all the time under load never make the switch lose (a replace
    // lost five times in a row on a loaded machine, and the switch ended in error); only another
    // change of the spec does, and then it reads again.
    const generation = scheduler.metadata.generation ?? 1;
    try {
      return await ctx.deps.api.jsonPatchScheduler(ctx.schedulerName, [
        { op: 'test', path: '/metadata/generation', value: generation },
        { op: 'replace', path: '/spec', value: spec },
      ]);
    } catch (err) {
      if (apiStatus(err) !== 409 && !isJsonPatchNotApplied(err)) throw err;
      scheduler = await loadScheduler(ctx);
    }
  }
  throw new Error(`could not write ${target}'s definition into the scheduler spec: the spec was changed 5 times while this switch wrote it (kubectl edits or other changes); switch again once they have settled`);
}
