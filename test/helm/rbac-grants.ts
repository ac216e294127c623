/**
 * The chart's RBAC as data, for tests that compare it with what the code calls: render the chart,
 * take each component's ClusterRole and Role, and answer "may this component do that?".
 * A later test can record the requests the operator and gateway make against the sandbox and
 * assert `allows(grants, request)` for every one of them.
 */
import { KubeObject, field, renderChart } from './helm-cli';

export type Component = 'operator' | 'gateway';

export interface Grant {
  /** API group, '' for core. */
  group: string;
  /** Resource, with subresource as `pods/status`. */
  resource: string;
  verb: string;
  /** Only this object, when the rule names one. */
  resourceName?: string;
  /** Only in this namespace (a Role's grant); undefined for cluster-wide (ClusterRole). */
  namespace?: string;
}

export interface ApiRequest {
  group: string;
  resource: string;
  verb: string;
  name?: string;
  namespace?: string;
}

interface PolicyRule { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }

/** Every grant of one Role or ClusterRole. */
export function grantsOf(role: KubeObject): Grant[] {
  const namespace = role.kind === 'Role' ? role.metadata.namespace : undefined;
  const out: Grant[] = [];
  for (const rule of field(role, 'rules') as PolicyRule[]) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        for (const verb of rule.verbs) {
          for (const resourceName of rule.resourceNames ?? [undefined]) {
            out.push({ group, resource, verb, ...(resourceName ? { resourceName } : {}), ...(namespace ? { namespace } : {}) });
          }
        }
      }
    }
  }
  return out;
}

/** The grants of each component, as the chart renders them (release `rk` in `namespace`). */
export async function chartGrants(namespace = 'roomkeeper-system'): Promise<Record<Component, Grant[]>> {
  const objects = await renderChart({ namespace });
  const of = (component: Component): Grant[] => objects
    .filter((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.labels?.['app.kubernetes.io/component'] === component)
    .flatMap(grantsOf);
  return { operator: of('operator'), gateway: of('gateway') };
}

/** True when some grant covers the request (names and namespaces must match when the grant has them). */
export function allows(grants: Grant[], request: ApiRequest): boolean {
  return grants.some((g) =>
    (g.group === '*' || g.group === request.group)
    && (g.resource === '*' || g.resource === request.resource)
    && (g.verb === '*' || g.verb === request.verb)
    && (g.resourceName === undefined || g.resourceName === request.name)
    && (g.namespace === undefined || g.namespace === request.namespace));
}
