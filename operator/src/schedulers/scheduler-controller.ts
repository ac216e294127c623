/**
 * The Scheduler reconciler (key: scheduler name). It turns what kubectl users do into the same
 * operations the HTTP API enqueues, and keeps the Scheduler's status current:
 *  - a new Scheduler gets `create_scheduler` (id derived from uid and generation);
 *  - a spec edit (a new generation) gets `create_new_scheduler_version` (id derived from uid and
 *    generation, so the gateway's and ours are one and the same operation);
 *  - `kubectl delete` runs `delete_scheduler` through the Scheduler's finalizer;
 *  - an operation that got stuck (its operator died) where only an operation can finish the work
 *    (creation, deletion, the latest version change) gets another attempt (attempts.ts);
 *  - what kubectl users delete of what it owns is rebuilt or protected (owned-objects.ts), and a
 *    status.version edited (to a version no SchedulerVersion holds, or to one whose SchedulerVersion
 *    does not say it is active) is set back to the active one.
 * Level-based: running it twice in a row changes nothing the second time.
 */
import type { GameRoom, Operation, OperationSource, Scheduler, SchedulerVersion } from '../../../common/src/generated/resources';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, specChangeSource } from '../../../common/src/resources/labels';
import { RecoveryConditionType, RecoveryReason } from '../../../common/src/resources/recovery-conditions';
import { ConditionReason, SchedulerConditionType } from '../../../common/src/resources/condition-types';
import { apiStatus, describeApiError, isJsonPatchNotApplied, isNotFound } from '../../../common/src/kube/clients';
import { versionObjectName } from '../../../common/src/resources/scheduler-version';
import { schedulerEvent } from '../events';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { enqueuedBeforeScheduler } from '../../../common/src/operations/queue-order';
import { schedulerDefinitionInput, specOfDefinitionInput, type SchedulerDefinitionInput } from '../../../common/src/operations/operation-inputs';
import { refusedSpecBase, schedulerSpecsDiffer } from '../../../common/src/operations/refused-spec';
import { changedFields } from '../../../common/src/resources/scheduler-change';
import { OperationDefinition, OperationSourceName, operationStatusOf } from '../../../common/src/resources/operation-names';
import { createSchedulerOperationId, deleteSchedulerOperationId, newVersionOperationId } from '../../../common/src/operations/operation-id';
import {
  REBUILT_AT_ANNOTATION, SCHEDULER_FINALIZER, VERSION_PROTECTION_FINALIZER,
} from '../../../common/src/resources/labels';
import { INITIAL_VERSION } from '../domain/versioning';
import { newVersionObject } from '../operations/definitions/shared';
import { HEALING_DEFINITIONS } from '../rooms/domain/repeated-failure';
import { describeFailingRooms, failingRooms, probeIntervalMs, silentRooms } from '../rooms/domain/failing-rooms';
import { RoomManager } from '../rooms/room-manager';
import { roomsWaitingForPorts } from '../rooms/port-wait';
import { cachedVersions, cachedVersionsOf, type OperatorDeps } from '../deps';
import type { ReconcileResult } from '../runtime/work-queue';
import { decideAttempt, isStuck, stuckVersionOperation, type AttemptRule } from '../../../common/src/operations/attempts';
import { editedVersionWords, planOwnedObjects, switchHint, switchInFlight, type ConditionDraft } from './owned-objects';
import { computeSchedulerStatus, isVersionOperationActive, mergeConditions, onlyRoomCountsChanged, statusChanged } from './scheduler-status';
import { roomNamespaceLabels, unlabelledNamespaceWords } from './room-namespace';

/** How long a spec change the HTTP API wrote waits for the gateway to enqueue its operation, before the controller makes it. */
const API_ENQUEUE_GRACE_MS = 10_000;

export interface SchedulerControllerOptions {
  /** The scheduler's operations, including writes the cache has not caught up with. */
  operationsOf: (schedulerName: string) => Operation[];
  /** Makes an operation just created (or found) visible to `operationsOf` before the cache has it. */
  track?: (op: Operation) => void;
  /** The words of the health check's hold of room expiry (the expiry brake, any reason), while it holds it (HealthController.heldExpiryOf). */
  heldExpiry?: (schedulerName: string) => string | undefined;
  /** Whether the active version's rooms keep failing after they pinged, in words, as the last health check found it (HealthController.churnOf). */
  churn?: (schedulerName: string) => { churning: boolean; message: string } | undefined;
}

