/**
 * The simulated kubelet's scheduler against the sandbox API server, through the public API only:
 * it reads taints and cordons from the Node objects as they are now, as kube-scheduler does.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';
import { MERGE_PATCH } from '../../../common/src/kube/clients';
import { waitFor } from '../../../test/support/wait';
import { startSandbox, type Sandbox } from '../index';
import { SimKubelet } from './sim-kubelet';

const NODE_0 = 'roomkeeper-sim-node-0';
const NODE_1 = 'roomkeeper-sim-node-1';
const HOSTNAME = 'kubernetes.io/hostname';

/** What the probe pod (a nodeSelector no node matches) says once the kubelet sees each node so. */
const AFFINITY = "1 node(s) didn't match Pod's node affinity/selector";
const seen = {
  clean: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
  taintedNode1: (key: string, value: string) => `0/2 nodes are available: ${AFFINITY}, 1 node(s) had untolerated taint {${key}: ${value}}.`,
  cordonedNode1: `0/2 nodes are available: ${AFFINITY}, 1 node(s) were unschedulable.`,
};

interface PodOptions { nodeSelector?: Record<string, string>; tolerations?: V1Toleration[] }

function pod(name: string, opts: PodOptions = {}): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels: { app: 'taint-test' } },
    spec: {
      restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'game', image: 'example/game:1.0' }],
      ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
    },
  };
}

