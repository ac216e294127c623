/**
 * A scheduler that asks for more rooms than its port range holds on the nodes: the rooms whose pods
 * cannot be placed wait, kept (not replaced every few seconds by rooms that would wait the same
 * way), and HealingHeld and a HostPortsExhausted Warning say why and what to do; fewer rooms end
 * it. Runs on the sandbox, or on a real cluster when E2E_KUBECONFIG is set (the real kube-apiserver
 * tier runs it), on the simulated kubelet's nodes.
 */
import * as k8s from '@kubernetes/client-node';
import type { Condition } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'host-ports-e2e';
/** Two ports: the simulated kubelet's nodes hold two rooms each. */
const RANGE = { start: 42000, end: 42001 };

describe('rooms waiting for host ports that no node has free', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('are kept, not replaced, said in HealingHeld and a HostPortsExhausted Event, until fewer rooms are asked for', async () => {
    const nodes = (await stack.core.listNode()).items.filter((n) => !n.spec?.unschedulable).length;
    const fits = nodes * 2;
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: fits + 2, portRange: RANGE }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const live = async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === fits, { timeoutMs: 60_000, message: `${fits} ready rooms` });

    const healingHeld = async (): Promise<Condition | undefined> => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === 'HealingHeld');
    const held = await waitFor(async () => {
      const c = await healingHeld();
      return c?.status === 'True' ? c : undefined;
    }, { timeoutMs: 60_000, message: 'HealingHeld True' });
    expect(held.reason).toBe('HostPortsExhausted');
    expect(held.message).toMatch(new RegExp(`^2 rooms \\(${NAME}-\\w+, ${NAME}-\\w+\\) wait for host ports: no node that can take rooms \\(${nodes} nodes\\) has 1 free port in 42000-42001, as the rooms on them hold the rest\\. `
      + `They are kept, not replaced \\(a new room would wait the same way\\), and placed as soon as ports free up\\. To run more rooms, widen portRange or the ports' hostPortRange \\(a new version of scheduler ${NAME}\\), add nodes, or lower roomsReplicas$`));
    const waiting = (await live()).filter((r) => r.status?.status !== 'ready').map((r) => r.metadata.name).sort();
    expect(waiting).toHaveLength(2);
    // While the rooms were still being placed, a room whose random ports clashed could be replaced
    // by one drawing others (some node had free ports then); once no node has, none is.
    const removals = async () => (await stack.api.listOperations(NAME)).items.filter((o) => o.spec.definitionName === 'remove_rooms').map((o) => o.metadata.name).sort();
    const removedBefore = await removals();

    // Many health checks later (the ready rooms' pings measure the wait): the same two rooms wait,
    // and no operation replaced one.
    const pings = stack.simulation!.rooms!.stats().pingsSent;
    await waitFor(() => stack.simulation!.rooms!.stats().pingsSent > pings + 10 * fits, { timeoutMs: 60_000, message: '10 more pings per ready room' });
    expect((await live()).filter((r) => r.status?.status !== 'ready').map((r) => r.metadata.name).sort()).toEqual(waiting);
    expect(await removals()).toEqual(removedBefore);

    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const event = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.reason === 'HostPortsExhausted' && e.regarding?.name === NAME), { timeoutMs: 30_000, intervalMs: 200, message: 'a HostPortsExhausted Event' });
    expect(event.type).toBe('Warning');
    expect(event.note).toBe(held.message);

    // Asked for as many rooms as fit: the waiting rooms go, and the hold ends.
    expect((await managementCall(stack, 'PATCH', `/schedulers/${NAME}`, { roomsReplicas: fits })).status).toBe(200);
    const released = await waitFor(async () => {
      const c = await healingHeld();
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: 60_000, message: 'HealingHeld False' });
    expect(released.reason).toBe('NotHeld');
    await waitFor(async () => {
      const rooms = await live();
      return rooms.length === fits && rooms.every((r) => r.status?.status === 'ready');
    }, { timeoutMs: 60_000, message: `${fits} rooms, all ready` });
  });
});