export class SchedulerController {
  /** When this replica last wrote each scheduler's status (epoch ms), to space out writes of room counts. */
  private readonly statusWrittenAt = new Map<string, number>();
  /** `scheduler/generation` -> when this replica first saw a spec change the HTTP API wrote, its operation not yet seen. */
  private readonly apiChangeSeenAt = new Map<string, number>();
  /** Schedulers whose namespace exists without our labels, told once in the log (the condition says it on). */
  private readonly unlabelledNamespaces = new Set<string>();
  /** The rooms as the health check sees them (RoomManager.views). */
  private readonly rooms: RoomManager;
  /** Schedulers whose writes the installed CRD refuses: `uid/generation/refusal` told (tellRefused). */
  private readonly toldRefused = new Map<string, string>();

  constructor(private readonly deps: OperatorDeps, private readonly opts: SchedulerControllerOptions) {
    this.rooms = new RoomManager(deps);
  }

  /**
   * The operations of scheduler `s`: those under its name but ones enqueued before it was created,
   * asked of an earlier scheduler of the name and written back (a restore), which the runner
   * evicts without running (`enqueuedBeforeScheduler`) and which say nothing of this one.
   */
  private operationsOf(s: Scheduler): Operation[] {
    return this.opts.operationsOf(s.metadata.name as string).filter((op) => !enqueuedBeforeScheduler(op, s));
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const s = this.deps.caches.schedulers.get(name);
    if (!s) {
      this.statusWrittenAt.delete(name);
      this.toldRefused.delete(name);
      await this.releaseVersions(name); // gone: nothing of it is protected any more
      return {};
    }
    const uid = s.metadata.uid as string;
    const generation = s.metadata.generation ?? 1;
    const ops = this.operationsOf(s);
    const has = (id: string) => ops.some((op) => op.metadata.name === id);

    if (s.metadata.deletionTimestamp) {
      let retry: ReconcileResult = {};
      if (s.metadata.finalizers?.includes(SCHEDULER_FINALIZER)) {
        retry = await this.attempt(name, ops, { definitionName: OperationDefinition.DeleteScheduler, firstId: deleteSchedulerOperationId(uid), input: {} });
      } else {
        // Cleaned up; only another tool's finalizer holds the Scheduler: nothing of it is protected any more.
        await this.releaseVersions(name);
      }
      const written = await this.writeStatus(s, this.operationsOf(s));
      return sooner(retry, written);
    }

    if (!s.metadata.finalizers?.includes(SCHEDULER_FINALIZER)) {
      // A delete_scheduler written with kubectl on a Scheduler not being deleted releases the
      // finalizer, then deletes it: adding it back in between would leave the Scheduler held.
      if (ops.some((op) => op.spec.definitionName === OperationDefinition.DeleteScheduler && operationStatusOf(op) === 'in_progress' && !isStuck(op))) return {};
      try {
        await this.deps.api.patchScheduler(name, {
          metadata: { finalizers: [...(s.metadata.finalizers ?? []), SCHEDULER_FINALIZER], resourceVersion: s.metadata.resourceVersion },
        });
      } catch (err) {
        // Deleted since the cache showed it: its deletion event brings the key back, as gone.
        if (!isNotFound(err)) throw err;
        this.deps.logger.debug('Scheduler deleted before its finalizer was added; nothing to do', { scheduler: name });
      }
      return {}; // the update event brings us back with the new object
    }

    let wake: ReconcileResult = {};
    if (!s.status?.version) {
      const creating = ops.some((op) => op.spec.definitionName === OperationDefinition.CreateScheduler && ['pending', 'in_progress'].includes(op.status?.status ?? 'pending'));
      const firstId = createSchedulerOperationId(uid, generation);
      if (!creating) {
        // A spec the API changed after a failed creation (a PATCH) is the API's doing, not kubectl's.
        const madeBy = specChangeSource(s.metadata.annotations, generation)?.source;
        wake = await this.attempt(name, ops, { definitionName: OperationDefinition.CreateScheduler, firstId, input: { ...schedulerDefinitionInput(name, s.spec) } }, madeBy);
      }
    } else if (generation > (s.status.versionedGeneration ?? 0)) {
      const id = newVersionOperationId(uid, generation);
      const gatewayDue = this.gatewayOperationDue(s, id);
      if (has(id)) {
        await this.deps.api.patchSchedulerStatus(name, { status: { versionedGeneration: generation } });
      } else if (isVersionOperationActive(ops)) {
        wake = { requeueAfterMs: 1000 }; // an earlier version change is still running; this edit queues after it
      } else if (gatewayDue !== undefined) {
        // The HTTP API wrote this generation and enqueues its operation (with what only it knows:
        // the count it replaced): it is waited for, and made here only once the gateway is late.
        wake = { requeueAfterMs: gatewayDue };
      } else if (await this.countOnlyAfterRefusal(s, ops)) {
        return {}; // the spec was written: its update event brings the new generation
      } else if (await this.enqueue(name, id, OperationDefinition.CreateNewSchedulerVersion, { ...schedulerDefinitionInput(name, s.spec) }, specChangeSource(s.metadata.annotations, generation)?.source) === 'created') {
        await this.deps.api.patchSchedulerStatus(name, { status: { versionedGeneration: generation } });
      } else {
        // The gateway's operation for this generation exists but is not in the cache yet: the
        // generation is marked versioned once it is (above), so the status never shows the change
        // as done (in-sync) while its operation is still invisible here.
        wake = { requeueAfterMs: 100 };
      }
    } else {
      // The latest version change got stuck (its lease expired: its operator stopped, or lost the API server, mid-way): another attempt.
      const rule = stuckVersionOperation(ops);
      if (rule) wake = await this.attempt(name, ops, rule);
    }
    const owned = await this.applyOwned(s, this.operationsOf(s));
    const written = await this.writeStatus(s, this.operationsOf(s), [...owned.conditions, ...this.churnCondition(s)], owned.restoreVersion);
    return sooner(sooner(wake, { requeueAfterMs: owned.requeueAfterMs }), written);
  }

