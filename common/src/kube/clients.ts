/**
 * The Kubernetes client factory: where the kubeconfig comes from, and API clients that share
 * one client-side rate limit (QPS/burst, as client-go does).
 */
import * as fs from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../logger';
import type { MetricsRegistry } from '../metrics';
import { apiRequestStarted } from '../runtime/api-waits';
import { PLURALS, ROOMKEEPER_API } from '../resources/api-group';
import { ApiAccess, type AccessAnswers } from './api-access';
import { TokenBucket } from './rate-limiter';
import { RequestHttpLibrary } from './request-library';
import { isRetiredPoolFailure, withSharedDispatcher } from './shared-dispatcher';
import { processPauses } from '../runtime/pauses';
import packageJson from '../../../package.json';

export type KubeConfigSource = 'E2E_KUBECONFIG' | 'KUBECONFIG' | 'in-cluster';

/**
 * Finds a cluster: `E2E_KUBECONFIG`, then `KUBECONFIG`, then the in-cluster service account.
 * Returns undefined when none is configured (then `npm start` brings up the sandbox).
 */
export function discoverKubeConfig(env: NodeJS.ProcessEnv = process.env): { kc: k8s.KubeConfig; source: KubeConfigSource } | undefined {
  for (const source of ['E2E_KUBECONFIG', 'KUBECONFIG'] as const) {
    const file = env[source]?.split(':').find((f) => f !== '' && fs.existsSync(f));
    if (file) {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(file);
      return { kc, source };
    }
  }
  if (env.KUBERNETES_SERVICE_HOST && fs.existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) {
    const kc = new k8s.KubeConfig();
    kc.loadFromCluster();
    return { kc, source: 'in-cluster' };
  }
  return undefined;
}

export interface RateLimit { qps: number; burst: number }

/** What the clients measure of every request (when given a registry). */
interface RequestMetrics {
  /** Seconds from send to answer (or failure), by verb and resource. */
  observe(verb: string, resource: string, seconds: number): void;
  /** A request that failed: `code` is the HTTP status, or `transport` when there was no answer. */
  failed(verb: string, resource: string, code: string): void;
  /** Seconds a request waited for the client-side rate limiter. */
  waited(seconds: number): void;
}

