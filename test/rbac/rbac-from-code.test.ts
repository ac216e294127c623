/**
 * The chart's RBAC against the permissions derived from the code (kube-calls.ts): each component
 * may do everything its code does, and nothing the code does not do.
 */
import * as path from 'node:path';
import { findObject, field, renderChart, type KubeObject } from '../helm/helm-cli';
import { allows, chartGrants, type ApiRequest, type Component, type Grant } from '../helm/rbac-grants';
import { KubeCallAnalyzer, parseApiMethod, parseWatchPath, pluralOf, UnresolvedKubeCallError, type KubeUse } from './kube-calls';

const ROOT = path.resolve(__dirname, '../..');
const RELEASE_NAMESPACE = 'roomkeeper-system';
const ENTRIES: Record<Component, string> = {
  operator: path.join(ROOT, 'operator/src/main.ts'),
  gateway: path.join(ROOT, 'api-gateway/src/main.ts'),
};
const FIXTURE_ENTRY = path.join(__dirname, 'fixtures/fixture-main.ts');
const UNRESOLVED_ENTRY = path.join(__dirname, 'fixtures/unresolved-main.ts');
const FIXTURE_DIRS = ['test/rbac/fixtures'];

/**
 * Calls whose object name and namespace come from configuration. The chart sets that configuration
 * in the component's Deployment env, so the request is checked with the values the chart gives.
 */
const CONFIGURED_OBJECTS: { component: Component; group: string; resource: string; nameEnv: string; namespaceEnv: string; deployment: string }[] = [
  { component: 'operator', group: 'coordination.k8s.io', resource: 'leases', nameEnv: 'ROOMKEEPER_LEASE_NAME', namespaceEnv: 'ROOMKEEPER_LEASE_NAMESPACE', deployment: '-operator' },
  { component: 'gateway', group: '', resource: 'secrets', nameEnv: 'ROOMKEEPER_AUTH_SECRET_NAME', namespaceEnv: 'ROOMKEEPER_AUTH_SECRET_NAMESPACE', deployment: '-gateway' },
];

/**
 * Grants the chart may hold although the analyser finds no call for them. Each entry says why.
 * Empty today: every grant must be justified by a call (the secret `get` and the lease verbs are
 * derived from `readNamespacedSecret` and the `...NamespacedLease` calls).
 */
const ALLOWED_EXTRA: Record<Component, { group: string; resource: string; verb: string; why: string }[]> = {
  operator: [],
  gateway: [],
};

const key = (g: { group: string; resource: string; verb: string }): string => `${g.verb} ${g.group === '' ? 'core' : g.group}/${g.resource}`;

