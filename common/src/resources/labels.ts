/** Label and annotation keys Roomkeeper puts on the objects it owns. */
export const API_GROUP = 'roomkeeper.io';
export const API_VERSION = 'roomkeeper.io/v1';

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
/** Finalizer the operator puts on a Scheduler to clean up its namespace and operations. */
export const SCHEDULER_FINALIZER = 'roomkeeper.io/scheduler-cleanup';
/** Lets the cluster autoscaler evict room pods (as Maestro does). */
export const SAFE_TO_EVICT_ANNOTATION = 'cluster-autoscaler.kubernetes.io/safe-to-evict';
