/**
 * A request of the gateway's own that the Kubernetes API server refused: 401 (it rejects the
 * gateway's credentials) or 403, whose reason decides the answer: RBAC does not grant the gateway
 * the verb on the resource, the namespace's ResourceQuota has no room left for the object, or an
 * admission webhook or ValidatingAdmissionPolicy denied the write. The answer names the refused
 * request, gives the API server's reason, and says what mends it (`gatewayAccessError`), never
 * "internal error"; only for a quota may the same request go through later without anyone's change.
 */
import { apiErrorFields, apiStatus, isNamespaceTerminating, statusBodyOf } from '../../../common/src/kube/clients';
import type { CrdKind } from '../../../common/src/generated/schemas';
import { API_GROUP, PLURALS } from '../../../common/src/resources/api-group';
import { GatewayAccessError, KubeAdmissionDeniedError, KubeQuotaExceededError } from '../errors';

/** A request of the gateway's to the Kubernetes API server, in RBAC's words. */
export interface KubeRequest {
  verb: string;
  /** `allocationclaims.roomkeeper.io`, `gamerooms.roomkeeper.io/status`. */
  resource: string;
  /** Absent for a cluster-scoped resource. */
  namespace?: string;
}

/** Why the API server refused: what to do next follows from it. */
export type RefusalCause = 'credentials' | 'rbac' | 'quota' | 'admission' | 'unknown';

export interface KubeRefusal {
  status: 401 | 403;
  cause: RefusalCause;
  /** The refused request (`create allocationclaims.roomkeeper.io in namespace m11`), when known. */
  request?: string;
  /** The namespace of the refused request, when known. */
  namespace?: string;
  /** The API server's whole message (logged: an RBAC refusal names the gateway's ServiceAccount). */
  said: string;
  /** The API server's reason as sent to clients: the user it names and any token masked. */
  reason: string;
  /**
   * The ResourceQuota that refused, and the resources it had no room for; `uncounted`: it has not
   * been counted yet (no status: kube-controller-manager has not synced it), so the API server
   * refuses everything it limits until it is.
   */
  quota?: { name: string; resources: string[]; uncounted?: true };
  /** Who denied the write: `admission webhook "x"`, `ValidatingAdmissionPolicy 'p' (binding 'b')`. */
  admission?: string;
}

/**
 * RBAC's reason, as kube-apiserver words it (`... cannot delete resource "schedulers" in API group
 * "roomkeeper.io" at the cluster scope`, or `in the namespace "n"`); the resource may carry a
 * subresource (`gamerooms/status`).
 */
const RBAC_REASON = /cannot ([a-z]+) resource "([a-z0-9./-]+)" in API group "([a-z0-9.-]*)"(?: in the namespace "([a-z0-9-]+)")?/;

/** The quota admission plugin's reason (`exceeded quota: cq, requested: count/x=1, used: count/x=0, limited: count/x=0`). */
const QUOTA_REASON = /exceeded quota: ([^,\s]+), requested: (\S+), used:/;

/** The quota admission plugin's reason for a quota not counted yet (`status unknown for quota: cq, resources: count/x`). */
const UNCOUNTED_QUOTA_REASON = /status unknown for quota: ([^,\s]+)(?:, resources: (\S+))?/i;

/** An admission webhook's denial (`admission webhook "x" denied the request: ...`). */
const WEBHOOK_REASON = /admission webhook "([^"]+)" denied the request/;

/** A ValidatingAdmissionPolicy's denial (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...`). */
const POLICY_REASON = /ValidatingAdmissionPolicy '([^']+)'(?: with binding '([^']+)')? denied request/;

/** kube-apiserver's prefix of a Forbidden message (`allocationclaims.roomkeeper.io "x" is forbidden: `). */
const FORBIDDEN_PREFIX = /^[a-z0-9./-]+ "[^"]*" is forbidden: /;

/** A request of the gateway's on one of Roomkeeper's resources (`subresource`: `status`). */
export function roomkeeperRequest(verb: string, kind: CrdKind, namespace?: string, subresource?: string): KubeRequest {
  return { verb, resource: `${PLURALS[kind]}.${API_GROUP}${subresource ? `/${subresource}` : ''}`, ...(namespace !== undefined ? { namespace } : {}) };
}

/** Which request each refused error answered, as the use case that sent it named it (`refusedAs`). */
const namedRequests = new WeakMap<object, KubeRequest>();

/**
 * For `.catch()` of a write: remembers which request `err` answered, so that a refusal names it
 * (the API server's Status names neither the verb nor the namespace), and throws it on unchanged.
 * The first name given to an error stays.
 */
export function refusedAs(request: KubeRequest): (err: unknown) => never {
  return (err) => {
    if (typeof err === 'object' && err !== null && !namedRequests.has(err)) namedRequests.set(err, request);
    throw err;
  };
}

