/**
 * Least-privilege RBAC, as written in helm/roomkeeper/templates/_rbac-rules.tpl. The expected
 * tables below are the contract: a change to what the operator or the gateway calls must change
 * both the template and this test.
 */
import { KubeObject, field, findObject, helmTemplateRaw, renderChart } from './helm-cli';
import { allows, chartGrants, grantsOf } from './rbac-grants';

/** Flattens a role to sorted `group/resource[#name]: verb` strings, one per verb, for exact comparison. */
function grants(role: KubeObject): string[] {
  return grantsOf(role).map((g) => `${g.group === '' ? 'core' : g.group}/${g.resource}${g.resourceName ? `#${g.resourceName}` : ''}: ${g.verb}`).sort();
}

function expand(table: Record<string, string[]>): string[] {
  return Object.entries(table).flatMap(([resource, verbs]) => verbs.map((v) => `${resource}: ${v}`)).sort();
}

const READ = ['get', 'list', 'watch'];

describe('RBAC', () => {
  let objects: KubeObject[];
  beforeAll(async () => { objects = await renderChart({ namespace: 'rk-system' }); });

  it('grants the operator exactly what it uses, cluster-wide', () => {
    // The same table test/rbac/ derives from the code's calls; written out here so a chart
    // change shows up as a readable diff.
    expect(grants(findObject(objects, 'ClusterRole', '-operator'))).toEqual(expand({
      'roomkeeper.io/schedulers': [...READ, 'patch', 'delete'],
      'roomkeeper.io/schedulerversions': [...READ, 'create', 'patch', 'delete'],
      'roomkeeper.io/operations': [...READ, 'create', 'patch', 'delete'],
      'roomkeeper.io/gamerooms': ['get', 'list', 'watch', 'create', 'patch', 'delete'],
      'roomkeeper.io/schedulers/status': ['patch'],
      'roomkeeper.io/schedulerversions/status': ['patch'],
      'roomkeeper.io/operations/status': ['patch'],
      'roomkeeper.io/gamerooms/status': ['patch'],
      'roomkeeper.io/gamerooms/finalizers': ['update'],
      'core/pods': ['get', 'list', 'watch', 'create', 'delete', 'deletecollection'],
      'core/namespaces': [...READ, 'create', 'delete'],
      'core/nodes': ['list', 'watch'],
      'roomkeeper.io/pingdigests': ['list', 'watch', 'delete'],
      'events.k8s.io/events': ['create', 'patch'],
      // Leader Leases of the cluster, listed by label to find another Roomkeeper release's operator; read-only.
      'coordination.k8s.io/leases': ['list'],
    }));
    // Issue 12 M2: no read of ConfigMaps or Secrets anywhere in the cluster.
    expect(grants(findObject(objects, 'ClusterRole', '-operator')).filter((g) => /^core\/(configmaps|secrets)\b/.test(g))).toEqual([]);
  });

  it('limits the operator\'s Lease access to its release namespace and, where Kubernetes allows, its Lease', () => {
    const role = findObject(objects, 'Role', '-operator');
    expect(role.metadata.namespace).toBe('rk-system');
    expect(grants(role)).toEqual([
      'coordination.k8s.io/leases: create',
      'coordination.k8s.io/leases#rk-roomkeeper-operator: get',
      'coordination.k8s.io/leases#rk-roomkeeper-operator: update',
    ].sort());
  });

  it('grants the gateway exactly what it uses, and never pods', () => {
    const clusterGrants = grants(findObject(objects, 'ClusterRole', '-gateway'));
    expect(clusterGrants).toEqual(expand({
      'roomkeeper.io/schedulers': [...READ, 'create', 'patch', 'delete'],
      'roomkeeper.io/schedulerversions': READ,
      'roomkeeper.io/operations': [...READ, 'create', 'patch'],
      'roomkeeper.io/gamerooms': ['get', 'list', 'watch'],
      'roomkeeper.io/gamerooms/status': ['patch'],
      'roomkeeper.io/pingdigests': ['create'],
      'roomkeeper.io/pingdigests/status': ['patch'],
      'roomkeeper.io/allocationclaims': ['get', 'list', 'create', 'delete', 'deletecollection'],
    }));
    const allGatewayGrants = [...clusterGrants, ...grants(findObject(objects, 'Role', '-gateway'))];
    expect(allGatewayGrants.filter((g) => g.startsWith('core/pods'))).toEqual([]);
    expect(allGatewayGrants.filter((g) => g.endsWith(': create') && !/^roomkeeper\.io\/(schedulers|operations|pingdigests|allocationclaims):/.test(g))).toEqual([]);
    // Issue 12 M1: the gateway faces the internet; it holds nothing on ConfigMaps, and of the core
    // group only `get` on its one credentials Secret.
    expect(allGatewayGrants.filter((g) => g.startsWith('core/') && g !== 'core/secrets#rk-roomkeeper-auth: get')).toEqual([]);
    expect(allGatewayGrants.filter((g) => /^core\/(secrets|configmaps)\b.*: (list|watch)$/.test(g))).toEqual([]);
  });

  it('lets the gateway read only the credentials Secret, in its namespace', () => {
    const role = findObject(objects, 'Role', '-gateway');
    expect(role.metadata.namespace).toBe('rk-system');
    expect(grants(role)).toEqual(['core/secrets#rk-roomkeeper-auth: get']);
  });

  it('uses no wildcard anywhere', () => {
    for (const role of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')) {
      for (const rule of field(role, 'rules') as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
        expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain('*');
      }
    }
  });

  it('binds each role to its own component\'s ServiceAccount', () => {
    for (const component of ['operator', 'gateway']) {
      for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
        const binding = findObject(objects, kind, `-${component}`);
        expect(field(binding, 'roleRef')).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: kind.replace('Binding', ''), name: `rk-roomkeeper-${component}` });
        expect(field(binding, 'subjects')).toEqual([{ kind: 'ServiceAccount', name: `rk-roomkeeper-${component}`, namespace: 'rk-system' }]);
      }
    }
  });

  it('with serviceAccount.create=false and no name, runs and binds each component as <fullname>-<component>, never the namespace\'s default ServiceAccount', async () => {
    const own = await renderChart({ namespace: 'rk-system', values: { operator: { serviceAccount: { create: false } }, gateway: { serviceAccount: { create: false } } } });
    expect(own.filter((o) => o.kind === 'ServiceAccount')).toEqual([]);
    for (const component of ['operator', 'gateway']) {
      expect(field(findObject(own, 'Deployment', `-${component}`), 'spec.template.spec.serviceAccountName')).toBe(`rk-roomkeeper-${component}`);
      for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
        expect(field(findObject(own, kind, `-${component}`), 'subjects')).toEqual([{ kind: 'ServiceAccount', name: `rk-roomkeeper-${component}`, namespace: 'rk-system' }]);
      }
    }
    // A name given is used whether or not the chart creates the ServiceAccount.
    const named = await renderChart({ namespace: 'rk-system', values: { gateway: { serviceAccount: { create: false, name: 'my-gateway' } } } });
    expect(field(findObject(named, 'Deployment', '-gateway'), 'spec.template.spec.serviceAccountName')).toBe('my-gateway');
    expect(field(findObject(named, 'RoleBinding', '-gateway'), 'subjects')).toEqual([{ kind: 'ServiceAccount', name: 'my-gateway', namespace: 'rk-system' }]);
  });

  it.each(['operator', 'gateway'])('refuses the namespace\'s default ServiceAccount as the %s\'s, naming what to set instead', async (component) => {
    const result = await helmTemplateRaw({ namespace: 'rk-system', values: { [component]: { serviceAccount: { create: false, name: 'default' } } } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`${component}.serviceAccount.name=default would bind the ${component}'s rights to the namespace's default ServiceAccount, and so to every pod in namespace rk-system that runs as default`);
    expect(result.stderr).toContain(`Leave ${component}.serviceAccount.name empty (the chart names it rk-roomkeeper-${component})`);
    // Without the chart's RBAC nothing is bound, and the name is the user's choice.
    const unbound = await renderChart({ namespace: 'rk-system', values: { rbac: { create: false }, [component]: { serviceAccount: { create: false, name: 'default' } } } });
    expect(field(findObject(unbound, 'Deployment', `-${component}`), 'spec.template.spec.serviceAccountName')).toBe('default');
  });

  it('follows an existing credentials Secret and a custom Lease name', async () => {
    const custom = await renderChart({ values: { auth: { existingSecret: 'my-creds' }, operator: { leaderElection: { leaseName: 'my-lease' } } } });
    expect(grants(findObject(custom, 'Role', '-gateway'))).toEqual(['core/secrets#my-creds: get']);
    expect(grants(findObject(custom, 'Role', '-operator'))).toContain('coordination.k8s.io/leases#my-lease: update');
  });

  it('answers "may this component do that?" for tests that compare RBAC with the code\'s calls', async () => {
    const { operator, gateway } = await chartGrants('rk-system');
    expect(allows(operator, { group: '', resource: 'pods', verb: 'create', namespace: 'my-game' })).toBe(true);
    expect(allows(gateway, { group: '', resource: 'pods', verb: 'create', namespace: 'my-game' })).toBe(false);
    expect(allows(operator, { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'rk-system', name: 'rk-roomkeeper-operator' })).toBe(true);
    expect(allows(operator, { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'rk-system', name: 'someone-else' })).toBe(false);
    expect(allows(operator, { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'kube-system', name: 'rk-roomkeeper-operator' })).toBe(false);
    // Every Lease may be listed (to find other Roomkeeper operators), none written but its own.
    expect(allows(operator, { group: 'coordination.k8s.io', resource: 'leases', verb: 'list' })).toBe(true);
    for (const verb of ['create', 'update', 'patch', 'delete', 'watch', 'get']) {
      expect(allows(operator, { group: 'coordination.k8s.io', resource: 'leases', verb, namespace: 'kube-system', name: 'kube-controller-manager' })).toBe(false);
    }
    expect(allows(gateway, { group: '', resource: 'secrets', verb: 'get', namespace: 'rk-system', name: 'rk-roomkeeper-auth' })).toBe(true);
    expect(allows(gateway, { group: '', resource: 'secrets', verb: 'get', namespace: 'rk-system', name: 'rk-roomkeeper-room-token' })).toBe(false);
    expect(allows(gateway, { group: 'roomkeeper.io', resource: 'gamerooms/status', verb: 'patch', namespace: 'my-game' })).toBe(true);
  });

  it('renders no RBAC when rbac.create is false', async () => {
    const none = await renderChart({ values: { rbac: { create: false } } });
    expect(none.filter((o) => o.apiVersion.startsWith('rbac.authorization.k8s.io'))).toEqual([]);
  });
});
