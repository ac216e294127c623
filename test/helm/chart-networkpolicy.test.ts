/** The chart's NetworkPolicies (issue 12): off by default; when on, each component's own ports in, DNS and the API server out. */
import { field, findObject, FULL_VALUES_FILE, renderChart, type KubeObject } from './helm-cli';

interface Port { protocol?: string; port?: number }
interface Rule { ports?: Port[]; from?: unknown[]; to?: unknown[] }

const policies = (objects: KubeObject[]) => objects.filter((o) => o.kind === 'NetworkPolicy');
const ports = (rules: Rule[]) => rules.map((r) => (r.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${String(p.port)}`).join(','));

describe('chart NetworkPolicies', () => {
  it('renders none by default', async () => {
    expect(policies(await renderChart())).toEqual([]);
  });

  it('when enabled: the gateway takes its two API ports and its health/metrics port, the operator only its health/metrics port; both send only DNS and the API server', async () => {
    const objects = await renderChart({ values: { networkPolicy: { enabled: true } } });
    expect(policies(objects).map((p) => p.metadata.name).sort()).toEqual(['rk-roomkeeper-gateway', 'rk-roomkeeper-operator']);
    for (const component of ['gateway', 'operator']) {
      const policy = findObject(policies(objects), 'NetworkPolicy', `-${component}`);
      const deployment = findObject(objects, 'Deployment', `-${component}`);
      // The policy selects exactly the component's pods.
      expect(field(deployment, 'spec.template.metadata.labels')).toMatchObject(field(policy, 'spec.podSelector.matchLabels') as Record<string, string>);
      expect(field(policy, 'spec.policyTypes')).toEqual(['Ingress', 'Egress']);
      const egress = field(policy, 'spec.egress') as Rule[];
      expect(ports(egress)).toEqual(['UDP/53,TCP/53', 'TCP/443,TCP/6443']);
      expect(egress.every((r) => r.to === undefined)).toBe(true); // no CIDRs given: any address on those ports
    }
    const gatewayIn = field(findObject(objects, 'NetworkPolicy', '-gateway'), 'spec.ingress') as Rule[];
    expect(ports(gatewayIn)).toEqual(['TCP/8080', 'TCP/8090', 'TCP/8082']);
    expect(gatewayIn.every((r) => r.from === undefined)).toBe(true); // anyone, unless told
    expect(ports(field(findObject(objects, 'NetworkPolicy', '-operator'), 'spec.ingress') as Rule[])).toEqual(['TCP/8081']);
  });

  it('lets the metrics sources scrape the gateway on its health/metrics port, and only there: the management API stays as narrow as managementFrom says', async () => {
    const monitoring = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];
    const ops = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops' } } }];
    const gatewayIn = async (networkPolicy: Record<string, unknown>) =>
      field(findObject(policies(await renderChart({ values: { networkPolicy: { enabled: true, ...networkPolicy } } })), 'NetworkPolicy', '-gateway'), 'spec.ingress') as Rule[];
    expect(await gatewayIn({ managementFrom: ops, metricsFrom: monitoring })).toEqual([
      { ports: [{ protocol: 'TCP', port: 8080 }], from: ops },
      { ports: [{ protocol: 'TCP', port: 8090 }] },
      { ports: [{ protocol: 'TCP', port: 8082 }], from: monitoring },
    ]);
    // Metrics sources unnamed: anyone reaches health and /metrics (as the operator's port), not the API.
    expect(await gatewayIn({ managementFrom: ops })).toEqual([
      { ports: [{ protocol: 'TCP', port: 8080 }], from: ops },
      { ports: [{ protocol: 'TCP', port: 8090 }] },
      { ports: [{ protocol: 'TCP', port: 8082 }] },
    ]);
  });

  it('narrows sources, the API server address and adds egress as configured (values-full.yaml)', async () => {
    const objects = await renderChart({ valuesFiles: [FULL_VALUES_FILE] });
    const gateway = findObject(policies(objects), 'NetworkPolicy', '-gateway');
    const operator = findObject(policies(objects), 'NetworkPolicy', '-operator');
    const gatewayIn = field(gateway, 'spec.ingress') as Rule[];
    expect(ports(gatewayIn)).toEqual(['TCP/9080', 'TCP/9090', 'TCP/9082']);
    expect(gatewayIn[0]?.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops' } } }]);
    // Pings only from room namespaces (the operator labels them managed-by roomkeeper).
    expect(gatewayIn[1]?.from).toEqual([{ namespaceSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'roomkeeper' } } }]);
    // The gateway's health and /metrics port: the ServiceMonitor's Prometheus (metricsFrom).
    expect(gatewayIn[2]?.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    expect(field(operator, 'spec.ingress')).toEqual([{ ports: [{ protocol: 'TCP', port: 9081 }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] }]);
    for (const policy of [gateway, operator]) {
      expect(field(policy, 'spec.egress')).toEqual([
        { ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] },
        { ports: [{ protocol: 'TCP', port: 6443 }], to: [{ ipBlock: { cidr: '10.0.0.1/32' } }] },
        { to: [{ ipBlock: { cidr: '10.20.0.0/16' } }], ports: [{ protocol: 'TCP', port: 50051 }] },
      ]);
    }
  });
});