  /**
   * How long to wait yet for the gateway's operation of a generation the HTTP API wrote (its
   * annotation names the operation `id`), or undefined when it is not the gateway's or is late
   * (API_ENQUEUE_GRACE_MS since this replica first saw the generation: the gateway stopped between
   * its write and its enqueue). Made here first, the operation lacked what the gateway puts in it
   * (countBefore: the history of a refused change said nothing of the count it kept).
   */
  private gatewayOperationDue(s: Scheduler, id: string): number | undefined {
    const generation = s.metadata.generation ?? 1;
    const madeBy = specChangeSource(s.metadata.annotations, generation);
    if (madeBy?.source !== OperationSourceName.Api || madeBy.operation !== id) return undefined;
    const key = `${s.metadata.name as string}/${generation}`;
    const now = this.deps.now();
    const seen = this.apiChangeSeenAt.get(key) ?? now;
    if (!this.apiChangeSeenAt.has(key)) {
      for (const k of this.apiChangeSeenAt.keys()) if (k.startsWith(`${s.metadata.name as string}/`)) this.apiChangeSeenAt.delete(k);
      this.apiChangeSeenAt.set(key, now);
    }
    const left = seen + API_ENQUEUE_GRACE_MS - now;
    return left > 0 ? Math.min(left, 250) : undefined;
  }

