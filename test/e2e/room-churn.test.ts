/**
 * A release whose game server crashes a few seconds after it pings (trial Q: the fleet was rebuilt
 * nonstop while every signal said healthy). Each failed room is replaced, so the room counts look
 * whole; the RoomsChurning condition, a RoomsChurning Warning and roomkeeper_room_failures_total
 * say that the rooms keep failing and what to do, and a fixed version ends it. Runs on the
 * sandbox, or on a real cluster when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it).
 */
import * as k8s from '@kubernetes/client-node';
import type { Condition } from '../../common/src/generated/resources';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { OperationEnqueued } from './management-bodies';

const NAME = 'room-churn-e2e';
const ROOMS = 4;

describe('rooms that fail after their game server pinged', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, serveOps: true, config: { healthInterval: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const condition = async (type: string): Promise<Condition | undefined> => (await stack.api.getScheduler(NAME)).status?.conditions?.find((c) => c.type === type);
  const leaderMetrics = async (): Promise<string> => {
    const leader = stack.operators.find((o) => o.isLeader) ?? stack.operators[0];
    return (await fetch(`${leader?.opsUrl as string}/metrics`)).text();
  };
  /** The counter's value for the series with these labels (NaN: no such series). */
  const failures = (text: string, labels: Record<string, string>): number => {
    const line = text.split('\n').find((l) => l.startsWith('roomkeeper_room_failures_total{') && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
    return line ? Number(line.split(' ').pop()) : Number.NaN;
  };

  test('are counted by cause and stage, said in RoomsChurning and a Warning with what to do, until a fixed version ends it', async () => {
    const definition = (env: { name: string; value: string }[] = []) => ({ name: NAME, ...(schedulerObject(NAME, { roomsReplicas: ROOMS }, env) as { spec: Record<string, unknown> }).spec });
    // Each game server pings, then exits with code 1 five seconds after it started.
    expect((await managementCall(stack, 'POST', '/schedulers', definition([{ name: 'ROOMKEEPER_SIM_POD', value: 'exit-after:5:1' }]))).status).toBe(200);

    const churning = await waitFor(async () => {
      const c = await condition('RoomsChurning');
      return c?.status === 'True' ? c : undefined;
    }, { timeoutMs: 90_000, message: 'RoomsChurning True' });
    expect(churning.reason).toBe('FailingAfterStart');
    expect(churning.message).toMatch(new RegExp(`^rooms of v1\\.0\\.0 keep failing after their game server pinged: \\d+ rooms between \\S+ and \\S+ \\(\\d+ in error.*; the mark is 3: a quarter of the ${ROOMS} desired rooms, at least 3 and at most 500\\); `
      + `newest ${NAME}-\\w+, \\d+ s after it was made: pod phase Failed: container .* terminated: Error \\(exit code 1\\)\\. The health check replaces each failed room, .*`
      + `switch back to a version that worked: PUT /schedulers/${NAME} with \\{"version": "<version>"\\}`));
    // They pinged first: not the failure before a ping that HealingHeld tells.
    expect((await condition('HealingHeld'))?.reason).not.toBe('RoomsFailing');

    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const event = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.reason === 'RoomsChurning' && e.regarding?.name === NAME), { timeoutMs: 30_000, intervalMs: 200, message: 'a RoomsChurning Event' });
    expect(event.type).toBe('Warning');
    expect(event.note).toMatch(/^rooms of v1\.0\.0 keep failing after their game server pinged: /);

    // Counted in Prometheus' text by cause and stage; the causes not seen show 0 from the start.
    const text = await leaderMetrics();
    expect(failures(text, { cause: 'error', scheduler: NAME, stage: 'after_ping' })).toBeGreaterThanOrEqual(3);
    expect(failures(text, { cause: 'pod_deleted', scheduler: NAME, stage: 'after_ping' })).toBe(0);

    // The fix: a game server that keeps running, as a new major version (validated, then rolled out).
    const fixed = await managementCall(stack, 'POST', `/schedulers/${NAME}`, definition());
    expect(fixed.status).toBe(200);
    const opId = (fixed.body as OperationEnqueued).operationId;
    await waitFor(async () => (await stack.api.getOperation(opId)).status?.status === 'finished', { timeoutMs: 90_000, message: 'the fixed version validated and switched' });
    // The failures of v1.0.0 are another major's: they no longer count against v2.0.0.
    const calm = await waitFor(async () => {
      const c = await condition('RoomsChurning');
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: 60_000, message: 'RoomsChurning False' });
    expect(calm.reason).toBe('BelowMark');
    expect(calm.message).toMatch(/^\d+ rooms? of v2\.0\.0 failed after their game server pinged in the last 10 min \(the operator counts the failures it sees from when it began to lead, \S+\), fewer than the mark \(the mark is 3: /);
  });
});
