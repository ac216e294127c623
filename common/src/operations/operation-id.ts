/**
 * Operation ids. Every id is UUID-shaped, as Maestro's are. A new id is time-ordered (UUIDv7,
 * RFC 9562): `kubectl get rkop` lists by name, so the newest operation comes last. Operations that both the gateway
 * and the operator may enqueue for the same cause (a Scheduler created, its spec changed to a new
 * generation, its deletion) get a deterministic id derived from that cause, so whichever writes
 * first wins and the other gets AlreadyExists: the HTTP path and the kubectl path leave the same
 * history, with no duplicates.
 */
import { createHash, randomBytes } from 'node:crypto';

/**
 * A UUID (version 5 layout) derived from a string key. The `roomkeeper.io/operation/` prefix is
 * part of the derivation (a fixed namespace, not the API group): ids must stay what they were.
 */
export function deterministicOperationId(key: string): string {
  const h = createHash('sha1').update(`roomkeeper.io/operation/${key}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  return uuidOf(h);
}

function uuidOf(bytes: Buffer): string {
  const hex = bytes.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A generator of UUIDv7 ids (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter
 * (method 1 of the RFC: ids made within one millisecond by one process still sort in order),
 * then 62 random bits. Ids of different processes sort by their milliseconds.
 */
export function timeOrderedIdGenerator(random: (n: number) => Buffer = randomBytes): (now?: number) => string {
  let lastMs = -1;
  let counter = 0;
  return (now = Date.now()) => {
    let ms = Math.max(0, Math.floor(now));
    if (ms > lastMs) {
      counter = 0;
    } else {
      // The same millisecond (or a clock that stepped back): the counter keeps the order.
      ms = lastMs;
      counter++;
      if (counter > 0xfff) {
        ms++;
        counter = 0;
      }
    }
    lastMs = ms;
    const b = Buffer.alloc(16);
    b.writeUIntBE(ms, 0, 6);
    b[6] = 0x70 | (counter >> 8);
    b[7] = counter & 0xff;
    random(8).copy(b, 8);
    b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
    return uuidOf(b);
  };
}

/** A new operation id: a UUIDv7, so names sort by the time they were made. */
export const newOperationId: (now?: number) => string = timeOrderedIdGenerator();

/** The id of the create_scheduler operation for a Scheduler object (by uid and spec generation). */
export function createSchedulerOperationId(schedulerUid: string, generation: number): string {
  return deterministicOperationId(`${schedulerUid}/create_scheduler/${generation}`);
}

/** The id of the create_new_scheduler_version operation for one spec generation of a Scheduler. */
export function newVersionOperationId(schedulerUid: string, generation: number): string {
  return deterministicOperationId(`${schedulerUid}/create_new_scheduler_version/${generation}`);
}

/** The id of the delete_scheduler operation of a Scheduler object. */
export function deleteSchedulerOperationId(schedulerUid: string): string {
  return deterministicOperationId(`${schedulerUid}/delete_scheduler`);
}

/**
 * Whether `op`, the create_new_scheduler_version of a Scheduler's current spec generation
 * (`newVersionOperationId`), refused that spec: it ended without making a version (`error`,
 * `canceled`). The spec then holds a definition no version has; a change asked for through the
 * HTTP API builds on the active version instead, as in Maestro, where a refused version never
 * existed.
 */
export function refusedSpec(op: { status?: { status?: string } } | undefined): boolean {
  const status = op?.status?.status;
  return status === 'error' || status === 'canceled';
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
  operation(id: string): Promise<{ status?: { status?: string } } | undefined> | { status?: { status?: string } } | undefined;
  activeDefinition(version: string): Promise<S | undefined>;
}

/**
 * When the version change made from a Scheduler's current spec generation was refused
 * (`refusedSpec`), the definition a change asked for through the API builds on
 * (`baseAfterRefusal`) and the active version it comes from; else undefined (build on the spec).
 */
export async function refusedSpecBase<S extends { roomsReplicas?: number }>(
  s: { metadata: { uid?: string; generation?: number }; status?: { version?: string }; spec: S },
  read: RefusalReads<S>,
): Promise<{ definition: S; version: string } | undefined> {
  const version = s.status?.version;
  if (!s.metadata.uid || !version) return undefined;
  if (!refusedSpec(await read.operation(newVersionOperationId(s.metadata.uid, s.metadata.generation ?? 0)))) return undefined;
  const active = await read.activeDefinition(version);
  return active ? { definition: baseAfterRefusal(active, s.spec), version } : undefined;
}