function envOf(objects: KubeObject[], deploymentSuffix: string): Record<string, string> {
  const deployment = findObject(objects, 'Deployment', deploymentSuffix);
  const containers = field(deployment, 'spec.template.spec.containers') as { env?: { name: string; value?: string }[] }[];
  const env: Record<string, string> = {};
  for (const c of containers) for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

let analyzer: KubeCallAnalyzer;
const derived = {} as Record<Component, KubeUse[]>;
let grants: Record<Component, Grant[]>;
let rendered: KubeObject[];

beforeAll(async () => {
  analyzer = new KubeCallAnalyzer({
    rootDir: ROOT,
    tsconfigPath: path.join(ROOT, 'tsconfig.json'),
    entries: [ENTRIES.operator, ENTRIES.gateway, FIXTURE_ENTRY, UNRESOLVED_ENTRY],
    sourceDirs: ['operator', 'api-gateway', 'common'],
  });
  derived.operator = analyzer.usesOf(ENTRIES.operator);
  derived.gateway = analyzer.usesOf(ENTRIES.gateway);
  [grants, rendered] = await Promise.all([chartGrants(RELEASE_NAMESPACE), renderChart({ namespace: RELEASE_NAMESPACE })]);
});

describe('the analyser (pure parts)', () => {
  test.each([
    ['createNamespacedPod', 'create', 'pods'],
    ['patchNamespacedPodStatus', 'patch', 'pods/status'],
    ['listPodForAllNamespaces', 'list', 'pods'],
    ['readNamespace', 'get', 'namespaces'],
    ['replaceNamespacedLease', 'update', 'leases'],
    ['deleteCollectionNamespacedSecret', 'deletecollection', 'secrets'],
    ['listNode', 'list', 'nodes'],
    ['readNamespacedEndpoints', 'get', 'endpoints'],
    ['createNamespacedNetworkPolicy', 'create', 'networkpolicies'],
    ['patchNamespacedDeploymentScale', 'patch', 'deployments/scale'],
    ['createNamespacedBinding', 'create', 'bindings'],
  ])('%s -> %s %s', (method, verb, resource) => {
    expect(parseApiMethod(method)).toEqual({ verb, resource });
  });

  test('names that are not resource calls are not parsed', () => {
    expect(parseApiMethod('getAPIResources')).toBeUndefined();
    expect(parseApiMethod('connectGetNamespacedPodExec')).toBeUndefined();
  });

  test('watch paths and plurals', () => {
    expect(parseWatchPath('/api/v1/pods')).toEqual({ group: '', resource: 'pods' });
    expect(parseWatchPath('/apis/roomkeeper.io/v1/gamerooms')).toEqual({ group: 'roomkeeper.io', resource: 'gamerooms' });
    expect(parseWatchPath('/apis/roomkeeper.io/v1/namespaces/\u0000/gamerooms')).toEqual({ group: 'roomkeeper.io', resource: 'gamerooms' });
    expect(parseWatchPath('/apis/roomkeeper.io/v1/\u0000')).toBeUndefined();
    expect(parseWatchPath('/healthz')).toBeUndefined();
    expect(['IngressClass', 'Policy', 'Lease', 'Endpoints'].map(pluralOf)).toEqual(['ingressclasses', 'policies', 'leases', 'endpoints']);
  });
});

describe('the analyser on a fixture with known calls', () => {
  test('derives exactly the reachable calls, with their locations', () => {
    const uses = analyzer.usesOf(FIXTURE_ENTRY, FIXTURE_DIRS);
    expect([...uses.map(key)].sort()).toEqual([
      'create core/configmaps',
      'delete core/configmaps',
      'list core/pods',
      'watch core/services',
      'get core/nodes',
      'patch apps/deployments/scale',
      'list example.io/gadgets',
      'watch example.io/gadgets',
      'update example.io/widgets/finalizers',
      'delete example.io/widgets',
      'get example.io/widgets',
    ].sort());
    const widgetsDelete = uses.find((u) => u.resource === 'widgets' && u.verb === 'delete');
    expect(widgetsDelete?.locations).toEqual([expect.stringMatching(/^test\/rbac\/fixtures\/widget-store\.ts:\d+$/)]);
    const finalizers = uses.find((u) => u.resource === 'widgets/finalizers');
    const gadgetsWatch = uses.find((u) => u.resource === 'gadgets' && u.verb === 'watch');
    expect(gadgetsWatch?.locations).toEqual([expect.stringMatching(/^test\/rbac\/fixtures\/fixture-main\.ts:\d+ \(watch; path from .*fixture-main\.ts:\d+/)]);
    expect(finalizers?.locations[0]).toMatch(/fixture-main\.ts:\d+ \(blockOwnerDeletion on its Widget owner\)/);
  });

  test('a value it cannot resolve is an error naming the call, not a guess', () => {
    expect(() => analyzer.usesOf(UNRESOLVED_ENTRY, FIXTURE_DIRS)).toThrow(UnresolvedKubeCallError);
    expect(() => analyzer.usesOf(UNRESOLVED_ENTRY, FIXTURE_DIRS)).toThrow(/unresolved-main\.ts:\d+: cannot resolve `group`/);
  });
});

describe('permissions derived from the code', () => {
  test('the operator needs what it obviously does (the analysis is not vacuous)', () => {
    const keys = derived.operator.map(key);
    expect(keys).toEqual(expect.arrayContaining([
      'create core/pods',
      'delete roomkeeper.io/gamerooms',
      'update coordination.k8s.io/leases',
      'patch roomkeeper.io/operations/status',
      'watch roomkeeper.io/schedulers',
      'list core/nodes',
    ]));
    expect(derived.operator.length).toBeGreaterThan(20);
    for (const use of derived.operator) expect(use.locations.length).toBeGreaterThan(0);
  });

  test('the gateway reads and writes its resources but never touches pods', () => {
    const keys = derived.gateway.map(key);
    expect(keys).toEqual(expect.arrayContaining(['create roomkeeper.io/operations', 'patch roomkeeper.io/gamerooms/status', 'get core/secrets']));
    expect(derived.gateway.filter((u) => u.resource.startsWith('pods'))).toEqual([]);
  });
});

describe('the chart grants each component exactly what its code uses', () => {
  const components: Component[] = ['operator', 'gateway'];

  function requestFor(component: Component, use: KubeUse): ApiRequest {
    const configured = CONFIGURED_OBJECTS.find((c) => c.component === component && c.group === use.group && use.resource.split('/')[0] === c.resource);
    if (!configured) return { group: use.group, resource: use.resource, verb: use.verb };
    const env = envOf(rendered, configured.deployment);
    return { group: use.group, resource: use.resource, verb: use.verb, name: env[configured.nameEnv], namespace: env[configured.namespaceEnv] };
  }

  test.each(components)('%s: every call the code makes is allowed', (component) => {
    const missing = derived[component]
      .filter((use) => !allows(grants[component], requestFor(component, use)))
      .map((use) => `${component} lacks ${key(use)}, needed by ${use.locations.join(', ')}`);
    expect(missing).toEqual([]);
  });

  test.each(components)('%s: every grant is used by the code (no extra verbs)', (component) => {
    const used = new Set(derived[component].map(key));
    const allowed = new Set(ALLOWED_EXTRA[component].map(key));
    const extra = [...new Set(grants[component].map(key))]
      .filter((k) => !used.has(k) && !allowed.has(k))
      .map((k) => `${component} is granted ${k} but no code calls it`);
    expect(extra).toEqual([]);
  });

  test('the gateway cannot create pods', () => {
    for (const namespace of [undefined, RELEASE_NAMESPACE, 'some-scheduler']) {
      expect(allows(grants.gateway, { group: '', resource: 'pods', verb: 'create', namespace })).toBe(false);
    }
  });

  test('the configured object names the checks use come from the rendered chart', () => {
    for (const c of CONFIGURED_OBJECTS) {
      const env = envOf(rendered, c.deployment);
      expect(env[c.nameEnv]).toMatch(/\S/);
      expect(env[c.namespaceEnv]).toBe(RELEASE_NAMESPACE);
    }
  });
});
