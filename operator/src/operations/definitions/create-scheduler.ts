/**
 * create_scheduler: the scheduler's namespace, its first version (v1.0.0), its state, and its
 * first rooms. On any failure the rollback deletes everything the operation created for the
 * scheduler (spec, "Moves that are shown"); the Scheduler object itself, which the user wrote,
 * stays, marked on-error, so they can read why (a deliberate difference from Maestro, which
 * deletes its row).
 */
import { isNotFound } from '../../../../common/src/kube/clients';
import type { Scheduler, SchedulerSpec } from '../../../../common/src/generated/resources';
import { createSchedulerOperationId } from '../../../../common/src/operations/operation-id';
import { specOfDefinitionInput } from '../../../../common/src/operations/operation-inputs';
import { classifyChange } from '../../../../common/src/resources/scheduler-change';
import { toIsoString } from '../../../../common/src/kube/timestamps';
import { SCHEDULER_LABEL } from '../../../../common/src/resources/labels';
import { compareVersions, INITIAL_VERSION, nextVersion } from '../../domain/versioning';
import { parseVersion } from '../../../../common/src/resources/scheduler-version';
import { schedulerSpecsDiffer } from '../../../../common/src/operations/refused-spec';
import { RoomManager } from '../../rooms/room-manager';
import { SchedulerBeingDeleted, type ExecutionContext, type OperationDefinition } from '../execution';
import { OperationDefinition as OperationName } from '../../../../common/src/resources/operation-names';
import { awaitEarlierSchedulersVersions, awaitNamespaceRemoved, awaitRemoved, deleteVersionOfRollback, initialRoomCount, listVersions, loadScheduler, loadVersion, madeForScheduler, namespaceRemovalBudgetMs, newVersionObject, ownedByAScheduler } from './shared';
import { roomNamespaceLabels } from '../../schedulers/room-namespace';
import { counted } from '../../../../common/src/text/counted';
import { roomLimitViolations } from '../../../../common/src/validation/room-limits';

/** How long a version an earlier attempt's rollback is deleting is waited for. */
const VERSION_REMOVAL_MS = 60_000;

/** How many generations back an operation's id is looked for (a creation waits behind nothing, so few pass). */
const GENERATIONS_LOOKED_BACK = 20;

/**
 * What the creation versions as the first version, and the spec generation that is: the
 * definition in its input when the operation was asked for an earlier generation than the
 * Scheduler has now (a client that creates, sees v1.0.0 in GET at once, as in Maestro, and sends a
 * change before the operator ran the creation), so that the change gets a version of its own
 * (v1.1.0 or v2.0.0, by the operation of its generation, or the scheduler controller's, since the
 * generation is not versioned); else the spec as it is. Versioning the spec as found folded the
 * change into v1.0.0, and the change's operation found nothing to do.
 */
function initialDefinition(ctx: ExecutionContext, scheduler: Scheduler): { definition: SchedulerSpec; generation: number } {
  const generation = scheduler.metadata.generation ?? 1;
  const given = specOfDefinitionInput(ctx.inputOf(OperationName.CreateScheduler));
  if (!given || classifyChange(given, scheduler.spec) === 'none') return { definition: scheduler.spec, generation };
  const input = ctx.op.spec.input as { previousAttempt?: unknown } | undefined;
  const ids = [ctx.op.metadata.name, typeof input?.previousAttempt === 'string' ? input.previousAttempt : undefined];
  const uid = scheduler.metadata.uid ?? '';
  for (let g = generation - 1; g >= Math.max(1, generation - GENERATIONS_LOOKED_BACK); g--) {
    if (ids.includes(createSchedulerOperationId(uid, g))) return { definition: given, generation: g };
  }
  return { definition: scheduler.spec, generation };
}

