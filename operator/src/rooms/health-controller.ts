/**
 * The health check of each scheduler (key: scheduler name), run on an interval and, debounced, on
 * room status changes. It computes (pure rules in `domain/`) which rooms expired and how many
 * rooms are missing or too many — autoscaling included — and enqueues PRIORITY operations for
 * them, each with a reason, so the history explains every room that came or went. It never acts
 * while the scheduler's queue is busy: one decision at a time, on fresh counts. It never enqueues
 * what would fail for sure (no namespace) or fail as the last try did (domain/repeated-failure.ts):
 * a failure that repeats is tried again with backoff, or at once when something changed.
 * Housekeeping it does whatever the queue holds: deleted rooms' foreground finalizers, stale
 * PingDigests, and room pods that run without their GameRoom (orphaned-pods.ts).
 */
import { schedulerEvent } from '../events';
import { createHash } from 'node:crypto';
import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { apiStatus, describeApiError, isNotFound } from '../../../common/src/kube/clients';
import { forEachConcurrent } from '../../../common/src/runtime/concurrent';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { newOperationId } from '../../../common/src/operations/operation-id';
import type { OperationInputs, RemoveRoomsByIdsInput } from '../../../common/src/operations/operation-inputs';
import { OperationDefinition, OperationSourceName, RemoveRoomsReason, type OperationDefinitionName } from '../../../common/src/resources/operation-names';
import { ATTEMPT_ANNOTATION, HEALTH_FINGERPRINT_ANNOTATION, LOST_ROOMS_ANNOTATION } from '../../../common/src/resources/labels';
import { roomsMaxMatches } from '../../../common/src/rooms/room-status';
import { activeDefinition, flaggedActive, recordedActiveVersion, versionObjectName } from '../../../common/src/resources/scheduler-version';
import { nameList } from '../../../common/src/text/name-list';
import { cachedVersions, cachedVersionsOf, type OperatorDeps } from '../deps';
import type { ReconcileResult } from '../runtime/work-queue';
import { desiredRooms, type DesiredRooms } from './domain/desired-count';
import { canTakeRooms } from './domain/node-availability';
import { expiryBrake, PingFlow, type ExpiryBrakeInput } from './domain/expiry-brake';
import { isSilent, surplusErrorRooms } from './domain/expiry';
import { digestStaleAfterMs, staleDigests } from './domain/stale-digests';
import { silenceMarks, type SilenceMarks } from './domain/silence-marks';
import type { RoomView } from './domain/types';
import { availableWords, keptAboveDesiredNote, keptNote, planHealth, silentCountedNote, silentStandIns } from './domain/health-plan';
import { decideRetry, HEALING_DEFINITIONS, incidentOf, prunableFailures } from './domain/repeated-failure';
import { summarizeFleet } from './domain/fleet-summary';
import { describeFailingRooms, failingRooms, keptSilentRooms, probeAmount, probeIntervalMs, probeWords, silentRooms, type FailingRooms } from './domain/failing-rooms';
import { leavingOnItsOwn, type LostRoom, lostToName, MAX_LOST_ROOMS } from './domain/lost-rooms';
import { outsideDeletionNote, type OutsideDeletions } from './outside-deletions';
import { OrphanedPods } from './orphaned-pods';
import { roomsWaitingForPorts } from './port-wait';
import { FOREGROUND_DELETION, RoomManager } from './room-manager';
import { counted } from '../../../common/src/text/counted';
import { describeCalm, describeChurn, roomChurn } from './domain/room-churn';

export interface HealthControllerOptions {
  operationsOf: (schedulerName: string) => Operation[];
  /**
   * Makes an operation just created visible to `operationsOf` before the cache has it (the
   * operation runner's overlay). Without it, a cache behind the API server (its watch broken
   * after an outage) keeps showing an idle queue, and each run enqueues the same healing again.
   */
  track?: (op: Operation) => void;
  /** Rooms deleted outside Roomkeeper, told in a Scheduler Event with what replaces them. */
  outside?: OutsideDeletions;
  /** A hold of room expiry began, ended or changed its words for the scheduler (`heldExpiryOf`): its HealingHeld condition is written again. */
  heldExpiryChanged?: (schedulerName: string) => void;
  /** The scheduler's rooms began or stopped churning (`churnOf`): its RoomsChurning condition is written again. */
  churnChanged?: (schedulerName: string) => void;
}

/** How soon a health check held for a stale cache looks again (a relist takes about this long). */
const STALE_RECHECK_MS = 1_000;
/**
 * How long a decision this replica wrote is taken as on its way to the schedulers cache; after it,
 * a cache that still shows an older decision is believed (written again: level-based).
 */
const DECISION_ECHO_MS = 30_000;

/**
 * What HealingHeld says while room expiry is held for `reason` (`silence`: the wide silence's
 * words, with its counts); `until`: when a sight gained lately has lasted `graceS` seconds (the
 * expiry grace: one ping timeout unless ROOMKEEPER_EXPIRY_GRACE says otherwise).
 */
function expiryHoldWords(reason: 'sight-impaired' | 'fresh-sight' | 'mass-expiry', silence: string, until: string, graceS: number): string {
  if (reason === 'mass-expiry') return `room expiry held (RoomExpiryHeld): ${silence}; meanwhile these rooms stay counted ready, and those not marked silent before (status.silentSince) may be allocated`;
  if (reason === 'sight-impaired') return 'room expiry held: the operator\'s room caches cannot reach the API server, so no room is expired (a room that looks silent may only be unseen) until they reach it again (the operator\'s log says what fails)';
  return `room expiry held: the operator has seen the cluster only since it gained leadership or its caches reconnected, and pings may not have reached it yet, so rooms that look expired are expired no sooner than ${until} (the expiry grace, ${graceS} s, later), and only those still silent then`;
}