function requestMetrics(metrics: MetricsRegistry | undefined): RequestMetrics | undefined {
  if (!metrics) return undefined;
  const latency = metrics.histogram('roomkeeper_kube_api_request_duration_seconds', 'Kubernetes API requests by verb and resource: seconds from send to answer.', undefined, { labelNames: ['verb', 'resource'] });
  const errors = metrics.counter('roomkeeper_kube_api_request_errors_total', 'Kubernetes API requests that failed, by verb, resource and HTTP status (transport: no answer; fenced: a write not sent, this replica having lost its leader Lease).', { labelNames: ['code', 'resource', 'verb'] });
  const wait = metrics.histogram('roomkeeper_kube_client_rate_limiter_wait_seconds', 'Seconds a Kubernetes API request waited for the client-side rate limiter (QPS/burst).', [0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);
  return {
    observe: (verb, resource, seconds) => latency.observe(seconds, { verb, resource }),
    failed: (verb, resource, code) => errors.inc({ code, resource, verb }),
    waited: (seconds) => wait.observe(seconds),
  };
}

/**
 * The verb and resource of a request, as kube-apiserver names them in its own metrics: `list`
 * vs `get` by whether the path names an object; the resource is the plural plus a subresource
 * (`gamerooms/status`). Names and namespaces (user input) never become labels.
 */
export function requestKind(method: string, url: string): { verb: string; resource: string } {
  const path = url.replace(/^[a-z]+:\/\/[^/]+/i, '').split('?')[0] ?? '';
  const parts = path.split('/').filter((p) => p !== '');
  // /api/v1/... or /apis/<group>/<version>/...
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [plural = 'unknown', name, sub] = rest;
  const resource = /^[a-z0-9.-]{1,63}$/.test(plural) ? (sub && /^[a-z]{1,20}$/.test(sub) ? `${plural}/${sub}` : plural) : 'unknown';
  const m = method.toUpperCase();
  const verb = m === 'GET' ? (name ? 'get' : 'list') : m === 'POST' ? 'create' : m === 'PUT' ? 'update' : m === 'PATCH' ? 'patch' : m === 'DELETE' ? (name ? 'delete' : 'deletecollection') : 'other';
  return { verb, resource };
}

export interface KubeClients {
  /** The kubeconfig with one pooled connection dispatcher: use it for informers and watches too. */
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly custom: k8s.CustomObjectsApi;
  readonly coordination: k8s.CoordinationV1Api;
  readonly events: k8s.EventsV1Api;
  readonly limiter: TokenBucket;
  /**
   * Whether the API server accepts these clients' credentials and lets their caches list and watch
   * (informers report to it: `InformerOptions.access`); for /readyz.
   */
  readonly access: ApiAccess;
  /**
   * Sets the check asked before every write of `core`, `custom` and `events` (not of
   * `coordination`: the Lease is how a replica leads again): when it gives a reason, the write is
   * not sent and fails with WriteFencedError. The operator fences a replica that lost its leader
   * Lease (operator/src/runtime/leader-election.ts, `writeFence`).
   */
  fenceWrites(check: () => string | undefined): void;
  /** Releases waiting requests and closes the pooled connections. */
  close(): Promise<void>;
}

/**
 * No request waits for ever: a request to an API server that went away mid-answer (or hangs
 * while it restarts) fails after this long, so loops that await it (leader election, operation
 * executors) move on. Watches do not go through these clients and are not limited.
 */
const KUBE_REQUEST_TIMEOUT_MS = 30_000;

/** A write not sent because this process may not write now (`KubeClients.fenceWrites`); no API server saw it. */
class WriteFencedError extends Error {
  override readonly name = 'WriteFencedError';
}

/** Whether a write failed because it was not sent: this replica lost its leader Lease (`fenceWrites`). */
export function isWriteFenced(err: unknown): boolean {
  return err instanceof WriteFencedError;
}

/** The check before each write, set once the process knows it (`KubeClients.fenceWrites`). */
interface WriteFence { check?: () => string | undefined }

function rateLimitMiddleware(limiter: TokenBucket, measured: RequestMetrics | undefined, fence: WriteFence | undefined): k8s.Middleware {
  return {
    pre: async (ctx: k8s.RequestContext) => {
      const start = measured ? process.hrtime.bigint() : 0n;
      await limiter.acquire();
      measured?.waited(Number(process.hrtime.bigint() - start) / 1e9);
      // Asked after the limiter's wait, right before the request goes out.
      const fenced = ctx.getHttpMethod() === k8s.HttpMethod.GET ? undefined : fence?.check?.();
      if (fenced !== undefined) {
        const { verb, resource } = requestKind(ctx.getHttpMethod(), ctx.getUrl());
        measured?.failed(verb, resource, 'fenced');
        throw new WriteFencedError(`${verb} ${resource} not sent: ${fenced}`);
      }
      if (!ctx.getSignal()) ctx.setSignal(AbortSignal.timeout(KUBE_REQUEST_TIMEOUT_MS));
      return ctx;
    },
    post: (ctx: k8s.ResponseContext) => Promise.resolve(ctx),
  };
}

/**
 * client-node's HTTP library on undici's `request` (`request-library.ts`), telling
 * `onTransportError` when a request failed without an answer (connection refused or reset, a
 * broken pool, our request timeout).
 */
function watchfulHttpLibrary(onTransportError: () => void, measured: RequestMetrics | undefined, access: AccessAnswers): k8s.HttpLibrary {
  const inner = new RequestHttpLibrary();
  const send = retryingSend(inner, onTransportError);
  return k8s.wrapHttpLibrary({
    send: async (ctx) => {
      const url = ctx.getUrl();
      const { verb, resource } = requestKind(ctx.getHttpMethod(), url);
      const request = { verb, path: url.replace(/^[a-z]+:\/\/[^/]+/i, '') };
      const start = measured ? process.hrtime.bigint() : 0n;
      const seconds = () => Number(process.hrtime.bigint() - start) / 1e9;
      // The reconcile that sent it waits on the API meanwhile (the liveness check does not count that).
      const ended = apiRequestStarted();
      try {
        const res = await send(ctx);
        measured?.observe(verb, resource, seconds());
        if (res.httpStatusCode >= 400) measured?.failed(verb, resource, String(res.httpStatusCode));
        access.answered(request, res.httpStatusCode);
        const warning = res.headers.warning;
        if (warning !== undefined) access.warned?.(request, warning);
        return res;
      } catch (err) {
        measured?.observe(verb, resource, seconds());
        measured?.failed(verb, resource, 'transport');
        if (isTransportError(err) && (err as { name?: unknown }).name !== 'AbortError') access.unanswered?.(request, describeApiError(err));
        throw err;
      } finally {
        ended();
      }
    },
  });
}

function retryingSend(inner: RequestHttpLibrary, onTransportError: () => void): (ctx: k8s.RequestContext) => Promise<k8s.ResponseContext> {
  return async (ctx) => {
    // As client-go: an answer with Retry-After (429 throttling, 503 while starting) is asked
    // again after the time it names, up to RETRY_AFTER_ATTEMPTS times, within the request timeout.
    for (let attempt = 1; ; attempt++) {
      const res = await inner.send(ctx).catch((err: unknown) => {
        // A request failed by the replacement of its pool says nothing of the fresh pool.
        if (isTransportError(err) && !isRetiredPoolFailure(socketErrorCode(err))) onTransportError();
        throw err;
      });
      const waitMs = retryAfterMs(res.httpStatusCode, res.headers['retry-after']);
      if (waitMs === undefined || attempt >= RETRY_AFTER_ATTEMPTS) return res;
      await res.body.text().catch(() => undefined); // free the connection
      await new Promise((r) => setTimeout(r, waitMs).unref());
    }
  };
}

const RETRY_AFTER_ATTEMPTS = 10;
const RETRY_AFTER_MAX_MS = 10_000;

/** How long a 429 or 503 answer asks to wait (seconds in Retry-After), capped; undefined: do not retry. */
export function retryAfterMs(status: number, header: string | undefined): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  if (header === undefined || !/^\d{1,6}$/.test(header.trim())) return undefined;
  return Math.min(Number(header.trim()) * 1000, RETRY_AFTER_MAX_MS);
}

