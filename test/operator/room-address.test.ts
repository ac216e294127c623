/**
 * A room's address follows its node's, with the operator, the simulated kubelet and rooms on the
 * sandbox: a node whose ExternalIP changes gives its rooms the new one, and a node replaced under
 * the same name (deleted, a room looked at meanwhile, created again with another ExternalIP) gives
 * its rooms the new node's address. Neither needs a room or pod change to be seen.
 */
import type * as k8s from '@kubernetes/client-node';
import { MERGE_PATCH } from '../../common/src/kube/clients';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'addresses';

describe('a room\'s address when its node\'s changes', () => {
  let stack: Stack;

  /** The scheduler's one room with its status host once it is ready, and the node its pod runs on. */
  const readyRoom = async (): Promise<{ room: string; host: string; node: string } | undefined> => {
    const [room] = (await stack.api.listGameRooms(NAME)).items;
    const pod = room ? (await stack.core.listNamespacedPod({ namespace: NAME })).items.find((p) => p.metadata?.name === room.metadata.name) : undefined;
    if (room?.status?.status !== 'ready' || !room.status.host || !pod?.spec?.nodeName) return undefined;
    return { room: room.metadata.name as string, host: room.status.host, node: pod.spec.nodeName };
  };
  const hostOf = async (room: string): Promise<string | undefined> => (await stack.api.getGameRoom(NAME, room)).status?.host;
  /** The node's addresses with its ExternalIP replaced (a merge patch replaces the whole list). */
  const withExternalIP = (node: k8s.V1Node, address: string): k8s.V1NodeAddress[] =>
    [...(node.status?.addresses ?? []).filter((a) => a.type !== 'ExternalIP'), { type: 'ExternalIP', address }];

  beforeAll(async () => {
    stack = await startStack({ simulation: { nodes: 1 } });
    await stack.api.createScheduler(schedulerObject(NAME, { roomsReplicas: 1 }) as never);
    await waitFor(readyRoom, { timeoutMs: 60_000, intervalMs: 100, message: `${NAME} with a ready room` });
  }, 90_000);

  afterAll(async () => {
    await (stack as Stack | undefined)?.stop();
  });

  test('a node whose ExternalIP changes gives its room the new address', async () => {
    const { room, host, node } = await waitFor(readyRoom, { timeoutMs: 30_000, message: 'the room ready' });
    const before = await stack.core.readNode({ name: node });
    expect(host).toBe(before.status?.addresses?.find((a) => a.type === 'ExternalIP')?.address);

    await stack.core.patchNodeStatus({ name: node, body: { status: { addresses: withExternalIP(before, '127.0.0.99') } } }, MERGE_PATCH);
    await waitFor(async () => (await hostOf(room)) === '127.0.0.99', { timeoutMs: 15_000, intervalMs: 50, message: 'the room\'s host the node\'s new ExternalIP' });
  }, 60_000);

  test('a node replaced under the same name gives its room the new node\'s address', async () => {
    const { room, node } = await waitFor(readyRoom, { timeoutMs: 30_000, message: 'the room ready' });
    const old = await stack.core.readNode({ name: node });
    const pod = await stack.core.readNamespacedPod({ name: room, namespace: NAME });
    const hostIP = pod.status?.hostIP as string;
    expect(hostIP).toBeTruthy();

    // The node gone, and the room looked at meanwhile (its pod changed): the pod's hostIP.
    await stack.core.deleteNode({ name: node });
    await stack.core.patchNamespacedPod({ name: room, namespace: NAME, body: { metadata: { annotations: { 'test.roomkeeper.io/touched': 'yes' } } } }, MERGE_PATCH);
    await waitFor(async () => (await hostOf(room)) === hostIP, { timeoutMs: 15_000, intervalMs: 50, message: 'the room\'s host its pod\'s hostIP while its node is gone' });

    // The node back with another ExternalIP: the room takes it, with no change of its own.
    await stack.core.createNode({ body: { metadata: { name: node, labels: old.metadata?.labels ?? {} } } });
    await stack.core.patchNodeStatus({ name: node, body: { status: { addresses: withExternalIP(old, '127.0.0.77') } } }, MERGE_PATCH);
    await waitFor(async () => (await hostOf(room)) === '127.0.0.77', { timeoutMs: 15_000, intervalMs: 50, message: 'the room\'s host the new node\'s ExternalIP' });
  }, 60_000);
});
