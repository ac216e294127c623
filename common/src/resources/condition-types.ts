/** Condition types and reasons, as constants so reconcilers and tests agree on spelling. */

/** Scheduler conditions. */
export const SchedulerConditionType = {
  /** The active version's rooms match the desired count and no version change is pending. */
  Ready: 'Ready',
  /** spec changed since the last version operation (kubectl edit awaiting its operations). */
  PendingChanges: 'PendingChanges',
  /**
   * The rollout of the active version (as a Deployment's Progressing): True while rooms of an
   * older major remain and the health check replaces them; False once every room runs the
   * active major.
   */
  Progressing: 'Progressing',
  /** The last operation of the scheduler ended in error. */
  Degraded: 'Degraded',
} as const;
export type SchedulerConditionType = (typeof SchedulerConditionType)[keyof typeof SchedulerConditionType];

/** Operation conditions. */
export const OperationConditionType = {
  /** The operation is in_progress and its lease expired: its worker died mid-run. */
  Stuck: 'Stuck',
  /** The operation's definition name or input is unknown or invalid (it was evicted). */
  Invalid: 'Invalid',
} as const;
export type OperationConditionType = (typeof OperationConditionType)[keyof typeof OperationConditionType];

/** Reasons used in conditions. */
export const ConditionReason = {
  LeaseExpired: 'LeaseExpired',
  UnknownDefinition: 'UnknownDefinition',
  InvalidInput: 'InvalidInput',
  InSync: 'InSync',
  RoomsNotReady: 'RoomsNotReady',
  SpecChanged: 'SpecChanged',
  ReplacingRooms: 'ReplacingRooms',
  RolloutComplete: 'RolloutComplete',
  OperationFailed: 'OperationFailed',
} as const;
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];