export const createSchedulerDefinition: OperationDefinition = {
  name: OperationName.CreateScheduler,

  async execute(ctx: ExecutionContext): Promise<void> {
    const scheduler = await loadScheduler(ctx);
    const name = ctx.schedulerName;
    if (scheduler.metadata.deletionTimestamp) throw new SchedulerBeingDeleted(name);
    if (scheduler.status?.version) {
      ctx.event(`Scheduler already created (active version ${scheduler.status.version}); nothing to do`);
      return;
    }
    // The gateway refuses such a definition; one written past it (kubectl apply) is refused here,
    // before anything is made, as a version operation refuses it (new-version.ts).
    const tooMany = roomLimitViolations(scheduler.spec, ctx.deps.config.maxRoomsPerScheduler);
    if (tooMany.length > 0) {
      throw new Error(`nothing made: ${tooMany.map((v) => `spec.${v.field} ${v.message}`).join('; ')}; set it to at most ${ctx.deps.config.maxRoomsPerScheduler} `
        + `(kubectl scale rks/${name} --replicas=<n>, kubectl edit scheduler ${name}, or PATCH /schedulers/${name}), which creates the scheduler`);
    }
    const { definition, generation: versionedGeneration } = initialDefinition(ctx, scheduler);
    if (versionedGeneration < (scheduler.metadata.generation ?? 1)) {
      ctx.event(`The spec changed (generation ${scheduler.metadata.generation ?? 1}) after this creation was asked for (generation ${versionedGeneration}): ${INITIAL_VERSION} is the definition it was asked with, and the change is versioned next, by its own operation`);
    }
    // The namespace: ours, or fail. One that exists and is not ours is never adopted.
    let namespaceExists = false;
    try {
      const ns = await ctx.deps.core.readNamespace({ name });
      if (ns.metadata?.labels?.[SCHEDULER_LABEL] !== name) {
        throw new Error(`namespace ${name} already exists and is not managed by Roomkeeper: a scheduler's rooms live in the namespace of its name, and Roomkeeper never takes over one it did not make; `
          + `delete this scheduler (DELETE /schedulers/${name}, or kubectl delete rks ${name}: the namespace is left as it is) and create it under another name`);
      }
      namespaceExists = true;
      // Ours but being removed (an earlier attempt's rollback, a deletion of the scheduler under
      // this name): it takes no room, so it is made anew once it is gone.
      if (ns.metadata.deletionTimestamp) {
        ctx.event(`Namespace ${name} is being removed (since ${toIsoString(ns.metadata.deletionTimestamp)}); it is made anew once it is gone`);
        if (!await awaitNamespaceRemoved(ctx, name)) {
          throw new Error(`namespace ${name} is still terminating after ${Math.round(namespaceRemovalBudgetMs(ctx) / 1000)}s (an object in it is held by a finalizer? the namespace's status.conditions name what is left and which finalizers hold it: kubectl get namespace ${name} -o yaml); once it is gone, the operator's next attempt creates the scheduler (after a backoff, as its Degraded condition says)`);
        }
        namespaceExists = false;
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!namespaceExists) {
      await ctx.deps.core.createNamespace({
        body: { metadata: { name, labels: roomNamespaceLabels(name, ctx.deps.config) } },
      });
      ctx.state.createdNamespace = true;
      ctx.event(`Created namespace ${name}`);
    }
    ctx.checkpoint();

    // Versions an earlier Scheduler of this name owned are the garbage collector's to remove:
    // waited for, so that no number of theirs is taken and none is mistaken for this one's.
    await awaitEarlierSchedulersVersions(ctx, scheduler);

    // Another attempt after one that got stuck may find the version it created: reused when it
    // belongs to this Scheduler object. One an earlier attempt's rollback is deleting (held until
    // the scheduler controller releases its protection finalizer) is made anew once it is gone.
    let existing = await loadVersion(ctx, INITIAL_VERSION);
    if (existing?.metadata.deletionTimestamp) {
      ctx.event(`Version ${INITIAL_VERSION} is being deleted (since ${toIsoString(existing.metadata.deletionTimestamp)}); it is made anew once it is gone`);
      if (!await awaitRemoved(ctx, `version ${INITIAL_VERSION}`, () => loadVersion(ctx, INITIAL_VERSION), VERSION_REMOVAL_MS)) {
        throw new Error(`version ${INITIAL_VERSION} of scheduler ${name} is still being deleted after ${VERSION_REMOVAL_MS / 1000}s (its finalizers: ${(existing.metadata.finalizers ?? []).join(', ') || 'none'}); once it is gone, change the Scheduler's spec (a new generation) to create the scheduler again`);
      }
      existing = undefined;
    }
    // Versions no Scheduler owns: restored from a backup (with their ownerReferences left out, as
    // the README's restore says) or written by hand. Of them, and of the ones an earlier attempt
    // made or took, the greatest whose definition is the spec.
    const versions = (await listVersions(ctx)).filter((v) => !v.metadata.deletionTimestamp);
    const ofTheSpec = (vs: typeof versions) => vs.filter((v) => parseVersion(v.spec.version) !== undefined && !schedulerSpecsDiffer(v.spec.definition, definition))
      .sort((a, b) => compareVersions(a.spec.version, b.spec.version)).pop();
    const earlierAttempt = ofTheSpec(versions.filter((v) => madeForScheduler(v, scheduler)));
    const restored = ofTheSpec(versions.filter((v) => !ownedByAScheduler(v)));
    let version;
    if (existing && madeForScheduler(existing, scheduler)) {
      version = existing;
      ctx.event(`Version ${INITIAL_VERSION} exists already (made by an earlier attempt); reused`);
    } else if (earlierAttempt) {
      version = earlierAttempt;
      ctx.event(`Version ${earlierAttempt.spec.version} exists already (made or taken by an earlier attempt); reused`);
    } else if (restored) {
      // The version of the spec, restored: the scheduler goes on under its number (a matchmaker
      // that asks for rooms of that version finds them), and it is this Scheduler's from now on.
      version = await ctx.deps.api.patchSchedulerVersion(restored.metadata.name as string, {
        metadata: { resourceVersion: restored.metadata.resourceVersion, ownerReferences: newVersionObject(scheduler, restored.spec.version, 'initial', definition).metadata.ownerReferences },
      });
      ctx.state.adoptedVersion = restored.metadata.name;
      ctx.event(`Version ${restored.spec.version} was here, owned by no Scheduler (restored from a backup, or written by hand), with the scheduler's spec as its definition: it is the scheduler's first active version, under its number`);
    } else {
      // v1.0.0, or, when a version no Scheduler owns holds that number, the next major after every version of this name.
      const number = existing ? nextVersion(versions.map((v) => v.spec.version), INITIAL_VERSION, 'major') : INITIAL_VERSION;
      version = await ctx.deps.api.createSchedulerVersion(newVersionObject(scheduler, number, 'initial', definition));
      ctx.state.createdVersion = number;
      ctx.event(existing ? `Created version ${number} (${INITIAL_VERSION} is taken by a SchedulerVersion no Scheduler owns, whose definition is not the spec: restored from a backup, or written by hand; it is left as it is)` : `Created version ${number}`);
      const replaced = new RoomManager(ctx.deps).replacedOnRooms(definition);
      if (replaced) ctx.event(replaced);
    }
    await ctx.deps.api.patchSchedulerVersionStatus(version.metadata.name as string, { status: { active: true } });
    const first = version.spec.version;
    await ctx.deps.api.patchSchedulerStatus(name, {
      status: { version: first, versionedGeneration, createdAt: scheduler.metadata.creationTimestamp },
    });
    ctx.state.setVersion = true;
    ctx.checkpoint();

    // Rooms an earlier attempt created count towards the first rooms.
    const already = new RoomManager(ctx.deps).liveCount(name);
    if (already > 0) ctx.event(`${counted(already, 'room')} ${already === 1 ? 'exists' : 'exist'} already (made by an earlier attempt)`);
    const wanted = Math.max(0, initialRoomCount(scheduler.spec) - already);
    // One operation creates at most the add limit (issue 12, M4); the health check adds the rest
    // in add_rooms operations of at most as many rooms each.
    const count = Math.min(wanted, ctx.deps.config.addRoomsLimit);
    if (count < wanted) ctx.event(`Creating ${count} of ${counted(wanted, 'room')} (the add limit, ROOMKEEPER_ADD_ROOMS_LIMIT); the health check adds the other ${wanted - count}`);
    if (count > 0) {
      const rooms = new RoomManager(ctx.deps);
      const step = Math.max(1, Math.ceil(count / 10));
      const result = await rooms.createRooms({
        scheduler, version: first, definition, count, signal: ctx.signal,
        onCreated: (_n, created) => {
          if (created % step === 0 || created === count) ctx.event(`Created ${created}/${counted(count, 'room')}`);
        },
      });
      ctx.state.createdRooms = result.created;
      if (result.failure) throw new Error(`room creation failed after ${result.created.length}/${counted(count, 'room')}: ${result.failure}`);
      ctx.checkpoint();
    }
  },

  async rollback(ctx: ExecutionContext): Promise<void> {
    const name = ctx.schedulerName;
    const rooms = new RoomManager(ctx.deps);
    for (const room of (ctx.state.createdRooms as string[] | undefined) ?? []) {
      await rooms.deleteRoom(name, room, undefined, 'Background');
    }
    if (typeof ctx.state.createdVersion === 'string') {
      await deleteVersionOfRollback(ctx, ctx.state.createdVersion);
    }
    if (typeof ctx.state.adoptedVersion === 'string') {
      // Taken as it was found: it stays, owned by this Scheduler, and is no longer active.
      await ctx.deps.api.patchSchedulerVersionStatus(ctx.state.adoptedVersion, { status: { active: false } }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    if (ctx.state.createdNamespace) {
      await ctx.deps.core.deleteNamespace({ name }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      ctx.event(`Deleting namespace ${name} (the cluster removes it once it is empty)`);
    }
    if (ctx.state.setVersion) {
      await ctx.deps.api.patchSchedulerStatus(name, { status: { version: null } }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  },
};
