/**
 * What a scheduler's owned objects need after a kubectl user deleted some of them (pure; the
 * scheduler controller applies it). Level-based: derived from the objects as the caches show them.
 *  - Rebuild what is derived: the namespace, with its labels, once a deleted one is fully gone.
 *  - Protect what cannot be rebuilt: a SchedulerVersion that is active or that a pending or running
 *    operation names carries the version-protection finalizer; any other version (and every
 *    version of a Scheduler being deleted) does not. A deletion that waits is said in a condition.
 *  - The active version gone anyway: rebuilt from the Scheduler's spec when the spec still holds
 *    its definition (no version change pending), said in a condition either way.
 *  - status.version naming a version no SchedulerVersion holds, or an older one whose SchedulerVersion
 *    does not say `status.active: true` (no switch running), while another one of the scheduler says
 *    so is an edited status (kubectl patch --subresource=status), not a deleted version nor a
 *    switch: nothing is rebuilt and status.version is set back to the version that says so.
 *  - A healing operation held back because it would fail as its last try did, and rooms made one at
 *    a time because the active version's rooms fail before they ping: said in a condition.
 */
import type { Condition, Operation, Scheduler, SchedulerVersion } from '../../../common/src/generated/resources';
import { REBUILT_AT_ANNOTATION, VERSION_PROTECTION_FINALIZER } from '../../../common/src/resources/labels';
import { RecoveryConditionType, RecoveryReason } from '../../../common/src/resources/recovery-conditions';
import { OperationDefinition } from '../../../common/src/resources/operation-names';
import { flaggedActive, recordedActiveVersion } from '../../../common/src/resources/scheduler-version';
import { describeIncident, incidentOf, type Incident } from '../rooms/domain/repeated-failure';
import { isVersionOperationActive } from './scheduler-status';

export type ConditionDraft = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export interface OwnedObjectsInput {
  scheduler: Scheduler;
  /** The scheduler's namespace from the cache (labelled as ours), if any. */
  namespace: { deletionTimestamp?: unknown; annotations?: Record<string, string> } | undefined;
  /** The scheduler's SchedulerVersions from the cache. */
  versions: readonly SchedulerVersion[];
  ops: readonly Operation[];
  /** The operations the health check enqueues, whose repeated failures are reported. */
  healingDefinitions: readonly string[];
  /** The active version's rooms fail before they ping, so the health check makes them one at a time: its words (failing-rooms.ts). */
  failingRooms?: string;
  /** Rooms wait for host ports no node has free, so the health check keeps them: its words (port-wait.ts). */
  waitingForPorts?: string;
  /** The health check holds the expiry of a silence too wide to be the rooms' (expiry-brake.ts): what it says. */
  expiryHeld?: string;
}

export interface OwnedObjectsPlan {
  createNamespace: boolean;
  /** Versions (object names) to add or remove the protection finalizer on. */
  protect: string[];
  release: string[];
  /** The active version to rebuild from the spec. */
  rebuildVersion?: string;
  /** The version status.version is set back to: the one whose SchedulerVersion says it is active. */
  restoreVersion?: string;
  /**
   * Versions (numbers) whose SchedulerVersion says it is active beside the active one's, which
   * says so too: an edit of their status (no switch made them active), set back to inactive.
   */
  unflag: string[];
  conditions: ConditionDraft[];
}

const LIFECYCLE_OPS = new Set(['create_scheduler', 'delete_scheduler']);
const isActive = (op: Operation): boolean => ['pending', 'in_progress'].includes(op.status?.status ?? 'pending');

/** Versions a pending or running operation names (switch_active_version and the like). */
function versionsInUse(ops: readonly Operation[]): Map<string, string> {
  const used = new Map<string, string>();
  for (const op of ops) {
    if (!isActive(op)) continue;
    const input = op.spec.input ?? {};
    for (const key of ['newActiveVersion', 'version']) {
      const v = input[key];
      if (typeof v === 'string' && v !== '') used.set(v, `${op.spec.definitionName} ${op.metadata.name as string}`);
    }
  }
  return used;
}

/**
 * The versions saying `status.active: true` (flaggedActive) when status.version is not the version
 * that record names (recordedActiveVersion): it names a version none of `versions` holds, or one
 * whose SchedulerVersion does not say it is active while no switch_active_version is queued or
 * running (a switch writes the flags before status.version). That is an edited status (kubectl
 * patch --subresource=status), not a deleted active version nor a switch. Undefined otherwise.
 */
function editedStatusVersion(s: Scheduler, versions: readonly SchedulerVersion[], ops: readonly Operation[] = []): string[] | undefined {
  const named = s.status?.version;
  if (named === undefined || recordedActiveVersion(named, versions) === named) return undefined;
  const held = versions.some((v) => v.spec.version === named);
  if (held && switchInFlight(ops)) return undefined;
  return flaggedActive(versions);
}

/** Whether a switch_active_version is queued or running: it writes the flags before status.version. */
export function switchInFlight(ops: readonly Operation[]): boolean {
  return ops.some((op) => op.spec.definitionName === OperationDefinition.SwitchActiveVersion && isActive(op));
}

