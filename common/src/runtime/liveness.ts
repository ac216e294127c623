/**
 * Liveness: what `/healthz` answers. Each check watches one kind of work that must end (a
 * reconcile, the leader's lease renewals, a cache's list or watch request) and fails when the
 * oldest such work has waited longer than its timeout, so it fails only when this process is
 * wedged and a restart would fix it (kube-controller-manager's leader-election healthz adaptor,
 * controller-runtime's healthz checks). An API server that is down or slow makes requests fail or
 * time out, and the work ends: it never fails a check (`/readyz` tells of it). A check that starts
 * failing is logged once as a warning, and once as info when it passes again, never per probe.
 */
import type { Logger } from '../logger';
import type { Clock } from './clock';

/** The oldest piece of work a check watches: since when it has waited, and what it is. */
export interface Waiting { since: number; what: string }

export interface LivenessCheck {
  name: string;
  /** How long the work may wait before the check fails. */
  timeoutMs: number;
  /** What a failure means and what a restart does about it (in the `/healthz` answer). */
  meaning: string;
  /** The oldest work waiting now, or undefined when none is. */
  oldest(): Waiting | undefined;
  /** What the check sees when no work waits (in the `/healthz` answer). */
  idle: string;
}

export interface FailingCheck {
  check: string;
  /** When the check started failing (ISO 8601): the work's start plus the check's timeout. */
  failingSince: string;
  what: string;
  meaning: string;
}

/** One check as `/healthz` shows it: whether it passes, and what it sees now. */
export interface CheckState {
  check: string;
  ok: boolean;
  /** The oldest work the check watches and since when, or that none waits. */
  sees: string;
  /** How long that work may wait before the check fails, in seconds. */
  timeoutSeconds: number;
}

export interface LivenessReport { ok: boolean; failing: FailingCheck[]; checks: CheckState[] }

/** What a failing liveness check leads to, and what to do (in the `/healthz` answer). */
export const LIVENESS_WHAT_TO_DO = 'the kubelet restarts the container after the livenessProbe\'s failureThreshold (3 answers of 503, 10 s apart); if it happens again, report it with the log line \'liveness check ... fails\'';

export class Liveness {
  /** Check name -> when it started failing, while it fails. */
  private readonly failing = new Map<string, number>();

  constructor(private readonly checks: readonly LivenessCheck[], private readonly opts: { logger: Logger; now: Clock }) {}

  /** Evaluates every check now; logs the ones that started failing or passed again since the last call. */
  report(): LivenessReport {
    const now = this.opts.now();
    const failing: FailingCheck[] = [];
    const checks: CheckState[] = [];
    for (const check of this.checks) {
      const oldest = check.oldest();
      const since = oldest === undefined ? undefined : oldest.since + check.timeoutMs;
      const ok = oldest === undefined || since === undefined || now <= since;
      checks.push({ check: check.name, ok, sees: oldest?.what ?? check.idle, timeoutSeconds: check.timeoutMs / 1000 });
      if (ok) {
        const was = this.failing.get(check.name);
        if (was !== undefined) {
          this.failing.delete(check.name);
          this.opts.logger.info(`liveness check ${check.name} passes again: /healthz answers 200`, { check: check.name, failedForMs: now - was });
        }
        continue;
      }
      const entry = { check: check.name, failingSince: new Date(since).toISOString(), what: oldest.what, meaning: check.meaning };
      failing.push(entry);
      if (!this.failing.has(check.name)) {
        this.failing.set(check.name, since);
        this.opts.logger.warn(`liveness check ${check.name} fails: ${oldest.what}; /healthz answers 503 and the kubelet restarts the container after the liveness probe's failureThreshold; if it happens again, report it with this log`, { ...entry, timeoutMs: check.timeoutMs });
      }
    }
    return { ok: failing.length === 0, failing, checks };
  }
}

/**
 * A queue of work whose running items can be aged (the operator's controller queues): the oldest,
 * and how long it has waited on the Kubernetes API (`api-waits.ts`).
 */
export interface RunningWork { readonly name: string; oldestRunning(): { key: string; since: number; apiWaitMs?: number } | undefined }