export class HealthController {
  private readonly rooms: RoomManager;
  private readonly orphanedPods: OrphanedPods;
  private readonly expiryHeld: { inc(labels: { reason: string }, by?: number): void };
  /**
   * Per scheduler, while expiry is held: why (logged once when it starts), and its words as the
   * last health check found them, which HealingHeld shows.
   */
  private readonly held = new Map<string, { reason: string; words: string }>();
  /** Whether pings reach the operator, cluster-wide: a wide silence is held only while they are not shown to. */
  private readonly pingFlow = new PingFlow();
  /** Per scheduler, the status.version the health check holds on (not the active version's: logged once). */
  private readonly heldVersion = new Map<string, string>();
  /** Schedulers whose health check waits for current caches (logged once per wait). */
  private readonly heldStale = new Set<string>();
  /** Per scheduler, the healing operation held back by a repeated failure (logged once). */
  private readonly heldRetry = new Map<string, string>();
  /**
   * Per scheduler, the RoomsKeptAboveDesired Event last told (its note): told again only when its
   * numbers change, or when the situation ends and comes back.
   */
  private readonly keptAbove = new Map<string, string>();
  /** The last SilentRoomsCounted words told for each scheduler. */
  private readonly silentCounted = new Map<string, string>();
  /**
   * Per scheduler, the room count decision this replica wrote last, and when: until the schedulers
   * cache shows that write (its watch event is on its way), a check reads the status before it
   * and would write the same decision again and tell its AutoscalingDecision Event twice.
   */
  private readonly decisionWritten = new Map<string, { decision: string; at: number }>();
  /** Per scheduler, the version whose failing rooms are made one at a time (told once per hold). */
  private readonly failingVersion = new Map<string, string>();
  /** Per scheduler, the churn of its rooms as the last health check found it (domain/room-churn.ts). */
  private readonly churn = new Map<string, { churning: boolean; message: string }>();
  /** Per scheduler, when its silence marks were last judged while its operations ran (judgeSilenceWhileBusy). */
  private readonly busySilenceJudgedAt = new Map<string, number>();
  /** Schedulers whose rooms wait for host ports no node has free (told once each time it starts). */
  private readonly portWaitTold = new Set<string>();
  /** Stale PingDigests (`scheduler/name`) whose deletion failed and was logged: logged once each. */
  private readonly digestDeleteFailed = new Set<string>();
  /** Rooms whose finalizer release is in flight (`scheduler/room`), so two checks never race on one. */
  private readonly releasing = new Set<string>();

  /**
   * The words of this replica's hold of the scheduler's room expiry (the expiry brake: caches that
   * cannot reach the API server, a sight gained less than a ping timeout ago, or a wide silence),
   * while it holds it (the HealingHeld condition shows them: scheduler-controller.ts); undefined otherwise.
   */
  heldExpiryOf(schedulerName: string): string | undefined {
    return this.held.get(schedulerName)?.words;
  }

  /**
   * Whether the scheduler's rooms of the active version keep failing after they pinged, and the
   * words of it, as the last health check found them (the RoomsChurning condition shows them:
   * scheduler-controller.ts); undefined before this replica's first check of it.
   */
  churnOf(schedulerName: string): { churning: boolean; message: string } | undefined {
    return this.churn.get(schedulerName);
  }

  /**
   * Reads the churn of the scheduler's rooms from the failures this replica saw (room-failures.ts),
   * tells its start in a Warning Event and the log, its end in the log, and either change to the
   * scheduler controller, which writes the condition.
   */
  private watchChurn(s: Scheduler, desired: number): void {
    const failures = this.deps.roomFailures;
    const version = s.status?.version;
    if (!failures || !version) return;
    const name = s.metadata.name as string;
    failures.zeroFor(name);
    const churn = roomChurn(failures.of(name), { activeVersion: version }, desired, this.deps.now(), failures.since);
    const was = this.churn.get(name);
    const message = churn.churning ? describeChurn(churn, name, version) : describeCalm(churn, version);
    this.churn.set(name, { churning: churn.churning, message });
    if (was?.churning === churn.churning) return;
    if (churn.churning) {
      this.deps.logger.warn('rooms of the active version keep failing after their game server pinged', { scheduler: name, version, failed: churn.failed.length, mark: churn.mark, detail: message });
      schedulerEvent(this.deps, name, 'RoomsChurning', 'ReplaceRooms', message);
    } else if (was?.churning) {
      this.deps.logger.info('rooms of the active version no longer keep failing after they pinged', { scheduler: name, version, failed: churn.failed.length, mark: churn.mark });
    }
    this.opts.churnChanged?.(name);
  }

  /** Records the hold (undefined: none), telling `heldExpiryChanged` when its words changed. */
  private setHeld(schedulerName: string, hold: { reason: string; words: string } | undefined): void {
    const before = this.held.get(schedulerName)?.words;
    if (hold === undefined) this.held.delete(schedulerName);
    else this.held.set(schedulerName, hold);
    if (before !== hold?.words) this.opts.heldExpiryChanged?.(schedulerName);
  }

  constructor(private readonly deps: OperatorDeps, private readonly opts: HealthControllerOptions) {
    this.rooms = new RoomManager(deps);
    this.orphanedPods = new OrphanedPods(deps);
    this.expiryHeld = deps.metrics.counter('roomkeeper_room_expiry_held_total', 'Health checks that held room expiry (expiry brake), by reason: sight-impaired, fresh-sight, mass-expiry.', { labelNames: ['reason'] });
    // Every reason shows 0 from the start, so rate() and alerts on it have data before the first hold.
    for (const reason of ['sight-impaired', 'fresh-sight', 'mass-expiry']) this.expiryHeld.inc({ reason }, 0);
  }

