/** Operation definition names and statuses (Maestro's strings, see maestro-behaviour.md section 2.1). */
import type { Operation, OperationStatusValue } from '../generated/resources';

export const OperationDefinition = {
  CreateScheduler: 'create_scheduler',
  CreateNewSchedulerVersion: 'create_new_scheduler_version',
  SwitchActiveVersion: 'switch_active_version',
  AddRooms: 'add_rooms',
  RemoveRooms: 'remove_rooms',
  DeleteScheduler: 'delete_scheduler',
} as const;
export type OperationDefinitionName = (typeof OperationDefinition)[keyof typeof OperationDefinition];

export const knownDefinitionNames: readonly OperationDefinitionName[] = Object.values(OperationDefinition);

export const OperationStatusName = {
  Pending: 'pending',
  InProgress: 'in_progress',
  Finished: 'finished',
  Error: 'error',
  Canceled: 'canceled',
  Evicted: 'evicted',
} as const satisfies Record<string, OperationStatusValue>;

/** Statuses an operation never leaves. */
export const finalOperationStatuses: readonly OperationStatusValue[] = ['finished', 'error', 'canceled', 'evicted'];

/** An operation's status; one that has none yet (just enqueued) is pending. */
export function operationStatusOf(op: Pick<Operation, 'status'>): OperationStatusValue {
  return op.status?.status ?? OperationStatusName.Pending;
}

export function isFinalOperationStatus(status: OperationStatusValue | undefined): boolean {
  return status !== undefined && finalOperationStatuses.includes(status);
}

/** Who enqueued an operation. */
export const OperationSourceName = { Api: 'api', Kubectl: 'kubectl', Operator: 'operator' } as const;

/** Reasons carried by remove_rooms input (Maestro's). */
export const RemoveRoomsReason = {
  /** A user asked, through the management API. */
  Api: 'api',
  /** A user asked with kubectl: a remove_rooms Operation written past the service, with no reason of its own. */
  Kubectl: 'kubectl',
  ScaleDown: 'scale_down',
  ExpiredRoom: 'expired_room',
  NewVersionRollback: 'new_version_rollback',
  NewVersionValidationFinished: 'new_version_validation_finished',
  SwitchVersionRollback: 'switch_version_rollback',
  SwitchVersionReplace: 'switch_version_replace',
  RollingUpdateReplace: 'rolling_update_replace',
} as const;
export type RemoveRoomsReason = (typeof RemoveRoomsReason)[keyof typeof RemoveRoomsReason];
