/**
 * Faults a test switches on: added latency, a share of requests answered 429/500, watches cut
 * after N events, and forced 410 Gone on resume.
 */
export interface FaultSettings {
  latencyMs?: number;
  /** Share of matching requests (0..1) answered with `errorStatus`. */
  errorRate?: number;
  errorStatus?: 429 | 500;
  /** Watches opened while this is set end after this many events. */
  cutWatchAfterEvents?: number;
  /** Only requests with this verb (get, list, watch, create, update, patch, delete, deletecollection) and/or resource (plural). */
  match?: { verb?: string; resource?: string };
}

export interface FaultInjector {
  set(f: FaultSettings): void;
  /** Every watch/list resume from an RV older than now gets 410 (forces informers to relist). */
  forceGone(): void;
  clear(): void;
  /** How many requests were answered with an injected error since the sandbox started. */
  readonly injected: number;
}

export interface FaultDecision {
  latencyMs: number;
  errorStatus?: 429 | 500;
  cutWatchAfterEvents?: number;
}

export class Faults implements FaultInjector {
  private settings: FaultSettings = {};
  injected = 0;

  constructor(
    private readonly onForceGone: () => void,
    private readonly random: () => number = Math.random,
  ) {}

  set(f: FaultSettings): void {
    this.settings = { ...f };
  }

  forceGone(): void {
    this.onForceGone();
  }

  clear(): void {
    this.settings = {};
  }

  /** What to do to one request. */
  decide(verb: string, resource: string): FaultDecision {
    const s = this.settings;
    const match = s.match;
    if (match && ((match.verb && match.verb !== verb) || (match.resource && match.resource !== resource))) return { latencyMs: 0 };
    const decision: FaultDecision = { latencyMs: s.latencyMs ?? 0 };
    if (s.errorRate && s.errorRate > 0 && this.random() < s.errorRate) {
      decision.errorStatus = s.errorStatus ?? 500;
      this.injected++;
    }
    if (verb === 'watch' && s.cutWatchAfterEvents !== undefined) decision.cutWatchAfterEvents = s.cutWatchAfterEvents;
    return decision;
  }
}
