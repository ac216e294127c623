/**
 * The chart renders with default values and with values-full.yaml (every option set), lints clean,
 * and its workloads have the probes, security contexts and settings the brief requires.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONFIG_SCHEMA, loadConfig } from '../../common/src/config';
import { CHART_DIR, FULL_VALUES_FILE, KubeObject, field, findObject, helmLint, helmTemplateRaw, parseManifests, renderChart } from './helm-cli';

interface EnvVar { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string; optional?: boolean } } }
interface Probe { httpGet: { path: string; port: string | number }; initialDelaySeconds?: number; periodSeconds: number; failureThreshold: number }
interface Container {
  name: string;
  image: string;
  command?: string[];
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  securityContext: Record<string, unknown>;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
}

function containerOf(deployment: KubeObject): Container {
  const containers = field(deployment, 'spec.template.spec.containers') as Container[];
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

function envOf(container: Container): Map<string, EnvVar> {
  return new Map(container.env.map((e) => [e.name, e]));
}

/**
 * The environment a container would see: plain values as rendered, fieldRefs and secretKeyRefs
 * resolved from the pod name and the rendered Secrets (a placeholder for an existing Secret).
 */
function resolvedEnv(container: Container, objects: KubeObject[], podName: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const e of container.env) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
      const data = secret ? (field(secret, 'data') as Record<string, string>) : undefined;
      if (data?.[ref.key] !== undefined) env[e.name] = Buffer.from(data[ref.key]!, 'base64').toString();
      else if (!ref.optional) env[e.name] = `placeholder-for-${ref.name}`;
    }
  }
  return env;
}