/** A request that got no answer at all: no connection, a cut-off answer, a timeout, or an abort. */
function isTransportError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  return (err as { name?: unknown }).name === 'AbortError' || (apiStatus(err) === undefined && isApiUnavailable(err));
}

function makeApi<T>(kc: k8s.KubeConfig, limiter: TokenBucket, onTransportError: () => void, measured: RequestMetrics | undefined, access: AccessAnswers, Api: new (config: k8s.Configuration) => T, fence?: WriteFence): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const config = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [rateLimitMiddleware(limiter, measured, fence)],
    httpApi: watchfulHttpLibrary(onTransportError, measured, access),
  });
  return new Api(config);
}

/**
 * The Events client's own token bucket. Events are a courtesy (the recorder creates at most 20 a
 * second and patches the series of repeats now and then): they never take tokens from the work
 * itself, as controller-runtime's recorder has its own client. Without this an add_rooms of 1,000
 * waited for about 100 Event writes in the operator's one bucket (3.40 s instead of 3.15 s on the
 * sandbox at the default 400 QPS).
 */
const EVENTS_RATE_LIMIT: RateLimit = { qps: 25, burst: 50 };

/**
 * The User-Agent of a Roomkeeper component's requests to the API server, as client-go's are made
 * (`<program>/<version> (<os>/<arch>) ...`): `roomkeeper-operator/0.1.0 (linux/x64) node/v22.11.0`.
 * kube-apiserver names the field manager of a write sent without one by what comes before the
 * first `/`, so `managedFields` (and a `kubectl apply --server-side` conflict) says
 * `roomkeeper-operator`; without the version it said `roomkeeper-operator (linux`.
 */