  /**
   * A kubectl change of `roomsReplicas` alone (`kubectl scale`, a patch of the count) made to a spec
   * whose last change was refused (its version change failed, was canceled, or made a version whose
   * switch was canceled or failed): versioning the spec as it is would try the refused change again
   * (a declined image rolled out by a scale). As the HTTP API and add_rooms do (refused-spec.ts),
   * the spec is replaced by the active version's definition with the new count, conditional on the
   * Scheduler being unchanged since it was read, and a Warning Event says so. Returns whether it
   * wrote. A change of any other field is a new change, versioned as it is. The same holds for a
   * count moved by an add_rooms or remove_rooms (source api) that ran after the change was
   * versioned but before its switch ran, when the switch is then declined: it built on that change.
   */
  private async countOnlyAfterRefusal(s: Scheduler, ops: readonly Operation[]): Promise<boolean> {
    const name = s.metadata.name as string;
    const generation = s.metadata.generation ?? 1;
    const previous = s.status?.versionedGeneration;
    const operation = (id: string) => ops.find((op) => op.metadata.name === id);
    const madeBy = specChangeSource(s.metadata.annotations, generation);
    // An add_rooms or remove_rooms moves the count of the spec it reads: one that ran after a change
    // was versioned but before its switch was declined built on that change (the HTTP API's own
    // changes are built on the active version when they are asked for, refused-spec.ts).
    const roomsOp = madeBy ? operation(madeBy.operation) : undefined;
    const byRoomsOp = roomsOp?.spec.definitionName === OperationDefinition.AddRooms || roomsOp?.spec.definitionName === OperationDefinition.RemoveRooms ? roomsOp : undefined;
    if (previous === undefined || (madeBy?.source === OperationSourceName.Api && !byRoomsOp)) return false;
    const versions = cachedVersions(this.deps.caches);
    const refused = await refusedSpecBase({ metadata: { uid: s.metadata.uid, generation: previous }, status: s.status, spec: s.spec }, {
      operation,
      activeDefinition: (version) => Promise.resolve(versions(name, version)?.spec.definition),
      differs: schedulerSpecsDiffer,
    });
    if (!refused) return false;
    const last = operation(refused.lastAttempt);
    const refusedSpec = last ? specOfDefinitionInput(last.spec.input as SchedulerDefinitionInput) : undefined;
    if (!refusedSpec) return false;
    const changed = changedFields(refusedSpec, s.spec);
    if (changed.length !== 1 || changed[0] !== 'roomsReplicas') return false;
    // Nothing of the refused change is left beside the count (the refused change was a count, as
    // one above the limit): the spec is versioned as it is. Writing it again would change nothing,
    // so no event would bring this generation back.
    if (!schedulerSpecsDiffer(refused.definition, s.spec)) return false;
    try {
      await this.deps.api.jsonPatchScheduler(name, [
        { op: 'test', path: '/metadata/resourceVersion', value: s.metadata.resourceVersion },
        { op: 'replace', path: '/spec', value: refused.definition },
      ]);
    } catch (err) {
      // Changed since the read (or gone): its event brings the scheduler back, decided afresh.
      if (isJsonPatchNotApplied(err) || apiStatus(err) === 409 || isNotFound(err)) return true;
      throw err;
    }
    const count = String(s.spec.roomsReplicas);
    const setBy = byRoomsOp
      ? `roomsReplicas was set to ${count} by ${byRoomsOp.spec.definitionName} operation ${byRoomsOp.metadata.name as string}, which ran before the spec's last change was decided; that change ${refused.how} `
      : `roomsReplicas was set to ${count} (kubectl scale, or another client past the service) on a spec whose last change ${refused.how} `;
    const note = `${setBy}(operation ${refused.lastAttempt}); versioning that spec would try the refused change again, so the spec now holds the active version ${refused.version}'s definition with roomsReplicas ${count}. `
      + `To try the refused change again, ${byRoomsOp?.spec.source === OperationSourceName.Api ? 'send' : 'apply'} it again`;
    schedulerEvent(this.deps, name, 'SpecRebasedOnActiveVersion', 'RebaseSpec', note);
    this.deps.logger.info('a count-only kubectl change of a spec holding a refused change was rebased on the active version', { scheduler: name, refusedBy: refused.lastAttempt, how: refused.how, activeVersion: refused.version, roomsReplicas: s.spec.roomsReplicas });
    return true;
  }

