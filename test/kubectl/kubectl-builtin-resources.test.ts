import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { waitFor } from '../support/wait';
import { kubectlSession, type KubectlSession } from './kubectl-runner';

jest.setTimeout(60_000);

const CHART_LIKE = `
apiVersion: v1
kind: Namespace
metadata:
  name: rk-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: roomkeeper
  namespace: rk-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: roomkeeper
rules:
- apiGroups: ["roomkeeper.io"]
  resources: ["schedulers", "schedulers/status"]
  verbs: ["get", "list", "watch", "update", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: roomkeeper
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: roomkeeper
subjects:
- kind: ServiceAccount
  name: roomkeeper
  namespace: rk-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: leader-election
  namespace: rk-system
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "create", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: leader-election
  namespace: rk-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: leader-election
subjects:
- kind: ServiceAccount
  name: roomkeeper
  namespace: rk-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: roomkeeper-config
  namespace: rk-system
data:
  LOG_LEVEL: info
---
apiVersion: v1
kind: Secret
metadata:
  name: roomkeeper-auth
  namespace: rk-system
stringData:
  password: s3cret
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: roomkeeper-operator
  namespace: rk-system
  labels: {app: roomkeeper}
spec:
  replicas: 2
  selector:
    matchLabels: {app: roomkeeper}
  template:
    metadata:
      labels: {app: roomkeeper}
    spec:
      serviceAccountName: roomkeeper
      containers:
      - name: operator
        image: roomkeeper/operator:0.1.0
        env:
        - {name: LOG_LEVEL, value: info}
        ports:
        - {containerPort: 8080, name: metrics}
---
apiVersion: v1
kind: Service
metadata:
  name: roomkeeper-gateway
  namespace: rk-system
spec:
  selector: {app: roomkeeper}
  ports:
  - {port: 80, targetPort: 8080, name: http}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: roomkeeper
  namespace: rk-system
spec:
  rules:
  - host: rooms.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: roomkeeper-gateway
            port: {number: 80}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: roomkeeper
  namespace: rk-system
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: roomkeeper}
`;

