/**
 * One Roomkeeper operator per cluster. Schedulers, versions and operations are cluster-scoped, so
 * the operator of a second release (another namespace, or another lease name) would win its own
 * Lease and reconcile every Scheduler too. Every operator labels its leader Lease
 * (OPERATOR_LEASE_LABEL) and lists the labelled Leases of the whole cluster every `intervalMs`.
 *
 * A Lease is live while its holder renews it: held, and its renewTime moved within its duration as
 * seen on OUR clock (as the leader election judges, with no cross-machine clock comparison; one
 * seen for the first time counts as live). Of the operators whose Leases are live, the one whose
 * Lease was made first (`madeBefore`) reconciles; every other
 * one stands back: it keeps its Lease but reconciles nothing and executes no operation, its
 * /readyz answers 503 saying why, it logs a warning and records a Warning Event on its Lease. It
 * reconciles again by itself once the other's Lease is released (a graceful stop, an uninstall) or
 * expires. An operator that has no Lease yet (just started) is the newest. An older operator that
 * wins its Lease while a newer one's is live (it came back after a crash, and the newer one leads)
 * waits out that Lease's duration before it reconciles (`operator.ts`): the newer one looks within
 * it, at least every third of it, and stands back. A failed list decides
 * nothing (the last verdict holds; none: nothing stands back), and says so in a warning.
 *
 * The chart refuses the second install already (`helm install`); this catches what the chart
 * cannot see: `helm template | kubectl apply`, GitOps tools that render offline, hand-made RBAC.
 */
import type * as k8s from '@kubernetes/client-node';
import { apiErrorFields } from '../../../common/src/kube/clients';
import { whatToDo } from '../../../common/src/kube/diagnosis';
import { toIsoString, toMillis } from '../../../common/src/kube/timestamps';
import type { Logger } from '../../../common/src/logger';
import { OPERATOR_LEASE_CREATED_ANNOTATION, OPERATOR_LEASE_LABEL } from '../../../common/src/resources/labels';
import type { Clock } from '../../../common/src/runtime/clock';

export interface LeaseRef {
  namespace: string;
  name: string;
}

/** What one list shows of a labelled Lease. */
export interface OperatorLease extends LeaseRef {
  holder: string;
  renewTime: string;
  /**
   * When it was made: OPERATOR_LEASE_CREATED_ANNOTATION (ISO, microseconds, its creator's clock), or
   * for a Lease made before that annotation, the API server's creationTimestamp (whole seconds).
   */
  createdAt: string;
  durationMs: number;
}

/** When this replica first saw a Lease's current holder and renewTime. */
export type Sightings = ReadonlyMap<string, { holder: string; renewTime: string; at: number }>;

export interface Verdict {
  /** The live Lease of an older operator: while set, this operator reconciles nothing. */
  standBackFor?: OperatorLease;
  /** The live Leases of the other operators that stand back for this one. */
  newer: OperatorLease[];
  /** How many other operators' Leases are live, older and newer. */
  others: number;
}

const keyOf = (l: LeaseRef): string => `${l.namespace}/${l.name}`;

/** Pure: which Leases are live now, and the sightings to keep for the next look. */
export function liveLeases(leases: readonly OperatorLease[], before: Sightings, now: number): { live: OperatorLease[]; sightings: Sightings } {
  const sightings = new Map<string, { holder: string; renewTime: string; at: number }>();
  const live: OperatorLease[] = [];
  for (const lease of leases) {
    const seen = before.get(keyOf(lease));
    const sighting = seen && seen.holder === lease.holder && seen.renewTime === lease.renewTime ? seen : { holder: lease.holder, renewTime: lease.renewTime, at: now };
    sightings.set(keyOf(lease), sighting);
    if (lease.holder !== '' && now < sighting.at + lease.durationMs) live.push(lease);
  }
  return { live, sightings };
}

/**
 * Whether `a` was made before `b`, so `b`'s operator stands back for `a`'s; two made in the same
 * millisecond (or, both older than the annotation, in the same second) by namespace/name. Every
 * field compared stays as it is for the Lease's life, so the order never flips (acquireTime, once
 * compared, changed with each holder: an older operator back after a crash re-acquired its Lease
 * and then stood back for the newer one it had just made stand back).
 */
function madeBefore(a: OperatorLease, b: OperatorLease): boolean {
  const [x, y] = [toMillis(a.createdAt) ?? 0, toMillis(b.createdAt) ?? 0];
  if (x !== y) return x < y;
  return keyOf(a) < keyOf(b);
}

/** Pure: whether the operator of Lease `own` stands back, given every labelled Lease and the live ones. */
export function judge(own: LeaseRef, all: readonly OperatorLease[], live: readonly OperatorLease[]): Verdict {
  const mine = all.find((l) => keyOf(l) === keyOf(own));
  const others = live.filter((l) => keyOf(l) !== keyOf(own));
  const older = others.filter((l) => !mine || madeBefore(l, mine));
  const oldest = older.reduce<OperatorLease | undefined>((best, l) => (!best || madeBefore(l, best) ? l : best), undefined);
  return { ...(oldest ? { standBackFor: oldest } : {}), newer: others.filter((l) => !older.includes(l)), others: others.length };
}