  /**
   * The words of the HealingHeld condition when the active version's rooms fail before they ping
   * (failing-rooms.ts, which the health check acts on); only read when a room is in error or has
   * not pinged, and, as the health check does, with no silent room while a wide silence is held.
   */
  private failingRoomsWords(s: Scheduler): string | undefined {
    const name = s.metadata.name as string;
    const activeVersion = s.status?.version;
    const maybeFailed = (r: GameRoom): boolean => r.status?.status === 'error' || (r.status?.lastPingAt === undefined && (r.status?.status === 'unready' || r.status?.status === 'pending'));
    if (!activeVersion || s.metadata.deletionTimestamp || !this.deps.caches.rooms.list(name).some(maybeFailed)) return undefined;
    const views = this.rooms.views(name);
    const { config } = this.deps;
    const timeouts = { initTimeoutMs: config.roomInitTimeout, pingTimeoutMs: config.roomPingTimeout, deletionTimeoutMs: config.roomDeletionTimeout };
    const silent = this.opts.heldExpiry?.(name) === undefined ? silentRooms(views, this.deps.now(), timeouts) : new Map<string, string>();
    const failing = failingRooms(views, { activeVersion }, probeIntervalMs(config.healthInterval, config.roomPingTimeout), silent);
    return failing ? describeFailingRooms(failing, name, activeVersion, this.deps.now()) : undefined;
  }

  /**
   * RoomsChurning, from the health check's last reading (domain/room-churn.ts); none before this
   * replica's first health check of the scheduler: the condition stays as the last leader wrote it.
   */
  private churnCondition(s: Scheduler): ConditionDraft[] {
    if (s.metadata.deletionTimestamp) return [];
    const churn = this.opts.churn?.(s.metadata.name as string);
    if (!churn) return [];
    return [churn.churning
      ? { type: SchedulerConditionType.RoomsChurning, status: 'True', reason: ConditionReason.FailingAfterStart, message: churn.message }
      : { type: SchedulerConditionType.RoomsChurning, status: 'False', reason: ConditionReason.BelowMark, message: churn.message }];
  }

  /** Rebuilds the namespace and the active version, protects the versions (owned-objects.ts). */
  private async applyOwned(s: Scheduler, ops: readonly Operation[]): Promise<{ conditions: ConditionDraft[]; requeueAfterMs?: number; restoreVersion?: string }> {
    const name = s.metadata.name as string;
    const ns = this.deps.caches.namespaces.get(name);
    const ports = s.status?.version && !s.metadata.deletionTimestamp ? roomsWaitingForPorts(this.deps, s, this.deps.now()) : undefined;
    const plan = planOwnedObjects({
      scheduler: s,
      namespace: ns ? { deletionTimestamp: ns.metadata?.deletionTimestamp, annotations: ns.metadata?.annotations } : undefined,
      versions: this.versionsOf(name),
      ops,
      healingDefinitions: HEALING_DEFINITIONS,
      failingRooms: this.failingRoomsWords(s),
      waitingForPorts: ports?.heldWords,
      expiryHeld: this.opts.heldExpiry?.(name),
    });
    // Rooms whose pods just began to wait for ports are judged once their first seconds are over.
    let requeueAfterMs: number | undefined = ports?.settlingMs;
    for (const v of plan.protect) await this.setProtection(v, true);
    for (const v of plan.release) await this.setProtection(v, false);
    if (plan.createNamespace) {
      try {
        await this.deps.core.createNamespace({
          body: { metadata: { name, labels: roomNamespaceLabels(name, this.deps.config), annotations: { [REBUILT_AT_ANNOTATION]: new Date(this.deps.now()).toISOString() } } },
        });
        this.deps.logger.warn('rebuilt the namespace of a scheduler after it was deleted', { scheduler: name });
      } catch (err) {
        if (apiStatus(err) !== 409) throw err;
        // Still there: the cache is behind, or its labels were removed by hand (the cache holds only
        // namespaces labelled as ours). Its rooms still run in it; say so, and look again.
        requeueAfterMs = 5000;
        const live = await this.deps.core.readNamespace({ name }).catch((e: unknown) => {
          if (isNotFound(e)) return undefined;
          throw e;
        });
        if (live && live.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) {
          const words = unlabelledNamespaceWords(name, live.metadata?.labels);
          plan.conditions = plan.conditions.map((c) => (c.type === RecoveryConditionType.NamespaceReady
            ? { type: c.type, status: 'True', reason: RecoveryReason.NamespaceNotLabelled, message: words } : c));
          if (!this.unlabelledNamespaces.has(name)) this.deps.logger.warn(words, { scheduler: name });
          this.unlabelledNamespaces.add(name);
        }
      }
    } else {
      this.unlabelledNamespaces.delete(name);
    }
    if (plan.rebuildVersion) {
      const version = plan.rebuildVersion;
      const body = newVersionObject(s, version, version === INITIAL_VERSION ? 'initial' : 'major', s.spec);
      body.metadata.annotations = { [REBUILT_AT_ANNOTATION]: new Date(this.deps.now()).toISOString() };
      body.metadata.finalizers = [VERSION_PROTECTION_FINALIZER];
      try {
        const created = await this.deps.api.createSchedulerVersion(body);
        await this.deps.api.patchSchedulerVersionStatus(created.metadata.name as string, { status: { active: true } });
        this.deps.logger.warn('rebuilt the active version of a scheduler from its spec after it was deleted', { scheduler: name, version });
      } catch (err) {
        if (apiStatus(err) !== 409) throw err;
        requeueAfterMs = 1000;
      }
    }
    for (const version of plan.unflag) {
      if (!(await this.unflag(name, s.status?.version as string, version))) requeueAfterMs = 1000;
    }
    let restoreVersion: string | undefined;
    if (plan.restoreVersion) {
      // Read again, not from the caches: a switch the version cache has not seen yet (its new
      // version object, its flags) must not be undone.
      if (await this.confirmEdited(name, s.status?.version as string, plan.restoreVersion)) restoreVersion = plan.restoreVersion;
      else requeueAfterMs = 1000;
    }
    return { conditions: plan.conditions, requeueAfterMs, restoreVersion };
  }