describe('kubectl against the sandbox: built-in resources', () => {
  let sandbox: Sandbox;
  let kubectl: KubectlSession;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    kubectl = await kubectlSession(sandbox);
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
  });

  afterAll(async () => {
    kubectl.dispose();
    await sandbox.stop();
  });

  it('lists namespaces', async () => {
    const res = await kubectl.run(['get', 'ns']);
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(['NAME', 'STATUS', 'AGE']);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'default Active', 'kube-node-lease Active', 'kube-public Active', 'kube-system Active',
    ]);
  });

  it('server-side dry-runs a chart-like set of objects without creating them', async () => {
    const manifest = path.join(kubectl.dir, 'chart.yaml');
    writeFileSync(manifest, CHART_LIKE);
    // the namespace must exist for the namespaced objects' dry run, as on a real cluster
    await kubectl.run(['apply', '-f', '-'], { input: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: rk-system\n' });
    const dry = await kubectl.run(['apply', '--dry-run=server', '-f', manifest]);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toContain('deployment.apps/roomkeeper-operator created (server dry run)');
    expect(dry.stdout).toContain('ingress.networking.k8s.io/roomkeeper created (server dry run)');
    expect(dry.stdout).toContain('clusterrolebinding.rbac.authorization.k8s.io/roomkeeper created (server dry run)');
    expect(sandbox.store.count('deployments')).toBe(0);
  });

  it('refuses a chart object with a misspelt field on a server dry run, as a real cluster does', async () => {
    const manifest = path.join(kubectl.dir, 'typo.yaml');
    writeFileSync(manifest, CHART_LIKE.replace('serviceAccountName: roomkeeper', 'serviceAcountName: roomkeeper'));
    const dry = await kubectl.run(['apply', '--dry-run=server', '-f', manifest]);
    expect(dry.code).not.toBe(0);
    expect(dry.stderr).toContain('unknown field "spec.template.spec.serviceAcountName"');
  });

  it('applies, re-applies with changes and keeps list entries merged by key', async () => {
    const manifest = path.join(kubectl.dir, 'chart.yaml');
    writeFileSync(manifest, CHART_LIKE);
    const applied = await kubectl.run(['apply', '-f', manifest]);
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain('deployment.apps/roomkeeper-operator created');
    writeFileSync(manifest, CHART_LIKE.replace('{name: LOG_LEVEL, value: info}', '{name: LOG_LEVEL, value: debug}').replace('replicas: 2', 'replicas: 3'));
    const reapplied = await kubectl.run(['apply', '-f', manifest]);
    expect(reapplied.stdout).toContain('deployment.apps/roomkeeper-operator configured');
    const env = await kubectl.run(['get', 'deploy', 'roomkeeper-operator', '-n', 'rk-system', '-o', 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].env[0].value} {.metadata.generation}']);
    expect(env.stdout).toBe('3 debug 2');
    const svc = await kubectl.run(['get', 'svc', '-n', 'rk-system']);
    expect(svc.stdout).toMatch(/roomkeeper-gateway\s+ClusterIP\s+10\.96\./);
  });

  it('shows pods with -o wide, describes them and reads their events', async () => {
    const pod = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'web-1' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } });
    await core.createNamespacedPodBinding({ name: 'web-1', namespace: 'default', body: { metadata: { name: 'web-1' }, target: { kind: 'Node', name: 'node-a' } } });
    await core.patchNamespacedPodStatus({
      name: 'web-1', namespace: 'default',
      body: [{ op: 'replace', path: '/status', value: { phase: 'Running', podIP: '10.0.0.7', containerStatuses: [{ name: 'web', ready: true, restartCount: 2, image: 'nginx:1.27', imageID: '', started: true, state: { running: {} } }] } }],
    });
    await core.createNamespacedEvent({
      namespace: 'default',
      body: { metadata: { name: 'web-1.1' }, involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'default', uid: pod.metadata!.uid }, reason: 'Started', message: 'Started container web', type: 'Normal' },
    });
    const wide = await kubectl.run(['get', 'pods', '-o', 'wide']);
    const [header, row] = wide.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    expect(row!.split(/\s+/)).toEqual(['web-1', '1/1', 'Running', '2', expect.any(String), '10.0.0.7', 'node-a', '<none>', '<none>']);
    const describe = await kubectl.run(['describe', 'pod', 'web-1']);
    expect(describe.stdout).toMatch(/Node:\s+node-a/);
    expect(describe.stdout).toContain('Started container web');
    const events = await kubectl.run(['get', 'events']);
    expect(events.stdout).toContain('pod/web-1');
  });

  it('creates namespaces, secrets, configmaps and service accounts with `kubectl create` (protobuf bodies)', async () => {
    expect((await kubectl.run(['create', 'namespace', 'made'])).stdout).toContain('namespace/made created');
    expect((await kubectl.run(['create', 'secret', 'generic', 'pw', '-n', 'made', '--from-literal=password=hunter2'])).stdout).toContain('secret/pw created');
    expect((await kubectl.run(['create', 'configmap', 'cfg', '-n', 'made', '--from-literal=k=v'])).stdout).toContain('configmap/cfg created');
    expect((await kubectl.run(['create', 'serviceaccount', 'bot', '-n', 'made'])).stdout).toContain('serviceaccount/bot created');
    const secret = await core.readNamespacedSecret({ name: 'pw', namespace: 'made' });
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(secret.data!.password!, 'base64').toString()).toBe('hunter2');
    expect((await core.readNamespacedConfigMap({ name: 'cfg', namespace: 'made' })).data).toEqual({ k: 'v' });
    const unsupported = await kubectl.run(['create', 'deployment', 'd', '--image=x']);
    expect(unsupported.code).not.toBe(0);
    expect(unsupported.stderr).toContain('unknown format');
  });

  it('deletes a namespace and everything in it', async () => {
    const res = await kubectl.run(['delete', 'namespace', 'rk-system', '--wait=false']);
    expect(res.stdout).toContain('namespace "rk-system" deleted');
    await waitFor(async () => (await kubectl.run(['get', 'ns', 'rk-system'])).stderr.includes('NotFound'), { timeoutMs: 20_000, message: 'namespace gone' });
    expect(sandbox.store.count('deployments')).toBe(0);
    expect(sandbox.store.count('rolebindings')).toBe(0);
    expect(sandbox.store.count('clusterroles')).toBe(1);
  });
});