/** The sentence /readyz, the log and the Event say while this operator stands back. */
export function standBackMessage(own: LeaseRef, other: OperatorLease): string {
  const lead = `another Roomkeeper operator leads in this cluster (Lease ${keyOf(other)}, held by ${other.holder}, made before this operator's Lease ${keyOf(own)}): `
    + 'Schedulers are cluster-scoped, so this operator reconciles nothing and executes no operation while that one runs. ';
  if (other.namespace === own.namespace) {
    // One release per namespace (the chart refuses a second): most likely this release's own
    // operator under its earlier Lease name (operator.leaderElection.leaseName changed).
    return `${lead}Both Leases are in namespace ${own.namespace}: an operator still running with Lease name ${other.name} (this release before its leaseName changed, or a second install here) holds it. `
      + `Once no operator renews it, this one takes over by itself within ${Math.round(other.durationMs / 1000)} s; if it stays, stop the operator holding it (its pod: ${other.holder}), or kubectl delete lease ${other.name} -n ${own.namespace} once that one is gone`;
  }
  return `${lead}Run one Roomkeeper per cluster: uninstall this release (helm list -n ${own.namespace}, then helm uninstall <release> -n ${own.namespace}), `
    + `or uninstall the one in namespace ${other.namespace} and this operator takes over by itself`;
}

export interface OtherOperatorsOptions {
  coordination: k8s.CoordinationV1Api;
  /** This operator's leader Lease. */
  own: LeaseRef;
  /** How often the labelled Leases are listed. */
  intervalMs: number;
  logger: Logger;
  now: Clock;
  /** Called after every look whose verdict differs from the one before. */
  onChange: (verdict: Verdict) => void;
}

export class OtherOperators {
  private sightings: Sightings = new Map();
  private current: Verdict = { newer: [], others: 0 };
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private listFailing = false;

  constructor(private readonly opts: OtherOperatorsOptions) {}

  get verdict(): Verdict {
    return this.current;
  }

  /** Looks once (resolves when done), then every interval. */
  async start(): Promise<void> {
    await this.look();
    this.schedule();
  }

  /** Looks once more now (resolves when done): the verdict before may predate another operator's Lease. */
  lookNow(): Promise<void> {
    return this.look();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.look().finally(() => this.schedule());
    }, this.opts.intervalMs);
  }

  private async look(): Promise<void> {
    let leases: OperatorLease[];
    try {
      // From the API server's watch cache (resourceVersion 0): labelled Leases are few, all Leases many.
      const list = await this.opts.coordination.listLeaseForAllNamespaces({ labelSelector: `${OPERATOR_LEASE_LABEL}=true`, resourceVersion: '0' });
      leases = list.items.map(operatorLease);
    } catch (err) {
      if (!this.listFailing) {
        const hint = whatToDo(err, { path: '/apis/coordination.k8s.io/v1/leases', verb: 'list' });
        this.opts.logger.warn('cannot list the leader Leases of the cluster: whether another Roomkeeper operator leads is not known, and this one goes on as it was', { ...apiErrorFields(err), ...(hint ? { whatToDo: hint } : {}) });
      }
      this.listFailing = true;
      return;
    }
    this.listFailing = false;
    const { live, sightings } = liveLeases(leases, this.sightings, this.opts.now());
    this.sightings = sightings;
    const verdict = judge(this.opts.own, leases, live);
    if (this.stopped || sameVerdict(verdict, this.current)) return;
    this.report(this.current, verdict);
    this.current = verdict;
    this.opts.onChange(verdict);
  }

  private report(before: Verdict, now: Verdict): void {
    const { logger, own } = this.opts;
    if (now.standBackFor) {
      if (keyOf(now.standBackFor) !== (before.standBackFor && keyOf(before.standBackFor))) {
        logger.warn(standBackMessage(own, now.standBackFor), { otherLease: keyOf(now.standBackFor), otherHolder: now.standBackFor.holder, lease: keyOf(own) });
      }
    } else if (before.standBackFor) {
      logger.info(`no other Roomkeeper operator leads in this cluster any more (Lease ${keyOf(before.standBackFor)} was released or expired): this operator reconciles again`, { lease: keyOf(own) });
    }
    const known = new Set(before.newer.map(keyOf));
    for (const l of now.newer.filter((n) => !known.has(keyOf(n)))) {
      logger.warn(`another Roomkeeper operator runs in this cluster (Lease ${keyOf(l)}, held by ${l.holder}); its Lease is newer than this operator's, so it stands back and reconciles nothing while this one runs. Run one Roomkeeper per cluster: uninstall the release in namespace ${l.namespace} (helm list -n ${l.namespace})`, { otherLease: keyOf(l), otherHolder: l.holder, lease: keyOf(own) });
    }
  }
}

function operatorLease(l: k8s.V1Lease): OperatorLease {
  return {
    namespace: l.metadata?.namespace ?? '',
    name: l.metadata?.name ?? '',
    holder: l.spec?.holderIdentity ?? '',
    renewTime: toIsoString(l.spec?.renewTime),
    createdAt: createdAtOf(l),
    durationMs: (l.spec?.leaseDurationSeconds ?? 15) * 1000,
  };
}

function createdAtOf(l: k8s.V1Lease): string {
  const stamped = l.metadata?.annotations?.[OPERATOR_LEASE_CREATED_ANNOTATION];
  return stamped !== undefined && toMillis(stamped) !== undefined ? stamped : toIsoString(l.metadata?.creationTimestamp);
}

function sameVerdict(a: Verdict, b: Verdict): boolean {
  const keys = (v: Verdict) => `${v.standBackFor ? keyOf(v.standBackFor) : ''}|${v.newer.map(keyOf).sort().join(',')}|${v.others}`;
  return keys(a) === keys(b);
}
