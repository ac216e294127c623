/**
 * The health check of each scheduler (key: scheduler name), run on an interval and, debounced, on
 * room status changes. It computes (pure rules in `domain/`) which rooms expired and how many
 * rooms are missing or too many — autoscaling included — and enqueues PRIORITY operations for
 * them, each with a reason, so the history explains every room that came or went. It never acts
 * while the scheduler's queue is busy: one decision at a time, on fresh counts.
 */
import type { Operation, Scheduler } from '../../../common/src/generated/resources';
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { newOperationId } from '../../../common/src/operations/operation-id';
import type { OperatorDeps } from '../deps';
import type { ReconcileResult } from '../runtime/work-queue';
import { desiredRooms } from './domain/desired-count';
import { isPortConflict } from './domain/host-ports';
import { expiryBrake } from './domain/expiry-brake';
import { planHealth } from './domain/health-plan';
import { summarizeFleet } from './domain/fleet-summary';
import { RoomManager } from './room-manager';

export interface HealthControllerOptions {
  operationsOf: (schedulerName: string) => Operation[];
  /** Rooms recently lost (pod deleted) per scheduler, for the reason of the replacement. */
  takeLostRooms: (schedulerName: string) => string[];
}

/** Pending pods with a host-port conflict are given this long before being replaced. */
const PORT_CONFLICT_GRACE_MS = 5_000;

export class HealthController {
  private readonly rooms: RoomManager;
  private readonly expiryHeld: { inc(labels: { reason: string }): void };
  /** Per scheduler, why expiry is being held (logged once when it starts). */
  private readonly heldReason = new Map<string, string>();

