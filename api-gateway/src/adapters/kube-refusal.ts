/**
 * A request of the gateway's own that the Kubernetes API server refused: 401 (it rejects the
 * gateway's credentials) or 403 (its RBAC does not grant the gateway the verb on the resource).
 * Neither is the client's fault nor mended by sending the request again: the answer is a 500 that
 * names the refused request and what to restore (`gatewayAccessError`), never "internal error".
 */
import { apiErrorFields, apiStatus, isNamespaceTerminating } from '../../../common/src/kube/clients';
import { GatewayAccessError } from '../errors';

export interface KubeRefusal {
  status: 401 | 403;
  /** The refused request in RBAC's words (`delete schedulers.roomkeeper.io`), when the API server named it. */
  request?: string;
  /** The API server's message (never sent to clients: it names the gateway's ServiceAccount). */
  said: string;
}

/**
 * RBAC's reason, as kube-apiserver words it (`... cannot delete resource "schedulers" in API group
 * "roomkeeper.io" at the cluster scope`); the resource may carry a subresource (`gamerooms/status`).
 */
const RBAC_REASON = /cannot ([a-z]+) resource "([a-z0-9./-]+)" in API group "([a-z0-9.-]*)"/;

/** The refusal of a client error of the Kubernetes API, if it is one (401 or 403). */
export function kubeRefusalOf(err: unknown): KubeRefusal | undefined {
  const status = apiStatus(err);
  // A create in a namespace being deleted is refused with 403 too: the scheduler is going, no right is missing.
  if ((status !== 401 && status !== 403) || isNamespaceTerminating(err)) return undefined;
  const said = apiErrorFields(err).error;
  const m = RBAC_REASON.exec(said);
  if (status === 401 || !m) return { status, said };
  const [, verb, resource, group] = m as unknown as [string, string, string, string];
  return { status, request: `${verb} ${resource}${group ? `.${group}` : ''}`, said };
}

/** Where the gateway's rights come from, and how they are put back. */
const RESTORE_RBAC = "restore the chart's RBAC for the gateway's ServiceAccount (helm upgrade with rbac.create=true, the default; the chart README's Permissions table lists every right the gateway needs)";

const RENEW_CREDENTIALS = "the gateway's ServiceAccount token is refused (the ServiceAccount or the token's Secret was deleted, or the token expired and was not renewed): delete the gateway pod so that it starts with a fresh token, and check that the chart's ServiceAccount exists";

/** The end of the remedy: a request that went through in part is not sent again (its outcome says what follows). */
const resendWords = (resend: boolean): string => (resend ? ', then send the request again' : '');

/**
 * The answer to a request the API server refused the gateway: `outcome` says what the request did
 * and did not do (written by the use case that knows which of its writes went through); `resend`:
 * whether sending it again once the rights are back is what to do (not when what it asked goes
 * ahead without it).
 */
export function gatewayAccessError(refusal: KubeRefusal, outcome: string, details: Record<string, unknown> = {}, resend = true): GatewayAccessError {
  if (refusal.status === 401) {
    return new GatewayAccessError(`the Kubernetes API server rejected the gateway's own credentials (401 Unauthorized): ${outcome}; ${RENEW_CREDENTIALS}${resendWords(resend)}`, [{ reason: 'GATEWAY_UNAUTHORIZED', ...details }], refusal.said);
  }
  const refused = refusal.request !== undefined
    ? `the Kubernetes API server refused the gateway's own request to ${refusal.request} (403 Forbidden: the gateway's ServiceAccount is not granted it): ${outcome}; ${RESTORE_RBAC}${resendWords(resend)}`
    : `the Kubernetes API server refused a request of the gateway's own (403 Forbidden): ${outcome}; the gateway's log gives the API server's reason: a missing right (then ${RESTORE_RBAC}${resendWords(resend)}) or an admission policy or webhook`;
  return new GatewayAccessError(refused, [{ reason: 'GATEWAY_FORBIDDEN', ...(refusal.request !== undefined ? { request: refusal.request } : {}), ...details }], refusal.said);
}

/**
 * What a request refused at a read or at its first write did: nothing. The use cases whose later
 * write may be refused after an earlier one went through say what went through instead.
 */
export const NOT_CARRIED_OUT = 'the request was not carried out (no scheduler, operation or room was changed by it)';
