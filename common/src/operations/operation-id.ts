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
