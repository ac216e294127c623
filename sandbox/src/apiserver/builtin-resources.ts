/**
 * The built-in resources the sandbox serves. Most are stored generically; a few (pods, namespaces,
 * CRDs) get extra behaviour elsewhere.
 */
import { eventsV1View } from './event-conversion';
import type { NameRule, ResourceType, ResourceView } from './resource-type';

interface BuiltinSpec {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  scale?: boolean;
  extra?: string[];
  generation?: boolean;
  nameRule?: NameRule;
  virtual?: boolean;
  view?: ResourceView;
}

const SPECS: BuiltinSpec[] = [
  { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], status: true, extra: ['finalize'], nameRule: 'label' },
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'], status: true, extra: ['binding', 'eviction'] },
  { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], status: true },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] },
  { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'], status: true, nameRule: 'dns1035' },
  { group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints', namespaced: true, shortNames: ['ep'] },
  { group: '', version: 'v1', plural: 'resourcequotas', kind: 'ResourceQuota', namespaced: true, shortNames: ['quota'], status: true },
  { group: '', version: 'v1', plural: 'limitranges', kind: 'LimitRange', namespaced: true, shortNames: ['limits'] },
  { group: '', version: 'v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'], status: true },
  { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], view: eventsV1View },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  { group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], status: true, generation: true },
  { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: ['all'], status: true, scale: true, generation: true },
  { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'], categories: ['all'], status: true, scale: true, generation: true },
  { group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', namespaced: true, shortNames: ['sts'], categories: ['all'], status: true, scale: true, generation: true },
  { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true, shortNames: ['ds'], categories: ['all'], status: true, generation: true },
  { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true, categories: ['all'], status: true, generation: true },
  { group: 'batch', version: 'v1', plural: 'cronjobs', kind: 'CronJob', namespaced: true, shortNames: ['cj'], categories: ['all'], status: true, generation: true },
  { group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler', namespaced: true, shortNames: ['hpa'], categories: ['all'], status: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true, nameRule: 'path' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false, nameRule: 'path' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding', namespaced: true, nameRule: 'path' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false, nameRule: 'path' },
  { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', kind: 'Ingress', namespaced: true, shortNames: ['ing'], status: true, generation: true },
  { group: 'networking.k8s.io', version: 'v1', plural: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, shortNames: ['netpol'], generation: true },
  { group: 'networking.k8s.io', version: 'v1', plural: 'ingressclasses', kind: 'IngressClass', namespaced: false },
  { group: 'scheduling.k8s.io', version: 'v1', plural: 'priorityclasses', kind: 'PriorityClass', namespaced: false, shortNames: ['pc'] },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview', namespaced: false, virtual: true },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false, virtual: true },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview', namespaced: false, virtual: true },
  { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], status: true, generation: true },
];

function toResourceType(s: BuiltinSpec): ResourceType {
  return {
    group: s.group,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    versions: [{
      name: s.version,
      status: s.status ?? false,
      scale: s.scale ? { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } : undefined,
    }],
    custom: false,
    extraSubresources: s.extra ?? [],
    generation: s.generation ?? false,
    nameRule: s.nameRule ?? 'subdomain',
    ...(s.virtual ? { virtual: true, verbs: ['create'] } : {}),
    ...(s.view ? { view: s.view } : {}),
  };
}

/** Fresh copies of the built-in resource types. */
export function builtinResourceTypes(): ResourceType[] {
  return SPECS.map(toResourceType);
}
