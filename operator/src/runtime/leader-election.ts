/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: candidates try to
 * acquire or renew every `retryPeriodMs`; a lease is free when its holder has not renewed it for
 * `leaseDurationMs` as observed on OUR clock (no cross-machine clock comparison); a leader that
 * cannot renew within `renewDeadlineMs` steps down. On stop the leader releases the lease so a
 * standby takes over at once. A leader renews with one request, an update of the lease as it last
 * wrote it (client-go's fast path): a loaded API server answers one request sooner than a read and
 * an update. A conflict (someone else wrote the lease) falls back to reading it at once; any other
 * failure, at the next attempt. Every write labels the lease OPERATOR_LEASE_LABEL, so the operators of
 * other releases find it (a lease made before the label gets it at its next renewal); the lease's
 * creation also stamps OPERATOR_LEASE_CREATED_ANNOTATION, which orders it among them.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../../common/src/logger';
import { apiErrorFields, apiStatus, describeApiError } from '../../../common/src/kube/clients';
import { whatToDo } from '../../../common/src/kube/diagnosis';
import { toIsoString } from '../../../common/src/kube/timestamps';
import type { Clock } from '../../../common/src/runtime/clock';
import { OPERATOR_LEASE_CREATED_ANNOTATION, OPERATOR_LEASE_LABEL } from '../../../common/src/resources/labels';

/**
 * A replica that has led for less than this does not judge deletions: the previous leader's last
 * deletions (a hand-over on SIGTERM takes about 2 s) may show in its cache after it took over, and
 * it never asked for them. A deletion outside Roomkeeper in those seconds goes untold, rather than
 * the predecessor's told as someone else's.
 */
export const TAKEOVER_SETTLE_MS = 10_000;

export interface LeaderElectionOptions {
  coordination: k8s.CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  logger: Logger;
  onStartedLeading: () => void;
  /** `reason`: why, in words that follow "stopped leading: " (the Lease not renewed in time, taken, or this replica stopping). */
  onStoppedLeading: (reason: string) => void;
  now?: Clock;
}

export class LeaderElector {
  private leader = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private lastRenew = 0;
  private observed: { holder: string; renewTime: string; at: number } | undefined;
  /** The lease as this replica last wrote it, while it leads: the fast path renews from it. */
  private written: k8s.V1Lease | undefined;
  private readonly now: Clock;
  private inFlight: Promise<void> = Promise.resolve();
  /** Why the last attempt failed (an API error, no answer), until one succeeds. */
  private lastFailure: string | undefined;
  /** Why this replica lost the Lease, until it leads again: its writes are fenced meanwhile (`writeFence`). */
  private lostBecause: string | undefined;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.now = opts.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** When this replica last acquired or renewed the lease, on its clock (0: never). */
  get lastRenewedAt(): number {
    return this.lastRenew;
  }

  /**
   * Why this replica must not write to the cluster now, or undefined: it lost the Lease (and does
   * not lead again), or it still counts itself leader but has not renewed within the renew deadline.
   * The second is judged here, on this replica's clock, and steps down at once: after a pause of the
   * process (a long GC, a frozen node, SIGSTOP) its timers fire late, and work resumed meanwhile
   * must not write beside the replica that took over. The API clients ask it before every write
   * but the Lease's own (common/src/kube/clients.ts, `fenceWrites`). A replica that never led, or
   * stepped down because it stops, is not fenced.
   */
  writeFence(): string | undefined {
    this.stepDownIfOverdue();
    return this.lostBecause;
  }

  /** The lease, as `namespace/name`. */
  get lease(): string {
    return `${this.opts.namespace}/${this.opts.name}`;
  }

  start(): void {
    this.stopped = false;
    this.tick();
  }

  /** Stops campaigning; a leader releases the lease and steps down. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    if (this.leader) {
      this.stepDown('this replica is stopping', 'info');
      await this.release();
    }
  }

  /** Stops campaigning without releasing the lease, as a killed process would (for tests). */
  halt(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.stopped) return;
    // An attempt that hangs (an API server going away mid-answer) must not stall the loop: after
    // the renew deadline it counts as failed, and the leader steps down as it should.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the API server within ${this.opts.renewDeadlineMs} ms`)), this.opts.renewDeadlineMs);
    });
    this.inFlight = Promise.race([this.tryAcquireOrRenew(), deadline])
      .finally(() => clearTimeout(timer))
      .then(() => {
        this.lastFailure = undefined;
      }, (err: unknown) => {
        const hint = whatToDo(err, { path: `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases/${this.opts.name}`, verb: 'get, create and update' });
        this.lastFailure = describeApiError(err);
        this.opts.logger.warn('leader election attempt failed', { ...apiErrorFields(err), ...(hint ? { whatToDo: hint } : {}) });
      })
      .finally(() => {
        this.stepDownIfOverdue();
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.opts.retryPeriodMs);
      });
  }

  private stepDownIfOverdue(): void {
    if (!this.leader || this.now() - this.lastRenew <= this.opts.renewDeadlineMs) return;
    const last = this.lastFailure === undefined ? '' : ` (its last attempt: ${this.lastFailure})`;
    this.stepDown(`its leader Lease ${this.lease} was not renewed within the renew deadline, ${this.opts.renewDeadlineMs / 1000} s${last}; last renewed at ${new Date(this.lastRenew).toISOString()}`);
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const { coordination, namespace, name, identity } = this.opts;
    // Lease times are MicroTime: the API server refuses a JavaScript Date's three fractional digits.
    const now = new k8s.V1MicroTime(this.now());
    if (this.leader && this.written) {
      const mine = this.written;
      const spec = mine.spec ?? {};
      this.written = undefined;
      try {
        this.written = await coordination.replaceNamespacedLease({ name, namespace, body: { ...mine, spec: { ...spec, renewTime: now } } });
        this.observed = { holder: identity, renewTime: toIsoString(now), at: this.now() };
        this.becomeLeader();
        return;
      } catch (err) {
        if (apiStatus(err) !== 409) throw err; // the next attempt reads the lease
      }
    }
    let lease: k8s.V1Lease;
    try {
      lease = await coordination.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
      this.written = await coordination.createNamespacedLease({
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: withOperatorLabel({ name, namespace, annotations: { [OPERATOR_LEASE_CREATED_ANNOTATION]: toIsoString(now) } }),
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(this.opts.leaseDurationMs / 1000),
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        },
      });
      this.becomeLeader();
      return;
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewTime = toIsoString(spec.renewTime);
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) {
      this.observed = { holder, renewTime, at: this.now() };
    }
    const heldByOther = holder !== '' && holder !== identity;
    const durationMs = (spec.leaseDurationSeconds ?? Math.ceil(this.opts.leaseDurationMs / 1000)) * 1000;
    if (heldByOther && this.now() < this.observed.at + durationMs) {
      if (this.leader) this.stepDown(`its leader Lease ${this.lease} was taken by ${holder}`);
      return;
    }
    const body: k8s.V1Lease = {
      ...lease,
      metadata: withOperatorLabel(lease.metadata),
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(this.opts.leaseDurationMs / 1000),
        renewTime: now,
        acquireTime: holder === identity ? spec.acquireTime : now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
      },
    };
    this.written = await coordination.replaceNamespacedLease({ name, namespace, body });
    this.becomeLeader();
  }

  private becomeLeader(): void {
    this.lastRenew = this.now();
    if (this.leader || this.stopped) return;
    this.leader = true;
    this.lostBecause = undefined;
    this.opts.logger.info('became leader', { lease: this.lease, identity: this.opts.identity });
    this.opts.onStartedLeading();
  }

  /** Leadership ends: a warning when it was lost, info when this replica stops (a clean shutdown). */
  private stepDown(reason: string, level: 'info' | 'warn' = 'warn'): void {
    this.written = undefined;
    if (!this.leader) return;
    this.leader = false;
    if (level === 'warn') this.lostBecause = reason;
    this.opts.logger.log(level, 'stopped leading', { reason, identity: this.opts.identity });
    this.opts.onStoppedLeading(reason);
  }

  private async release(): Promise<void> {
    const { coordination, namespace, name, identity } = this.opts;
    try {
      const lease = await coordination.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      await coordination.replaceNamespacedLease({
        name,
        namespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new k8s.V1MicroTime(this.now()) } },
      });
    } catch (err) {
      this.opts.logger.warn('could not release the leader lease', apiErrorFields(err));
    }
  }
}

/** A copy of `metadata` with OPERATOR_LEASE_LABEL added to its labels. */
function withOperatorLabel(metadata: k8s.V1ObjectMeta | undefined): k8s.V1ObjectMeta {
  const out = Object.assign(new k8s.V1ObjectMeta(), metadata);
  out.labels = { ...metadata?.labels, [OPERATOR_LEASE_LABEL]: 'true' };
  return out;
}
