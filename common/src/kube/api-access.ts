/**
 * Whether the Kubernetes API server serves this process, for `/readyz`: it accepts our credentials
 * (no 401 Unauthorized) and lets each cache list and watch what it holds (no 403 Forbidden). While
 * it refuses, `/readyz` answers 503 saying which request was refused, with what status, and what to
 * do; `/healthz` is not concerned, since a restart fixes neither a revoked token nor missing RBAC.
 *
 * Level-based: the latest answer decides. Any answer but 401 shows the credentials accepted again;
 * a cache's list or watch served shows that one allowed again (a cache retries its own). While the
 * credentials are refused, `probe` (a cheap request through the same clients, whose answer comes
 * back here) is sent every `probeIntervalMs`: a replica out of its Service's endpoints gets no work
 * that would send a request, and must still see its credentials accepted again.
 *
 * It also tells whether the API server answers at all (`unreachableReason`): from a request that
 * got no answer (timed out, connection refused or reset) until the next answer of any status. The
 * operator's `/readyz` answers 503 with it; the gateway's reports it and stays ready (it answers
 * pings and reads from its caches meanwhile).
 *
 * Each change is logged once, with the request's verb, resource and status (never a token).
 */
import type { Logger } from '../logger';
import { OUT_OF_FILES_ADVICE, refusalAdvice, resourceOf, UNANSWERED_ADVICE } from './diagnosis';
import { outOfFileDescriptors } from './request-library';
import { afterPauseField, type PauseWatch } from '../runtime/pauses';
import { ApiWarnings } from './api-warnings';

/** How often the credentials are tried again while the API server refuses them. */
const ACCESS_PROBE_INTERVAL_MS = 10_000;

/** A request as RBAC names it: the verb (get, list, watch, create...) and the URL path. */
export interface AccessRequest {
  verb: string;
  path: string;
}

/** Where answers are reported: the clients report every request, each cache its lists and watches. */
export interface AccessAnswers {
  /**
   * The HTTP status the API server answered `request` with. `cache`: the cache whose list or watch
   * it was; only those count for 403 (another request may be forbidden on purpose, and nothing
   * would ask it again to end the refusal).
   */
  answered(request: AccessRequest, status: number, cache?: string): void;
  /** `request` got no answer: it timed out, or its connection was refused or reset (`error` says which). */
  unanswered?(request: AccessRequest, error: string): void;
  /** The answer to `request` carried the API server's `Warning` header (api-warnings.ts). */
  warned?(request: AccessRequest, header: string): void;
  /** `{ afterPause }` when this process was paused lately (pauses.ts), for a log line about a request or watch that failed; else `{}`. */
  afterPause?(): { afterPause?: string };
}

export interface ApiAccessOptions {
  logger: Logger;
  /** The API server's URL, for the words. */
  server?: string;
  /** A cheap request through the clients that report to this; sent while the credentials are refused. */
  probe?: () => Promise<unknown>;
  probeIntervalMs?: number;
  /** The clock of `unreachableReason`'s times (default the system's). */
  now?: () => number;
  /** This process's pause watch: an unanswered request just after a pause is told with it. */
  pauses?: PauseWatch;
}

interface Refusal {
  status: 401 | 403;
  /** `list gamerooms.roomkeeper.io (all namespaces)`, `get schedulers.roomkeeper.io`. */
  request: string;
  /** What the refusal means and what to do, in one sentence. */
  whatToDo: string;
}

export class ApiAccess implements AccessAnswers {
  private credentials: Refusal | undefined;
  /** 403s of the caches' lists and watches, by `<cache> <verb>`. */
  private readonly forbidden = new Map<string, Refusal>();
  private probeTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /**
   * The first request left unanswered since the last answer, while no answer came after it: `at`
   * when that was noticed (a timeout ends long after the request was sent), `since` the last answer.
   */
  private silence: { request: string; error: string; at: number; since: number | undefined } | undefined;
  /** When the API server last answered a request of this process. */
  private lastAnswerAt: number | undefined;

  private readonly warnings: ApiWarnings;

  constructor(private readonly opts: ApiAccessOptions) {
    this.warnings = new ApiWarnings({ logger: opts.logger, ...(opts.now ? { now: opts.now } : {}) });
  }

  warned(request: AccessRequest, header: string): void {
    this.warnings.heard(request, header);
  }

  unanswered(request: AccessRequest, error: string): void {
    if (this.silence) return;
    this.silence = { request: this.describe(request), error, at: (this.opts.now ?? Date.now)(), since: this.lastAnswerAt };
    if (outOfFileDescriptors(error)) {
      this.opts.logger.warn('a request to the Kubernetes API server could not be sent: this process has no file descriptor left; /readyz says the API server does not answer until a request is answered again', { request: this.silence.request, error, whatToDo: OUT_OF_FILES_ADVICE });
      return;
    }
    const pause = this.afterPause();
    if (pause.afterPause !== undefined) {
      this.opts.logger.warn('a request to the Kubernetes API server got no answer just after this process was paused: /readyz says the API server does not answer until a request is answered again, which, if the pause was the cause, is at once', { request: this.silence.request, error, ...pause });
      return;
    }
    this.opts.logger.warn('the Kubernetes API server does not answer: /readyz says so until it answers again; /healthz stays 200 (a restart would not help and would lose the caches)', { request: this.silence.request, error, whatToDo: `the Kubernetes API server${this.at()} does not answer: ${UNANSWERED_ADVICE}` });
  }

