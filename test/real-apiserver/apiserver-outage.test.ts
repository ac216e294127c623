/**
 * A control-plane outage kills no room. On a real control plane of its own (so the shared one is
 * never disturbed): 20 rooms that report `occupied`; kube-apiserver is SIGKILLed as soon as the
 * rooms run (so their first `occupied` pings arrive while nothing can be written), stays down
 * 60 s, and comes back. Checked throughout and afterwards:
 * - every ping during the outage is answered `success` (the gateway keeps the status pending);
 * - the management API answers 503, code 14, with Retry-After, naming the Kubernetes API;
 * - after the return, all 20 original rooms show `occupied` (no accepted status lost) and none is
 *   removed or replaced (no expiry) for two health-check periods beyond the initialization timeout.
 * Production timeouts (the chart's): a 120 s initialization timeout, a 240 s ping timeout.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import { expectNoPingFailedSince, pingStats, startOutageLab, type OutageLab } from '../support/outage-checks';
import { reportNotRun } from '../support/real-apiserver';
import { schedulerObject, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'outage-arena';
const ROOMS = 20;

async function management(stack: Stack, method: string, p: string, body?: unknown): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(`${String(stack.managementUrl)}${p}`, {
    method, headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) as unknown : undefined };
}

/** The shared scenario state: a dedicated plane and one stack on it. */
let lab: OutageLab | undefined;

async function liveRoomNames(s: Stack, name: string): Promise<string[]> {
  return (await s.api.listGameRooms(name)).items.filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp).map((r) => r.metadata.name as string).sort();
}

