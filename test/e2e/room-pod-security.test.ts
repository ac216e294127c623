/**
 * Room pods and namespaces as issue 12 (L5) hardens them, end to end: HTTP -> gateway -> API
 * server -> operator -> pods. Runs on the sandbox, or on a real cluster when E2E_KUBECONFIG is set
 * (where Pod Security Admission reads the namespace labels: the rooms must still start).
 */
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'pod-security';

function body(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, ...(schedulerObject(name, overrides) as { spec: Record<string, unknown> }).spec };
}

describe('room pod security', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('room pods get the security defaults and no service-account token; the room namespace carries the Pod Security labels; rooms still become ready', async () => {
    expect((await managementCall(stack, 'POST', '/schedulers', body(NAME, { roomsReplicas: 2 }))).status).toBe(200);
    await waitFor(async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation && r.status?.status === 'ready').length === 2,
      { timeoutMs: 60_000, message: '2 ready rooms' });

    const ns = await stack.core.readNamespace({ name: NAME });
    expect(ns.metadata?.labels).toMatchObject({ 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/audit': 'baseline' });
    expect(ns.metadata?.labels).not.toHaveProperty('pod-security.kubernetes.io/enforce');

    const pods = (await stack.core.listNamespacedPod({ namespace: NAME, labelSelector: 'app.kubernetes.io/managed-by=roomkeeper' })).items;
    expect(pods.length).toBeGreaterThanOrEqual(2);
    for (const pod of pods) {
      expect(pod.spec?.automountServiceAccountToken).toBe(false);
      expect(pod.spec?.securityContext?.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      for (const c of pod.spec?.containers ?? []) {
        expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
        expect(c.securityContext?.capabilities?.drop).toEqual(['ALL']);
      }
      // No token volume was mounted (a real API server would have added one without the opt-out).
      expect((pod.spec?.volumes ?? []).filter((v) => v.name.startsWith('kube-api-access'))).toEqual([]);
    }
  });

  test('a portRange or hostPortRange below 1024 is refused with the field named, by the gateway and by the API server', async () => {
    const low = await managementCall(stack, 'POST', '/schedulers', body('low-ports', { portRange: { start: 80, end: 2000 } }));
    expect(low.status).toBe(400);
    expect(JSON.stringify(low.body)).toContain('portRange.start');
    expect(JSON.stringify(low.body)).toContain('greater than or equal to 1024');

    // kubectl's path: the CRD schema at admission names spec.portRange.start.
    const direct = schedulerObject('low-ports-direct', { portRange: { start: 1000, end: 2000 } });
    const refused = await stack.api.createScheduler(direct as never).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(422);
    expect(typeof refused?.body === 'string' ? refused.body : JSON.stringify(refused?.body)).toContain('spec.portRange.start');
    await expect(stack.api.getScheduler('low-ports')).rejects.toBeTruthy();
    await expect(stack.api.getScheduler('low-ports-direct')).rejects.toBeTruthy();
  });
});