describe('chart with default values', () => {
  let objects: KubeObject[];
  beforeAll(async () => { objects = await renderChart({ namespace: 'games-system' }); });

  it('lints clean (helm lint --strict: no warnings, no errors)', async () => {
    const result = await helmLint();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it('renders only valid objects with apiVersion, kind and metadata.name', () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const o of objects) {
      expect(typeof o.apiVersion).toBe('string');
      expect(typeof o.kind).toBe('string');
      expect(o.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      expect(o.metadata.name.length).toBeLessThanOrEqual(63);
    }
  });

  it('renders the expected set of objects', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual([
      'ClusterRole/rk-roomkeeper-gateway',
      'ClusterRole/rk-roomkeeper-operator',
      'ClusterRoleBinding/rk-roomkeeper-gateway',
      'ClusterRoleBinding/rk-roomkeeper-operator',
      'Deployment/rk-roomkeeper-gateway',
      'Deployment/rk-roomkeeper-operator',
      'PodDisruptionBudget/rk-roomkeeper-gateway',
      'PodDisruptionBudget/rk-roomkeeper-operator',
      'Role/rk-roomkeeper-gateway',
      'Role/rk-roomkeeper-operator',
      'RoleBinding/rk-roomkeeper-gateway',
      'RoleBinding/rk-roomkeeper-operator',
      'Secret/rk-roomkeeper-auth',
      'Secret/rk-roomkeeper-room-token',
      'Service/rk-roomkeeper-gateway',
      'Service/rk-roomkeeper-gateway-metrics',
      'Service/rk-roomkeeper-operator-metrics',
      'ServiceAccount/rk-roomkeeper-gateway',
      'ServiceAccount/rk-roomkeeper-operator',
    ]);
    for (const o of objects.filter((x) => !x.kind.startsWith('Cluster'))) expect(o.metadata.namespace).toBe('games-system');
  });

  it('runs two replicas of each component, the gateway with its own command', () => {
    const operator = findObject(objects, 'Deployment', '-operator');
    const gateway = findObject(objects, 'Deployment', '-gateway');
    expect(field(operator, 'spec.replicas')).toBe(2);
    expect(field(gateway, 'spec.replicas')).toBe(2);
    expect(containerOf(operator).command).toEqual(['node', '--max-old-space-size=160', 'dist/operator/src/main.js']);
    expect(containerOf(gateway).command).toEqual(['node', '--max-old-space-size=192', '--max-semi-space-size=4', '--optimize-for-size', 'dist/api-gateway/src/main.js']);
    expect(containerOf(operator).image).toBe('ghcr.io/roomkeeper/roomkeeper:0.1.0');
    expect(field(operator, 'spec.template.spec.serviceAccountName')).toBe('rk-roomkeeper-operator');
    expect(field(gateway, 'spec.template.spec.serviceAccountName')).toBe('rk-roomkeeper-gateway');
  });

  it('probes /healthz (liveness) and /readyz (readiness) on a named container port: each process\'s health and metrics port, the gateway\'s apart from its two API ports', () => {
    for (const suffix of ['-operator', '-gateway']) {
      const c = containerOf(findObject(objects, 'Deployment', suffix));
      const portNames = c.ports.map((p) => p.name);
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(portNames).toContain(c.livenessProbe.httpGet.port);
      expect(portNames).toContain(c.readinessProbe.httpGet.port);
      expect([c.startupProbe.httpGet.port, c.livenessProbe.httpGet.port, c.readinessProbe.httpGet.port]).toEqual(['http-health', 'http-health', 'http-health']);
    }
    expect(containerOf(findObject(objects, 'Deployment', '-operator')).ports).toEqual([{ name: 'http-health', containerPort: 8081, protocol: 'TCP' }]);
    expect(containerOf(findObject(objects, 'Deployment', '-gateway')).ports.map((p) => [p.name, p.containerPort])).toEqual([['http', 8080], ['rooms', 8090], ['http-health', 8082]]);
  });

  it('gives a slow start 5 minutes (startupProbe on /healthz) before the livenessProbe counts, so that one starts at once', () => {
    for (const suffix of ['-operator', '-gateway']) {
      const c = containerOf(findObject(objects, 'Deployment', suffix));
      expect(c.startupProbe.httpGet).toEqual(c.livenessProbe.httpGet);
      expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBe(300);
      expect(c.livenessProbe.initialDelaySeconds).toBe(0);
      expect(c.livenessProbe.periodSeconds * c.livenessProbe.failureThreshold).toBe(30);
    }
  });

  it('passes the liveness thresholds to the processes', () => {
    const op = envOf(containerOf(findObject(objects, 'Deployment', '-operator')));
    expect(['ROOMKEEPER_LIVENESS_RECONCILE_TIMEOUT', 'ROOMKEEPER_LIVENESS_LEASE_SLACK', 'ROOMKEEPER_LIVENESS_CACHE_TIMEOUT'].map((n) => op.get(n)?.value)).toEqual(['10m', '1m', '10m']);
    expect(envOf(containerOf(findObject(objects, 'Deployment', '-gateway'))).get('ROOMKEEPER_LIVENESS_CACHE_TIMEOUT')?.value).toBe('10m');
  });

  it('hardens every pod and container', () => {
    for (const suffix of ['-operator', '-gateway']) {
      const deployment = findObject(objects, 'Deployment', suffix);
      expect(field(deployment, 'spec.template.spec.securityContext')).toMatchObject({
        runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(containerOf(deployment).securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 10001,
        runAsGroup: 10001,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      const resources = containerOf(deployment).resources;
      // Memory requested as the process holds it at 10,000 rooms: the benchmarks hold the operator to
      // 300 MB resident and the gateway to 200 MB (README, benchmarks 3 and 10c/10d); a pod above its
      // request is the kubelet's first choice to evict under node memory pressure.
      expect(resources.requests).toEqual({ cpu: '100m', memory: suffix === '-operator' ? '288Mi' : '192Mi' });
      expect(Number(resources.requests?.memory?.replace('Mi', '')) * 2 ** 20).toBeGreaterThanOrEqual(suffix === '-operator' ? 300e6 : 200e6);
      expect(resources.limits).toEqual({ cpu: '1', memory: '512Mi' });
      // A read-only root file system still gets a writable /tmp.
      expect(field(deployment, 'spec.template.spec.volumes')).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
    }
  });

  it('elects the operator leader with the pod name as identity and a Lease in the release namespace', () => {
    const env = envOf(containerOf(findObject(objects, 'Deployment', '-operator')));
    expect(env.get('ROOMKEEPER_POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(env.get('ROOMKEEPER_LEASE_NAMESPACE')?.value).toBe('games-system');
    expect(env.get('ROOMKEEPER_LEASE_NAME')?.value).toBe('rk-roomkeeper-operator');
    expect(env.get('ROOMKEEPER_LEADER_ELECTION')?.value).toBe('true');
    expect(env.get('ROOMKEEPER_ROOMS_API_URL')?.value).toBe('http://rk-roomkeeper-gateway.games-system.svc:8090');
  });

  it('gives both processes the room-token secret and the gateway the credentials Secret by name', () => {
    const operatorEnv = envOf(containerOf(findObject(objects, 'Deployment', '-operator')));
    const gatewayEnv = envOf(containerOf(findObject(objects, 'Deployment', '-gateway')));
    for (const env of [operatorEnv, gatewayEnv]) {
      expect(env.get('ROOMKEEPER_ROOM_TOKEN_SECRET')?.valueFrom?.secretKeyRef).toEqual({ name: 'rk-roomkeeper-room-token', key: 'token-secret' });
    }
    // The gateway names its ping digests after its replica: the pod name.
    expect(gatewayEnv.get('ROOMKEEPER_POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(gatewayEnv.get('ROOMKEEPER_AUTH_SECRET_NAME')?.value).toBe('rk-roomkeeper-auth');
    expect(gatewayEnv.get('ROOMKEEPER_AUTH_SECRET_NAMESPACE')?.value).toBe('games-system');
    // Credentials never travel in plain env.
    expect(gatewayEnv.has('ROOMKEEPER_AUTH_PASSWORD')).toBe(false);

    const auth = findObject(objects, 'Secret', '-auth');
    const data = field(auth, 'data') as Record<string, string>;
    expect(Buffer.from(data.username!, 'base64').toString()).toBe('admin');
    expect(Buffer.from(data.password!, 'base64').toString()).toMatch(/^[A-Za-z0-9]{32}$/);
    const token = field(findObject(objects, 'Secret', '-room-token'), 'data') as Record<string, string>;
    expect(Buffer.from(token['token-secret']!, 'base64').toString()).toMatch(/^[A-Za-z0-9]{48}$/);
  });

  it('sets only environment variables that common/src/config.ts knows, and every one of them', () => {
    const known = new Set(Object.values(CONFIG_SCHEMA).map((spec) => spec.env));
    const set = new Set<string>();
    for (const suffix of ['-operator', '-gateway']) {
      for (const e of containerOf(findObject(objects, 'Deployment', suffix)).env) {
        expect(known).toContain(e.name);
        set.add(e.name);
      }
    }
    // Credentials come from the Secret the gateway reads by name, not from plain env.
    const notSetByTheChart = new Set(['ROOMKEEPER_AUTH_USERNAME', 'ROOMKEEPER_AUTH_PASSWORD']);
    const missing = [...known].filter((env) => !set.has(env) && !notSetByTheChart.has(env));
    expect(missing).toEqual([]);
  });

  it('renders settings the processes\' config loader accepts', () => {
    const operator = loadConfig(resolvedEnv(containerOf(findObject(objects, 'Deployment', '-operator')), objects, 'rk-roomkeeper-operator-abc12'));
    expect(operator).toMatchObject({
      identity: 'rk-roomkeeper-operator-abc12', leaderElection: true, leaseNamespace: 'games-system', leaseName: 'rk-roomkeeper-operator',
      leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000, operationLeaseTtl: 5_000, operationRetentionAge: 168 * 3_600_000, versionHistoryLimit: 100,
      roomInitTimeout: 120_000, roomPingTimeout: 240_000, healthInterval: 10_000, maestroEnv: true, operatorPort: 8081, kubeQps: 400, kubeBurst: 800,
      maxRoomsPerScheduler: 10_000, roomRunAsNonRoot: false, roomNamespacePsaEnforce: 'none', roomNamespacePsaWarn: 'restricted', roomNamespacePsaAudit: 'baseline',
    });
    expect(operator.roomTokenSecret).toMatch(/^[A-Za-z0-9]{48}$/);
    const gateway = loadConfig(resolvedEnv(containerOf(findObject(objects, 'Deployment', '-gateway')), objects, 'rk-roomkeeper-gateway-xyz34'));
    expect(gateway).toMatchObject({
      gatewayPort: 8080, roomsPort: 8090, gatewayOpsPort: 8082, authSecretName: 'rk-roomkeeper-auth', authSecretNamespace: 'games-system',
      pingAuth: true, pingAnswerAllocation: true, maxBodyBytes: 1_048_576, roomsMaxBodyBytes: 16_384, maxConnections: 20_000, pingFlushInterval: 30_000, shutdownTimeout: 10_000, shutdownDrainDelay: 5_000,
    });
    expect(gateway.roomTokenSecret).toBe(operator.roomTokenSecret);
  });

  it('derives the pods\' grace period from the shutdown budget, and the gateway\'s from its drain too', () => {
    expect(field(findObject(objects, 'Deployment', '-operator'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(15);
    // 5 s of drain (readiness 503, still serving) + 10 s to stop + 5 s to spare.
    expect(field(findObject(objects, 'Deployment', '-gateway'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(20);
  });

  it('exposes the gateway on ports http 8080 and rooms 8090, and each process\'s metrics port on a ClusterIP Service of its own', () => {
    expect(field(findObject(objects, 'Service', '-gateway'), 'spec.ports')).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
      { name: 'rooms', port: 8090, targetPort: 'rooms', protocol: 'TCP' },
    ]);
    // Each room's pings reach one replica, in the order the room sent them.
    expect(field(findObject(objects, 'Service', '-gateway'), 'spec.sessionAffinity')).toBe('ClientIP');
    expect(field(findObject(objects, 'Service', '-gateway-metrics'), 'spec')).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'metrics', port: 8082, targetPort: 'http-health', protocol: 'TCP' }] });
    expect(field(findObject(objects, 'Service', '-operator-metrics'), 'spec.ports')).toEqual([
      { name: 'metrics', port: 8081, targetPort: 'http-health', protocol: 'TCP' },
    ]);
  });

  it('keeps at least one pod of each component through voluntary disruptions', () => {
    for (const suffix of ['-operator', '-gateway']) {
      const pdb = findObject(objects, 'PodDisruptionBudget', suffix);
      expect(field(pdb, 'spec.minAvailable')).toBe(1);
      expect(field(pdb, 'spec.selector.matchLabels')).toEqual(
        field(findObject(objects, 'Deployment', suffix), 'spec.selector.matchLabels'),
      );
    }
  });
});

describe('chart with every option set (test/helm/values-full.yaml)', () => {
  let objects: KubeObject[];
  beforeAll(async () => { objects = await renderChart({ valuesFiles: [FULL_VALUES_FILE], namespace: 'games' }); });

  it('lints clean', async () => {
    const result = await helmLint({ valuesFiles: [FULL_VALUES_FILE] });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it('renders valid objects, including the Ingress and both ServiceMonitors, and no generated Secret', () => {
    for (const o of objects) {
      expect(typeof o.apiVersion).toBe('string');
      expect(typeof o.kind).toBe('string');
      expect(typeof o.metadata.name).toBe('string');
      expect(o.metadata.labels?.team).toBe('platform');
    }
    expect(objects.filter((o) => o.kind === 'ServiceMonitor').map((o) => o.metadata.name).sort()).toEqual(['roomkeeper-full-gateway', 'roomkeeper-full-operator']);
    // Each scrapes a port of a Service it selects that leads to the process's health and metrics port.
    for (const monitor of objects.filter((o) => o.kind === 'ServiceMonitor')) {
      const selector = field(monitor, 'spec.selector.matchLabels') as Record<string, string>;
      const [endpoint] = field(monitor, 'spec.endpoints') as { port: string; path: string }[];
      const targets = objects.filter((o) => o.kind === 'Service' && Object.entries(selector).every(([k, v]) => o.metadata.labels?.[k] === v))
        .flatMap((svc) => (field(svc, 'spec.ports') as { name: string; targetPort: string }[]).filter((p) => p.name === endpoint?.port).map((p) => p.targetPort));
      expect([endpoint?.path, targets]).toEqual(['/metrics', ['http-health']]);
    }
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(objects.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata.name).sort()).toEqual(['rk-gateway-sa', 'rk-operator-sa']);
  });

  it('routes the management and rooms APIs through an Ingress rule each, on their own hosts', () => {
    const ingress = findObject(objects, 'Ingress', '-gateway');
    expect(field(ingress, 'spec.ingressClassName')).toBe('nginx');
    expect(field(ingress, 'spec.tls')).toEqual([{ secretName: 'games-example-com-tls', hosts: ['games.example.com', 'rooms.games.example.com'] }]);
    const rules = field(ingress, 'spec.rules') as { host: string; http: { paths: { path: string; backend: { service: { port: { name: string } } } }[] } }[];
    expect(rules.map((r) => [r.host, r.http.paths.map((p) => [p.path, p.backend.service.port.name])])).toEqual([
      ['games.example.com', [['/', 'http']]], ['rooms.games.example.com', [['/', 'rooms']]],
    ]);
  });

  it('passes the settings through to the processes', () => {
    const operator = containerOf(findObject(objects, 'Deployment', '-operator'));
    const gateway = containerOf(findObject(objects, 'Deployment', '-gateway'));
    const op = envOf(operator);
    const gw = envOf(gateway);
    expect(operator.image).toBe('registry.example.com/games/roomkeeper@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
    expect([operator.command, gateway.command]).toEqual([
      ['node', '--max-old-space-size=256', 'dist/operator/src/main.js'], ['node', '--max-old-space-size=320', '--max-semi-space-size=8', 'dist/api-gateway/src/main.js'],
    ]);
    expect(op.get('ROOMKEEPER_LOG_LEVEL')?.value).toBe('debug');
    expect(op.get('ROOMKEEPER_KUBE_QPS')?.value).toBe('150.5');
    expect(op.get('ROOMKEEPER_KUBE_BURST')?.value).toBe('300');
    expect(op.get('ROOMKEEPER_LEASE_NAME')?.value).toBe('roomkeeper-leader');
    expect(op.get('ROOMKEEPER_LEADER_RETRY_PERIOD')?.value).toBe('3000');
    expect(op.get('ROOMKEEPER_MAESTRO_ENV')?.value).toBe('false');
    expect(op.get('ROOMKEEPER_ROOMS_API_URL')?.value).toBe('https://rooms.games.example.com');
    expect(op.get('ROOMKEEPER_ROOM_TOKEN_SECRET')?.valueFrom?.secretKeyRef).toEqual({ name: 'roomkeeper-room-token-hmac', key: 'hmac' });
    expect(op.get('ROOMKEEPER_OPERATOR_PORT')?.value).toBe('9081');
    expect(op.get('OPERATOR_ONLY')?.valueFrom?.fieldRef?.fieldPath).toBe('spec.nodeName');
    expect(op.get('TZ')?.value).toBe('UTC');
    expect(gw.get('ROOMKEEPER_PING_AUTH')?.value).toBe('false');
    expect(gw.get('ROOMKEEPER_MAX_BODY_BYTES')?.value).toBe('2097152');
    expect(gw.get('ROOMKEEPER_AUTH_SECRET_NAME')?.value).toBe('roomkeeper-credentials');
    expect(gw.get('GATEWAY_ONLY')?.value).toBe('yes');
    expect(['ROOMKEEPER_LIVENESS_RECONCILE_TIMEOUT', 'ROOMKEEPER_LIVENESS_LEASE_SLACK', 'ROOMKEEPER_LIVENESS_CACHE_TIMEOUT'].map((n) => op.get(n)?.value)).toEqual(['15m', '90s', '12m']);
    expect(gw.get('ROOMKEEPER_LIVENESS_CACHE_TIMEOUT')?.value).toBe('8m');
    // A start of 12 minutes is 144 tries 5 s apart; 61 s is 13 (rounded up).
    expect([operator.startupProbe.failureThreshold, gateway.startupProbe.failureThreshold]).toEqual([144, 13]);
    expect(gw.has('OPERATOR_ONLY')).toBe(false);
    expect(gateway.ports.map((p) => p.containerPort)).toEqual([9080, 9090, 9082]);
    expect(gw.get('ROOMKEEPER_GATEWAY_OPS_PORT')?.value).toBe('9082');
    expect(field(findObject(objects, 'Deployment', '-gateway'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(10); // 3 s drain + 2 s (1500ms) to stop + 5 s
    expect(field(findObject(objects, 'Deployment', '-operator'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(25);
    expect(field(findObject(objects, 'Deployment', '-operator'), 'spec.template.spec.imagePullSecrets')).toEqual([{ name: 'registry-credentials' }]);
    expect(field(findObject(objects, 'Deployment', '-operator'), 'spec.template.spec.priorityClassName')).toBe('system-cluster-critical');
    expect(field(findObject(objects, 'PodDisruptionBudget', '-gateway'), 'spec.minAvailable')).toBe('50%');
    expect(field(findObject(objects, 'Service', '-gateway'), 'spec.type')).toBe('LoadBalancer');
    expect(field(findObject(objects, 'Service', '-gateway'), 'spec.sessionAffinity')).toBe('None');
  });

  it('renders settings the processes\' config loader accepts', () => {
    const operator = loadConfig(resolvedEnv(containerOf(findObject(objects, 'Deployment', '-operator')), objects, 'op-0'));
    expect(operator).toMatchObject({
      logLevel: 'debug', kubeQps: 150.5, kubeBurst: 300, leaseName: 'roomkeeper-leader', leaseDuration: 20_000, renewDeadline: 12_000,
      retryPeriod: 3_000, operationLeaseTtl: 8_000, operationRetentionCount: 500, operationRetentionAge: 72 * 3_600_000, versionHistoryLimit: 30, healthInterval: 5_000,
      autoscaleDebounce: 500, roomInitTimeout: 180_000, roomPingTimeout: 300_000, roomDeletionTimeout: 90_000, maestroEnv: false,
      maxRoomsPerScheduler: 2500, roomRunAsNonRoot: true, roomNamespacePsaEnforce: 'baseline', roomNamespacePsaWarn: 'restricted', roomNamespacePsaAudit: 'none',
      roomsApiUrl: 'https://rooms.games.example.com', addRoomsConcurrency: 25, addRoomsLimit: 2000, removeRoomsLimit: 1500,
      validationAttempts: 5, validationTimeout: 180_000, shutdownTimeout: 20_000, operatorPort: 9081,
    });
    const gateway = loadConfig(resolvedEnv(containerOf(findObject(objects, 'Deployment', '-gateway')), objects, 'gw-0'));
    expect(gateway).toMatchObject({
      gatewayPort: 9080, roomsPort: 9090, pingAuth: false, pingAnswerAllocation: false, maxBodyBytes: 2_097_152, roomsMaxBodyBytes: 32_768, maxConnections: 5_000, pingFlushInterval: 45_000, shutdownTimeout: 1_500, shutdownDrainDelay: 3_000,
      authSecretName: 'roomkeeper-credentials', authSecretNamespace: 'games',
    });
  });

  it('sets every key values.yaml has (values-full.yaml is complete)', () => {
    const defaults = parseManifests(fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8'))[0];
    const full = parseManifests(fs.readFileSync(FULL_VALUES_FILE, 'utf8'))[0];
    const setInFull = leafPaths(full);
    const missing = leafPaths(defaults).filter((p) => !setInFull.some((q) => q === p || q.startsWith(`${p}.`)));
    expect(missing).toEqual([]);
  });
});

describe('chart variants', () => {
  it('renders no PodDisruptionBudget for a single replica', async () => {
    const objects = await renderChart({ values: { operator: { replicas: 1 }, gateway: { replicas: 1 } } });
    expect(objects.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
  });

  it('routes the rooms API on its own host as a second rule, plain HTTP without TLS', async () => {
    const objects = await renderChart({
      values: { ingress: { enabled: true, management: { host: 'api.example.com', path: '/', pathType: 'Prefix' }, rooms: { enabled: true, host: 'rooms.example.com', path: '/', pathType: 'Prefix' } } },
    });
    const ingress = findObject(objects, 'Ingress', '-gateway');
    expect(field(ingress, 'spec.tls')).toBeUndefined();
    expect(field(ingress, 'spec.ingressClassName')).toBeUndefined();
    const rules = field(ingress, 'spec.rules') as { host: string; http: { paths: { backend: { service: { port: { name: string } } } }[] } }[];
    expect(rules.map((r) => [r.host, r.http.paths.map((p) => p.backend.service.port.name)])).toEqual([
      ['api.example.com', ['http']],
      ['rooms.example.com', ['rooms']],
    ]);
    // An empty host matches any host: that rule has no `host` at all.
    const anyHost = await renderChart({ values: { ingress: { enabled: true, rooms: { enabled: true, host: 'rooms.example.com', path: '/', pathType: 'Prefix' } } } });
    const anyHostRules = field(findObject(anyHost, 'Ingress', '-gateway'), 'spec.rules') as { host?: string; http: { paths: { backend: { service: { port: { name: string } } } }[] } }[];
    expect(anyHostRules.map((r) => [r.host, r.http.paths.map((p) => p.backend.service.port.name)])).toEqual([
      [undefined, ['http']],
      ['rooms.example.com', ['rooms']],
    ]);
  });

  it('refuses a PodDisruptionBudget that would let no pod be evicted: a count at or above replicas, or a percentage that reaches them rounded up as Kubernetes does', async () => {
    const refused: [string, number, number | string, string, string][] = [
      ['gateway', 2, 2, 'it keeps all 2 available', 'set minAvailable to at most 1 (or 50%), or raise gateway.replicas'],
      ['operator', 2, 3, 'it keeps all 2 available', 'set minAvailable to at most 1 (or 50%), or raise operator.replicas'],
      ['gateway', 2, '100%', 'Kubernetes rounds 100% of 2 pods up to 2: it keeps all 2 available', 'set minAvailable to at most 50% (or 1)'],
      ['gateway', 2, '99%', 'Kubernetes rounds 99% of 2 pods up to 2: it keeps all 2 available', 'set minAvailable to at most 50% (or 1)'],
      ['operator', 2, '51%', 'Kubernetes rounds 51% of 2 pods up to 2: it keeps all 2 available', 'set minAvailable to at most 50% (or 1)'],
      ['operator', 3, '67%', 'Kubernetes rounds 67% of 3 pods up to 3: it keeps all 3 available', 'set minAvailable to at most 66% (or 2)'],
    ];
    for (const [component, replicas, minAvailable, why, instead] of refused) {
      const result = await helmTemplateRaw({ values: { [component]: { replicas, podDisruptionBudget: { enabled: true, minAvailable } } } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`${component}.podDisruptionBudget.minAvailable=${minAvailable} with ${component}.replicas=${replicas} would let no ${component} pod be evicted (${why}), so every node drain would wait on it for good: ${instead}`);
    }
    // What the messages offer instead renders as given.
    const accepted: [string, number, number | string][] = [['gateway', 3, 2], ['gateway', 2, '50%'], ['operator', 3, '66%'], ['operator', 2, 1]];
    for (const [component, replicas, minAvailable] of accepted) {
      const objects = await renderChart({ values: { [component]: { replicas, podDisruptionBudget: { enabled: true, minAvailable } } } });
      expect(field(findObject(objects, 'PodDisruptionBudget', `-${component}`), 'spec.minAvailable')).toBe(minAvailable);
    }
  });

  it('refuses a ping flush interval above half the ping timeout: the operator learns of unchanged pings once per flush, so rooms that ping would be expired', async () => {
    for (const [pingTimeout, pingFlushInterval] of [['20s', '60s'], ['4m', '10m'], ['30s', '30s'], ['60s', '31s']] as const) {
      const result = await helmTemplateRaw({ values: { operator: { rooms: { pingTimeout } }, gateway: { pingFlushInterval } } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`gateway.pingFlushInterval=${pingFlushInterval} is more than half of operator.rooms.pingTimeout=${pingTimeout}: the operator learns of unchanged pings once per flush`);
    }
    for (const [pingTimeout, pingFlushInterval] of [['4m', '30s'], ['60s', '30s'], ['2m', '1m']] as const) {
      const result = await helmTemplateRaw({ values: { operator: { rooms: { pingTimeout } }, gateway: { pingFlushInterval } } });
      expect([result.code, result.stderr]).toEqual([0, '']);
    }
  });

  it('refuses a silence timeout not longer than the ping flush interval: rooms that ping would be marked silent, and not allocated, between two flushes', async () => {
    for (const [silenceTimeout, pingFlushInterval] of [['30s', '30s'], ['20s', '30s'], ['90s', '2m']] as const) {
      const result = await helmTemplateRaw({ values: { operator: { rooms: { silenceTimeout, pingTimeout: '10m' } }, gateway: { pingFlushInterval } } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`operator.rooms.silenceTimeout=${silenceTimeout} is not longer than gateway.pingFlushInterval=${pingFlushInterval}: the operator learns of unchanged pings once per flush`);
    }
    for (const silenceTimeout of ['31s', '0', 0, '3m']) {
      const objects = await renderChart({ values: { operator: { rooms: { silenceTimeout } } } });
      expect(envOf(containerOf(findObject(objects, 'Deployment', '-operator'))).get('ROOMKEEPER_ROOM_SILENCE_TIMEOUT')?.value).toBe(String(silenceTimeout));
    }
  });

  it('refuses a memory limit that leaves Node less than 128 MiB above its V8 heap limit (maxHeapMB): the container would be OOM-killed before V8 collects', async () => {
    for (const [component, values, said] of [
      ['operator', { resources: { limits: { memory: '256Mi' } } }, 'operator.resources.limits.memory=256Mi'],
      ['operator', { resources: { limits: { memory: '0.25Gi' } } }, 'operator.resources.limits.memory=0.25Gi'],
      ['gateway', { maxHeapMB: 450 }, 'gateway.resources.limits.memory=512Mi'],
      ['gateway', { resources: { limits: { memory: '300M' } } }, 'gateway.resources.limits.memory=300M'],
    ] as const) {
      const result = await helmTemplateRaw({ values: { [component]: values } });
      expect(result.code).not.toBe(0);
      const heap = component === 'operator' && !('maxHeapMB' in values) ? 160 : 'maxHeapMB' in values ? values.maxHeapMB : 192;
      expect(result.stderr).toContain(`${said} leaves less than 128 MiB above ${component}.maxHeapMB=${heap}`);
      expect(result.stderr).toContain(`at least ${heap + 128}Mi`);
    }
    for (const values of [
      { operator: { resources: { limits: { memory: '288Mi' } } }, gateway: { resources: { limits: { memory: '1G' } } } },
      { operator: { resources: { limits: null } }, gateway: { resources: { limits: { cpu: '2' } } } }, // no memory limit: nothing to fit in
    ]) {
      const result = await helmTemplateRaw({ values });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
  });

  it('refuses two unelected operators', async () => {
    const result = await helmTemplateRaw({ values: { operator: { replicas: 2, leaderElection: { enabled: false } } } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('operator.leaderElection.enabled=false needs operator.replicas=1');
  });

  it('refuses leader-election timings the operator would reject at start-up', async () => {
    const result = await helmTemplateRaw({ values: { operator: { leaderElection: { enabled: true, leaseDuration: '10s', renewDeadline: '10000', retryPeriod: '2s' } } } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('operator.leaderElection needs leaseDuration > renewDeadline > retryPeriod, got 10s, 10000, 2s');
  });

  // The kubelet silently takes the last entry of a name: a duplicate is refused, naming it and where it is set.
  const duplicateEnv: [string, Record<string, unknown>, string][] = [
    ['twice in extraEnv', { extraEnv: [{ name: 'TZ', value: 'UTC' }, { name: 'TZ', value: 'Europe/Paris' }] },
      'extraEnv sets TZ twice: the kubelet would silently use the last entry. Keep one entry of TZ in extraEnv'],
    ['twice in gateway.extraEnv', { gateway: { extraEnv: [{ name: 'A', value: '1' }, { name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] } },
      'gateway.extraEnv sets A twice: the kubelet would silently use the last entry. Keep one entry of A in gateway.extraEnv'],
    ['in extraEnv and operator.extraEnv', { extraEnv: [{ name: 'TZ', value: 'UTC' }], operator: { extraEnv: [{ name: 'TZ', value: 'Asia/Tokyo' }] } },
      'operator.extraEnv sets TZ, which extraEnv already sets for the operator: the kubelet would silently use the last entry. Keep it in one of them'],
    ['a name the chart sets, in extraEnv', { extraEnv: [{ name: 'ROOMKEEPER_LOG_LEVEL', value: 'debug' }] },
      'extraEnv sets ROOMKEEPER_LOG_LEVEL, which the chart already sets for the operator: the kubelet would silently use the last entry. Remove it from extraEnv and set the chart value for it instead'],
    ['a name the chart sets, in operator.extraEnv', { operator: { extraEnv: [{ name: 'ROOMKEEPER_LEASE_NAME', value: 'elsewhere' }] } },
      'operator.extraEnv sets ROOMKEEPER_LEASE_NAME, which the chart already sets for the operator'],
    ['a name the chart sets for the gateway only', { gateway: { extraEnv: [{ name: 'ROOMKEEPER_PING_AUTH', value: 'false' }] } },
      'gateway.extraEnv sets ROOMKEEPER_PING_AUTH, which the chart already sets for the gateway'],
  ];
  it.each(duplicateEnv)('refuses a duplicate environment variable (%s), naming it', async (_where, values, message) => {
    const result = await helmTemplateRaw({ values });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
  });

  it('keeps distinct extra variables, after the chart\'s own; a name of one component\'s own env is free in the other\'s extraEnv', async () => {
    const objects = await renderChart({ values: { extraEnv: [{ name: 'TZ', value: 'UTC' }], operator: { extraEnv: [{ name: 'ROOMKEEPER_PING_AUTH', value: 'x' }] }, gateway: { extraEnv: [{ name: 'ROOMKEEPER_OPERATOR_PORT', value: '1' }] } } });
    const names = (suffix: string) => containerOf(findObject(objects, 'Deployment', suffix)).env.map((e) => e.name);
    expect(names('-operator').slice(-2)).toEqual(['TZ', 'ROOMKEEPER_PING_AUTH']);
    expect(names('-gateway').slice(-2)).toEqual(['TZ', 'ROOMKEEPER_OPERATOR_PORT']);
    for (const suffix of ['-operator', '-gateway']) expect(new Set(names(suffix)).size).toBe(names(suffix).length);
  });

  it('reads durations in every unit config.ts accepts', async () => {
    const objects = await renderChart({ values: { operator: { shutdownTimeout: '1.5m' }, gateway: { shutdownTimeout: 2500 } } });
    expect(field(findObject(objects, 'Deployment', '-operator'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(95);
    expect(field(findObject(objects, 'Deployment', '-gateway'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(13);
    const hours = await renderChart({ values: { operator: { shutdownTimeout: '1h' }, gateway: { shutdownTimeout: '250ms' } } });
    expect(field(findObject(hours, 'Deployment', '-operator'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(3605);
    expect(field(findObject(hours, 'Deployment', '-gateway'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(11);
    const noDrain = await renderChart({ values: { gateway: { shutdownTimeout: '10s', shutdownDrainDelay: '0s' } } });
    expect(field(findObject(noDrain, 'Deployment', '-gateway'), 'spec.template.spec.terminationGracePeriodSeconds')).toBe(15);
  });

  it('refuses an Ingress whose two APIs share a host, whatever their paths (allocate is a management path under the rooms API\'s prefix)', async () => {
    for (const paths of [['/', '/'], ['/schedulers', '/scheduler']]) {
      const result = await helmTemplateRaw({ values: { ingress: { enabled: true, management: { host: 'games.example.com', path: paths[0], pathType: 'Prefix' }, rooms: { enabled: true, host: 'games.example.com', path: paths[1], pathType: 'Prefix' } } } });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('ingress.rooms and ingress.management share a host: give ingress.rooms.host a host of its own');
    }
  });
});

function leafPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) return [prefix];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
}