/** Watches the rooms of a scheduler until stopped; fails if one of `keep` is ever deleted. */
function guard(s: Stack, name: string, keep: readonly string[]): { stop(): Promise<void> } {
  // boolean, not `true`: stop() clears it while the loop runs.
  let running = true as boolean;
  const violations: string[] = [];
  const loop = (async () => {
    while (running) {
      try {
        const live = new Set(await liveRoomNames(s, name));
        for (const k of keep) if (!live.has(k)) violations.push(k);
      } catch {
        // the API server is down: nothing to observe
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      expect([...new Set(violations)]).toEqual([]);
    },
  };
}

describe('control-plane outages (a real control plane of their own)', () => {
  beforeAll(async () => {
    lab = await startOutageLab({ simulation: { pingIntervalMs: 1000 } });
  }, 180_000);

  afterAll(async () => {
    await lab?.stop();
  }, 300_000);

  test('20 occupied rooms survive a 60 s SIGKILL of kube-apiserver that starts before their status is written', async () => {
    if (!lab) {
      expect(reportNotRun('kube-apiserver outage')).toMatch(/NOT RUN/);
      return;
    }
    const { plane, stack: s } = lab;
    const spec = (schedulerObject(NAME, { roomsReplicas: ROOMS }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'occupied' }]) as { spec: Record<string, unknown> }).spec;
    expect((await management(s, 'POST', '/schedulers', { name: NAME, ...spec })).status).toBe(200);

    // The moment the pods run, before any room's status has reached the API server.
    const original = await waitFor(async () => {
      const pods = (await s.core.listNamespacedPod({ namespace: NAME })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
      const rooms = (await s.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation);
      return pods.length === ROOMS && rooms.length === ROOMS ? rooms.map((r) => r.metadata.name as string).sort() : undefined;
    }, { timeoutMs: 120_000, intervalMs: 50, message: `${ROOMS} room pods running` });
    await plane.stopApiServer('SIGKILL');
    const downAt = Date.now();

    // During the outage: pings keep being accepted; the management API says what is going on.
    const during = await management(s, 'GET', `/schedulers/${NAME}`);
    expect(during.status).toBe(503);
    const answer = during.body as { code?: unknown; message?: unknown };
    expect(answer.code).toBe(14);
    expect(answer.message).toMatch(/Kubernetes API/);
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await management(s, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: 1 })).status).toBe(503);
    const before = pingStats(s);
    await waitFor(() => (s.simulation?.rooms?.stats().pingsSent ?? 0) > before.pingsSent + ROOMS * 10, { timeoutMs: 60_000, message: 'rooms pinged through the outage' });
    expectNoPingFailedSince(before, pingStats(s));
    await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() - downAt))));
    await plane.startApiServer();

    // Afterwards: every accepted status written, no room removed or replaced.
    let seen = '';
    await waitFor(async () => {
      const rooms = (await s.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation);
      seen = JSON.stringify(rooms.map((r) => [r.metadata.name, r.status?.status, r.status?.pingStatus, r.status?.instanceStatus, r.metadata.deletionTimestamp ? 'deleting' : '']));
      return rooms.length === ROOMS && rooms.every((r) => r.status?.status === 'occupied');
    }, { timeoutMs: 60_000, message: `all ${ROOMS} rooms occupied after the outage` }).catch(async (err: unknown) => {
      const pods = (await s.core.listNamespacedPod({ namespace: NAME })).items.map((p) => [p.metadata?.name, p.status?.phase, (p.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(',')]);
      const leader = s.operators.map((o) => o.isLeader);
      throw new Error(`${err instanceof Error ? err.message : String(err)}; rooms seen: ${seen}; pods: ${JSON.stringify(pods)}; operator leading: ${JSON.stringify(leader)}`);
    });
    // Until the rooms would have expired had their pings been lost, every room event is checked:
    // none of the original rooms is deleted, none is added. Ends early on the first violation.
    const holdUntil = downAt + 120_000 + 2 * 2000 + 5000;
    const violations: string[] = [];
    const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(s.kc, `/apis/roomkeeper.io/v1/namespaces/${NAME}/gamerooms`,
      () => s.api.listGameRooms(NAME));
    const check = (event: string) => (room: GameRoom) => {
      if (room.spec.validation) return;
      const name = room.metadata.name as string;
      if (!original.includes(name)) violations.push(`${event} of a room that was not there: ${name}`);
      else if (event === 'delete' || room.metadata.deletionTimestamp) violations.push(`${event}: room ${name} deleted`);
    };
    informer.on('add', check('add'));
    informer.on('update', check('update'));
    informer.on('delete', check('delete'));
    await informer.start();
    try {
      expect(informer.list(NAME).filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp).map((r) => r.metadata.name as string).sort()).toEqual(original);
      await waitFor(() => violations.length > 0 || Date.now() >= holdUntil, { timeoutMs: Math.max(0, holdUntil - Date.now()) + 10_000, intervalMs: 200, message: 'the hold window' });
    } finally {
      await informer.stop();
    }
    expect(violations).toEqual([]);
    const ops = (await s.api.listOperations(NAME)).items;
    const removals = ops.filter((o) => o.spec.definitionName === 'remove_rooms');
    expect(removals.map((o) => JSON.stringify(o.spec.input))).toEqual([]);
  }, 600_000);

  test('etcd stopped for 30 s: no room is removed, and the operator takes operations again afterwards', async () => {
    if (!lab) {
      expect(reportNotRun('etcd outage')).toMatch(/NOT RUN/);
      return;
    }
    const { plane, stack: s } = lab;
    const before = await liveRoomNames(s, NAME);
    expect(before).toHaveLength(ROOMS);
    const watch = guard(s, NAME, before);
    await plane.stopEtcd();
    await new Promise((r) => setTimeout(r, 30_000));
    await plane.startEtcd();
    await waitFor(async () => (await management(s, 'GET', `/schedulers/${NAME}`)).status === 200, { timeoutMs: 90_000, message: 'the management API answers again' });
    // As a client does: a 503 says when to try again.
    const added = await waitFor(async () => {
      const res = await management(s, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: 2 });
      if (res.status === 503) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      else expect(res.status).toBe(200);
      return res.status === 200 ? res : undefined;
    }, { timeoutMs: 90_000, intervalMs: 1000, message: 'add-rooms accepted after the etcd outage' });
    await waitFor(async () => (await s.api.getOperation((added.body as { operationId: string }).operationId)).status?.status === 'finished', { timeoutMs: 90_000, message: 'add-rooms after the etcd outage finished' });
    await watch.stop();
    expect((await s.api.listOperations(NAME)).items.filter((o) => o.spec.definitionName === 'remove_rooms')).toEqual([]);
  }, 300_000);
  // The outage in the middle of add_rooms (of 500, for 60 s, with a rollout and a deletion under
  // way too) is scenario 2 of apiserver-outage-operations.test.ts.
});