/** The API server's message as clients may read it: the user it names (the gateway's ServiceAccount) and anything like a token masked, at most 500 characters. */
function maskedReason(said: string): string {
  const masked = said
    .replace(FORBIDDEN_PREFIX, '')
    .replace(/User "[^"]*"/g, "the gateway's ServiceAccount")
    .replace(/system:serviceaccount:[a-z0-9.:-]+/g, "the gateway's ServiceAccount")
    .replace(/\bBearer\s+\S+/gi, 'Bearer [masked]')
    .replace(/\beyJ[\w-]*\.[\w-]+\.[\w-]*/g, '[masked token]');
  return masked.length > 500 ? `${masked.slice(0, 497)}...` : masked;
}

const words = (r: KubeRequest): string => `${r.verb} ${r.resource}${r.namespace ? ` in namespace ${r.namespace}` : ''}`;

/** The resource the API server's Status names (`allocationclaims.roomkeeper.io`), when it names one. */
function statusResource(err: unknown): string | undefined {
  const details = statusBodyOf(err)?.details as { kind?: unknown; group?: unknown } | undefined;
  if (typeof details?.kind !== 'string' || details.kind === '') return undefined;
  return typeof details.group === 'string' && details.group !== '' ? `${details.kind}.${details.group}` : details.kind;
}

/** The refusal of a client error of the Kubernetes API, if it is one (401 or 403). */
export function kubeRefusalOf(err: unknown): KubeRefusal | undefined {
  const status = apiStatus(err);
  // A create in a namespace being deleted is refused with 403 too: the scheduler is going, no right is missing.
  if ((status !== 401 && status !== 403) || isNamespaceTerminating(err)) return undefined;
  const said = apiErrorFields(err).error;
  const reason = maskedReason(said);
  const named = typeof err === 'object' && err !== null ? namedRequests.get(err) : undefined;
  if (status === 401) return { status, cause: 'credentials', ...(named ? { request: words(named), ...(named.namespace ? { namespace: named.namespace } : {}) } : {}), said, reason };
  const rbac = RBAC_REASON.exec(said);
  if (rbac) {
    const [, verb, resource, group, namespace] = rbac as unknown as [string, string, string, string, string | undefined];
    const request: KubeRequest = { verb, resource: `${resource}${group ? `.${group}` : ''}`, ...(namespace ? { namespace } : {}) };
    return { status, cause: 'rbac', request: words(request), ...(namespace ? { namespace } : {}), said, reason };
  }
  // The Status names the resource, not the verb nor the namespace: those are the use case's (refusedAs).
  const resource = statusResource(err);
  const request = named ? words({ ...named, resource: resource ?? named.resource }) : resource ? `write ${resource}` : undefined;
  const known = { ...(request ? { request } : {}), ...(named?.namespace ? { namespace: named.namespace } : {}), said, reason };
  const quota = QUOTA_REASON.exec(said);
  if (quota) {
    const [, name, requested] = quota as unknown as [string, string, string];
    return { status, cause: 'quota', ...known, quota: { name, resources: requested.split(',').map((r) => r.split('=')[0] ?? r) } };
  }
  const uncounted = UNCOUNTED_QUOTA_REASON.exec(said);
  if (uncounted) {
    const [, name, resources] = uncounted as unknown as [string, string, string | undefined];
    return { status, cause: 'quota', ...known, quota: { name, resources: resources ? resources.split(',') : [], uncounted: true } };
  }
  const webhook = WEBHOOK_REASON.exec(said);
  if (webhook) return { status, cause: 'admission', ...known, admission: `admission webhook "${webhook[1] ?? ''}"` };
  const policy = POLICY_REASON.exec(said);
  if (policy) return { status, cause: 'admission', ...known, admission: `ValidatingAdmissionPolicy '${policy[1] ?? ''}'${policy[2] ? ` (binding '${policy[2]}')` : ''}` };
  if (said.includes('denied the request')) return { status, cause: 'admission', ...known, admission: 'an admission webhook or policy' };
  return { status, cause: 'unknown', ...known };
}

/** Where the gateway's rights come from, and how they are put back. */
const RESTORE_RBAC = "restore the chart's RBAC for the gateway's ServiceAccount (helm upgrade with rbac.create=true, the default; the chart README's Permissions table lists every right the gateway needs)";

const RENEW_CREDENTIALS = "the gateway's ServiceAccount token is refused (the ServiceAccount or the token's Secret was deleted, or the token expired and was not renewed): delete the gateway pod so that it starts with a fresh token, and check that the chart's ServiceAccount exists";

/** Seconds a client waits before it sends again a request a ResourceQuota refused. */
const QUOTA_RETRY_AFTER_SECONDS = 5;

/** The end of the remedy: a request that went through in part is not sent again (its outcome says what follows). */
const resendWords = (resend: boolean): string => (resend ? ', then send the request again' : '');