/**
 * Fails when one reconcile of one of `queues` has run longer than `timeoutMs` not counting the time
 * it waited on the Kubernetes API (a promise that never settles). Every request times out, so a
 * reconcile held by an API server that answers slowly or not at all (an outage that drops
 * packets) is not wedged: a restart would not help and would lose the caches; `/readyz` tells of it.
 */
export function reconcileCheck(queues: readonly RunningWork[], timeoutMs: number): LivenessCheck {
  return {
    name: 'reconciles',
    timeoutMs,
    meaning: `a reconcile has run for longer than ${seconds(timeoutMs)} (ROOMKEEPER_LIVENESS_RECONCILE_TIMEOUT), not counting its waits on the Kubernetes API: it waits on something that never ends, and holds one of its controller's workers and its key until the process restarts`,
    idle: 'no reconcile runs',
    oldest: () => oldestOf(queues.map((q) => {
      const running = q.oldestRunning();
      if (!running) return undefined;
      const apiWaitMs = running.apiWaitMs ?? 0;
      const waited = apiWaitMs > 0 ? `, ${seconds(apiWaitMs)} of it waiting on the Kubernetes API (not counted: requests time out)` : '';
      return { since: running.since + apiWaitMs, what: `the ${q.name} reconcile of ${running.key} has run since ${new Date(running.since).toISOString()}${waited}` };
    })),
  };
}

/** A leader elector as the lease check sees it. */
export interface LeaseHolder { readonly isLeader: boolean; readonly lastRenewedAt: number; readonly lease: string }

/**
 * Fails when this replica believes it leads but has not renewed its lease for the lease duration
 * plus `slackMs` (kube-controller-manager's leader-election healthz adaptor): another replica may
 * lead by now, and this one goes on reconciling beside it.
 */
export function leaderLeaseCheck(elector: LeaseHolder, leaseDurationMs: number, slackMs: number): LivenessCheck {
  return {
    name: 'leader-lease',
    timeoutMs: leaseDurationMs + slackMs,
    meaning: `this replica believes it leads but has not renewed its leader Lease for the lease duration plus ${seconds(slackMs)} (ROOMKEEPER_LIVENESS_LEASE_SLACK): its election loop is stuck (it steps down by itself when a renewal fails), another replica may lead by now, and a restart ends this one's reconciling`,
    idle: 'this replica does not lead',
    oldest: () => (elector.isLeader ? { since: elector.lastRenewedAt, what: `this replica leads and last renewed the Lease ${elector.lease} at ${new Date(elector.lastRenewedAt).toISOString()}` } : undefined),
  };
}

/** A cache as the cache check sees it (`ResilientInformer`). */
export interface CacheRequests { readonly name: string; readonly pendingRequest: { since: number; verb: 'list' | 'watch' } | undefined }

/**
 * Fails when a cache's list, or the start of its watch, has had no answer for longer than
 * `timeoutMs`: requests time out well before (30 s), so the cache waits on a connection that will
 * never answer, and until the process restarts it shows no change.
 */
export function cacheCheck(caches: readonly CacheRequests[], timeoutMs: number): LivenessCheck {
  return {
    name: 'caches',
    timeoutMs,
    meaning: `a cache's list or watch request has had no answer for longer than ${seconds(timeoutMs)} (ROOMKEEPER_LIVENESS_CACHE_TIMEOUT), though requests time out after 30 s: the cache waits on a connection that will never answer and shows no change until the process restarts`,
    idle: 'no cache\'s list or watch request waits for an answer (whether they succeed is /readyz\'s to say)',
    oldest: () => oldestOf(caches.map((c) => {
      const pending = c.pendingRequest;
      return pending && { since: pending.since, what: `the ${c.name} cache's ${pending.verb} request has had no answer since ${new Date(pending.since).toISOString()}` };
    })),
  };
}

function oldestOf(items: readonly (Waiting | undefined)[]): Waiting | undefined {
  let oldest: Waiting | undefined;
  for (const w of items) if (w && (!oldest || w.since < oldest.since)) oldest = w;
  return oldest;
}

function seconds(ms: number): string {
  return ms % 60_000 === 0 && ms > 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`;
}
