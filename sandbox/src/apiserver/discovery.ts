/**
 * Discovery documents: `/api`, `/apis`, `/apis/<group>`, `/api/v1`, `/apis/<group>/<version>`
 * (legacy form, which kubectl and client-go fall back to) and `/version`.
 */
import type { ResourceRegistry } from './resource-registry';
import type { ResourceType, ResourceVersion } from './resource-type';

type Json = Record<string, unknown>;

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-roomkeeper-sandbox',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** Kubernetes version priority: GA before beta before alpha, higher numbers first, others last by name. */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v];
    const level = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [level, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] as number) - (pb[i] as number);
  return pa[3] < pb[3] ? -1 : pa[3] > pb[3] ? 1 : 0;
}

export class Discovery {
  constructor(private readonly registry: ResourceRegistry) {}

  /** group -> served versions, preferred first. */
  private groups(): Map<string, string[]> {
    const groups = new Map<string, Set<string>>();
    for (const rt of this.registry.all()) {
      let set = groups.get(rt.group);
      if (!set) groups.set(rt.group, (set = new Set()));
      for (const v of rt.versions) set.add(v.name);
    }
    const out = new Map<string, string[]>();
    for (const [g, set] of groups) out.set(g, [...set].sort(compareKubeVersions));
    return out;
  }

  apiVersions(serverAddress: string): Json {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }

  private groupDoc(name: string, versions: string[]): Json {
    const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  }

  apiGroupList(): Json {
    const groups = [...this.groups().entries()].filter(([g]) => g !== '').map(([g, versions]) => this.groupDoc(g, versions));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  apiGroup(group: string): Json | undefined {
    const versions = this.groups().get(group);
    if (!versions || group === '') return undefined;
    return { kind: 'APIGroup', apiVersion: 'v1', ...this.groupDoc(group, versions) };
  }

  private resourceEntries(rt: ResourceType, v: ResourceVersion): Json[] {
    const base: Json = {
      name: rt.plural,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: rt.verbs ?? VERBS,
    };
    if (rt.shortNames.length) base.shortNames = rt.shortNames;
    if (rt.categories.length) base.categories = rt.categories;
    const entries: Json[] = [base];
    const sub = (name: string, kind: string, verbs: string[], extra: Json = {}): Json => ({ name: `${rt.plural}/${name}`, singularName: '', namespaced: rt.namespaced, ...extra, kind, verbs });
    if (v.status) entries.push(sub('status', rt.kind, SUBRESOURCE_VERBS));
    if (v.scale) entries.push(sub('scale', 'Scale', SUBRESOURCE_VERBS, { group: 'autoscaling', version: 'v1' }));
    for (const extra of rt.extraSubresources) {
      if (extra === 'binding') entries.push(sub('binding', 'Binding', ['create']));
      else if (extra === 'eviction') entries.push(sub('eviction', 'Eviction', ['create'], { group: 'policy', version: 'v1' }));
      else if (extra === 'finalize') entries.push(sub('finalize', rt.kind, ['update']));
    }
    return entries;
  }

  /**
   * Aggregated discovery (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList): every group, version
   * and resource in one document. `/api` answers the core group, `/apis` all others.
   */
  aggregated(core: boolean): Json {
    const items: Json[] = [];
    for (const [group, versions] of this.groups()) {
      if ((group === '') !== core) continue;
      items.push({
        metadata: group ? { name: group, creationTimestamp: null } : { creationTimestamp: null },
        versions: versions.map((version) => ({ version, resources: this.aggregatedResources(group, version), freshness: 'Current' })),
      });
    }
    return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
  }

  private aggregatedResources(group: string, version: string): Json[] {
    const out: Json[] = [];
    for (const rt of this.registry.all()) {
      if (rt.group !== group) continue;
      const v = rt.versions.find((x) => x.name === version);
      if (!v) continue;
      const subresources: Json[] = [];
      for (const e of this.resourceEntries(rt, v).slice(1)) {
        const kind = String(e.kind);
        subresources.push({
          subresource: String(e.name).slice(rt.plural.length + 1),
          responseKind: { group: typeof e.group === 'string' ? e.group : group, version: typeof e.version === 'string' ? e.version : version, kind },
          verbs: e.verbs,
        });
      }
      const entry: Json = {
        resource: rt.plural,
        responseKind: { group, version, kind: rt.kind },
        scope: rt.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: rt.singular,
        verbs: rt.verbs ?? VERBS,
      };
      if (rt.shortNames.length) entry.shortNames = rt.shortNames;
      if (rt.categories.length) entry.categories = rt.categories;
      if (subresources.length) entry.subresources = subresources;
      out.push(entry);
    }
    return out;
  }

  apiResourceList(group: string, version: string): Json | undefined {
    const resources: Json[] = [];
    for (const rt of this.registry.all()) {
      if (rt.group !== group) continue;
      const v = rt.versions.find((x) => x.name === version);
      if (v) resources.push(...this.resourceEntries(rt, v));
    }
    if (resources.length === 0) return undefined;
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }
}
