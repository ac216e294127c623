/** Label and annotation keys Roomkeeper puts on the objects it owns (the API group: api-group.ts). */
import { operationSourceValues, type OperationSource } from '../generated/resources';
import { addWhereAbsent } from '../kube/json-patch';
import { OperationDefinition, OperationSourceName } from './operation-names';

/** On Operation, SchedulerVersion, GameRoom and room Pods: the scheduler's name. */
export const SCHEDULER_LABEL = 'roomkeeper.io/scheduler';
/** On GameRoom and room Pods: the scheduler version the room was made from (e.g. v1.2.0). */
export const VERSION_LABEL = 'roomkeeper.io/version';
/** On GameRoom and room Pods of a validation room ("true"). */
export const VALIDATION_ROOM_LABEL = 'roomkeeper.io/validation-room';
/** On Operations: the definition name, so the queue can be listed by kind. */
export const DEFINITION_LABEL = 'roomkeeper.io/definition';
/** `app.kubernetes.io/managed-by` value on everything Roomkeeper creates. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'roomkeeper';
/**
 * On every Roomkeeper operator's leader Lease ("true"): an operator lists the Leases of the whole
 * cluster by it, to find another Roomkeeper operator (another release, in another namespace or
 * under another lease name) that leads too (operator/src/runtime/other-operators.ts).
 */
export const OPERATOR_LEASE_LABEL = 'roomkeeper.io/operator-lease';
/**
 * On an operator's leader Lease: when the operator that created it did (RFC 3339, microseconds, its
 * clock). Orders two Leases made in the same second (creationTimestamp has whole seconds) the same
 * way for every operator and for good: acquireTime, used before, changes with each new holder.
 */
export const OPERATOR_LEASE_CREATED_ANNOTATION = 'roomkeeper.io/lease-created-at';
/** Finalizer the operator puts on a Scheduler to clean up its namespace and operations. */
export const SCHEDULER_FINALIZER = 'roomkeeper.io/scheduler-cleanup';
/** Lets the cluster autoscaler evict room pods (as Maestro does). */
export const SAFE_TO_EVICT_ANNOTATION = 'cluster-autoscaler.kubernetes.io/safe-to-evict';
/**
 * Finalizer the operator puts on a SchedulerVersion that cannot be rebuilt while it is needed: the
 * active version, or one a pending or running operation names. Removed as soon as it is not needed
 * (never while the Scheduler itself is being deleted).
 */
export const VERSION_PROTECTION_FINALIZER = 'roomkeeper.io/version-protection';
/**
 * Finalizer the operator puts on an Operation while it runs (from its claim to its end): a
 * deletion (kubectl delete rkop) then waits for the operator, which ends it as a cancel does, its
 * rollback included, tells it in a Scheduler Event and releases it; also when the deletion came
 * while no operator ran it. Never on a pending or ended operation.
 */
export const OPERATION_RUNNING_FINALIZER = 'roomkeeper.io/operation-running';
/** On a namespace or SchedulerVersion the operator rebuilt after it was deleted: when (ISO time). */
export const REBUILT_AT_ANNOTATION = 'roomkeeper.io/rebuilt-at';
/** On a healing Operation: the health check's view of what it depends on when it was enqueued. */
export const HEALTH_FINGERPRINT_ANNOTATION = 'roomkeeper.io/health-fingerprint';
/** On the health check's add_rooms: the lost rooms its reason names (comma-separated), so none is named twice. */
export const LOST_ROOMS_ANNOTATION = 'roomkeeper.io/lost-rooms';
/** On a healing Operation: which try it is of an incident (consecutive failures of one definition). */
export const ATTEMPT_ANNOTATION = 'roomkeeper.io/attempt';
/**
 * On a SchedulerVersion made by create_new_scheduler_version: the id of that operation's first
 * attempt, so another attempt (after the first got stuck) finds and keeps the version it made.
 */
