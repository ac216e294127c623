/**
 * How long a piece of work (a reconcile) has waited on the Kubernetes API: the time during which
 * at least one of its requests was waiting for an answer. Such a wait always ends (every request
 * times out after 30 s), so the reconcile liveness check does not count it: a reconcile that runs
 * long because the API server answers slowly, or not at all (an outage that drops packets), is not
 * wedged, and a restart would only lose the caches; `/readyz` tells of the outage instead.
 *
 * The work runs inside `countApiWaits`; the Kubernetes clients call `apiRequestStarted` for each
 * request they send (`common/src/kube/clients.ts`), and the work it was sent for is found through
 * Node's AsyncLocalStorage, so no reconciler passes anything along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from './clock';

export class ApiWaits {
  private inFlight = 0;
  private since = 0;
  private endedMs = 0;

  constructor(private readonly now: Clock) {}

  /** Time with at least one request waiting for its answer, up to now. */
  waitedMs(): number {
    return this.endedMs + (this.inFlight > 0 ? this.now() - this.since : 0);
  }

  begin(): void {
    if (this.inFlight++ === 0) this.since = this.now();
  }

  end(): void {
    if (--this.inFlight === 0) this.endedMs += this.now() - this.since;
  }
}

const current = new AsyncLocalStorage<ApiWaits>();

/** Runs `work` so the requests it sends (and the ones its callees send) count in `waits`. */
export function countApiWaits<T>(waits: ApiWaits, work: () => T): T {
  return current.run(waits, work);
}

/** A request to the API server is sent now; call the function returned once it is answered or failed. */
export function apiRequestStarted(): () => void {
  const waits = current.getStore();
  if (!waits) return () => undefined;
  waits.begin();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    waits.end();
  };
}