  afterPause(): { afterPause?: string } {
    return afterPauseField(this.opts.pauses);
  }

  /**
   * Undefined while the API server answers; otherwise since when it does not, which request went
   * unanswered and what to do. Any answer (whatever its status) ends it.
   */
  unreachableReason(): string | undefined {
    const s = this.silence;
    if (!s) return undefined;
    const since = s.since === undefined ? `(no request of this process was ever answered; the first one left unanswered, at ${new Date(s.at).toISOString()}: ${s.request}: ${s.error})`
      : `since ${new Date(s.since).toISOString()} (the first request left unanswered since, noticed at ${new Date(s.at).toISOString()}: ${s.request}: ${s.error})`;
    if (outOfFileDescriptors(s.error)) return `the Kubernetes API server${this.at()} has answered no request ${since}: ${OUT_OF_FILES_ADVICE}; this replica goes on by itself once it can connect again`;
    return `the Kubernetes API server${this.at()} has answered no request ${since}: ${UNANSWERED_ADVICE}, and that this pod reaches it (network policies, the node's network); this replica goes on by itself once it answers, and a restart would not help (/healthz stays 200)`;
  }

  answered(request: AccessRequest, status: number, cache?: string): void {
    const now = (this.opts.now ?? Date.now)();
    if (this.silence) {
      const { at, since } = this.silence;
      this.silence = undefined;
      // Silent from the last answer before the silence (or, with none, from when it was noticed).
      this.opts.logger.info('the Kubernetes API server answers again', { request: this.describe(request), statusCode: status, silentForMs: now - (since ?? at) });
    }
    this.lastAnswerAt = now;
    if (status === 401) {
      if (!this.credentials) this.refuseCredentials(request);
    } else if (this.credentials) {
      this.acceptCredentials(request, status);
    }
    if (cache === undefined) return;
    const key = `${cache} ${request.verb}`;
    if (status === 403 && !this.forbidden.has(key)) {
      const refusal = this.refusal(request, 403);
      this.forbidden.set(key, refusal);
      this.opts.logger.warn('the API server forbids a cache\'s requests: /readyz answers 503 until it allows them', { cache, request: refusal.request, statusCode: 403, whatToDo: refusal.whatToDo });
    } else if (status < 300 && this.forbidden.delete(key)) {
      this.opts.logger.info('the API server allows a cache\'s requests again: /readyz no longer waits for them', { cache, request: this.describe(request), statusCode: status });
    }
  }

  /** Undefined while the API server serves this process; otherwise what it refuses and what to do. */
  notReadyReason(): string | undefined {
    const refusals = [...(this.credentials ? [this.credentials] : []), ...this.forbidden.values()];
    if (refusals.length === 0) return undefined;
    const what = refusals.map((r) => `${r.request} was answered ${r.status === 401 ? '401 Unauthorized' : '403 Forbidden'}: ${r.whatToDo}`);
    return `the Kubernetes API server refuses this replica's requests (ready again by itself once it serves them): ${what.join('; also, ')}`;
  }

  /**
   * The refusals in force, by status: 1 or 0 for the credentials (401), the number of caches whose
   * list or watch is forbidden (403). For the `roomkeeper_kube_api_refused` gauge.
   */
  refusals(): { unauthorized: number; forbidden: number } {
    return { unauthorized: this.credentials ? 1 : 0, forbidden: this.forbidden.size };
  }

  /** Sends no more probes. */
  stop(): void {
    this.stopped = true;
    this.stopProbing();
  }

  private refuseCredentials(request: AccessRequest): void {
    this.credentials = this.refusal(request, 401);
    this.opts.logger.error('the API server rejects our credentials: /readyz answers 503 until it accepts them', { request: this.credentials.request, statusCode: 401, whatToDo: this.credentials.whatToDo });
    if (this.opts.probe && !this.stopped) {
      const probe = this.opts.probe;
      this.probeTimer = setInterval(() => void probe().catch(() => undefined), this.opts.probeIntervalMs ?? ACCESS_PROBE_INTERVAL_MS);
      this.probeTimer.unref();
    }
  }

  private acceptCredentials(request: AccessRequest, status: number): void {
    this.credentials = undefined;
    this.stopProbing();
    this.opts.logger.info('the API server accepts our credentials again: /readyz no longer waits for them', { request: this.describe(request), statusCode: status });
  }

  private stopProbing(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  private at(): string {
    return this.opts.server ? ` at ${this.opts.server}` : '';
  }

  private describe(request: AccessRequest): string {
    return `${request.verb} ${resourceOf(request.path).display}`;
  }

  private refusal(request: AccessRequest, status: 401 | 403): Refusal {
    return { status, request: this.describe(request), whatToDo: refusalAdvice(status, { ...request, ...(this.opts.server ? { server: this.opts.server } : {}) }) };
  }
}
