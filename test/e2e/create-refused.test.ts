/**
 * A scheduler whose creation the cluster refused (a ResourceQuota allowing no pod in its
 * namespace) is created by the operator's next attempt once the quota is lifted, with no request
 * of the user's: the refusal is the cluster's, not the definition's (common/src/operations/attempts.ts).
 * Until then its Degraded condition says so. On the sandbox, which enforces no ResourceQuota, the
 * pods' create is refused 403 the same way. Runs on the sandbox, or on a real cluster when
 * E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import { loadConfig } from '../../common/src/config';
import type { Operation } from '../../common/src/generated/resources';
import { roomNamespaceLabels } from '../../operator/src/schedulers/room-namespace';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'create-refused-e2e';
const ROOMS = 2;

describe('a scheduler whose creation the cluster refused', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('is created by the operator\'s next attempt once the refusal is lifted, and Degraded says so meanwhile', async () => {
    const sandbox = stack.sandbox;
    if (sandbox) {
      sandbox.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'create', resource: 'pods' } });
    } else {
      // The namespace as the operator makes it, made first so that it holds the quota from the start.
      await stack.core.createNamespace({ body: { metadata: { name: NAME, labels: roomNamespaceLabels(NAME, loadConfig({})) } } });
      await stack.core.createNamespacedResourceQuota({ namespace: NAME, body: { metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } } });
      await waitFor(async () => (await stack.core.readNamespacedResourceQuota({ name: 'no-pods', namespace: NAME })).status?.hard !== undefined, { timeoutMs: 30_000, message: 'the quota in force' });
    }
    let lifted = false;
    const lift = async (): Promise<void> => {
      if (lifted) return;
      lifted = true;
      if (sandbox) sandbox.faults.clear();
      else await stack.core.deleteNamespacedResourceQuota({ name: 'no-pods', namespace: NAME });
    };
    try {
      const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: ROOMS }) as { spec: Record<string, unknown> }).spec };
      expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
      const creates = async (): Promise<Operation[]> => (await stack.api.listOperations(NAME)).items.filter((o) => o.spec.definitionName === 'create_scheduler');
      await waitFor(async () => (await creates()).some((o) => o.status?.status === 'error'), { timeoutMs: 60_000, message: 'the first create_scheduler refused' });
      const degraded = await waitFor(async () => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True'),
        { timeoutMs: 30_000, message: 'Degraded True' });
      expect(degraded.message).toMatch(/The cluster refused it \(a ResourceQuota, a Pod Security or admission policy, a PriorityClass it does not have, a namespace being deleted\): once that is lifted, the operator's next attempt creates the scheduler/);

      await lift();
      // No request of the user's: an attempt of the operator's creates it.
      const finished = await waitFor(async () => (await creates()).find((o) => o.status?.status === 'finished'), { timeoutMs: 120_000, message: 'the scheduler created by a later attempt' });
      expect((await stack.api.getScheduler(NAME)).status?.version).toBe('v1.0.0');
      expect(finished.spec.source).toBe('operator');
      expect(finished.status?.executionHistory?.map((h) => h.event)).toContainEqual(expect.stringMatching(/^Attempt \d+: attempt \d+ \(\S+\) ended error, refused by the cluster \(.*403/));
      await waitFor(async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation && r.status?.status === 'ready').length === ROOMS,
        { timeoutMs: 90_000, message: `${ROOMS} rooms ready` });
    } finally {
      await lift();
    }
  });
});