describe('simulated kubelet: node taints and cordons', () => {
  const ns = 'sim-taints';
  let sandbox: Sandbox;
  let kubelet: SimKubelet | undefined;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    kubelet = await SimKubelet.start({ kubeConfig: sandbox.kubeConfig(), nodes: 2, startDelayMs: 0, deletionCapMs: 0, heartbeatMs: 0 });
  });

  afterAll(async () => {
    await kubelet?.stop();
    await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
  });

  // Every test starts with clean nodes, no pods, and the probe Pending because of its selector only.
  beforeEach(async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('probe', { nodeSelector: { 'probe.roomkeeper.io/none': 'true' } }) });
    await kubeletSees(seen.clean);
  });

  afterEach(async () => {
    await Promise.all([NODE_0, NODE_1].map((name) => core.patchNode({ name, body: { spec: { taints: null, unschedulable: null } } }, MERGE_PATCH)));
    await core.deleteCollectionNamespacedPod({ namespace: ns });
    await waitFor(async () => (await core.listNamespacedPod({ namespace: ns })).items.length === 0, { message: 'the test\'s pods gone' });
  });

  const read = (name: string) => core.readNamespacedPod({ name, namespace: ns });
  const scheduled = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'PodScheduled');

  /** Waits until the kubelet's scheduler has taken in the nodes' current state (the probe's message says so). */
  async function kubeletSees(message: string): Promise<void> {
    await waitFor(async () => scheduled(await read('probe'))?.message === message, { message: `the probe Unschedulable with "${message}"` });
  }

  async function taint(name: string, taints: V1Taint[]): Promise<void> {
    await core.patchNode({ name, body: { spec: { taints } } }, MERGE_PATCH);
  }

  async function cordon(name: string, unschedulable: boolean): Promise<void> {
    await core.patchNode({ name, body: { spec: { unschedulable: unschedulable || null } } }, MERGE_PATCH);
  }

  /** Creates the pods and resolves with the node each one was bound to. */
  async function createBound(names: string[], opts: PodOptions = {}): Promise<Record<string, string>> {
    for (const name of names) await core.createNamespacedPod({ namespace: ns, body: pod(name, opts) });
    return bound(names);
  }

  /** Resolves with the node each of the pods was bound to, once all are. */
  function bound(names: string[]): Promise<Record<string, string>> {
    return waitFor(async () => {
      const nodes: Record<string, string> = {};
      for (const name of names) {
        const nodeName = (await read(name)).spec?.nodeName;
        if (!nodeName) return undefined;
        nodes[name] = nodeName;
      }
      return nodes;
    }, { message: `${names.join(', ')} bound` });
  }

  /** Creates a pod and resolves with it once it is Unschedulable (PodScheduled=False). */
  async function createPending(name: string, opts: PodOptions = {}): Promise<V1Pod> {
    await core.createNamespacedPod({ namespace: ns, body: pod(name, opts) });
    return waitFor(async () => {
      const p = await read(name);
      return scheduled(p)?.status === 'False' ? p : undefined;
    }, { message: `${name} Unschedulable` });
  }

  /** Node 0 more loaded than node 1, so the least-loaded rule alone would pick node 1. */
  async function loadNode0(): Promise<void> {
    await createBound(['load-a', 'load-b'], { nodeSelector: { [HOSTNAME]: NODE_0 } });
  }

  it.each([
    ['NoExecute', { key: 'trial-g', value: 'down', effect: 'NoExecute' }],
    ['NoSchedule', { key: 'dedicated', value: 'games', effect: 'NoSchedule' }],
  ] as const)('binds no new pod to a node tainted %s, only pods that tolerate it', async (_effect, t) => {
    await loadNode0();
    const before = await createBound(['before'], { nodeSelector: { [HOSTNAME]: NODE_1 } });
    expect(before.before).toBe(NODE_1);

    await taint(NODE_1, [t]);
    await kubeletSees(seen.taintedNode1(t.key, t.value));
    const placed = await createBound(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(Object.values(placed)).toEqual([NODE_0, NODE_0, NODE_0, NODE_0, NODE_0]);

    // Pinned to the tainted node, without a matching toleration: Pending, and told why.
    const wrongValue = await createPending('wrong-value', { nodeSelector: { [HOSTNAME]: NODE_1 }, tolerations: [{ key: t.key, operator: 'Equal', value: 'other', effect: t.effect }] });
    expect(wrongValue.spec?.nodeName).toBeUndefined();
    expect(scheduled(wrongValue)).toMatchObject({ reason: 'Unschedulable', message: `0/2 nodes are available: ${AFFINITY}, 1 node(s) had untolerated taint {${t.key}: ${t.value}}.` });
    const otherEffect = await createPending('other-effect', { nodeSelector: { [HOSTNAME]: NODE_1 }, tolerations: [{ key: t.key, operator: 'Exists', effect: t.effect === 'NoExecute' ? 'NoSchedule' : 'NoExecute' }] });
    expect(otherEffect.spec?.nodeName).toBeUndefined();

    // Tolerating it (Equal with its value and effect, Exists with no effect, or every taint): bound there.
    const tolerating = await createBound(['equal'], { tolerations: [{ key: t.key, operator: 'Equal', value: t.value, effect: t.effect }] });
    expect(tolerating.equal).toBe(NODE_1);
    expect(await createBound(['exists'], { nodeSelector: { [HOSTNAME]: NODE_1 }, tolerations: [{ key: t.key, operator: 'Exists' }] })).toEqual({ exists: NODE_1 });
    expect(await createBound(['everything'], { nodeSelector: { [HOSTNAME]: NODE_1 }, tolerations: [{ operator: 'Exists' }] })).toEqual({ everything: NODE_1 });

    // No kube-controller-manager in the sandbox: a pod already on the node is not evicted (see DIFFERENCES.md).
    expect((await read('before')).metadata?.deletionTimestamp).toBeUndefined();

    // The taint removed: the pending pods are bound to the node.
    await taint(NODE_1, []);
    expect(await bound(['wrong-value', 'other-effect'])).toEqual({ 'wrong-value': NODE_1, 'other-effect': NODE_1 });
  });

  it('binds no pod to a cordoned node, and binds the pods waiting for it once it is uncordoned', async () => {
    await loadNode0();
    await cordon(NODE_1, true);
    await kubeletSees(seen.cordonedNode1);
    const placed = await createBound(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(Object.values(placed)).toEqual([NODE_0, NODE_0, NODE_0, NODE_0, NODE_0]);

    // Tolerations do not matter to a cordon.
    const waiting = await createPending('waiting', { nodeSelector: { [HOSTNAME]: NODE_1 }, tolerations: [{ operator: 'Exists' }] });
    expect(waiting.spec?.nodeName).toBeUndefined();
    expect(waiting.status?.phase).toBe('Pending');
    expect(scheduled(waiting)).toMatchObject({ reason: 'Unschedulable', message: seen.cordonedNode1 });

    // Both cordoned: no node can take a pod, which stays Pending until one can.
    await cordon(NODE_0, true);
    const stuck = await createPending('stuck');
    expect(scheduled(stuck)?.message).toBe('0/2 nodes are available: 2 node(s) were unschedulable.');

    await cordon(NODE_1, false);
    expect(await bound(['waiting', 'stuck'])).toEqual({ waiting: NODE_1, stuck: NODE_1 });
    expect(await createBound(['after'])).toEqual({ after: NODE_1 });
  });
});