  /**
   * Rooms deleted in the foreground whose pods are gone wait only for the garbage collector to
   * remove their `foregroundDeletion` finalizer; the operator removes it (RoomManager), so room
   * deletions never wait on kube-controller-manager's pace.
   */
  private async releaseDeletedRooms(name: string): Promise<void> {
    const waiting = this.deps.caches.rooms.list(name).filter((r) => r.metadata.deletionTimestamp
      && r.metadata.finalizers?.includes(FOREGROUND_DELETION)
      && !this.deps.caches.pods.get(r.metadata.name as string, name)
      && !this.releasing.has(`${name}/${r.metadata.name as string}`));
    if (waiting.length === 0) return;
    const keys = waiting.map((r) => `${name}/${r.metadata.name as string}`);
    for (const k of keys) this.releasing.add(k);
    try {
      await forEachConcurrent(waiting, this.deps.config.addRoomsConcurrency, (room) => this.rooms.releaseForegroundDeletion(room).catch((err: unknown) => {
        this.deps.logger.debug('could not release a deleted room; the next health check tries again', { scheduler: name, room: room.metadata.name, error: describeApiError(err) });
      }));
    } finally {
      for (const k of keys) this.releasing.delete(k);
    }
  }

  /**
   * Deletes the PingDigests of this scheduler's namespace that their gateway replica has not
   * written for much longer than the flush interval and the room ping timeout
   * (domain/stale-digests.ts: 2 × (ROOMKEEPER_ROOM_PING_TIMEOUT + ROOMKEEPER_PING_FLUSH_INTERVAL),
   * 9 min by default): their replica is gone (each gateway pod name leaves one per scheduler), and
   * none of their ping times can keep a room alive any more. Each with the resourceVersion it was
   * judged on as precondition, so one written since stays; a live replica's digest deleted anyway
   * is created again at its next flush.
   */
  private async deleteStaleDigests(name: string): Promise<void> {
    const staleAfterMs = digestStaleAfterMs({ pingTimeoutMs: this.deps.config.roomPingTimeout, flushIntervalMs: this.deps.config.pingFlushInterval });
    const now = this.deps.now();
    for (const digest of staleDigests(this.deps.caches.digests.list(name), now, staleAfterMs)) {
      try {
        await this.deps.api.deletePingDigest(name, digest.name, { resourceVersion: digest.resourceVersion });
        this.deps.logger.info('deleted the PingDigest of a gateway replica that stopped writing it (the replica is gone); if that replica still runs, it writes the digest again at its next flush', {
          scheduler: name, digest: digest.name, replica: digest.replica, unwrittenForS: Math.round((now - digest.writtenAt) / 1000), staleAfterS: Math.round(staleAfterMs / 1000),
        });
      } catch (err) {
        // Gone already, or written since (409 on the precondition): either way not stale.
        if (isNotFound(err) || apiStatus(err) === 409) continue;
        if (this.digestDeleteFailed.has(`${name}/${digest.name}`)) continue;
        if (this.digestDeleteFailed.size > 10_000) this.digestDeleteFailed.clear();
        this.digestDeleteFailed.add(`${name}/${digest.name}`);
        this.deps.logger.warn('could not delete a stale PingDigest; the next health check tries again (the operator needs delete on pingdigests: see the chart\'s operator ClusterRole)', {
          scheduler: name, digest: digest.name, replica: digest.replica, error: describeApiError(err),
        });
      }
    }
  }

  /**
   * Rooms silent past the silence timeout are allocated no more (domain/silence-marks.ts), and
   * rooms heard again are offered again: judged at each health check, on its views, and once a
   * health interval while operations run (judgeSilenceWhileBusy). A silence as wide
   * as one that holds expiry marks none, for the same reasons, with a shorter grace after the
   * operator gains its sight: a mark is undone by the next ping, a removal is not.
   */
  private async judgeSilence(name: string, fleet: readonly RoomView[], decidedOn: ReadonlyMap<string, string | undefined>, brakeInput: Omit<ExpiryBrakeInput, 'expiring' | 'silent' | 'fleet'>): Promise<void> {
    const marks = silenceMarks(fleet, brakeInput.now, this.deps.config.roomSilenceTimeout);
    if (marks.mark.length === 0 && marks.clear.length === 0) return;
    const brake = expiryBrake({
      ...brakeInput, expiring: marks.mark.length, silent: marks.silent, fleet: fleet.length,
      graceMs: Math.min(brakeInput.graceMs, this.deps.config.roomSilenceTimeout),
    });
    await this.writeSilenceMarks(name, brake.hold ? { ...marks, mark: [] } : marks, decidedOn);
  }

  /**
   * Marks rooms silent and clears the marks of rooms heard again (`status.silentSince`, this
   * controller's field). A mark carries the resourceVersion it was decided on, so a room written
   * since (a ping that changed its status) is judged again at the next check; a failed write is
   * tried again there too.
   */
  private async writeSilenceMarks(name: string, marks: SilenceMarks, decidedOn: ReadonlyMap<string, string | undefined>): Promise<void> {
    const writes = [
      ...marks.mark.map((m) => ({ room: m.name, status: { silentSince: new Date(m.since).toISOString() }, resourceVersion: decidedOn.get(m.name) })),
      ...marks.clear.map((room) => ({ room, status: { silentSince: null }, resourceVersion: undefined })),
    ];
    if (writes.length === 0) return;
    const failed: string[] = [];
    await forEachConcurrent(writes, this.deps.config.addRoomsConcurrency, async (w) => {
      try {
        await this.deps.api.patchGameRoomStatus(name, w.room, { ...(w.resourceVersion ? { metadata: { resourceVersion: w.resourceVersion } } : {}), status: w.status });
      } catch (err) {
        if (isNotFound(err) || apiStatus(err) === 409) return; // gone, or written since: judged again at the next check
        failed.push(`${w.room}: ${describeApiError(err)}`);
      }
    });
    const timeoutS = Math.round(this.deps.config.roomSilenceTimeout / 1000);
    if (marks.mark.length > 0) {
      this.deps.logger.info('rooms marked silent: no ping seen for longer than the silence timeout, so they are not allocated until one is (their game servers may hang); the health check makes a room in place of each (up to maxSurge; not while a rolling update runs), and each is removed at the ping timeout if it stays silent', {
        scheduler: name, count: marks.mark.length, rooms: marks.mark.slice(0, 5).map((m) => m.name), silenceTimeoutS: timeoutS,
      });
    }
    if (marks.clear.length > 0) {
      this.deps.logger.info('silent rooms heard again: they may be allocated again', { scheduler: name, count: marks.clear.length, rooms: marks.clear.slice(0, 5) });
    }
    if (failed.length > 0) {
      this.deps.logger.warn('could not write the silence mark of some rooms; the next health check tries again', { scheduler: name, count: failed.length, first: failed.slice(0, 3) });
    }
  }