  /**
   * Whether the API server agrees: `named`'s SchedulerVersion (if any) does not say it is active
   * (with `flaggedToo`, it does), `active`'s does, and no switch_active_version is queued or
   * running (one between its flags and status.version is not an edit).
   */
  private async confirmEdited(name: string, named: string, active: string, flaggedToo = false): Promise<boolean> {
    const read = async (version: string) => this.deps.api.getSchedulerVersion(versionObjectName(name, version)).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    const held = await read(named);
    if ((held?.status?.active === true) !== flaggedToo) return false;
    if (held && switchInFlight((await this.deps.api.listOperations(name)).items)) return false;
    const v = await read(active);
    return v?.status?.active === true && !v.metadata.deletionTimestamp;
  }

  /**
   * Sets `version`'s SchedulerVersion back to inactive when the API server agrees that `active`'s
   * says it is active, `version`'s says so too and no switch is queued or running; says so in a
   * Warning. False when it could not tell (read again later).
   */
  private async unflag(name: string, active: string, version: string): Promise<boolean> {
    if (!(await this.confirmEdited(name, version, active, true))) return false;
    try {
      await this.deps.api.patchSchedulerVersionStatus(versionObjectName(name, version), { status: { active: false } });
    } catch (err) {
      if (apiStatus(err) === 404) return true;
      throw err;
    }
    const note = `SchedulerVersion ${versionObjectName(name, version)} said it is active, but no switch_active_version made it so (an edit of its status): set back to inactive; ${active} stays active and no room was made or replaced for ${version}: ${switchHint(name, version)}`;
    schedulerEvent(this.deps, name, 'StatusVersionRestored', 'RestoreActiveVersion', note);
    this.deps.logger.warn('set a SchedulerVersion back to inactive: its status was edited to say it is active', { scheduler: name, version, active });
    return true;
  }

  private versionsOf(schedulerName: string): SchedulerVersion[] {
    return cachedVersionsOf(this.deps.caches, schedulerName);
  }

  private async setProtection(objectName: string, on: boolean): Promise<void> {
    const v = this.deps.caches.versions.get(objectName);
    if (!v) return;
    const others = (v.metadata.finalizers ?? []).filter((f) => f !== VERSION_PROTECTION_FINALIZER);
    try {
      await this.deps.api.patchSchedulerVersion(objectName, {
        metadata: { finalizers: on ? [...others, VERSION_PROTECTION_FINALIZER] : others, resourceVersion: v.metadata.resourceVersion },
      });
    } catch (err) {
      // 409: the version changed meanwhile (its update event brings us back); 404: it is gone.
      if (apiStatus(err) !== 409 && apiStatus(err) !== 404) throw err;
    }
  }