export const CREATED_BY_OPERATION_ANNOTATION = 'roomkeeper.io/created-by-operation';
/**
 * On a GameRoom: a random id of the create request that made it, so a retried create that finds
 * the name taken knows whether its own first attempt landed (counted as made) or another room
 * holds the name (a new name is tried).
 */
export const CREATE_REQUEST_ANNOTATION = 'roomkeeper.io/create-request';
/**
 * On a lost GameRoom (its pod gone): when the operator told the forwarders `terminated`, written
 * before it deletes the room. A leader that finds the room still there, or sees its deletion,
 * knows from it that `terminated` was told already, whichever replica told it.
 */
export const TERMINATED_FORWARDED_ANNOTATION = 'roomkeeper.io/terminated-forwarded';
/**
 * On a Scheduler: who made the spec change of one generation, when an operation of the service
 * made it (an add-rooms or remove-rooms moving roomsReplicas, a rollback restoring it):
 * `<generation> <source> <operation id>`, the source that operation's (`kubectl` for one written
 * with kubectl). The scheduler controller gives the version operation
 * of that generation this source; any other spec change was made past the service (kubectl).
 */
export const SPEC_CHANGE_SOURCE_ANNOTATION = 'roomkeeper.io/spec-change-source';

/**
 * JSON Patch operations that say `operation` of `source` makes the spec change the same patch
 * makes (SPEC_CHANGE_SOURCE_ANNOTATION, read back by `specChangeSource`): conditional on the
 * generation read, which the change moves by exactly one (a status write does not move it). An
 * object read without annotations gets the map whole, conditional on there still being none
 * (`addWhereAbsent`): an annotation added by someone else meanwhile (which moves no generation) makes the patch fail and the caller
 * read again, instead of being replaced. Not conditional on the resourceVersion: that moves with
 * every status write, and a scheduler just created (no annotations yet), whose status the operator
 * writes several times a second while its rooms start, made a spec write lose five times running
 * (the likely cause of a 409 "changed concurrently" answered once to a PATCH in CI).
 */
export function specChangeSourcePatch(
  read: { metadata: { generation?: number; annotations?: Record<string, string> } },
  source: OperationSource,
  operation: string,
): { op: string; path: string; value: unknown }[] {
  const generation = read.metadata.generation ?? 1;
  const value = `${generation + 1} ${source} ${operation}`;
  const ofGeneration = { op: 'test', path: '/metadata/generation', value: generation };
  if (read.metadata.annotations) return [ofGeneration, { op: 'add', path: `/metadata/annotations/${SPEC_CHANGE_SOURCE_ANNOTATION.replace('/', '~1')}`, value }];
  return [ofGeneration, ...addWhereAbsent('/metadata/annotations', { [SPEC_CHANGE_SOURCE_ANNOTATION]: value })];
}

/**
 * The annotations a Scheduler created through the HTTP API is created with: its first generation is
 * the API's. Its create_scheduler's id is made from the uid, known only once the Scheduler exists,
 * so the annotation names the definition instead. A create_scheduler enqueued again by the operator
 * (its first deleted with kubectl before it ran) is then told as the API's, not kubectl's.
 */
export const CREATED_THROUGH_API_ANNOTATIONS: Readonly<Record<string, string>> = { [SPEC_CHANGE_SOURCE_ANNOTATION]: `1 ${OperationSourceName.Api} ${OperationDefinition.CreateScheduler}` };

/** The source an annotation value names for `generation`, or undefined when it names another (or none we know). */
export function specChangeSource(annotations: Record<string, string> | undefined, generation: number): { source: OperationSource; operation: string } | undefined {
  const [gen, source, operation] = (annotations?.[SPEC_CHANGE_SOURCE_ANNOTATION] ?? '').split(' ');
  return gen === String(generation) && isOperationSource(source) && operation ? { source, operation } : undefined;
}

function isOperationSource(v: string | undefined): v is OperationSource {
  return (operationSourceValues as readonly (string | undefined)[]).includes(v);
}
