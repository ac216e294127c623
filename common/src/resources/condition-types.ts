/** Condition types and reasons, as constants so reconcilers and tests agree on spelling. */

/** Scheduler conditions. */
export const SchedulerConditionType = {
  /**
   * The scheduler serves on its active version at its desired room count and no version change is
   * in flight. A failed operation (a failed or refused version change too) leaves it True when the
   * rooms serve: Degraded tells the failure.
   */
  Ready: 'Ready',
  /** spec changed since the last version operation (kubectl edit awaiting its operations). */
  PendingChanges: 'PendingChanges',
  /**
   * The rollout of the active version (as a Deployment's Progressing): True while rooms of an
   * older major remain and the health check replaces them; False once every room runs the
   * active major.
   */
  Progressing: 'Progressing',
  /**
   * The operation of the scheduler that ended last failed (or one is stuck). One its scheduler's
   * deletion stopped ends in error but failed nothing: not degraded.
   */
  Degraded: 'Degraded',
  /**
   * Rooms of the active version keep failing after their game server pinged (a crash soon after it
   * starts): True once the failures the leading operator saw in the last 10 minutes reach a quarter
   * of the desired count (at least 3, at most 500). The health check replaces each, so the counts look whole.
   */
  RoomsChurning: 'RoomsChurning',
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

/**
 * Reasons used in conditions. A reason explains the condition's CURRENT status (Kubernetes API
 * conventions): a condition that can be True or False has a reason for each.
 */
export const ConditionReason = {
  LeaseExpired: 'LeaseExpired',
  /** Invalid True: an operation in progress without a lease. */
  NoLease: 'NoLease',
  /** Invalid True: an operation in progress whose lease expires further ahead than any replica writes one. */
  LeaseTooFarAhead: 'LeaseTooFarAhead',
  UnknownDefinition: 'UnknownDefinition',
  /** Invalid True: an operation enqueued before its scheduler was created (a restored or re-applied record), evicted. */
  EnqueuedBeforeScheduler: 'EnqueuedBeforeScheduler',
  InvalidInput: 'InvalidInput',
  /** Ready True. (Ready False gives the state as its reason: PendingChanges, Creating, OnError (the create failed), Terminating.) */
  InSync: 'InSync',
  RoomsNotReady: 'RoomsNotReady',
  /** PendingChanges True: a version operation is queued or running. */
  SpecChanged: 'SpecChanged',
  /** PendingChanges False: the active version is the spec's. */
  VersionMatchesSpec: 'VersionMatchesSpec',
  /** PendingChanges False: the spec's last change failed its version operation (or it was canceled or evicted); the active version runs. */
  SpecChangeFailed: 'SpecChangeFailed',
  /** Progressing True / False. */
  ReplacingRooms: 'ReplacingRooms',
  RolloutComplete: 'RolloutComplete',
  /** PendingChanges and Progressing True: no version yet, create_scheduler is queued or running. */
  Creating: 'Creating',
  /** PendingChanges and Progressing False: no version, create_scheduler ended without making one. */
  CreateFailed: 'CreateFailed',
  /** PendingChanges False: the scheduler is being deleted; no change of its spec is applied any more. */
  Terminating: 'Terminating',
  /** Degraded True: the operation that ended last failed (stuck: its lease expired), or a running one is stuck. */
  OperationFailed: 'OperationFailed',
  OperationStuck: 'OperationStuck',
  /** Degraded False: neither (a failed operation may stay in the history: a later one ended since). */
  LastOperationDidNotFail: 'LastOperationDidNotFail',
  /** Degraded False: the operation that ended last ended in error because its scheduler's deletion stopped it; nothing failed. */
  OperationStoppedByDeletion: 'OperationStoppedByDeletion',
  /** RoomsChurning True / False. */
  FailingAfterStart: 'FailingAfterStart',
  BelowMark: 'BelowMark',
} as const;
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];