  private async releaseVersions(schedulerName: string): Promise<void> {
    for (const v of this.versionsOf(schedulerName)) {
      if (v.metadata.finalizers?.includes(VERSION_PROTECTION_FINALIZER)) await this.setProtection(v.metadata.name as string, false);
    }
  }

  /**
   * Enqueues the first or the next attempt of what the Scheduler wants done (attempts.ts).
   * `firstSource`: who made the change the first attempt is for, when the Scheduler says so.
   */
  private async attempt(name: string, ops: readonly Operation[], rule: AttemptRule, firstSource?: OperationSource): Promise<ReconcileResult> {
    const decision = decideAttempt(ops, rule, this.deps.now());
    if (decision.action === 'wait') return { requeueAfterMs: decision.ms };
    if (decision.action === 'enqueue') {
      // A first attempt is what the Scheduler object asks (a kubectl user's change, unless it says
      // otherwise); another is the operator's retry.
      const created = await this.enqueue(name, decision.id, rule.definitionName, decision.input, decision.id === rule.firstId ? firstSource : OperationSourceName.Operator);
      if (created === 'created' && decision.id !== rule.firstId) {
        this.deps.logger.warn('enqueued another attempt of an operation that ended without doing its work', { scheduler: name, operation: decision.id, definition: rule.definitionName, attempt: decision.input.attempt });
      }
    }
    return {};
  }

  /** `exists`: the gateway enqueued the same operation first (this cache has not seen it yet). */
  /** `source`: who made the change (an operation of the service, the operator's retry); kubectl when not said. */
  private async enqueue(schedulerName: string, id: string, definitionName: string, input: Record<string, unknown>, source: OperationSource = OperationSourceName.Kubectl): Promise<'created' | 'exists'> {
    try {
      const created = await this.deps.api.createOperation(buildOperation({ id, schedulerName, definitionName, input, source, enqueuedAt: this.deps.now() }));
      this.opts.track?.(created);
      this.deps.logger.info('enqueued operation for a change made to the Scheduler object', { scheduler: schedulerName, operation: id, definition: definitionName });
      return 'created';
    } catch (err) {
      if (apiStatus(err) !== 409) throw err;
      return 'exists';
    }
  }

