/**
 * A Scheduler spec whose version change was refused (pure but for the reads it is given). The spec
 * then holds a definition no version has; a change asked for through the HTTP API, or an
 * add_rooms / remove_rooms, builds on the active version instead, as in Maestro, where a refused
 * version never existed.
 */
import { isStuck, nextAttemptId } from './attempts';
import { newVersionOperationId } from './operation-id';
import type { Operation, SchedulerSpec } from '../generated/resources';
import { classifyChange } from '../resources/scheduler-change';

/** What is read of an operation: its status and conditions. */
type OperationRead = Pick<Operation, 'status'>;

/**
 * Whether `op`, the last attempt of the create_new_scheduler_version of a Scheduler's current spec
 * generation, refused that spec: it ended without making a version (`error`, `canceled`), and was
 * not stuck (its operator stopped, or lost the API server, mid-way: that is no verdict on the
 * spec, and another attempt follows).
 */
export function refusedSpec(op: OperationRead | undefined): boolean {
  const status = op?.status?.status;
  return op !== undefined && (status === 'error' || status === 'canceled') && !isStuck(op);
}

/** At most this many attempts of one change are followed. */
const ATTEMPTS_FOLLOWED = 20;

/**
 * The last attempt of a spec generation's version change: the first, then each successor there is
 * (another attempt after a stuck one, or the same change sent again after a refusal). `op` is
 * undefined when there is none: not enqueued yet, or deleted.
 */
async function lastAttempt(firstId: string, read: (id: string) => Promise<OperationRead | undefined> | OperationRead | undefined): Promise<{ id: string; op: OperationRead | undefined }> {
  let id = firstId;
  let op = await read(id);
  for (let i = 0; i < ATTEMPTS_FOLLOWED; i++) {
    const nextId = nextAttemptId(id);
    const next = await read(nextId);
    if (!next) break;
    id = nextId;
    op = next;
  }
  return { id, op };
}

/**
 * A version's definition with the room count the health check runs the fleet by (the spec's
 * `roomsReplicas`, in force whatever the version; the autoscaling in force is the version's). What
 * a change builds on after the spec was refused (`active`: the active version's), so that dropping
 * the refused definition adds or removes no room, and none of it, its autoscaling included, comes
 * back; and what a switch writes into the spec, so that it adds or removes no room.
 */
export function withCountInForce<S extends { roomsReplicas?: number }>(active: S, spec: S): S {
  const base = { ...active };
  delete base.roomsReplicas;
  return { ...base, ...(spec.roomsReplicas !== undefined ? { roomsReplicas: spec.roomsReplicas } : {}) };
}

/** `RefusalReads.differs` for Scheduler specs: any change a version would be made for. */
export function schedulerSpecsDiffer(a: SchedulerSpec, b: SchedulerSpec): boolean {
  return classifyChange(a, b) !== 'none';
}

/** How `refusedSpecBase` reads: the operation of an id (from a cache or the API), a version's definition, and whether two definitions differ. */
export interface RefusalReads<S> {
  operation(id: string): Promise<OperationRead | undefined> | OperationRead | undefined;
  activeDefinition(version: string): Promise<S | undefined>;
  differs(a: S, b: S): boolean;
}

/**
 * When the version change made from a Scheduler's current spec generation was refused
 * (`refusedSpec`, on its last attempt), the definition a change asked for through the API builds on
 * (`withCountInForce`), the active version it comes from, the last attempt (the same change sent
 * again is its successor), and how the change ended (`how`: "failed", "was canceled"...); else
 * undefined (build on the spec). A stuck last attempt is no verdict: its successor is still to
 * come. A generation that was versioned (its operation was enqueued) whose operation is gone,
 * deleted while it ran (which stops it as a cancel does) or pruned, counts as refused when the spec
 * holds what the active version does not: no version has it. So does one whose operation made a
 * version but whose switch to it was canceled, failed or is gone (`declinedSwitch`): the next
 * change builds on what runs, not on the version declined (switching to it stays a PUT away).
 */
export async function refusedSpecBase<S extends { roomsReplicas?: number }>(
  s: { metadata: { uid?: string; generation?: number }; status?: { version?: string; versionedGeneration?: number }; spec: S },
  read: RefusalReads<S>,
): Promise<{ definition: S; version: string; lastAttempt: string; how: string } | undefined> {
  const version = s.status?.version;
  if (!s.metadata.uid || !version) return undefined;
  const generation = s.metadata.generation ?? 0;
  const last = await lastAttempt(newVersionOperationId(s.metadata.uid, generation), (id) => read.operation(id));
  const gone = last.op === undefined && (s.status?.versionedGeneration ?? 0) >= generation;
  const declined = last.op?.status?.status === 'finished' ? await declinedSwitch(last.op, read) : undefined;
  const how = gone ? 'was deleted while it ran' : declined ?? (refusedSpec(last.op) ? ENDED[last.op?.status?.status as 'error' | 'canceled'] : undefined);
  if (how === undefined) return undefined;
  const active = await read.activeDefinition(version);
  if (!active) return undefined;
  const definition = withCountInForce(active, s.spec);
  // A version operation that ended refusing the spec is a verdict; a missing operation or switch
  // is one only while the spec holds what the active version does not.
  return refusedSpec(last.op) || read.differs(definition, s.spec) ? { definition, version, lastAttempt: last.id, how } : undefined;
}

const ENDED = { error: 'failed', canceled: 'was canceled' } as const;

/**
 * Maestro's words for the switch a create_new_scheduler_version enqueued (lower case): new-version.ts
 * writes them, `declinedSwitch` reads them back, and Maestro's clients parse them too.
 */
export function switchEnqueuedLine(id: string): string {
  return `enqueued switch active version operation with id: ${id}`;
}
const SWITCH_ENQUEUED = /^enqueued switch active version operation with id: (\S+)$/;

/**
 * How the switch that a finished create_new_scheduler_version enqueued declined its version: it
 * was canceled or failed (not stuck), or is gone (deleted while pending or running); undefined
 * while it is to run, ran, or is stuck. The version it made then exists, inactive.
 */
async function declinedSwitch(op: OperationRead, read: Pick<RefusalReads<unknown>, 'operation'>): Promise<string | undefined> {
  const id = (op.status?.executionHistory ?? []).map((h) => SWITCH_ENQUEUED.exec(h.event)?.[1]).filter((m) => m !== undefined).pop();
  if (id === undefined) return undefined;
  const sw = await read.operation(id);
  if (sw === undefined) return `made a version whose switch, operation ${id}, is gone`;
  return refusedSpec(sw) ? `made a version whose switch, operation ${id}, ${ENDED[sw.status?.status as 'error' | 'canceled']}` : undefined;
}
