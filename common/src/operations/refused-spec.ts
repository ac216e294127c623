/**
 * A Scheduler spec whose version change was refused (pure but for the reads it is given). The spec
 * then holds a definition no version has; a change asked for through the HTTP API, or an
 * add_rooms / remove_rooms, builds on the active version instead, as in Maestro, where a refused
 * version never existed.
 */
import { isStuck, nextAttemptId } from './attempts';
import { newVersionOperationId } from './operation-id';
import type { Operation } from '../generated/resources';

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

/** Stuck attempts are followed to their successors; more than this many is no verdict. */
const ATTEMPTS_FOLLOWED = 20;

/**
 * The verdict on a spec generation's version change: its first attempt, or the successor of each
 * stuck one; undefined while an attempt is still to come (a stuck one's successor not enqueued yet).
 */
async function lastAttempt(firstId: string, read: (id: string) => Promise<OperationRead | undefined> | OperationRead | undefined): Promise<OperationRead | undefined> {
  let id = firstId;
  for (let i = 0; i < ATTEMPTS_FOLLOWED; i++) {
    const op = await read(id);
    if (!op || !isStuck(op)) return op;
    id = nextAttemptId(id);
  }
  return undefined;
}

/**
 * What a change builds on after the spec was refused: the active version's definition, with the
 * room count the health check runs the fleet by (the spec's `roomsReplicas`, in force whatever the
 * version; the autoscaling in force is the active version's), so that dropping the refused
 * definition adds or removes no room, and none of it, its autoscaling included, comes back.
 */
export function baseAfterRefusal<S extends { roomsReplicas?: number }>(active: S, spec: S): S {
  const base = { ...active };
  delete base.roomsReplicas;
  return { ...base, ...(spec.roomsReplicas !== undefined ? { roomsReplicas: spec.roomsReplicas } : {}) };
}

/** How `refusedSpecBase` reads: the operation of an id (from a cache or the API), a version's definition. */
export interface RefusalReads<S> {
  operation(id: string): Promise<OperationRead | undefined> | OperationRead | undefined;
  activeDefinition(version: string): Promise<S | undefined>;
}

/**
 * When the version change made from a Scheduler's current spec generation was refused
 * (`refusedSpec`, on its last attempt), the definition a change asked for through the API builds on
 * (`baseAfterRefusal`) and the active version it comes from; else undefined (build on the spec).
 */
export async function refusedSpecBase<S extends { roomsReplicas?: number }>(
  s: { metadata: { uid?: string; generation?: number }; status?: { version?: string }; spec: S },
  read: RefusalReads<S>,
): Promise<{ definition: S; version: string } | undefined> {
  const version = s.status?.version;
  if (!s.metadata.uid || !version) return undefined;
  if (!refusedSpec(await lastAttempt(newVersionOperationId(s.metadata.uid, s.metadata.generation ?? 0), (id) => read.operation(id)))) return undefined;
  const active = await read.activeDefinition(version);
  return active ? { definition: baseAfterRefusal(active, s.spec), version } : undefined;
}
