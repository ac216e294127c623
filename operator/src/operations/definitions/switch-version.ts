/**
 * switch_active_version: make a version the service created the active one. A minor switch
 * touches no room. A major switch replaces the rooms of other majors in batches of `maxSurge`:
 * each batch's new rooms must be ready before as many old rooms go, so the fleet never drops
 * below its size; occupied old rooms are never deleted — they are left to the health check,
 * which replaces each once it is free again. No rollback (spec).
 */
import type { Scheduler, SchedulerSpec } from '../../../../common/src/generated/resources';
import { apiStatus, isNotFound } from '../../../../common/src/kube/clients';
import { classifyChange } from '../../domain/versioning';
import { chooseRoomsToRemove } from '../../rooms/domain/removal-order';
import { isOtherMajor } from '../../rooms/domain/version-major';
import { RoomManager } from '../../rooms/room-manager';
import type { ExecutionContext, OperationDefinition } from '../execution';
import { loadScheduler, loadVersion, versionObjectName, waitUntil } from './shared';
import { computeMaxSurge } from '../../rooms/domain/health-plan';

export function targetVersionOf(input: Record<string, unknown>): string | undefined {
  const v = input.newActiveVersion ?? input.version;
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null) {
    const spec = (v as { spec?: { version?: unknown } }).spec;
    if (typeof spec?.version === 'string') return spec.version;
  }
  return undefined;
}

export const switchVersionDefinition: OperationDefinition = {
  name: 'switch_active_version',

  async execute(ctx: ExecutionContext): Promise<void> {
    const name = ctx.schedulerName;
    const target = targetVersionOf(ctx.input);
    if (!target) throw new Error('input.newActiveVersion is missing');
    let scheduler = await loadScheduler(ctx);
    if (scheduler.metadata.deletionTimestamp) throw new Error(`scheduler ${name} is being deleted`);
    const version = await loadVersion(ctx, target);
    if (!version) throw new Error(`version ${target} of scheduler ${name} not found: only versions the service created can be activated`);
    const previous = scheduler.status?.version;
    const definition = version.spec.definition;

    // An explicit switch makes Scheduler.spec the version's definition (what kubectl then shows).
    // The switch a new version enqueues leaves spec alone: it already matches, or the user has
    // edited it again since, and that newer edit must not be overwritten.
    if (ctx.op.spec.source !== 'operator') scheduler = await makeSpecMatch(ctx, scheduler, definition);
    const specMatches = classifyChange(scheduler.spec, definition) === 'none';
    await ctx.deps.api.patchSchedulerStatus(name, {
      status: { version: target, ...(specMatches ? { versionedGeneration: scheduler.metadata.generation } : {}) },
    });
    if (previous && previous !== target) {
      await ctx.deps.api.patchSchedulerVersionStatus(versionObjectName(name, previous), { status: { active: false } }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await ctx.deps.api.patchSchedulerVersionStatus(versionObjectName(name, target), { status: { active: true } });
    ctx.event(`Switched the active version from ${previous ?? '(none)'} to ${target}`);
    await replaceOldRooms(ctx, scheduler, target, definition);
  },
};

/** Writes the version's definition into Scheduler.spec, so kubectl shows what is active. */
async function makeSpecMatch(ctx: ExecutionContext, scheduler: Scheduler, definition: SchedulerSpec): Promise<Scheduler> {
  for (let attempt = 0; attempt < 5; attempt++) {
    if (classifyChange(scheduler.spec, definition) === 'none') return scheduler;
    try {
      return await ctx.deps.api.replaceScheduler({ ...scheduler, spec: definition });
    } catch (err) {
      if (apiStatus(err) !== 409) throw err;
      scheduler = await loadScheduler(ctx);
    }
  }
  throw new Error('could not update the scheduler spec: too many conflicts');
}

async function replaceOldRooms(ctx: ExecutionContext, scheduler: Scheduler, target: string, definition: SchedulerSpec): Promise<void> {
  const name = ctx.schedulerName;
  const rooms = new RoomManager(ctx.deps);
  const gone = new Set<string>(); // deleted by us; the cache may not show it yet
  const fleetOf = () => rooms.views(name).filter((r) => !r.validation && !r.terminating && !gone.has(r.name));
  const oldOf = () => fleetOf().filter((r) => isOtherMajor(r.version, { activeVersion: target }));
  const total = oldOf().length;
  if (total === 0) return;
  const surge = computeMaxSurge(definition.maxSurge, fleetOf().length);
  ctx.event(`Replacing ${total} rooms of older major versions, ${surge} at a time`);
  let replaced = 0;
  for (;;) {
    ctx.checkpoint();
    const old = oldOf();
    const replaceable = old.filter((r) => r.status !== 'occupied');
    if (replaceable.length === 0) {
      if (old.length > 0) ctx.event(`${old.length} occupied rooms of older versions remain; each is replaced once it is free again`);
      break;
    }
    const batch = Math.min(surge, replaceable.length);
    const result = await rooms.createRooms({ scheduler, version: target, definition, count: batch, signal: ctx.signal });
    if (result.failure) throw new Error(`could not create replacement rooms: ${result.failure}`);
    const ready = await waitUntil(ctx, () => {
      const states = result.created.map((id) => ctx.deps.caches.rooms.get(id, name)?.status);
      const failed = states.find((s) => s?.status === 'error');
      if (failed) return { ok: false as const, why: failed.reason ?? 'room in error' };
      return states.every((s) => s?.status === 'ready' || s?.status === 'occupied') ? { ok: true as const } : undefined;
    }, ctx.deps.config.roomInitTimeout, 100);
    if (!ready) throw new Error(`replacement rooms did not become ready within ${Math.round(ctx.deps.config.roomInitTimeout / 1000)}s`);
    if (!ready.ok) throw new Error(`a replacement room failed: ${ready.why}`);
    const choice = chooseRoomsToRemove(oldOf(), batch, ctx.deps.now(), {
      pingTimeoutMs: ctx.deps.config.roomPingTimeout, activeVersion: target, otherMajorOnly: true,
    });
    for (const room of choice.remove) {
      const rv = ctx.deps.caches.rooms.get(room.name, name)?.metadata.resourceVersion;
      if (await rooms.deleteRoom(name, room.name, rv)) {
        gone.add(room.name);
        replaced++;
      }
    }
    ctx.event(`Replaced ${replaced}/${total} rooms`);
  }
}
