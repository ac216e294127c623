/**
 * Operation ids. Every id is UUID-shaped, as Maestro's are. Operations that both the gateway
 * and the operator may enqueue for the same cause (a Scheduler created, its spec changed to a new
 * generation, its deletion) get a deterministic id derived from that cause, so whichever writes
 * first wins and the other gets AlreadyExists: the HTTP path and the kubectl path leave the same
 * history, with no duplicates.
 */
import { createHash, randomUUID } from 'node:crypto';

export const OPERATION_API_GROUP = 'roomkeeper.io';

/** A UUID (version 5 layout) derived from a string key. */
export function deterministicOperationId(key: string): string {
  const h = createHash('sha1').update(`roomkeeper.io/operation/${key}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function newOperationId(): string {
  return randomUUID();
}

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