  private timeouts(): { initTimeoutMs: number; pingTimeoutMs: number; deletionTimeoutMs: number } {
    return {
      initTimeoutMs: this.deps.config.roomInitTimeout,
      pingTimeoutMs: this.deps.config.roomPingTimeout,
      deletionTimeoutMs: this.deps.config.roomDeletionTimeout,
    };
  }

  /** Half the init and ping timeouts: a room silent that long counts towards a wide silence. */
  private halfTimeouts(): { initTimeoutMs: number; pingTimeoutMs: number; deletionTimeoutMs: number } {
    const timeouts = this.timeouts();
    return { ...timeouts, initTimeoutMs: timeouts.initTimeoutMs / 2, pingTimeoutMs: timeouts.pingTimeoutMs / 2 };
  }

  /** What the expiry brake weighs besides the counts, the same for expiry and for the silence marks. */
  private brakeInputOf(name: string, now: number): Omit<ExpiryBrakeInput, 'expiring' | 'silent' | 'fleet'> {
    const timeouts = this.timeouts();
    const halfTimeouts = this.halfTimeouts();
    const sight = this.deps.sight?.() ?? { impaired: false, since: 0 };
    return {
      now,
      sightSince: sight.since,
      sightImpaired: sight.impaired,
      graceMs: this.deps.config.expiryGrace > 0 ? this.deps.config.expiryGrace : this.deps.config.roomPingTimeout,
      share: this.deps.config.expiryBrakeShare,
      min: this.deps.config.expiryBrakeMin,
      pingsFlowingSince: this.pingFlow.look(now, this.rooms.lastDigestFlush(), timeouts.pingTimeoutMs),
      pingTimeoutMs: timeouts.pingTimeoutMs,
      othersHeardShare: () => this.rooms.heardShareOutside(name, now, halfTimeouts),
    };
  }

