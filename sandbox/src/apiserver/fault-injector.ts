/**
 * Faults a test switches on: added latency, a share of requests answered 410/429/500 or reset,
 * watches answered with an ERROR event (410 Expired), watches cut after N events or all at once,
 * watch events delivered late, and forced 410 Gone on resume. Every resource request is counted
 * by verb and resource, so a test can bound how often clients list and watch.
 */
export interface FaultSettings {
  latencyMs?: number;
  /** Share of matching requests (0..1) answered with `errorStatus`. */
  errorRate?: number;
  /**
   * The answer: an HTTP status with a `Status` body (429 carries Retry-After: 1; 403 is worded as
   * RBAC refuses a verb; 401 as kube-apiserver refuses a revoked or expired token; 409 as a conflict); 'expired': a watch answered 200 with one ERROR event (410 Expired), as
   * kube-apiserver ends a watch from a compacted resourceVersion (other verbs: HTTP 410); 'reset':
   * the connection is destroyed without an answer. Default 500.
   */
  errorStatus?: 401 | 403 | 409 | 410 | 429 | 500 | 'expired' | 'reset';
  /** Watches opened while this is set end after this many events. */
  cutWatchAfterEvents?: number;
  /** Watches opened while this is set deliver each event this many ms after it happened. */
  watchDelayMs?: number;
  /**
   * Only requests with this verb (get, list, watch, create, update, patch, delete, deletecollection),
   * resource (plural) and/or bearer token (the sandbox authenticates nobody; a test gives one
   * component's kubeconfig its own token to single its requests out).
   */
  match?: { verb?: string; resource?: string; token?: string };
}

export interface FaultInjector {
  set(f: FaultSettings): void;
  /** Every watch/list resume from an RV older than now gets 410 (forces informers to relist). */
  forceGone(): void;
  /** Ends every open watch now, cleanly (as a server's watch timeout does); returns how many. */
  cutWatches(): number;
  /** Watches open now, optionally only those opened with one bearer token. */
  openWatches(token?: string): number;
  clear(): void;
  /** How many requests were answered with an injected error since the sandbox started. */
  readonly injected: number;
  /** Resource requests received since the sandbox started, optionally of one verb, resource and/or bearer token. */
  requests(filter?: { verb?: string; resource?: string; token?: string }): number;
}

export interface FaultDecision {
  latencyMs: number;
  errorStatus?: 401 | 403 | 409 | 410 | 429 | 500 | 'expired' | 'reset';
  cutWatchAfterEvents?: number;
  watchDelayMs?: number;
}

export interface FaultHooks {
  forceGone(): void;
  cutWatches(): number;
  openWatches(token?: string): number;
}

export class Faults implements FaultInjector {
  private settings: FaultSettings = {};
  private readonly counts = new Map<string, number>();
  injected = 0;
  /** Set by the API server once it runs. */
  private hooks: FaultHooks;

  constructor(
    onForceGone: () => void,
    private readonly random: () => number = Math.random,
  ) {
    this.hooks = { forceGone: onForceGone, cutWatches: () => 0, openWatches: () => 0 };
  }

  /** The API server closes and counts its watches for `cutWatches()` and `openWatches()`. */
  bindWatches(watches: Pick<FaultHooks, 'cutWatches' | 'openWatches'>): void {
    this.hooks = { ...this.hooks, ...watches };
  }

  set(f: FaultSettings): void {
    this.settings = { ...f };
  }

  forceGone(): void {
    this.hooks.forceGone();
  }

  cutWatches(): number {
    return this.hooks.cutWatches();
  }

  openWatches(token?: string): number {
    return this.hooks.openWatches(token);
  }

  clear(): void {
    this.settings = {};
  }

  requests(filter: { verb?: string; resource?: string; token?: string } = {}): number {
    let n = 0;
    for (const [key, count] of this.counts) {
      const [verb, resource, token] = key.split(' ') as [string, string, string];
      const matches = (filter.verb === undefined || filter.verb === verb) && (filter.resource === undefined || filter.resource === resource)
        && (filter.token === undefined || filter.token === token);
      if (matches) n += count;
    }
    return n;
  }

  /** What to do to one request (`token`: its bearer token, if any). */
  decide(verb: string, resource: string, token?: string): FaultDecision {
    const key = `${verb} ${resource} ${token ?? ''}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const s = this.settings;
    const match = s.match;
    if (match && ((match.verb && match.verb !== verb) || (match.resource && match.resource !== resource) || (match.token && match.token !== token))) return { latencyMs: 0 };
    const decision: FaultDecision = { latencyMs: s.latencyMs ?? 0 };
    if (s.errorRate && s.errorRate > 0 && this.random() < s.errorRate) {
      decision.errorStatus = s.errorStatus ?? 500;
      this.injected++;
    }
    if (verb === 'watch' && s.cutWatchAfterEvents !== undefined) decision.cutWatchAfterEvents = s.cutWatchAfterEvents;
    if (verb === 'watch' && s.watchDelayMs !== undefined && s.watchDelayMs > 0) decision.watchDelayMs = s.watchDelayMs;
    return decision;
  }
}