export function roomkeeperUserAgent(component: string): string {
  return `roomkeeper-${component}/${packageJson.version} (${process.platform}/${process.arch}) node/${process.version}`;
}

/**
 * API clients for one process. Every request they send but Events shares one token bucket, and one pooled
 * connection dispatcher: client-node 2.x otherwise builds a new connection agent for every
 * request to a cluster with TLS settings (a CA, client certificates, or skip-verify), leaving an
 * idle socket behind each — thousands of sockets and hundreds of MB at fleet scale.
 */
export function makeKubeClients(original: k8s.KubeConfig, limit: RateLimit, opts: { metrics?: MetricsRegistry; userAgent?: string; logger?: Logger } = {}): KubeClients {
  const measured = requestMetrics(opts.metrics);
  const limiter = new TokenBucket(limit.qps, limit.burst);
  const eventsLimiter = new TokenBucket(EVENTS_RATE_LIMIT.qps, EVENTS_RATE_LIMIT.burst);
  const shared = withSharedDispatcher(original, { userAgent: opts.userAgent });
  const kc = shared.kubeConfig;
  // A pool that lost its server under load can hang every later request: start a fresh one.
  const reset = (): void => shared.transportFailed();
  // While the credentials are refused: one Scheduler asked for, a request both components make.
  const probe = (): Promise<unknown> => custom.listClusterCustomObject({ ...ROOMKEEPER_API, plural: PLURALS.Scheduler, limit: 1 });
  // A process that logs (the operator, the gateway) watches for its own pauses (pauses.ts).
  const pauses = opts.logger ? processPauses(opts.logger) : undefined;
  const access = new ApiAccess({ logger: opts.logger ?? silentLogger(), server: kc.getCurrentCluster()?.server, probe, ...(pauses ? { pauses } : {}) });
  const fence: WriteFence = {};
  const custom = makeApi(kc, limiter, reset, measured, access, k8s.CustomObjectsApi, fence);
  if (opts.metrics) {
    const refused = opts.metrics.gauge('roomkeeper_kube_api_refused', 'Refusals of this process\'s requests in force (while any: /readyz answers 503): status="401" 1 while the API server rejects its credentials, status="403" the caches whose list or watch it forbids.', () => {
      const now = access.refusals();
      refused.set(now.unauthorized, { status: '401' });
      refused.set(now.forbidden, { status: '403' });
    }, { labelNames: ['status'] });
  }
  return {
    kc,
    limiter,
    access,
    fenceWrites: (check) => {
      fence.check = check;
    },
    close: async () => {
      access.stop();
      limiter.drain();
      eventsLimiter.drain();
      await shared.close();
    },
    core: makeApi(kc, limiter, reset, measured, access, k8s.CoreV1Api, fence),
    custom,
    coordination: makeApi(kc, limiter, reset, measured, access, k8s.CoordinationV1Api),
    events: makeApi(kc, eventsLimiter, reset, measured, access, k8s.EventsV1Api, fence),
  };
}

/**
 * The HTTP status of an error thrown by the client, if it came from the API server. Only a number
 * an HTTP status can be counts: a DOMException carries a legacy numeric `code` too (23 for the
 * `TimeoutError` of a request that outlived its timeout), which is no answer at all.
 */
