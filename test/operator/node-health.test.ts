/**
 * A node turning NotReady brings the health check of the schedulers with rooms on it at once, with
 * the operator, the simulated kubelet and rooms on the sandbox: which nodes can take rooms is part
 * of what a healing operation depends on (its fingerprint), so an add_rooms held back after
 * repeated failures is tried again then, not after its backoff or the next periodic check (both
 * far off here: a 10-minute health interval, rooms that ping once every 10 minutes). And the
 * operator's nodes cache holds Nodes slim, as its pods cache does pods.
 *
 * The node turns NotReady as its kubelet reports it (the simulated kubelet's `setNodeReady`), so
 * the kubelet's heartbeats keep it NotReady rather than write Ready=True again.
 *
 * On the sandbox by default; on the cluster named by E2E_KUBECONFIG (the real-API-server tier runs
 * it so: test/real-apiserver/node-health.test.ts), where the refused room creations come from
 * test/support/fault-proxy.ts, which only the operator goes through, and kube-controller-manager's
 * node lifecycle controller taints the NotReady node and marks its pods not ready (the simulated
 * kubelet schedules without looking at the taint, and sets its pods Ready again).
 */
import { ATTEMPT_ANNOTATION, HEALTH_FINGERPRINT_ANNOTATION } from '../../common/src/resources/labels';
import { faultProxyForE2eCluster, type FaultProxy } from '../support/fault-proxy';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'node-health';
const TEN_MINUTES = 600_000;

describe('a node turning NotReady', () => {
  let stack: Stack;
  let proxy: FaultProxy | undefined;

  beforeAll(async () => {
    proxy = await faultProxyForE2eCluster();
    const p = proxy;
    stack = await startStack({
      external: true,
      simulation: { nodes: 2, pingIntervalMs: TEN_MINUTES },
      config: { healthInterval: TEN_MINUTES, roomPingTimeout: 2 * TEN_MINUTES, roomInitTimeout: 2 * TEN_MINUTES },
      kubeConfigFor: (component, kc) => (component === 'operator' && p ? p.kubeConfig(kc) : kc),
    });
  }, 120_000);

  afterAll(async () => {
    await (stack as Stack | undefined)?.stop();
    await proxy?.close();
  });

  /** Every room creation of the operator refused with 403 (not a transient error), or none. */
  const refuseRoomCreations = (refuse: boolean): void => {
    if (proxy) {
      if (refuse) proxy.set([{ verbs: ['create'], resources: ['gamerooms'], fault: { status: 403 } }]);
      else proxy.clear();
    } else if (refuse) stack.sandbox!.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'create', resource: 'gamerooms' } });
    else stack.sandbox!.faults.clear();
  };

  const addRooms = async () => (await stack.api.listOperations(NAME)).items
    .filter((op) => op.spec.definitionName === 'add_rooms' && op.spec.source === 'operator')
    .sort((a, b) => a.spec.enqueuedAt.localeCompare(b.spec.enqueuedAt));

  test('the operator\'s nodes cache holds the slim Node (common/src/kube/slim-node.ts), not the whole one', async () => {
    const [name] = (await stack.core.listNode()).items.map((n) => n.metadata?.name as string);
    const whole = await stack.core.readNode({ name: name as string });
    expect(whole.status?.nodeInfo).toBeDefined();
    const cached = await waitFor(() => stack.operators[0]?.caches.nodes.get(name as string), { message: `${name as string} in the operator's cache` });
    expect(cached.status?.nodeInfo).toBeUndefined();
    expect(cached.status?.capacity).toBeUndefined();
    expect(cached.status?.addresses).toEqual(whole.status?.addresses);
  });

  test('brings an add_rooms held after repeated failures back at once, with the scheduler\'s room added', async () => {
    await stack.api.createScheduler(schedulerObject(NAME, { roomsReplicas: 1 }) as never);
    const node = await waitFor(async () => {
      const [room] = (await stack.api.listGameRooms(NAME)).items;
      if (room?.status?.status !== 'ready') return undefined;
      return (await stack.core.readNamespacedPod({ name: room.metadata.name as string, namespace: NAME })).spec?.nodeName;
    }, { timeoutMs: 30_000, intervalMs: 100, message: `${NAME} with a ready room on a node` });

    // Every room creation refused (not a transient error): the health check's add_rooms fails,
    // and is tried again with a backoff that doubles (1, 2, 4, 8 s, then 16 s after the 5th).
    refuseRoomCreations(true);
    await stack.api.patchScheduler(NAME, { spec: { roomsReplicas: 2 } });
    const held = await waitFor(async () => (await addRooms()).find((op) => op.metadata.annotations?.[ATTEMPT_ANNOTATION] === '5' && op.status?.status === 'error'),
      { timeoutMs: 45_000, intervalMs: 50, message: 'the fifth add_rooms failed' });

    // The health checks the failure brought (its end, its history pruned, the Scheduler's status)
    // over: the next one waits for the backoff.
    const healthChecks = () => stack.operators.reduce((n, o) => n + o.metrics.sum('roomkeeper_reconcile_total', { controller: 'health' }), 0);
    let seen = -1;
    let since = 0;
    await waitFor(() => {
      const n = healthChecks();
      if (n !== seen) [seen, since] = [n, Date.now()];
      return Date.now() - since >= 1_000;
    }, { timeoutMs: 10_000, intervalMs: 50, message: 'no health check for a second after the fifth failure (the add_rooms held)' });

    // Room creation works again, and the room's node turns NotReady: the scheduler's add_rooms
    // is a new incident's first try (another fingerprint), well before its 16 s backoff ends.
    refuseRoomCreations(false);
    await stack.simulation!.kubelet.setNodeReady(node, false, 'test: the node turned NotReady');
    const retried = await waitFor(async () => (await addRooms()).find((op) => op.metadata.annotations?.[ATTEMPT_ANNOTATION] === '1' && op.spec.enqueuedAt > held.spec.enqueuedAt),
      { timeoutMs: 6_000, intervalMs: 50, message: 'an add_rooms tried again at once after the node turned NotReady (the held one waits 16 s)' });
    expect(retried.metadata.annotations?.[HEALTH_FINGERPRINT_ANNOTATION]).not.toBe(held.metadata.annotations?.[HEALTH_FINGERPRINT_ANNOTATION]);
    await waitFor(async () => (await stack.api.listGameRooms(NAME)).items.length === 2, { timeoutMs: 15_000, message: `${NAME} with its second room` });
  }, 90_000);
});
