/**
 * The finalizer of a running Operation (OPERATION_RUNNING_FINALIZER): put on just before an
 * execution claims the operation, released once it has ended. JSON patches with a `test`: the put
 * on the version the claim is conditional on, the release on the finalizer's place in the list (so
 * another tool's finalizer is never dropped; tried again on a fresh read when the list moved).
 */
import type { Operation } from '../../../common/src/generated/resources';
import { apiStatus, isJsonPatchNotApplied } from '../../../common/src/kube/clients';
import type { RoomkeeperApi } from '../../../common/src/kube/roomkeeper-api';
import { OPERATION_RUNNING_FINALIZER } from '../../../common/src/resources/labels';
import { OperationStatusName } from '../../../common/src/resources/operation-names';

const ATTEMPTS = 3;

/** Whether the operation carries the finalizer. */
export function heldWhileRunning(op: Operation): boolean {
  return op.metadata.finalizers?.includes(OPERATION_RUNNING_FINALIZER) === true;
}

/**
 * Whether the finalizer is to be released: the operation does not run (pending again, or ended).
 * One in progress keeps it, also when deleted: its end is written first.
 */
export function releasable(op: Operation): boolean {
  return heldWhileRunning(op) && op.status?.status !== OperationStatusName.InProgress;
}

/**
 * Puts the finalizer on an operation about to be claimed (`op`: the version the queue was planned
 * on), on the condition that it is still that version, as the claim itself is: when it changed
 * meanwhile (another replica claimed it, a cancel came), the patch is refused (a failed `test`)
 * and the claim is not made. Returns the object written, or `op` when it holds the finalizer
 * already.
 */
export async function holdForClaim(api: RoomkeeperApi, op: Operation): Promise<Operation> {
  if (heldWhileRunning(op)) return op;
  const add = op.metadata.finalizers === undefined
    ? { op: 'add', path: '/metadata/finalizers', value: [OPERATION_RUNNING_FINALIZER] }
    : { op: 'add', path: '/metadata/finalizers/-', value: OPERATION_RUNNING_FINALIZER };
  return api.jsonPatchOperation(op.metadata.name as string, [{ op: 'test', path: '/metadata/resourceVersion', value: op.metadata.resourceVersion }, add]);
}

/** Releases the finalizer. Returns the object written, or undefined when the operation is gone. */
export async function releaseOperation(api: RoomkeeperApi, op: Operation): Promise<Operation | undefined> {
  let current = op;
  for (let attempt = 1; ; attempt++) {
    const at = current.metadata.finalizers?.indexOf(OPERATION_RUNNING_FINALIZER) ?? -1;
    if (at < 0) return current;
    const patch = [{ op: 'test', path: `/metadata/finalizers/${at}`, value: OPERATION_RUNNING_FINALIZER }, { op: 'remove', path: `/metadata/finalizers/${at}` }];
    const next = await writeOrReread(api, current, patch, attempt);
    if (!next) return undefined;
    current = next;
  }
}

/**
 * Applies the release; when its `test` failed (the list moved meanwhile), reads the operation
 * again for another attempt, up to ATTEMPTS. Undefined when the operation is gone.
 */
async function writeOrReread(api: RoomkeeperApi, op: Operation, patch: readonly object[], attempt: number): Promise<Operation | undefined> {
  const name = op.metadata.name as string;
  try {
    return await api.jsonPatchOperation(name, patch);
  } catch (err) {
    const status = apiStatus(err);
    if (status === 404) return undefined;
    // A failed `test` (the list moved); anything else is the caller's to tell.
    if (!isJsonPatchNotApplied(err) || attempt >= ATTEMPTS) throw err;
  }
  try {
    return await api.getOperation(name);
  } catch (err) {
    if (apiStatus(err) === 404) return undefined;
    throw err;
  }
}
