/**
 * Steps several operation definitions share: reading the scheduler and its versions fresh from
 * the API, writing scheduler status, waiting on a condition while honouring cancellation.
 */
import type { Scheduler, SchedulerSpec, SchedulerVersion } from '../../../../common/src/generated/resources';
import { isNotFound, retryTransient } from '../../../../common/src/kube/clients';
import { API_VERSION } from '../../../../common/src/resources/api-group';
import { SCHEDULER_LABEL } from '../../../../common/src/resources/labels';
import { recordedActiveVersion, versionObjectName } from '../../../../common/src/resources/scheduler-version';
import type { ExecutionContext } from '../execution';
import { cachedVersionsOf } from '../../deps';

/**
 * The scheduler, read from the API (not the cache): operations act on the latest state. Reads
 * are retried through transient answers (429, 5xx, no answer), here and below.
 */
export async function loadScheduler(ctx: ExecutionContext): Promise<Scheduler> {
  try {
    return await retryTransient(() => ctx.deps.api.getScheduler(ctx.schedulerName), READ_ATTEMPTS);
  } catch (err) {
    if (isNotFound(err)) throw new Error(`scheduler ${ctx.schedulerName} not found`, { cause: err });
    throw err;
  }
}

export async function loadVersion(ctx: ExecutionContext, version: string): Promise<SchedulerVersion | undefined> {
  try {
    return await retryTransient(() => ctx.deps.api.getSchedulerVersion(versionObjectName(ctx.schedulerName, version)), READ_ATTEMPTS);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function listVersions(ctx: ExecutionContext): Promise<SchedulerVersion[]> {
  const listed = (await retryTransient(() => ctx.deps.api.listSchedulerVersions(ctx.schedulerName), READ_ATTEMPTS)).items;
  // One written by hand without the label (kubectl create) is the scheduler's all the same (its
  // name is the scheduler's and its version): numbered around, and deleted with the scheduler.
  const names = new Set(listed.map((v) => v.metadata.name));
  const unlabelled = cachedVersionsOf(ctx.deps.caches, ctx.schedulerName).filter((v) => !names.has(v.metadata.name) && !v.metadata.deletionTimestamp);
  return [...listed, ...unlabelled];
}

/**
 * Whether Roomkeeper made the version for this scheduler (`newVersionObject`: an ownerReference to
 * the Scheduler's uid). One written by hand, or left by an earlier scheduler of the same name, is
 * never made active: only what the Scheduler's spec held, validated, runs.
 */
export function madeForScheduler(version: SchedulerVersion, scheduler: Scheduler): boolean {
  return (version.metadata.ownerReferences ?? []).some((o) => o.kind === 'Scheduler' && o.uid === scheduler.metadata.uid);
}

/** Whether a Scheduler owns the version (its ownerReference): this one, or an earlier one of the same name. */
export function ownedByAScheduler(version: SchedulerVersion): boolean {
  return (version.metadata.ownerReferences ?? []).some((o) => o.kind === 'Scheduler');
}

/** How long the versions of an earlier Scheduler of the same name are waited for (the garbage collector removes them). */
const EARLIER_VERSIONS_REMOVAL_MS = 60_000;

/**
 * Waits until no version an earlier Scheduler of this name owned is left: the garbage collector
 * (kube-controller-manager) removes them once their owner is gone, within seconds. Throws, saying
 * what to do, when some are still there after EARLIER_VERSIONS_REMOVAL_MS.
 */
export async function awaitEarlierSchedulersVersions(ctx: ExecutionContext, scheduler: Scheduler): Promise<void> {
  const earlier = async () => {
    const left = (await listVersions(ctx)).filter((v) => ownedByAScheduler(v) && !madeForScheduler(v, scheduler));
    return left.length > 0 ? left : undefined;
  };
  const first = await earlier();
  if (!first) return;
  const names = (vs: SchedulerVersion[]) => vs.map((v) => v.metadata.name as string).join(', ');
  if (await awaitRemoved(ctx, `versions ${names(first)} of an earlier scheduler of this name`, earlier, EARLIER_VERSIONS_REMOVAL_MS)) return;
  const left = await earlier() ?? [];
  throw new Error(`the versions ${names(left)} of an earlier scheduler named ${ctx.schedulerName} are still there after ${EARLIER_VERSIONS_REMOVAL_MS / 1000} s: `
    + `their owner is gone, and kube-controller-manager's garbage collector removes them (check that it runs), or delete them (kubectl delete schedulerversions ${names(left).replace(/, /g, ' ')}); `
    + `then change the Scheduler's spec (a new generation) to create the scheduler again`);
}

/**
 * The active version's object as the operator's record says (recordedActiveVersion): status.version's
 * when its SchedulerVersion says it is active, the one that says so when status.version was edited
 * (kubectl patch --subresource=status writes it): no room is made of a version no switch made
 * active. Undefined when status.version names no object and none other says it is active, or
 * several do. Read from the API server, where a switch's flags precede its status.version.
 */
export async function loadActiveVersion(ctx: ExecutionContext, scheduler: Scheduler): Promise<SchedulerVersion | undefined> {
  const named = scheduler.status?.version;
  const version = named ? await loadVersion(ctx, named) : undefined;
  if (version?.status?.active === true) return version;
  const versions = await listVersions(ctx);
  const recorded = recordedActiveVersion(named, versions);
  return versions.find((v) => v.spec.version === recorded);
}

const READ_ATTEMPTS = 10;

export function newVersionObject(scheduler: Scheduler, version: string, kind: 'initial' | 'major' | 'minor', definition: SchedulerSpec): SchedulerVersion {
  const name = scheduler.metadata.name as string;
  return {
    apiVersion: API_VERSION,
    kind: 'SchedulerVersion',
    metadata: {
      name: versionObjectName(name, version),
      labels: { [SCHEDULER_LABEL]: name },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Scheduler', name, uid: scheduler.metadata.uid as string, blockOwnerDeletion: false }],
    },
    spec: { scheduler: name, version, kind, definition },
  };
}

export interface WaitOptions {
  /** The pause between two checks (ms). */
  intervalMs?: number;
  /** How much is left to wait for, read after each check. */
  remaining?: () => number;
}

/**
 * Polls `check` until it returns a value, the deadline passes (undefined), or the operation is
 * canceled. With `remaining` (how much is left to wait for), the deadline is a stall limit: it
 * starts again each time less is left, so work that goes slowly but steadily is not given up on.
 */
export async function waitUntil<T>(ctx: ExecutionContext, check: () => T | undefined, timeoutMs: number, opts: WaitOptions = {}): Promise<T | undefined> {
  const { intervalMs = 100, remaining } = opts;
  let deadline = ctx.deps.now() + timeoutMs;
  let fewest = Number.POSITIVE_INFINITY;
  for (;;) {
    ctx.checkpoint();
    const v = check();
    if (v !== undefined) return v;
    const now = ctx.deps.now();
    const left = remaining?.();
    if (left !== undefined && left < fewest) {
      fewest = left;
      deadline = now + timeoutMs;
    }
    if (now >= deadline) return undefined;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Polls `check` every `intervalMs` until it holds, `stop()` says to give up, or `timeoutMs` has
 * passed on `now`. Unlike `waitUntil` it never throws on a cancel: for waits whose caller goes on
 * either way (a rollback, a removal deciding how sure it is). Returns whether `check` held.
 */
export async function pollUntil(check: () => boolean, opts: { timeoutMs: number; intervalMs: number; stop: () => boolean; now: () => number }): Promise<boolean> {
  const deadline = opts.now() + opts.timeoutMs;
  let ok: boolean;
  while (!(ok = check()) && !opts.stop() && opts.now() < deadline) await new Promise((r) => setTimeout(r, opts.intervalMs));
  return ok;
}

/**
 * Deletes a version a rollback made, and says in the history what happened: deleted, or still
 * there until the finalizers it carries are released (the scheduler controller's protection of
 * an active version goes once the Scheduler no longer names it).
 */
export async function deleteVersionOfRollback(ctx: ExecutionContext, version: string): Promise<void> {
  let answer: unknown;
  try {
    answer = await ctx.deps.api.deleteSchedulerVersion(versionObjectName(ctx.schedulerName, version));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const finalizers = (answer as { metadata?: { finalizers?: string[] } } | undefined)?.metadata?.finalizers ?? [];
  ctx.event(finalizers.length === 0 ? `Deleted version ${version}` : `Deleting version ${version} (it goes once ${finalizers.join(', ')} ${finalizers.length === 1 ? 'is' : 'are'} released)`);
}

/** The least time a namespace is waited for: an object with a finalizer nobody releases holds it forever. */
const NAMESPACE_REMOVAL_MIN_MS = 60_000;

/** How long `awaitNamespaceRemoved` waits: the room deletion timeout, at least a minute. */
export function namespaceRemovalBudgetMs(ctx: ExecutionContext): number {
  return Math.max(ctx.deps.config.roomDeletionTimeout, NAMESPACE_REMOVAL_MIN_MS);
}

/**
 * A namespace is removed asynchronously (on a cluster, by the namespace controller, once it has
 * emptied it), and one being removed takes no new object. Waits, with the operation's history
 * saying so, until the namespace is gone: resolves to false if it is still there after
 * `namespaceRemovalBudgetMs` (the caller says what that means for its operation).
 */
export function awaitNamespaceRemoved(ctx: ExecutionContext, name: string): Promise<boolean> {
  // The namespaces cache (Roomkeeper's namespaces) answers while it still shows the namespace;
  // only once it does not is the API server asked, so "removed" is never the cache's word alone.
  // Polling the API server every 250 ms cost one GET per poll (1,586 in one real-tier e2e run).
  const read = async (): Promise<unknown> => ctx.deps.caches.namespaces.get(name) ?? ctx.deps.core.readNamespace({ name }).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
    return undefined;
  });
  return awaitRemoved(ctx, `namespace ${name}`, read, namespaceRemovalBudgetMs(ctx));
}

/**
 * Polls `read` (undefined once the object is gone) until the object named `what` is gone, saying
 * in the history that it waits and when it is gone; false once `budgetMs` has passed.
 */
export async function awaitRemoved(ctx: ExecutionContext, what: string, read: () => Promise<unknown>, budgetMs: number): Promise<boolean> {
  const deadline = ctx.deps.now() + budgetMs;
  let reported = false;
  for (;;) {
    ctx.checkpoint();
    if (await read() === undefined) {
      if (reported) ctx.event(`${what[0]?.toUpperCase() ?? ''}${what.slice(1)} removed`);
      return true;
    }
    if (ctx.deps.now() >= deadline) return false;
    if (!reported) ctx.event(`Waiting for ${what} to be removed`);
    reported = true;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * After an operation changed Scheduler.spec (a new generation), waits until the scheduler
 * controller has observed that generation: it has then enqueued the version operation the change
 * makes and written a status for it (`pending-changes`), so the status no longer reports the
 * previous generation's state (`in-sync`) once this operation ends. Honours cancellation unless
 * `duringRollback` (a rollback runs after the cancel). Returns whether the generation was observed.
 */
export async function awaitSpecObserved(ctx: ExecutionContext, generation: number | undefined, opts: { duringRollback?: boolean; timeoutMs?: number } = {}): Promise<boolean> {
  if (generation === undefined) return true;
  const observed = (): true | undefined => {
    const s = ctx.deps.caches.schedulers.get(ctx.schedulerName);
    if (!s || s.metadata.deletionTimestamp) return true; // gone or going: no version will be made
    return (s.status?.observedGeneration ?? 0) >= generation ? true : undefined;
  };
  const timeoutMs = opts.timeoutMs ?? SPEC_OBSERVED_TIMEOUT_MS;
  const ok = opts.duringRollback
    ? await pollUntil(() => observed() === true, { timeoutMs, intervalMs: 50, stop: () => ctx.isAbandoned, now: ctx.deps.now })
    : (await waitUntil(ctx, observed, timeoutMs, { intervalMs: 50 })) === true;
  if (!ok && !ctx.isAbandoned) ctx.event(`The scheduler status has not yet observed generation ${generation} of its spec`);
  return ok;
}

const SPEC_OBSERVED_TIMEOUT_MS = 30_000;

/** The number of rooms a scheduler should have before autoscaling has decided anything. */
export function initialRoomCount(def: SchedulerSpec): number {
  const base = def.roomsReplicas ?? 0;
  const a = def.autoscaling;
  if (a?.enabled) {
    const max = a.max < 0 ? Number.POSITIVE_INFINITY : a.max;
    return Math.min(Math.max(a.min, 0), max);
  }
  return base;
}