export function apiStatus(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    if (typeof err.code === 'number' && Number.isInteger(err.code) && err.code >= 100 && err.code <= 599) return err.code;
  }
  return undefined;
}

/** The HTTP status of a client error, a watch's included (client-node's watch fails with an Error carrying `statusCode` rather than `code`). */
export function responseStatus(err: unknown): number | undefined {
  const watchStatus = typeof err === 'object' && err !== null ? (err as { statusCode?: unknown }).statusCode : undefined;
  return apiStatus(err) ?? (typeof watchStatus === 'number' ? watchStatus : undefined);
}

export const isNotFound = (err: unknown): boolean => apiStatus(err) === 404;
export const isConflict = (err: unknown): boolean => apiStatus(err) === 409;
/** Errors worth retrying: conflicts, throttling, server errors and transport failures. */
export function isRetryable(err: unknown): boolean {
  const s = apiStatus(err);
  return s === undefined || s === 409 || s === 429 || s >= 500;
}

/**
 * Runs `fn` again after a transient failure (no answer, 429, 5xx), up to `attempts` times with
 * doubling delays (100 ms to 2 s); a conflict (409) or any other answer is the caller's to handle.
 */
export async function retryTransient<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  let delay = 100;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !isRetryable(err) || apiStatus(err) === 409) throw err;
      await new Promise((r) => setTimeout(r, delay).unref());
      delay = Math.min(delay * 2, 2000);
    }
  }
}

/**
 * The API server could not answer: the connection failed (our requests fail with
 * `KubeTransportError`, client-node's watches with `TypeError: fetch failed`, each with the socket
 * error as its cause), the request outlived its timeout (`TimeoutError`: a server that went away
 * mid-request, or hangs while it restarts), or it answered 429 or a 5xx. An `AbortError` is not
 * one: the caller canceled its own request.
 */
export function isApiUnavailable(err: unknown): boolean {
  const s = apiStatus(err);
  if (s !== undefined) return s === 429 || s >= 500;
  // Duck-typed: the error may come from another realm (client-node loaded outside a jest VM).
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; message?: unknown };
  const code = socketErrorCode(err);
  return (e.name === 'TypeError' && e.message === 'fetch failed') || e.name === 'KubeTransportError' || e.name === 'TimeoutError' || (code !== undefined && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code));
}

/** The socket's error code behind a request that got no answer (`ECONNREFUSED`, `UND_ERR_SOCKET`...), if any. */
export function socketErrorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A client error as log fields: the HTTP status code, the Kubernetes `Status` reason and the
 * server's message, each its own field. client-node's own message carries the response body as
 * escaped JSON plus the headers (`HTTP-Code: 409\nMessage: ...\nBody: "{\"kind\":...`), which
 * nobody can read in a log line. Errors that did not come from the API server give `error` only.
 */
export interface ApiErrorFields {
  statusCode?: number;
  /** The `reason` of the API server's `Status` body (Conflict, NotFound, Forbidden, AlreadyExists...). */
  reason?: string;
  /** The server's message, or the error's own message. */
  error: string;
}

export function apiErrorFields(err: unknown): ApiErrorFields {
  const statusCode = responseStatus(err);
  const body = statusBody(err);
  const error = body?.message ?? plainMessage(err);
  return { ...(statusCode !== undefined ? { statusCode } : {}), ...(body?.reason ? { reason: body.reason } : {}), error };
}

/**
 * kube-apiserver's ServiceAccount admission refused a pod because the namespace's ServiceAccount
 * does not exist yet: kube-controller-manager creates `default` in every new namespace, moments
 * later as a rule, tens of seconds later when it is catching up (after a control-plane outage).
 */
export function isServiceAccountMissing(err: unknown): boolean {
  return apiStatus(err) === 403 && apiErrorFields(err).error.includes('error looking up service account');
}