  constructor(private readonly deps: OperatorDeps, private readonly opts: HealthControllerOptions) {
    this.rooms = new RoomManager(deps);
    this.expiryHeld = deps.metrics.counter('roomkeeper_room_expiry_held_total', 'Health checks that held room expiry (expiry brake), by reason: sight-impaired, fresh-sight, mass-expiry.');
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const interval = { requeueAfterMs: this.deps.config.healthInterval };
    const s = this.deps.caches.schedulers.get(name);
    if (!s || s.metadata.deletionTimestamp || !s.status?.version) return {};
    const ops = this.opts.operationsOf(name);
    if (ops.some((op) => ['pending', 'in_progress'].includes(op.status?.status ?? 'pending'))) return { requeueAfterMs: 500 };

    const now = this.deps.now();
    const views = this.rooms.views(name);
    const timeouts = {
      initTimeoutMs: this.deps.config.roomInitTimeout,
      pingTimeoutMs: this.deps.config.roomPingTimeout,
      deletionTimeoutMs: this.deps.config.roomDeletionTimeout,
    };
    const fleet = views.filter((r) => !r.validation);
    const summary = summarizeFleet(views, now, timeouts);
    const lastDownscaleAt = Date.parse(s.status.autoscaling?.lastDownscaleAt ?? '') || undefined;
    const decision = desiredRooms({
      roomsReplicas: s.spec.roomsReplicas, autoscaling: s.spec.autoscaling, counts: summary.counts, available: summary.available.length, now, lastDownscaleAt,
    });
    const activeVersion = s.status.version;
    const planWith = (t: typeof timeouts) => planHealth({
      rooms: views,
      desired: decision.desired,
      target: decision.target,
      now,
      timeouts: t,
      activeVersion,
      maxSurge: s.spec.maxSurge,
      autoscalingMax: s.spec.autoscaling?.enabled && (s.spec.autoscaling.max ?? -1) >= 0 ? s.spec.autoscaling.max : undefined,
    });
    let plan = planWith(timeouts);
    // The expiry brake: rooms that look dead only because their pings were not seen are held
    // while the operator's own sight is in doubt (rooms stuck terminating are not held).
    const withoutPingExpiry = planWith({ ...timeouts, initTimeoutMs: Number.POSITIVE_INFINITY, pingTimeoutMs: Number.POSITIVE_INFINITY });
    const sight = this.deps.sight?.() ?? { impaired: false, since: 0 };
    const brake = expiryBrake({
      expiring: plan.expired.length - withoutPingExpiry.expired.length,
      fleet: fleet.length,
      now,
      sightSince: sight.since,
      sightImpaired: sight.impaired,
      graceMs: this.deps.config.expiryGrace > 0 ? this.deps.config.expiryGrace : this.deps.config.roomPingTimeout,
      share: this.deps.config.expiryBrakeShare,
      min: this.deps.config.expiryBrakeMin,
    });
    if (brake.hold) {
      plan = withoutPingExpiry;
      this.expiryHeld.inc({ reason: brake.reason });
      if (this.heldReason.get(name) !== brake.reason) {
        this.deps.logger.warn('room expiry held', { scheduler: name, reason: brake.reason, detail: brake.message });
      }
      this.heldReason.set(name, brake.reason);
    } else if (this.heldReason.delete(name)) {
      this.deps.logger.info('room expiry resumed', { scheduler: name });
    }
    const expired = [...plan.expired];
    for (const room of fleet) {
      const pod = this.deps.caches.pods.get(room.name, name);
      if (pod && isPortConflict(pod) && now - room.createdAt > PORT_CONFLICT_GRACE_MS && !expired.some((e) => e.name === room.name)) {
        expired.push({ name: room.name, reason: 'its pod cannot be placed: host port conflict (replaced with other ports)' });
      }
    }

    const downscaled = decision.recordDownscale && plan.removeReason === 'scale_down';
    await this.writeDecision(s, decision.desired, decision.reason, downscaled ? now : undefined);

    if (expired.length > 0) {
      await this.enqueue(name, 'remove_rooms', {
        roomsIds: expired.map((e) => e.name),
        reason: 'expired_room',
        details: expired.map((e) => `${e.name}: ${e.reason}`),
      });
      return { requeueAfterMs: 200 };
    }
    if (plan.add > 0) {
      const lost = this.opts.takeLostRooms(name);
      const why = plan.rollingUpdate
        ? `rolling update to ${s.status.version}: ${plan.add} new rooms (surge ${plan.surge ?? 1})`
        : `${decision.reason}; ${plan.available} available of ${decision.desired} desired${lost.length > 0 ? `; lost: ${lost.join(', ')}` : ''}`;
      await this.enqueue(name, 'add_rooms', { amount: plan.add, reason: why });
      return { requeueAfterMs: 200 };
    }
    if (plan.remove > 0 && plan.removeRooms.length > 0) {
      const input = plan.removeReason === 'rolling_update_replace'
        ? { roomsIds: plan.removeRooms, reason: 'rolling_update_replace' }
        : { amount: plan.remove, reason: plan.removeReason ?? 'scale_down' };
      await this.enqueue(name, 'remove_rooms', input);
      return { requeueAfterMs: 200 };
    }
    return interval;
  }

  private async enqueue(schedulerName: string, definitionName: string, input: Record<string, unknown>): Promise<void> {
    await this.deps.api.createOperation(buildOperation({
      id: newOperationId(), schedulerName, definitionName, input, priority: true, source: 'operator', enqueuedAt: this.deps.now(),
    }));
  }

  private async writeDecision(s: Scheduler, desired: number, reason: string, downscaleAt: number | undefined): Promise<void> {
    const current = s.status?.autoscaling;
    if (s.status?.rooms?.desired === desired && current?.desired === desired && current.lastDecision === reason && downscaleAt === undefined) return;
    const nowIso = new Date(this.deps.now()).toISOString();
    await this.deps.api.patchSchedulerStatus(s.metadata.name as string, {
      status: {
        rooms: { desired },
        autoscaling: {
          desired,
          lastDecision: reason,
          lastDecisionAt: nowIso,
          ...(downscaleAt !== undefined ? { lastDownscaleAt: new Date(downscaleAt).toISOString() } : {}),
        },
      },
    });
  }
}