/** How an edited status.version (editedStatusVersion) is named in a message. */
export function editedVersionWords(named: string, versions: readonly SchedulerVersion[]): string {
  return versions.some((v) => v.spec.version === named)
    ? `${named}, whose SchedulerVersion does not say it is active (no switch_active_version made it so)`
    : `${named}, which no SchedulerVersion holds`;
}

/**
 * How to change the active version the way that enqueues switch_active_version, for a message
 * about an edited status.version: to `version` when it names one that exists.
 */
export function switchHint(name: string, version: string | undefined): string {
  const v = version ?? '...';
  return `to run ${version ?? 'another version'}, switch to it: PUT /schedulers/${name} with {"version": "${v}"}, `
    + `or kubectl create an Operation with spec {schedulerName: ${name}, definitionName: switch_active_version, input: {newActiveVersion: ${v}}} (README, kubectl)`;
}

export function planOwnedObjects(input: OwnedObjectsInput): OwnedObjectsPlan {
  const s = input.scheduler;
  const name = s.metadata.name as string;
  const deleting = s.metadata.deletionTimestamp !== undefined;
  const active = s.status?.version;
  const current = input.versions.find((v) => v.spec.version === active);
  const sayActive = editedStatusVersion(s, input.versions, input.ops);
  const restore = sayActive?.length === 1 ? sayActive[0] : undefined;
  const lifecycle = input.ops.some((op) => LIFECYCLE_OPS.has(op.spec.definitionName) && isActive(op));
  const plan: OwnedObjectsPlan = { createNamespace: false, protect: [], release: [], rebuildVersion: undefined, restoreVersion: undefined, unflag: [], conditions: [] };

  // Versions: protect what is needed, release the rest (everything while the Scheduler goes).
  const inUse = versionsInUse(input.ops);
  const blocked: string[] = [];
  for (const v of input.versions) {
    const objectName = v.metadata.name as string;
    const why = v.spec.version === active || v.spec.version === restore ? 'it is the active version' : inUse.has(v.spec.version) ? `operation ${inUse.get(v.spec.version) as string} uses it` : undefined;
    const needed = !deleting && why !== undefined;
    const has = v.metadata.finalizers?.includes(VERSION_PROTECTION_FINALIZER) ?? false;
    if (needed && !has && !v.metadata.deletionTimestamp) plan.protect.push(objectName);
    if (!needed && has) plan.release.push(objectName);
    if (needed && has && v.metadata.deletionTimestamp) blocked.push(`${objectName} (${why})`);
  }
  if (deleting || !active) return plan;

  // The namespace: rebuilt once a deleted one is fully gone.
  const ns = input.namespace;
  if (!lifecycle) {
    if (!ns) {
      plan.createNamespace = true;
      plan.conditions.push({ type: RecoveryConditionType.NamespaceReady, status: 'False', reason: RecoveryReason.NamespaceMissing, message: `namespace ${name} was deleted; rebuilding it with its labels (the health check then replaces the rooms)` });
    } else if (ns.deletionTimestamp) {
      plan.conditions.push({ type: RecoveryConditionType.NamespaceReady, status: 'False', reason: RecoveryReason.NamespaceTerminating, message: `namespace ${name} is being deleted; it is rebuilt with its labels once it is gone, then the health check replaces the rooms` });
    } else {
      const rebuiltAt = ns.annotations?.[REBUILT_AT_ANNOTATION];
      plan.conditions.push(rebuiltAt
        ? { type: RecoveryConditionType.NamespaceReady, status: 'True', reason: RecoveryReason.Rebuilt, message: `namespace ${name} was deleted and rebuilt at ${rebuiltAt}; the health check replaces the rooms it held` }
        : { type: RecoveryConditionType.NamespaceReady, status: 'True', reason: RecoveryReason.Present, message: `namespace ${name} exists` });
    }
  }

  // The active version.
  if (sayActive && !lifecycle) {
    plan.restoreVersion = restore;
    const edited = editedVersionWords(active, input.versions);
    const hint = switchHint(name, current ? active : undefined);
    plan.conditions.push(restore
      ? { type: RecoveryConditionType.ActiveVersionAvailable, status: 'False', reason: RecoveryReason.StatusVersionRestored, message: `status.version named ${edited}; ${restore} is active (its SchedulerVersion says so); status.version is set back to it, and no room is made, replaced or rebuilt for ${active}: ${hint}` }
      : { type: RecoveryConditionType.ActiveVersionAvailable, status: 'False', reason: RecoveryReason.ActiveVersionAmbiguous, message: `status.version names ${edited}, and SchedulerVersions ${sayActive.join(', ')} each say they are active: nothing is rebuilt and the health check adds, removes and replaces no room until one version is active; switch to the one that should run: PUT /schedulers/${name} with {"version": "..."}` });
  } else if (current && !current.metadata.deletionTimestamp) {
    // The active version says so; another that says so too was edited so (a switch writes the
    // old flag off before the new one on), unless a switch is in flight.
    if (current.status?.active === true && !lifecycle && !switchInFlight(input.ops)) plan.unflag = flaggedActive(input.versions).filter((v) => v !== active);
    const rebuiltAt = current.metadata.annotations?.[REBUILT_AT_ANNOTATION];
    plan.conditions.push(rebuiltAt
      ? { type: RecoveryConditionType.ActiveVersionAvailable, status: 'True', reason: RecoveryReason.Rebuilt, message: `active version ${active} was deleted and rebuilt from the Scheduler's spec at ${rebuiltAt}` }
      : { type: RecoveryConditionType.ActiveVersionAvailable, status: 'True', reason: RecoveryReason.Present, message: `active version ${active} exists` });
  } else if (current) {
    // Being deleted (kubectl delete): it still exists and serves while the finalizer holds it.
    plan.conditions.push(current.metadata.finalizers?.includes(VERSION_PROTECTION_FINALIZER)
      ? { type: RecoveryConditionType.ActiveVersionAvailable, status: 'True', reason: RecoveryReason.VersionInUse, message: `active version ${active} exists; its deletion waits on finalizer ${VERSION_PROTECTION_FINALIZER} while it is active (VersionDeletionBlocked says what to do)` }
      : { type: RecoveryConditionType.ActiveVersionAvailable, status: 'True', reason: RecoveryReason.Present, message: `active version ${active} is being deleted; once it is gone it is rebuilt from the Scheduler's spec, unless a version change is pending` });
  } else if (!lifecycle) {
    const specHoldsIt = !isVersionOperationActive(input.ops) && (s.metadata.generation ?? 1) <= (s.status?.versionedGeneration ?? 0);
    if (specHoldsIt) plan.rebuildVersion = active;
    plan.conditions.push(specHoldsIt
      ? { type: RecoveryConditionType.ActiveVersionAvailable, status: 'False', reason: RecoveryReason.ActiveVersionMissing, message: `active version ${active} was deleted; rebuilding it from the Scheduler's spec` }
      : { type: RecoveryConditionType.ActiveVersionAvailable, status: 'False', reason: RecoveryReason.CannotRebuild, message: `active version ${active} is missing and the Scheduler's spec has moved on (a version change is pending), so it cannot be rebuilt from it` });
  }

  plan.conditions.push(blocked.length > 0
    ? { type: RecoveryConditionType.VersionDeletionBlocked, status: 'True', reason: RecoveryReason.VersionInUse, message: `deletion of ${blocked.join(', ')} waits on finalizer ${VERSION_PROTECTION_FINALIZER}: switch the active version first, wait for the operation, or delete the Scheduler` }
    : { type: RecoveryConditionType.VersionDeletionBlocked, status: 'False', reason: RecoveryReason.NoneBlocked, message: 'no deletion of a version is waiting' });

  // Healing held back by a repeated failure, or made one room at a time for rooms that fail before they ping.
  const incidents = input.healingDefinitions.map((d) => incidentOf(input.ops, d)).filter((i): i is Incident => i !== undefined);
  const waitingForChange = versionChangeWords(name, input.ops);
  const held = [...incidents.map((i) => describeIncident(i)), ...[input.failingRooms, input.waitingForPorts, input.expiryHeld, waitingForChange].filter((w): w is string => w !== undefined)];
  const reason = incidents.length > 0 ? RecoveryReason.RepeatedFailure : input.failingRooms ? RecoveryReason.RoomsFailing
    : input.waitingForPorts ? RecoveryReason.HostPortsExhausted : input.expiryHeld ? RecoveryReason.ExpiryHeld : RecoveryReason.VersionChangeRunning;
  plan.conditions.push(held.length > 0
    ? { type: RecoveryConditionType.HealingHeld, status: 'True', reason, message: held.join('; ') }
    : { type: RecoveryConditionType.HealingHeld, status: 'False', reason: RecoveryReason.NotHeld, message: 'no healing operation is held back by a repeated failure (the last ones did not fail, or moved the fleet on), rooms of the active version do not all fail before they ping, no room waits for host ports that no node has free, no room expiry is held, and no version change runs' });
  return plan;
}

/**
 * While a create_new_scheduler_version runs, the health check (which acts only while the queue is
 * idle, as Maestro's does) replaces no room and does not autoscale: a major change's validation
 * room may keep it so for minutes. The words of HealingHeld then, or undefined.
 */
function versionChangeWords(name: string, ops: readonly Operation[]): string | undefined {
  const running = ops.find((op) => op.spec.definitionName === OperationDefinition.CreateNewSchedulerVersion && op.status?.status === 'in_progress');
  if (!running) return undefined;
  const id = running.metadata.name as string;
  return `healing and autoscaling wait for operation ${id} (create_new_scheduler_version) to end: the health check adds, removes and replaces rooms only while no operation runs, and a major change's validation room may take up to ROOMKEEPER_VALIDATION_TIMEOUT per attempt; to heal now, cancel it: POST /schedulers/${name}/operations/${id}/cancel`;
}