/** The quota's remedy: raise it (kubectl names the quota and its namespace), or let the objects it counts go. */
function raiseQuota(refusal: KubeRefusal, quota: { name: string; resources: string[]; uncounted?: true }, resend: boolean): string {
  if (quota.uncounted) {
    const get = refusal.namespace ? `kubectl -n ${refusal.namespace} get resourcequota ${quota.name}` : `kubectl get resourcequota ${quota.name} in the namespace of the refused request`;
    return `the namespace's ResourceQuota ${quota.name} has not been counted yet (it has no status: kube-controller-manager counts a new quota within seconds, unless it is down), and until it is the API server refuses every object it limits (${quota.resources.length > 0 ? `${quota.resources.join(', ')}; ` : ''}the gateway's rights are not at fault): `
      + `wait until it shows what is used (${get})${resendWords(resend)}`;
  }
  const edit = refusal.namespace ? `kubectl -n ${refusal.namespace} edit resourcequota ${quota.name}` : `kubectl edit resourcequota ${quota.name} in the namespace of the refused request`;
  return `the namespace's ResourceQuota ${quota.name} has no room left for ${quota.resources.join(', ')} (the gateway's rights are not at fault): raise its hard limit for ${quota.resources.length === 1 ? 'it' : 'them'} (${edit}), or wait until objects it counts are deleted${resendWords(resend)}`;
}

/**
 * The answer to a request the API server refused the gateway: `outcome` says what the request did
 * and did not do (written by the use case that knows which of its writes went through); `resend`:
 * whether sending it again once the cause is mended is what to do (not when what it asked goes
 * ahead without it). A quota is 429 (code 8, Retry-After), an admission denial 403 (code 7), any
 * other refusal 500 (code 13); `details` name the refused request and carry the API server's reason.
 */
export function gatewayAccessError(refusal: KubeRefusal, outcome: string, details: Record<string, unknown> = {}, resend = true): GatewayAccessError {
  const request = refusal.request !== undefined ? { request: refusal.request } : {};
  const to = refusal.request !== undefined ? `the gateway's own request to ${refusal.request}` : "a request of the gateway's own";
  if (refusal.status === 401) {
    return new GatewayAccessError(`the Kubernetes API server rejected the gateway's own credentials (401 Unauthorized): ${outcome}; ${RENEW_CREDENTIALS}${resendWords(resend)}`, [{ reason: 'GATEWAY_UNAUTHORIZED', ...request, ...details }], refusal.said);
  }
  const said = { kubernetesReason: refusal.reason };
  switch (refusal.cause) {
    case 'quota': {
      const quota = refusal.quota ?? { name: '?', resources: [] };
      return new KubeQuotaExceededError(
        `the Kubernetes API server refused ${to} (403 Forbidden: ${refusal.reason}): ${outcome}; ${raiseQuota(refusal, quota, resend)}`,
        [{ reason: 'KUBERNETES_QUOTA_EXCEEDED', ...request, quota: quota.name, ...(refusal.namespace ? { namespace: refusal.namespace } : {}), ...said, ...details }],
        refusal.said,
        resend ? QUOTA_RETRY_AFTER_SECONDS : undefined,
      );
    }
    case 'admission': {
      const who = refusal.admission ?? 'an admission webhook or policy';
      return new KubeAdmissionDeniedError(
        `the Kubernetes API server refused ${to}: ${who} denied it (${refusal.reason}): ${outcome}; the cluster's admission control refused it, not the gateway's rights: change the request so that ${who} admits it, or ask the cluster's administrator to change ${who}${resendWords(resend)}`,
        [{ reason: 'KUBERNETES_ADMISSION_DENIED', ...request, admission: who, ...said, ...details }],
        refusal.said,
      );
    }
    case 'rbac':
      return new GatewayAccessError(
        `the Kubernetes API server refused ${to} (403 Forbidden: the gateway's ServiceAccount is not granted it): ${outcome}; ${RESTORE_RBAC}${resendWords(resend)}`,
        [{ reason: 'GATEWAY_FORBIDDEN', ...request, ...said, ...details }],
        refusal.said,
      );
    default:
      return new GatewayAccessError(
        `the Kubernetes API server refused ${to} (403 Forbidden: ${refusal.reason}): ${outcome}; that reason says what refused it: a missing right (then ${RESTORE_RBAC}${resendWords(resend)}) or an admission policy or webhook (then the cluster's administrator changes it)`,
        [{ reason: 'GATEWAY_FORBIDDEN', ...request, ...said, ...details }],
        refusal.said,
      );
  }
}

/**
 * What a request refused at a read or at its first write did: nothing. The use cases whose later
 * write may be refused after an earlier one went through say what went through instead.
 */
export const NOT_CARRIED_OUT = 'the request was not carried out (no scheduler, operation or room was changed by it)';