  /**
   * While the scheduler's operations run, the health check waits for them (a rollout of a large
   * fleet: many minutes), but a hung game server must not stay allocatable that long: the silence
   * marks alone are judged, on the cache as it is (each write is conditional on the version judged),
   * at most once a health interval.
   */
  private async judgeSilenceWhileBusy(name: string): Promise<void> {
    const now = this.deps.now();
    const last = this.busySilenceJudgedAt.get(name);
    if (last !== undefined && now - last < this.deps.config.healthInterval) return;
    this.busySilenceJudgedAt.set(name, now);
    const views = this.rooms.views(name);
    await this.judgeSilence(name, views.filter((r) => !r.validation), new Map(views.map((r) => [r.name, r.resourceVersion])), this.brakeInputOf(name, now));
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const interval = { requeueAfterMs: this.deps.config.healthInterval };
    // Nothing is decided on a cache that is not current: after an outage one still shows the
    // cluster as it was until it relists, and a rollout decided on that added a batch of rooms
    // twice (the expectations of the first had lapsed), while pending operations it did not see
    // were enqueued again and again.
    const stale = this.deps.staleCaches?.() ?? [];
    if (stale.length > 0) {
      if (!this.heldStale.has(name)) this.deps.logger.info('health check waits for current caches', { scheduler: name, caches: stale });
      this.heldStale.add(name);
      return { requeueAfterMs: STALE_RECHECK_MS };
    }
    this.heldStale.delete(name);
    await this.releaseDeletedRooms(name); // housekeeping, also while operations run or the scheduler goes
    await this.deleteStaleDigests(name);
    const s = this.deps.caches.schedulers.get(name);
    if (!s || s.metadata.deletionTimestamp) this.opts.outside?.clear(name); // its rooms go with it
    if (!s || s.metadata.deletionTimestamp || !s.status?.version) {
      this.orphanedPods.forget(name);
      this.churn.delete(name);
      this.busySilenceJudgedAt.delete(name);
      this.keptAbove.delete(name);
      this.silentCounted.delete(name);
      this.decisionWritten.delete(name);
      this.heldVersion.delete(name);
      this.failingVersion.delete(name);
      this.portWaitTold.delete(name);
      return {};
    }
    // Housekeeping too, while operations run: room pods whose GameRoom was deleted with them orphaned.
    await this.orphanedPods.sweep(name);
    const ops = this.opts.operationsOf(name);
    if (ops.some((op) => ['pending', 'in_progress'].includes(op.status?.status ?? 'pending'))) {
      await this.judgeSilenceWhileBusy(name);
      return { requeueAfterMs: 500 };
    }
    this.busySilenceJudgedAt.delete(name);
    await this.pruneRepeatedFailures(ops); // needs no room counts: as soon as the last try ended
    // Decide on counts the cache shows whole: the rooms the last operation wrote first (expectations.ts).
    if (this.deps.expectations && !this.deps.expectations.satisfied(name)) return { requeueAfterMs: 100 };
    // Without its namespace (deleted, or still terminating) every room operation would fail:
    // the scheduler controller rebuilds it first; its informer event brings us back.
    const ns = this.deps.caches.namespaces.get(name);
    if (!ns || ns.metadata?.deletionTimestamp) {
      // Rooms deleted with their namespace: the scheduler controller tells the namespace's rebuild.
      this.opts.outside?.clear(name);
      return interval;
    }
    // Rooms are made only of the version the operator's record says is active: status.version
    // edited (kubectl patch --subresource=status) to an older version or to one no SchedulerVersion
    // holds, or a versions cache that does not show a switch's flags yet, is no rollout towards it.
    // Nothing is decided until they agree: the scheduler controller sets an edited status.version
    // back, and its informer event (or the versions') brings us back. The named version's flag is
    // read first, so the scheduler's versions are walked only when it is not set.
    if (cachedVersions(this.deps.caches)(name, s.status.version)?.status?.active !== true) {
      const versions = cachedVersionsOf(this.deps.caches, name);
      if (recordedActiveVersion(s.status.version, versions) !== s.status.version) {
        if (this.heldVersion.get(name) !== s.status.version) {
          this.deps.logger.info('health check holds: status.version names a version whose SchedulerVersion does not say it is active; no room is added, removed or replaced until they agree (the scheduler controller sets an edited status.version back to the active one; switch versions with PUT /schedulers/{name})', {
            scheduler: name, statusVersion: s.status.version, sayActive: flaggedActive(versions),
          });
        }
        this.heldVersion.set(name, s.status.version);
        return interval;
      }
    }
    this.heldVersion.delete(name);

    const now = this.deps.now();
    const views = this.rooms.views(name);
    const timeouts = this.timeouts();
    const fleet = views.filter((r) => !r.validation);
    // The version of each room the decisions below are made on (the cache moves on meanwhile).
    const decidedOn = new Map(views.map((r) => [r.name, r.resourceVersion]));
    const maxMatches = roomsMaxMatches(s, cachedVersions(this.deps.caches));
    const summary = summarizeFleet(views, now, timeouts, maxMatches);
    const lastDownscaleAt = Date.parse(s.status.autoscaling?.lastDownscaleAt ?? '') || undefined;
    // The autoscaling policy and maxSurge are the active version's: the spec may hold a change that
    // was refused (or is still being validated). roomsReplicas is the spec's: the count kubectl
    // scale (the scale subresource) and add/remove-rooms write, in force as written, as a
    // Deployment's replicas are whatever its rollout does (withCountInForce keeps it the same way).
    const { autoscaling, maxSurge } = activeDefinition(s, cachedVersions(this.deps.caches));
    const activeVersion = s.status.version;
    const autoscalingMax = autoscaling?.enabled && autoscaling.max >= 0 ? autoscaling.max : undefined;
    // Silent rooms a room is made in place of are no part of the fleet the autoscaler compares with:
    // a downscale it held would keep them, and the plan would make one more in their place at every check.
    const standIns = silentStandIns(summary.available, { maxSurge, autoscalingMax, activeVersion, desired: s.status.autoscaling?.desired });
    const decision = desiredRooms({
      roomsReplicas: s.spec.roomsReplicas, autoscaling, counts: summary.counts, available: summary.available.length - standIns.standIns, now, lastDownscaleAt, maxMatches,
      maxRooms: this.deps.config.maxRoomsPerScheduler, lastDesired: s.status.autoscaling?.desired,
    });
    const planWith = (t: typeof timeouts) => planHealth({
      rooms: views,
      desired: decision.desired,
      target: decision.target,
      now,
      timeouts: t,
      activeVersion,
      maxSurge,
      autoscalingMax,
      silent: standIns,
    });
    let plan = planWith(timeouts);
    // The expiry brake: rooms that look dead only because their pings were not seen are held
    // while the operator's own sight is in doubt (rooms stuck terminating are not held).
    const noPingTimeouts = { ...timeouts, initTimeoutMs: Number.POSITIVE_INFINITY, pingTimeoutMs: Number.POSITIVE_INFINITY };
    const halfTimeouts = this.halfTimeouts();
    const withoutPingExpiry = planWith(noPingTimeouts);
    const brakeInput = this.brakeInputOf(name, now);
    const { sightSince, graceMs: grace } = brakeInput;
    const brake = expiryBrake({
      ...brakeInput,
      expiring: plan.expired.length - withoutPingExpiry.expired.length,
      silent: fleet.filter((r) => isSilent(r, now, halfTimeouts)).length,
      fleet: fleet.length,
    });
    if (brake.hold) {
      this.expiryHeld.inc({ reason: brake.reason });
      // A wide silence held is the scheduler's to know (kubectl describe): its rooms stay, counted
      // ready, until pings are seen again, in that scheduler or any other.
      const words = `${brake.message}. They are expired once pings are seen reaching the operator for a ping timeout while other schedulers' rooms are mostly heard; if pings do reach the gateways (their logs, roomkeeper_pings_total), check the game servers of these rooms`;
      if (this.held.get(name)?.reason !== brake.reason) {
        // A few of the held rooms with their reasons, so that whoever reads the log can check them.
        const stillExpired = new Set(withoutPingExpiry.expired.map((e) => e.name));
        const held = plan.expired.filter((e) => !stillExpired.has(e.name)).slice(0, 5).map((e) => `${e.name}: ${e.reason}`);
        this.deps.logger.warn('room expiry held', { scheduler: name, reason: brake.reason, detail: brake.message, rooms: held });
        if (brake.reason === 'mass-expiry') schedulerEvent(this.deps, name, 'RoomExpiryHeld', 'HoldExpiry', words);
      }
      // The condition's words: a wide silence's follow its counts, at most once a health check; the
      // other holds' stay the same while they last (no status write per check).
      this.setHeld(name, { reason: brake.reason, words: expiryHoldWords(brake.reason, words, new Date(sightSince + grace).toISOString(), Math.round(grace / 1000)) });
      plan = withoutPingExpiry;
    } else if (this.held.has(name)) {
      this.setHeld(name, undefined);
      this.deps.logger.info('room expiry resumed', { scheduler: name });
    }
    await this.judgeSilence(name, fleet, decidedOn, brakeInput);
    // Rooms of the active version that all fail before they ping are made one at a time, and the
    // newest of those that never pinged are kept rather than expired: the next check's evidence
    // (failing-rooms.ts). A silence the brake holds is no failure.
    const silent = brake.hold ? new Map<string, string>() : silentRooms(fleet, now, timeouts);
    const failing = failingRooms(fleet, { activeVersion }, probeIntervalMs(this.deps.config.healthInterval, this.deps.config.roomPingTimeout), silent);
    const keptSilent = keptSilentRooms(failing);
    const expired = plan.expired.filter((e) => !keptSilent.has(e.name));
    // No operation runs now (see above), so a validation room is one whose operation stopped
    // mid-way (its operator died): it serves nobody.
    for (const room of views) {
      if (room.validation && !room.terminating && !expired.some((e) => e.name === room.name)) {
        expired.push({ name: room.name, reason: 'a validation room no operation uses: the operation that made it stopped mid-way' });
      }
    }
    const ports = roomsWaitingForPorts(this.deps, s, now);
    if (ports && ports.heldWords === undefined) {
      for (const room of ports.rooms) {
        if (!expired.some((e) => e.name === room)) expired.push({ name: room, reason: 'its pod cannot be placed: its host ports are taken on every node that can take it (replaced by a room that draws others)' });
      }
    }
    this.tellPortWait(s, ports?.heldWords);
    for (const { room, reason } of surplusErrorRooms(fleet, { activeVersion })) {
      if (!expired.some((e) => e.name === room.name)) expired.push({ name: room.name, reason });
    }

    const downscaled = decision.recordDownscale && plan.removeReason === RemoveRoomsReason.ScaleDown;
    await this.writeDecision(s, decision, downscaled ? now : undefined);
    this.tellOnChange(this.keptAbove, name, keptAboveDesiredNote(plan, decision.desired), (note) => schedulerEvent(this.deps, name, 'RoomsKeptAboveDesired', 'ScaleDown', note));
    this.tellOnChange(this.silentCounted, name, silentCountedNote(plan), (note) => {
      this.deps.logger.info('rooms marked silent are counted: no room is made in their place beyond the bound', { scheduler: name, detail: note });
      schedulerEvent(this.deps, name, 'SilentRoomsCounted', 'AddRooms', note);
    });

    // One operation removes at most removeRoomsLimit rooms, expired ones and a rollout's alike: its
    // input and its history (which names each room removed) stay far below the largest object the
    // API server stores (etcd's 1.5 MiB) at any fleet size. The next check takes the rest.
    const first = expired.slice(0, this.deps.config.removeRoomsLimit);
    // A room expired for its silence (no ping, or not ready, for a timeout) goes with the
    // version it was judged on: one written since (a status-changing ping of a game server
    // that came back, a player) is kept and judged again, not deleted on a view already out of
    // date. No write can undo the other causes (it reported terminated, its deletion or its pod
    // failed), and the operator's own status writes to such rooms must not hold their removal.
    const notSilence = new Set(withoutPingExpiry.expired.map((e) => e.name));
    const silenced = new Set(plan.expired.filter((e) => !notSilence.has(e.name)).map((e) => e.name));
    // A room expired for its silence failed (one in error was counted when it turned so).
    for (const e of first) {
      const room = silenced.has(e.name) ? this.deps.caches.rooms.get(e.name, name) : undefined;
      if (room) this.deps.roomFailures?.record(room, 'expired', e.reason);
    }
    this.watchChurn(s, decision.desired);
    if (expired.length > 0) {
      const resourceVersions: Record<string, string> = {};
      for (const e of first) {
        const rv = silenced.has(e.name) ? decidedOn.get(e.name) : undefined;
        if (rv) resourceVersions[e.name] = rv;
      }
      return this.enqueue(s, ops, OperationDefinition.RemoveRooms, {
        roomsIds: first.map((e) => e.name),
        reason: RemoveRoomsReason.ExpiredRoom,
        details: first.map((e) => `${e.name}: ${e.reason}`),
        ...(Object.keys(resourceVersions).length > 0 ? { resourceVersions } : {}),
      });
    }
    // A rollout's plan counts its removals before its additions: the removals go first (one
    // operation a run), so the fleet never exceeds desired + maxSurge live rooms.
    if (plan.removeReason === RemoveRoomsReason.RollingUpdateReplace && plan.remove > 0 && plan.removeRooms.length > 0) {
      const input = this.replacement(plan.removeRooms, decidedOn, plan.keepServing ?? decision.desired);
      return this.enqueue(s, ops, OperationDefinition.RemoveRooms, input, `Rolling update to ${s.status.version}: replacing ${counted(input.roomsIds.length, 'room')} of an older version`);
    }
    // Rooms deleted outside Roomkeeper are told with what this decision does about them.
    const outside = this.opts.outside?.of(name);
    const tellOutside = (outcome: string): void => {
      if (!outside) return;
      this.opts.outside?.clear(name);
      schedulerEvent(this.deps, name, 'RoomsDeletedOutsideRoomkeeper', 'DeleteRoom', outsideDeletionNote(outside, outcome));
    };
    const counts = availableWords(plan, decision.desired);
    this.tellFailing(s, failing);
    const add = failing ? probeAmount(plan.add, failing, now) : plan.add;
    if (failing && add === 0 && plan.add > 0) {
      tellOutside(`No room was added for ${outside?.count === 1 ? 'it' : 'them'} yet (${counts}): ${describeFailingRooms(failing, name, activeVersion, now)}.`);
      // A room still starting is waited for at the usual pace (its status change brings a check sooner).
      const untilProbe = failing.starting > 0 ? this.deps.config.healthInterval : failing.probeAt - now;
      return { requeueAfterMs: Math.max(100, Math.min(untilProbe, this.deps.config.healthInterval)) };
    }
    const probe = failing ? `; ${probeWords(failing, activeVersion)}` : '';
    if (add > 0) {
      // Every add_rooms of the health check names the rooms lost since its last one, a rollout's
      // included: the next one would not name them (lost-rooms.ts).
      const leaving = this.deps.caches.rooms.list(name).flatMap((r) => {
        const why = leavingOnItsOwn(r, this.deps.caches.pods.get(r.metadata.name as string, name));
        return why ? [{ name: r.metadata.name as string, why }] : [];
      });
      for (const room of outside?.names ?? []) leaving.push({ name: room, why: 'deleted outside Roomkeeper' });
      const lost = lostToName(await this.lostRoomsNow(s), ops, leaving);
      const total = lost.named.length + lost.more + (outside ? outside.count - outside.names.length : 0);
      // The status keeps the last MAX_LOST_ROOMS: when all of them are this add's, more may have gone.
      const beyond = lost.recordFull ? `, and maybe more: the Scheduler's status keeps the last ${MAX_LOST_ROOMS} lost rooms (the operator logs each one: "room lost, deleting it")` : '';
      const lostText = lost.named.length > 0 ? `; lost: ${nameList(lost.named, { total })}${beyond}` : '';
      const annotations: Record<string, string> = lost.names.length > 0 ? { [LOST_ROOMS_ANNOTATION]: lost.names.join(',') } : {};
      const enqueued = (op: string) => tellOutside(`The health check enqueued add_rooms ${op} for ${counted(add, 'room')} (${counts}).`);
      if (plan.rollingUpdate) {
        // The counts that make the amount: a rise of the desired count adds rooms beyond the surge.
        const replaced = plan.remove > 0 ? `, ${plan.remove} of them to be replaced` : '';
        const bound = `${counted(plan.available, 'room')} when decided${replaced}; ${plan.keepServing ?? decision.desired} desired + surge ${plan.surge ?? 1} = ${plan.upper ?? '?'}`;
        const why = `rolling update to ${s.status.version}: ${counted(add, 'new room')} (${bound})${lostText}${probe}`;
        return this.enqueue(s, ops, OperationDefinition.AddRooms, { amount: add, reason: why }, `Rolling update to ${s.status.version}: adding ${counted(add, 'room')}`, annotations, enqueued);
      }
      const why = `${decision.reason}; ${counts}${lostText}${probe}`;
      return this.enqueue(s, ops, OperationDefinition.AddRooms, { amount: add, reason: why }, undefined, annotations, enqueued);
    }
    tellOutside(`No room was added for ${outside?.count === 1 ? 'it' : 'them'}: ${counts}.`);
    if (plan.remove > 0 && plan.removeRooms.length > 0) {
      const input: OperationInputs['remove_rooms'] = plan.removeReason === RemoveRoomsReason.RollingUpdateReplace
        ? this.replacement(plan.removeRooms, decidedOn, plan.keepServing ?? decision.desired)
        : { amount: plan.remove, reason: plan.removeReason ?? RemoveRoomsReason.ScaleDown, ...keptNote(plan, decision.desired) };
      return this.enqueue(s, ops, OperationDefinition.RemoveRooms, input, 'roomsIds' in input ? `Rolling update to ${s.status.version}: replacing ${counted(input.roomsIds.length, 'room')} of an older version` : undefined);
    }
    return interval;
  }

