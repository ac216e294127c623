/**
 * For e2e tests whose game room is not the sandbox's simulated one but a real client (the SDK in
 * the test process, or the simulated room image's entry point as a process): a stack where deleted
 * pods live long enough for the room to say goodbye, and a scheduler whose one room pod's own
 * simulated room stays silent (`ROOMKEEPER_SIM_ROOM=never-ping`), so every ping comes from that client.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { managementCall } from './http';
import { schedulerObject, startStack, type Stack } from './stack';
import { waitFor } from './wait';

/** A stack with a 300 ms ping and health interval; deleted pods live up to 10 s (their grace period). */
export function startStackForRoomClients(): Promise<Stack> {
  return startStack({ external: true, config: { healthInterval: 300, roomInitTimeout: 60_000 }, simulation: { pingIntervalMs: 300, deletionCapMs: 10_000 } });
}

/** The plain environment variables of a pod's first container (what the operator put there). */
export function podEnv(pod: V1Pod): Record<string, string> {
  return Object.fromEntries((pod.spec?.containers[0]?.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));
}

/** Creates scheduler `name` with one room whose simulated room never pings; resolves with its pod. */
export async function silentRoomPod(stack: Stack, name: string): Promise<V1Pod> {
  const body = { name, ...(schedulerObject(name, { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]) as { spec: Record<string, unknown> }).spec };
  const created = await managementCall(stack, 'POST', '/schedulers', body);
  if (created.status !== 200) throw new Error(`creating scheduler ${name} answered ${created.status}: ${JSON.stringify(created.body)}`);
  return waitFor(async () => (await stack.core.listNamespacedPod({ namespace: name })).items.find((p) => !p.metadata?.deletionTimestamp && podEnv(p).ROOMKEEPER_ROOM_ID),
    { timeoutMs: 60_000, message: `a room pod of ${name}` });
}