  /**
   * `restoreVersion`: status.version named a version no SchedulerVersion holds, or one whose does not
   * say it is active, and this one's says it is (owned-objects.ts): written in the same patch, on the
   * resourceVersion read.
   */
  private async writeStatus(s: Scheduler, ops: readonly Operation[], extra: readonly ConditionDraft[] = [], restoreVersion?: string): Promise<ReconcileResult> {
    const name = s.metadata.name as string;
    const maxRooms = this.deps.config.maxRoomsPerScheduler;
    const computed = computeSchedulerStatus(s, ops, this.deps.caches.rooms.list(name), this.deps.now(), cachedVersions(this.deps.caches), maxRooms);
    const stamp = { observedGeneration: s.metadata.generation ?? 1, lastTransitionTime: new Date(this.deps.now()).toISOString() };
    const next = extra.length === 0 ? computed
      : { ...computed, conditions: mergeConditions(s.status?.conditions ?? [], [...(computed.conditions ?? []), ...extra.map((c) => ({ ...c, ...stamp }))]) };
    if (!restoreVersion && !statusChanged(s.status, next)) return {};
    // Room counts alone are written at most once a debounce: each write comes back as an update
    // event and a recount, and while thousands of rooms change that loop recounted the fleet several
    // times a second (benchmark 10's operator profile). Any other change is written at once.
    const now = this.deps.now();
    const last = this.statusWrittenAt.get(name);
    if (!restoreVersion && last !== undefined && onlyRoomCountsChanged(s.status, next)) {
      const wait = last + this.deps.config.autoscaleDebounce - now;
      if (wait > 0) return { requeueAfterMs: wait };
    }
    // status.rooms.desired is this controller's alone: the count in force (desiredInForce), from
    // the health check's decision (status.autoscaling) or the spec's roomsReplicas, which an
    // add_rooms or remove_rooms moves while it runs and the health check decides nothing. A new
    // value is written on the resourceVersion it was computed from, so that a decision this cache
    // has not seen yet is never undone, and DESIRED and Ready never say another count.
    const moved = next.rooms?.desired !== s.status?.rooms?.desired;
    // None decided (yet): one stored is cleared (a merge patch keeps a field left out).
    const rooms = { ...next.rooms, ...(moved && next.rooms?.desired === undefined ? { desired: null } : {}) };
    try {
      // A merge patch merges maps: versions no longer present must be removed explicitly.
      const gone = Object.keys(s.status?.roomsByVersion ?? {}).filter((v) => !(v in (next.roomsByVersion ?? {})));
      const roomsByVersion = { ...next.roomsByVersion, ...Object.fromEntries(gone.map((v) => [v, null])) };
      if (restoreVersion) {
        const edited = s.status?.version as string;
        await this.deps.api.patchSchedulerStatus(name, { metadata: { resourceVersion: s.metadata.resourceVersion }, status: { ...next, rooms, roomsByVersion, version: restoreVersion } });
        const versions = this.versionsOf(name);
        const held = versions.some((v) => v.spec.version === edited);
        const note = `status.version named ${editedVersionWords(edited, versions)}; ${restoreVersion} is active (its SchedulerVersion says so); status.version was set back to it, and no room was made, replaced or rebuilt for ${edited}: ${switchHint(name, held ? edited : undefined)}`;
        schedulerEvent(this.deps, name, 'StatusVersionRestored', 'RestoreActiveVersion', note);
        this.deps.logger.warn('set status.version back to the active version: it was edited to a version that is not the active one', { scheduler: name, named: edited, active: restoreVersion });
      } else {
        const readAt = moved ? { metadata: { resourceVersion: s.metadata.resourceVersion } } : {};
        await this.deps.api.patchSchedulerStatus(name, { ...readAt, status: { ...next, rooms, roomsByVersion } });
      }
      this.statusWrittenAt.set(name, now);
    } catch (err) {
      // 409 on a restore or a new desired count: the Scheduler changed since it was read; its
      // update event brings us back.
      if (apiStatus(err) === 409 && (restoreVersion || moved)) return { requeueAfterMs: 1000 };
      if (apiStatus(err) === 422) this.tellRefused(s, err);
      if (apiStatus(err) !== 404) throw err;
    }
    return {};
  }

  /**
   * A status write refused as invalid: kube-apiserver validates the whole Scheduler on every write,
   * so a spec an older, laxer CRD admitted makes the installed CRD refuse them all (trial S: the
   * status kept saying in-sync and Ready, and only a log line every 30 s said otherwise). Told once
   * per generation and refusal: a Warning Event and an error log line, with what to do.
   */
  private tellRefused(s: Scheduler, err: unknown): void {
    const name = s.metadata.name as string;
    const why = describeApiError(err);
    const key = `${s.metadata.uid ?? ''}/${s.metadata.generation ?? 0}/${why}`;
    if (this.toldRefused.get(name) === key) return;
    this.toldRefused.set(name, key);
    const note = `The installed Scheduler CRD refuses every write of this Scheduler as it stands (${why}): it was admitted by an older CRD whose checks were laxer. `
      + `Until the fields named are fixed (kubectl edit rks ${name}), its status is not updated (state, rooms and conditions stay as last written) and every operation that writes it fails, its deletion included; its rooms keep running`;
    schedulerEvent(this.deps, name, 'SchedulerRefusedByCRD', 'WriteStatus', note);
    this.deps.logger.error('the installed Scheduler CRD refuses every write of this scheduler; fix the fields it names (kubectl edit rks)', { scheduler: name, error: why });
  }
}

/** The earlier of two wake-ups (none when neither asks for one). */
function sooner(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  if (a.requeueAfterMs === undefined) return b;
  if (b.requeueAfterMs === undefined) return a;
  return { requeueAfterMs: Math.min(a.requeueAfterMs, b.requeueAfterMs) };
}