  /**
   * The lost rooms as the API server has them now. The room status controller records a lost room
   * on the Scheduler before it deletes its GameRoom, but the two caches are separate watches: a check
   * that saw the GameRoom gone could read the Scheduler from before the record, and neither the
   * add_rooms replacing the room nor the next one (it names the rooms lost after this one) named it.
   * One read per add_rooms decided; the cache's record if the read fails.
   */
  private async lostRoomsNow(s: Scheduler): Promise<LostRoom[] | undefined> {
    try {
      return (await this.deps.api.getScheduler(s.metadata.name as string)).status?.lostRooms;
    } catch (err) {
      this.deps.logger.debug('could not read the Scheduler\'s lost rooms; naming those the cache shows', { scheduler: s.metadata.name, error: describeApiError(err) });
      return s.status?.lostRooms;
    }
  }

  /**
   * When the active version's rooms start failing before they ping (failing-rooms.ts): a Warning
   * Event and a log line, once each time it starts; a log line when a room of it pings again.
   */
  private tellFailing(s: Scheduler, failing: FailingRooms | undefined): void {
    const name = s.metadata.name as string;
    const version = s.status?.version ?? '';
    if (!failing) {
      const was = this.failingVersion.get(name);
      if (was !== undefined && this.failingVersion.delete(name) && was === version) {
        this.deps.logger.info('rooms of the active version ping again: missing rooms are made at once', { scheduler: name, version });
      }
      return;
    }
    if (this.failingVersion.get(name) === version) return;
    this.failingVersion.set(name, version);
    const words = describeFailingRooms(failing, name, version, this.deps.now());
    this.deps.logger.warn('rooms of the active version fail before they ping: they are made one at a time', { scheduler: name, version, failed: failing.failed.length, detail: words });
    schedulerEvent(this.deps, name, 'RoomsFailing', 'AddRooms', words);
  }

