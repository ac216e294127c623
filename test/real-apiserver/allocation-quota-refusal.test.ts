/**
 * An allocate request whose AllocationClaim the namespace's ResourceQuota refuses, on kube-apiserver
 * v1.28 (its quota admission, kube-controller-manager's quota status) with the gateway under the
 * chart's RBAC: the answer is 429 with Retry-After naming the refused create, the quota's own words
 * and how to raise it, not a 500 blaming the gateway's rights. Raised, the same request allocates
 * as far as rooms go (none here: 429 no room).
 */
import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '../../common/src/config';
import { startGateway, type RunningGateway } from '../../api-gateway/src/main';
import { validSpec } from '../../api-gateway/src/testing/fixtures';
import { captureLogs } from '../support/log-capture';
import { kubectl, realApiServer, reportNotRun } from '../support/real-apiserver';
import { TEST_CONFIG } from '../support/stack';
import { waitFor } from '../support/wait';

const SCHEDULER = 'rk-quota-refusal';
const RESOURCE = 'count/allocationclaims.roomkeeper.io';

test("an allocate refused by the namespace's ResourceQuota answers 429 naming the AllocationClaim create and the quota, not RBAC", async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('allocate refused by a ResourceQuota')).toMatch(/NOT RUN/);
    return;
  }
  const admin = plane.adminKubeconfig;
  let gateway: RunningGateway | undefined;
  try {
    kubectl(admin, ['create', 'namespace', SCHEDULER]);
    kubectl(admin, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name: SCHEDULER }, spec: validSpec() }));
    kubectl(admin, ['-n', SCHEDULER, 'create', 'quota', 'cq', `--hard=${RESOURCE}=0`]);
    // Quota admission refuses with "status unknown" until kube-controller-manager has counted.
    const counted = () => (JSON.parse(kubectl(admin, ['-n', SCHEDULER, 'get', 'resourcequota', 'cq', '-o', 'json'])) as { status?: { hard?: Record<string, string> } }).status?.hard?.[RESOURCE] === '0';
    await waitFor(counted, { timeoutMs: 30_000, intervalMs: 200, message: 'the quota counted by kube-controller-manager' });

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(plane.gatewayKubeconfig);
    const logs = captureLogs('info', 'gateway');
    const config = loadConfig({}, { ...TEST_CONFIG, authUsername: 'tester', authPassword: 'test-password', roomTokenSecret: 'test-room-token-secret', gatewayPort: 0, roomsPort: 0 });
    const g = await startGateway({ config, kubeConfig: kc, host: '127.0.0.1', logger: logs.logger, replicaId: SCHEDULER });
    gateway = g;
    await waitFor(async () => (await fetch(`${g.managementUrl}/readyz`)).status === 200, { timeoutMs: 30_000, message: 'the gateway ready' });
    const allocate = () => fetch(`${g.managementUrl}/scheduler/${SCHEDULER}/rooms/allocate`, {
      method: 'POST', headers: { Authorization: `Basic ${Buffer.from('tester:test-password').toString('base64')}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ allocationId: 'trial-1' }),
    });

    const res = await allocate();
    const body = (await res.json()) as { code: number; message: string; details: Record<string, unknown>[] };
    expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 429, retryAfter: '5' });
    expect(body.code).toBe(8);
    expect(body.details[0]).toMatchObject({ reason: 'KUBERNETES_QUOTA_EXCEEDED', request: `create allocationclaims.roomkeeper.io in namespace ${SCHEDULER}`, quota: 'cq', namespace: SCHEDULER });
    expect(body.details[0]?.kubernetesReason).toMatch(new RegExp(`^exceeded quota: cq, requested: ${RESOURCE}=1, used: ${RESOURCE}=0, limited: ${RESOURCE}=0$`));
    expect(body.message).toContain(`refused the gateway's own request to create allocationclaims.roomkeeper.io in namespace ${SCHEDULER} (403 Forbidden: exceeded quota: cq, `);
    expect(body.message).toContain(`raise its hard limit for it (kubectl -n ${SCHEDULER} edit resourcequota cq)`);
    expect(body.message).not.toContain('RBAC');
    expect(logs.lines.find((l) => l.level === 'warn' && String(l.message).includes("the cluster's quota or admission control refused"))).toBeDefined();

    // Raised: the same request goes past its claim (no room here, so no room is what it is told).
    kubectl(admin, ['-n', SCHEDULER, 'patch', 'resourcequota', 'cq', '--type=merge', '-p', JSON.stringify({ spec: { hard: { [RESOURCE]: '5' } } })]);
    await waitFor(async () => {
      const again = await allocate();
      return again.status === 429 && ((await again.json()) as { details: { reason?: string }[] }).details[0]?.reason === 'NO_ROOM_AVAILABLE';
    }, { timeoutMs: 30_000, intervalMs: 300, message: 'the allocate past its claim once the quota is raised' });
  } finally {
    await gateway?.stop();
    for (const args of [['delete', 'scheduler', SCHEDULER], ['delete', 'namespace', SCHEDULER, '--wait=false']]) {
      try {
        kubectl(admin, [...args, '--ignore-not-found']);
      } catch {
        // gone already
      }
    }
  }
}, 120_000);