/**
 * A JSON Patch that did not apply to the object as it is now: a `test` operation failed (the value
 * changed since it was read), or a path it names is gone. A conflict, not an invalid request.
 * kube-apiserver v1.28 answers both with 422, the generic message "the server rejected our request
 * due to an error in our request" and no cause at all (test/real-apiserver/differential.test.ts);
 * a request the schema refuses is a 422 that names the object and its fields instead.
 */
export function isJsonPatchNotApplied(err: unknown): boolean {
  if (apiStatus(err) !== 422) return false;
  const body = statusBodyOf(err);
  const causes = body?.details?.causes;
  return /testing value .* failed/.test(describeApiError(err))
    || (body?.message === PATCH_NOT_APPLIED && (!Array.isArray(causes) || causes.every((c) => !c.field)));
}

/**
 * A write the schema refused because a list at `field` would be longer than its `maxItems`: 422,
 * cause FieldValueTooMany. The field as the API server names it: kube-apiserver validates a status
 * write against the status schema alone, so it names `lostRooms`, not `status.lostRooms`
 * (test/real-apiserver/differential.test.ts). For an append decided on a cache that was behind, a
 * fresh read decides again.
 */
export function isTooManyItems(err: unknown, field: string): boolean {
  if (apiStatus(err) !== 422) return false;
  return statusBodyOf(err)?.details?.causes?.some((c) => c.reason === 'FieldValueTooMany' && c.field === field) ?? false;
}

/**
 * A create refused because its namespace is being deleted (403, cause NamespaceTerminating): no
 * retry can succeed, and in a scheduler's deletion it is what happens, not a fault.
 */
export function isNamespaceTerminating(err: unknown): boolean {
  if (apiStatus(err) !== 403) return false;
  const body = typeof err === 'object' && err !== null && 'body' in err ? err.body : undefined;
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return text.includes('NamespaceTerminating') || describeApiError(err).includes('because it is being terminated');
}

/** kube-apiserver's whole message for a JSON Patch that could not be applied. */
const PATCH_NOT_APPLIED = 'the server rejected our request due to an error in our request';

/** A readable one-line description of a client error (status and the server's message). */
export function describeApiError(err: unknown): string {
  const { statusCode, error } = apiErrorFields(err);
  return statusCode ? `${statusCode} ${error}` : error;
}

/** The API server's `Status` body (metav1.Status), as far as Roomkeeper reads it; its fields unchecked. */
export interface KubeStatusBody {
  message?: unknown;
  reason?: unknown;
  details?: { kind?: string; name?: string; causes?: { field?: string; message?: string; reason?: string }[] };
}

/** The API server's `Status` body of a client error, parsed, when it has one. */
export function statusBodyOf(err: unknown): KubeStatusBody | undefined {
  if (typeof err !== 'object' || err === null || !('body' in err)) return undefined;
  const body = err.body;
  try {
    const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The message and reason of a client error's `Status` body, when non-empty strings. */
function statusBody(err: unknown): { message?: string; reason?: string } | undefined {
  const parsed = statusBodyOf(err);
  if (!parsed) return undefined;
  const { message, reason } = parsed;
  return {
    ...(typeof message === 'string' && message !== '' ? { message } : {}),
    ...(typeof reason === 'string' && reason !== '' ? { reason } : {}),
  };
}

/** An error's message, without client-node's dump of the body and headers when it has one. */
function plainMessage(err: unknown): string {
  const message = typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err);
  const dumped = /^HTTP-Code: \d+\nMessage: (.*)\nBody: /.exec(message);
  if (!dumped) return message;
  const body = (err as { body?: unknown }).body;
  return typeof body === 'string' && body.trim() !== '' ? body.trim().slice(0, 500) : dumped[1] as string;
}

/** Merge-patch options for client-node calls (the generated clients default to JSON patch). */
export const MERGE_PATCH = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** JSON Patch (RFC 6902) options, for patches that carry `test` preconditions. */
export const JSON_PATCH = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