  /**
   * When rooms start waiting for host ports that no node has free (port-wait.ts): a Warning Event
   * and a log line, once each time it starts; a log line when none waits any more.
   */
  private tellPortWait(s: Scheduler, words: string | undefined): void {
    const name = s.metadata.name as string;
    if (words === undefined) {
      if (this.portWaitTold.delete(name)) this.deps.logger.info('no room waits for host ports any more', { scheduler: name });
      return;
    }
    if (this.portWaitTold.has(name)) return;
    this.portWaitTold.add(name);
    this.deps.logger.warn('rooms wait for host ports that no node has free: they are kept, not replaced', { scheduler: name, detail: words });
    schedulerEvent(this.deps, name, 'HostPortsExhausted', 'AddRooms', words);
  }

  /**
   * Tells `note` once each time a situation starts or its words (its numbers) change, and forgets
   * it once it is over (`note` undefined), so that it is told again when it comes back:
   *  - every room above the desired count is held by players or a matchmaker: no remove_rooms is
   *    enqueued, whose history would say why the fleet stays above it (keptNote), so a Normal
   *    RoomsKeptAboveDesired Event does;
   *  - rooms marked silent beyond the bound of those stood in for (silentStandIns): no add_rooms
   *    tells it, so a SilentRoomsCounted Warning Event and a log line do.
   */
  private tellOnChange(told: Map<string, string>, name: string, note: string | undefined, tell: (note: string) => void): void {
    if (note === undefined) {
      told.delete(name);
      return;
    }
    if (told.get(name) === note) return;
    told.set(name, note);
    tell(note);
  }

