/**
 * Scheduler conditions about objects a kubectl user deleted, and about healing that is held back
 * (issue 21). Written by the scheduler controller (operator/src/schedulers/owned-objects.ts), next
 * to the ones in condition-types.ts; `kubectl describe scheduler` shows them.
 */
export const RecoveryConditionType = {
  /** The scheduler's namespace exists (True), or is being rebuilt (False). */
  NamespaceReady: 'NamespaceReady',
  /** The active SchedulerVersion exists (True), or is missing (False). */
  ActiveVersionAvailable: 'ActiveVersionAvailable',
  /** A `kubectl delete` of a SchedulerVersion is waiting on the version-protection finalizer. */
  VersionDeletionBlocked: 'VersionDeletionBlocked',
  /**
   * The health check holds back an operation that failed the same way as its last try
   * (RepeatedFailure), or makes rooms one at a time because every room of the active version
   * failed before its game server pinged (RoomsFailing), or keeps rooms waiting for host ports that
   * no node has free instead of replacing them (HostPortsExhausted), or holds the expiry of a
   * silence too wide to be the rooms' (ExpiryHeld), or waits for a version change (VersionChangeRunning).
   */
  HealingHeld: 'HealingHeld',
} as const;

export const RecoveryReason = {
  Present: 'Present',
  Rebuilt: 'Rebuilt',
  NamespaceTerminating: 'NamespaceTerminating',
  NamespaceMissing: 'NamespaceMissing',
  /** The namespace exists without the labels the operator watches namespaces by (removed by hand). */
  NamespaceNotLabelled: 'NamespaceNotLabelled',
  ActiveVersionMissing: 'ActiveVersionMissing',
  CannotRebuild: 'CannotRebuild',
  /** status.version named a version no SchedulerVersion holds; set back to the one that says it is active. */
  StatusVersionRestored: 'StatusVersionRestored',
  /** status.version names a version no SchedulerVersion holds, and more than one says it is active. */
  ActiveVersionAmbiguous: 'ActiveVersionAmbiguous',
  VersionInUse: 'VersionInUse',
  NoneBlocked: 'NoneBlocked',
  RepeatedFailure: 'RepeatedFailure',
  RoomsFailing: 'RoomsFailing',
  HostPortsExhausted: 'HostPortsExhausted',
  /** A version change runs (a major one's validation room may take minutes): the health check waits for the queue. */
  VersionChangeRunning: 'VersionChangeRunning',
  /** The expiry brake holds rooms silent beyond their ping timeout: a silence too wide to be theirs (expiry-brake.ts). */
  ExpiryHeld: 'ExpiryHeld',
  NotHeld: 'NotHeld',
} as const;
