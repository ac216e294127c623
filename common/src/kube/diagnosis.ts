/**
 * What to do about a failed request to the Kubernetes API, in one sentence for a log line or a
 * readiness answer: the API server does not answer, the credentials are rejected or lack a
 * permission, or a Roomkeeper CustomResourceDefinition is not installed. Undefined when the
 * failure says nothing the operator of the cluster can act on (a 5xx, a 410, a conflict).
 */
import { crdInfo } from '../generated/schemas';
import { API_GROUP } from '../resources/api-group';
import { apiErrorFields, isApiUnavailable } from './clients';
import { outOfFileDescriptors } from './request-library';

export interface RequestContext {
  /** The API server's URL (the kubeconfig's current cluster), when known. */
  server?: string;
  /** The request's path, e.g. `/apis/roomkeeper.io/v1/gamerooms`. */
  path: string;
  /** The verb the request needed (RBAC terms: list, watch, create, ...). */
  verb: string;
}

const CHART_RBAC = 'install with the Helm chart, whose RBAC grants it (rbac.create=true, the default; helm/roomkeeper/README.md lists every permission), or grant it to this identity';

const CHECK_CREDENTIALS = 'the token or certificate of the kubeconfig is wrong or expired; in a pod, check its ServiceAccount token (a token of a ServiceAccount or token Secret that was deleted, or past its expiry, is refused)';

/** What to do when the API server does not answer (a refused, reset or timed-out request). */
export const UNANSWERED_ADVICE = 'check that the cluster runs and that the kubeconfig (E2E_KUBECONFIG, KUBECONFIG or the in-cluster ServiceAccount, in that order) points at it';

/** What to do about a request outOfFileDescriptors: the API server is not the one to check. */
export const OUT_OF_FILES_ADVICE = 'this process has no file descriptor left for a connection (EMFILE: it holds as many connections and files as its open-files limit allows), '
  + 'so the request never reached the API server, which may well be up: look for a flood of connections to this process\'s ports (ROOMKEEPER_MAX_CONNECTIONS caps each API listener), '
  + 'or raise the open-files limit (ulimit -n, or the container runtime\'s nofile)';

export function whatToDo(err: unknown, ctx: RequestContext): string | undefined {
  const { statusCode } = apiErrorFields(err);
  const resource = resourceOf(ctx.path);
  const at = ctx.server ? ` at ${ctx.server}` : '';
  const on = ctx.server ? ` on ${ctx.server}` : '';
  if (statusCode === undefined && isApiUnavailable(err)) {
    if (outOfFileDescriptors(String((err as { message?: unknown } | null)?.message))) return OUT_OF_FILES_ADVICE;
    return `the Kubernetes API server${at} does not answer: ${UNANSWERED_ADVICE}`;
  }
  if (statusCode === 401 || statusCode === 403) return refusalAdvice(statusCode, ctx);
  if (statusCode === 404 && resource.group === API_GROUP && !resource.name) {
    return `the CustomResourceDefinition ${resource.plural}.roomkeeper.io is not installed${on}: install the chart (helm install roomkeeper helm/roomkeeper installs crds/) or kubectl apply -f crds/`;
  }
  return undefined;
}

/** What a request refused with 401 (the credentials) or 403 (RBAC) means, and what to do. */
export function refusalAdvice(status: 401 | 403, ctx: RequestContext): string {
  if (status === 401) return `the API server${ctx.server ? ` at ${ctx.server}` : ''} rejected the credentials: ${CHECK_CREDENTIALS}`;
  return `this identity may not ${ctx.verb} ${resourceOf(ctx.path).display}: ${CHART_RBAC}`;
}

/** The kinds Roomkeeper asks for that have no namespace: its cluster-scoped CRDs, and Kubernetes' own. */
const CLUSTER_SCOPED = new Set([
  ...Object.values(crdInfo).filter((c) => c.scope === 'Cluster').map((c) => `${c.plural}.${c.group}`),
  'namespaces', 'nodes', 'persistentvolumes', 'customresourcedefinitions.apiextensions.k8s.io',
]);

interface ResourceRef { group: string; plural: string; name?: string; display: string }

/** `/apis/g/v/namespaces/ns/plural/name` or `/api/v1/plural` -> group, plural and a readable form. */
export function resourceOf(path: string): ResourceRef {
  const [pathOnly = ''] = path.split('?');
  const parts = pathOnly.split('/').filter(Boolean);
  const core = parts[0] === 'api';
  const group = core ? '' : (parts[1] ?? '');
  let rest = parts.slice(core ? 2 : 3);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const plural = rest[0] ?? '';
  const name = rest[1];
  const qualified = group ? `${plural}.${group}` : plural;
  const where = namespace ? ` in namespace ${namespace}` : CLUSTER_SCOPED.has(qualified) ? '' : ' (all namespaces)';
  return { group, plural, ...(name ? { name } : {}), display: `${qualified}${where}` };
}