  /**
   * Enqueues a healing operation unless it would fail the same way as the last one of its kind
   * (domain/repeated-failure.ts): then it waits for the backoff or for something to change.
   * `rollout` is a rolling update's progress, told as an Event once enqueued; `annotations` go on
   * the operation; `enqueued` is told the operation's name.
   */
  private async enqueue<D extends OperationDefinitionName>(s: Scheduler, ops: readonly Operation[], definitionName: D, input: OperationInputs[D], rollout?: string, annotations: Record<string, string> = {}, enqueued?: (op: string) => void): Promise<ReconcileResult> {
    const schedulerName = s.metadata.name as string;
    const now = this.deps.now();
    const fingerprint = this.fingerprint(s);
    const decision = decideRetry({ ops, definitionName, fingerprint, now });
    if (decision.action === 'wait') {
      const key = `${definitionName}/${decision.incident.lastAt}`;
      if (this.heldRetry.get(schedulerName) !== key) {
        this.heldRetry.set(schedulerName, key);
        this.deps.logger.warn('healing operation held: it would fail as the last one did', { scheduler: schedulerName, definition: definitionName, tries: decision.incident.tries, error: decision.incident.message, retryAt: new Date(decision.retryAt).toISOString() });
      }
      return { requeueAfterMs: Math.max(100, Math.min(decision.retryAt - now, this.deps.config.healthInterval)) };
    }
    this.heldRetry.delete(schedulerName);
    const op = buildOperation({ id: newOperationId(now), schedulerName, definitionName, input, priority: true, source: OperationSourceName.Operator, enqueuedAt: now });
    op.metadata.annotations = { ...op.metadata.annotations, ...annotations, [ATTEMPT_ANNOTATION]: String(decision.attempt), [HEALTH_FINGERPRINT_ANNOTATION]: fingerprint };
    // Created first: an optional call (`track?.(…)`) evaluates no argument when `track` is absent.
    const created = await this.deps.api.createOperation(op);
    this.opts.track?.(created);
    if (rollout) schedulerEvent(this.deps, schedulerName, 'RolloutProgress', 'RollingUpdate', `${rollout} (operation ${op.metadata.name as string})`);
    enqueued?.(op.metadata.name as string);
    return { requeueAfterMs: 200 };
  }

  /**
   * A rollout's removal of rooms by id, with the resourceVersion of each room as decided on: the
   * cache may be behind, and a room that turned occupied since must not be deleted (it is kept,
   * and the next health check decides again). `keepServing` is the floor the removal checks again
   * when it runs: rooms that stopped serving since the decision are not made up for by deletions.
   */
  private replacement(planned: string[], decidedOn: ReadonlyMap<string, string | undefined>, keepServing: number): RemoveRoomsByIdsInput {
    const ids = planned.slice(0, this.deps.config.removeRoomsLimit);
    const resourceVersions: Record<string, string> = {};
    for (const id of ids) {
      const rv = decidedOn.get(id);
      if (rv) resourceVersions[id] = rv;
    }
    return { roomsIds: ids, reason: RemoveRoomsReason.RollingUpdateReplace, resourceVersions, keepServing };
  }

  /**
   * What a healing operation depends on, as the caches show it: the namespace (its uid), the
   * active version object, the spec generation and the nodes that can take rooms. A failed
   * operation is tried again at once when this changed since it was enqueued.
   */
  private fingerprint(s: Scheduler): string {
    const name = s.metadata.name as string;
    const ns = this.deps.caches.namespaces.get(name);
    const version = s.status?.version ? this.deps.caches.versions.get(versionObjectName(name, s.status.version)) : undefined;
    const nodes = this.deps.caches.nodes.list()
      .filter(canTakeRooms)
      .map((n) => n.metadata?.name ?? '').sort();
    const seen = JSON.stringify([s.metadata.generation ?? 1, s.status?.version ?? '', ns?.metadata?.uid ?? '', version?.metadata.uid ?? '', nodes]);
    return createHash('sha256').update(seen).digest('hex').slice(0, 16);
  }

  /** Keeps at most 3 failed operations of an incident in the history (the count is in the condition). */
  private async pruneRepeatedFailures(ops: readonly Operation[]): Promise<void> {
    for (const definitionName of HEALING_DEFINITIONS) {
      const incident = incidentOf(ops, definitionName);
      for (const opName of incident ? prunableFailures(incident) : []) {
        await this.deps.api.deleteOperation(opName).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      }
    }
  }

  private async writeDecision(s: Scheduler, choice: DesiredRooms, downscaleAt: number | undefined): Promise<void> {
    const { desired, reason, error } = choice;
    const current = s.status?.autoscaling;
    if (current?.desired === desired && current.lastDecision === reason && downscaleAt === undefined) return;
    const name = s.metadata.name as string;
    const now = this.deps.now();
    const written = this.decisionWritten.get(name);
    const decision = `${desired} ${reason}`;
    const shownAt = Date.parse(current?.lastDecisionAt ?? '') || 0;
    // The same decision, written moments ago, that the cache does not show yet: nothing to write or tell.
    if (downscaleAt === undefined && written?.decision === decision && shownAt < written.at && now - written.at < DECISION_ECHO_MS) return;
    const nowIso = new Date(now).toISOString();
    const before = current?.desired;
    // status.rooms.desired is the scheduler controller's: the count in force, from this decision
    // or from the spec's roomsReplicas (scheduler-status.ts, desiredInForce).
    await this.deps.api.patchSchedulerStatus(name, {
      status: {
        autoscaling: {
          desired,
          lastDecision: reason,
          lastDecisionAt: nowIso,
          ...(downscaleAt !== undefined ? { lastDownscaleAt: new Date(downscaleAt).toISOString() } : {}),
        },
      },
    });
    this.decisionWritten.set(name, { decision, at: now });
    if (error !== undefined && current?.lastDecision !== reason) {
      // The spec cannot be acted on (a count above the limit, an unusable policy): the count may
      // not move, so this is told on its own, once per reason.
      schedulerEvent(this.deps, name, 'RoomCountNotDecided', 'DecideRoomCount', `Desired rooms kept at ${desired}: ${reason}`);
    } else if (before !== desired) {
      schedulerEvent(this.deps, name, 'AutoscalingDecision', 'DecideRoomCount', `Desired rooms ${before ?? '(none)'} -> ${desired}: ${reason}`);
    }
  }
}
