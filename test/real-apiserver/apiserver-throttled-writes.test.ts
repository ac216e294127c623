/**
 * The API server answers 429 (Retry-After: 1) to every write for 60 s (issue 20, scenario 5), on a
 * real control plane of its own: the fault proxy (test/support/fault-proxy.ts) stands in front of
 * kube-apiserver for the operator and the gateway; the simulated kubelet and rooms (the data
 * plane) and the test's own reads and watch go to kube-apiserver directly.
 *
 * Under way when the window opens: an add_rooms of 100 part-way through, 20 rooms pinging, and 10
 * rooms whose game servers the test plays. In the window: 5 of those become occupied (status
 * changes the gateway answers `success` for but cannot write), and a client asks for add-rooms.
 * Checked:
 * - on every room event (a cluster-wide informer): no serving (ready or occupied) room is deleted
 *   (nothing expires falsely; a room whose pod was never created, its create refused, is replaced
 *   as lost) and never more live rooms than the desired count;
 * - every ping in the window is answered `success`; the gateway holds the status changes pending
 *   and writes them after the window (the rooms show them, nothing is left pending);
 * - no lost operation: every add-rooms answered 200 has its Operation, and it ends finished or in
 *   error with a reason; one answered otherwise said when to try again and left no Operation;
 * - no duplicate or leaked room, histories true: afterwards the desired count is what the
 *   add_rooms histories say they made it, and live rooms, pods and that count agree;
 * - convergence: a later operation is accepted and finishes.
 */
import { WRITE_VERBS, type FaultProxy } from '../support/fault-proxy';
import { managementCall } from '../support/http';
import { createBody, describeOp, expectConverged, expectEndedWithReason, expectNoPingFailedSince, laterOperationFinishes, live, pendingWrites, pingStats, pinger, removedNow, RoomWatch, serving, startOutageLab, type OutageLab } from '../support/outage-checks';
import { reportNotRun } from '../support/real-apiserver';
import { waitFor } from '../support/wait';

const WINDOW_MS = 60_000;
const NAME = 'throttled-writes';

let lab: OutageLab | undefined;

describe('kube-apiserver answers 429 to every write for 60 s (a real control plane of its own)', () => {
  beforeAll(async () => {
    lab = await startOutageLab({ simulation: { pingIntervalMs: 5000 }, throughProxy: true });
  }, 180_000);

  afterAll(async () => {
    await lab?.stop();
  }, 300_000);

  test('5. no operation lost, no room duplicated, leaked or expired falsely, accepted pings written after the window, and the fleet converges', async () => {
    if (!lab) {
      expect(reportNotRun('429 to every write')).toMatch(/NOT RUN/);
      return;
    }
    const { stack: s } = lab;
    const proxy = lab.proxy as FaultProxy;
    expect((await managementCall(s, 'POST', '/schedulers', createBody(NAME, '1s', { roomsReplicas: 20 }))).status).toBe(200);
    await waitFor(async () => serving((await s.api.listGameRooms(NAME)).items).length === 20, { timeoutMs: 120_000, intervalMs: 500, message: '20 serving rooms' });
    const played = new Map(live((await s.api.listGameRooms(NAME)).items).slice(0, 10).map((r) => [r.metadata.name as string, 'ready']));
    for (const room of played.keys()) s.simulation?.rooms?.silence(room);
    const players = pinger(s, NAME, played);

    let desired = 20;
    const replacedUnserved = new Set<string>();
    const watch = new RoomWatch(s, (event, room, prev, all) => {
      const out: string[] = [];
      if (removedNow(event, room, prev)) {
        // A room whose pod was never created (its create refused in the window) serves nobody:
        // the operator deletes it as lost and replaces it. A serving room must never go.
        const last = prev?.status?.status ?? room.status?.status;
        if (last === 'ready' || last === 'occupied') out.push(`${event}: serving room ${String(room.metadata.name)} deleted (status ${last})`);
        else replacedUnserved.add(room.metadata.name as string);
      }
      const count = live(all).length;
      if (count > desired) out.push(`${count} live rooms, more than the ${desired} desired`);
      return out;
    });
    await watch.start();
    try {
      const first = await managementCall(s, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: 100 });
      expect(first.status).toBe(200);
      desired += 100;
      const accepted: { id: string; amount: number }[] = [{ id: (first.body as { operationId: string }).operationId, amount: 100 }];
      await waitFor(async () => live((await s.api.listGameRooms(NAME)).items).length >= 40, { timeoutMs: 60_000, intervalMs: 50, message: 'add_rooms of 100 under way' });
      const sentBefore = pingStats(s);
      const writesBefore = proxy.injected;
      proxy.set([{ verbs: WRITE_VERBS, fault: { status: 429, retryAfterSeconds: 1 } }]);
      const openedAt = Date.now();
      const names = [...played.keys()];
      for (const room of names.slice(0, 5)) played.set(room, 'occupied');

      // A client asks for more rooms in the window: the answer is either an accepted operation or
      // a refusal that says when to try again (and then no operation exists for it).
      const before = new Set((await s.api.listOperations(NAME)).items.map((o) => o.metadata.name as string));
      const inWindow = await managementCall(s, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: 5 });
      if (inWindow.status === 200) {
        accepted.push({ id: (inWindow.body as { operationId: string }).operationId, amount: 5 });
        desired += 5;
      } else {
        expect({ status: inWindow.status, retryAfter: Number(inWindow.retryAfter) > 0 }).toEqual({ status: inWindow.status === 429 ? 429 : 503, retryAfter: true });
      }
      const pendingSeen = await waitFor(async () => {
        const n = await pendingWrites(s);
        return n >= 5 ? n : undefined;
      }, { timeoutMs: 30_000, message: 'the 5 status changes pending in the gateway' });
      await waitFor(() => Date.now() - openedAt >= WINDOW_MS, { timeoutMs: WINDOW_MS + 10_000, intervalMs: 500, message: 'the 429 window' });
      proxy.clear();
      const sentDuring = pingStats(s);
      process.stdout.write(`[429 window] ${Math.round((Date.now() - openedAt) / 1000)} s; ${proxy.injected - writesBefore} writes answered 429; ${sentDuring.pingsSent - sentBefore.pingsSent} pings sent meanwhile; ${pendingSeen} status writes pending in the gateway; add-rooms in the window answered ${inWindow.status}\n`);
      expectNoPingFailedSince(sentBefore, sentDuring);
      expect(players.failures).toEqual([]);
      expect(proxy.injected - writesBefore).toBeGreaterThan(0);

      // The statuses answered in the window are written; nothing stays pending.
      await waitFor(async () => {
        const rooms = new Map(live((await s.api.listGameRooms(NAME)).items).map((r) => [r.metadata.name as string, r.status?.status]));
        return names.every((n) => rooms.get(n) === played.get(n)) && await pendingWrites(s) === 0;
      }, { timeoutMs: 120_000, intervalMs: 500, message: 'the statuses answered in the window written' });

      // No lost operation: each accepted one ends, with a reason when it did not finish; none other appeared.
      const ops = await waitFor(async () => {
        const all = await Promise.all(accepted.map((a) => s.api.getOperation(a.id)));
        return all.every((o) => ['finished', 'error', 'canceled'].includes(o.status?.status ?? '')) ? all : undefined;
      }, { timeoutMs: 240_000, intervalMs: 1000, message: 'the accepted add_rooms ended' });
      expectEndedWithReason(ops);
      // (The operator's own operations, such as the health check's and the switch to the minor
      // version roomsReplicas makes, are not a client's.)
      const appeared = (await s.api.listOperations(NAME)).items.filter((o) => !before.has(o.metadata.name as string) && !accepted.some((a) => a.id === o.metadata.name)
        && o.spec.definitionName === 'add_rooms' && o.spec.input?.reason === undefined);
      expect(appeared.map(describeOp)).toEqual([]);
      // roomsReplicas moved only as the histories say (an add_rooms stuck when its operator lost
      // the lease, whose writes were refused, may have raised it): rooms, pods and it agree.
      desired = 20;
      for (const o of ops) {
        const lines = (o.status?.executionHistory ?? []).map((h) => h.event);
        const raised = lines.map((l) => /^roomsReplicas changed from \d+ to (\d+)$/.exec(l)?.[1]).find((v) => v !== undefined);
        const restored = lines.map((l) => /^roomsReplicas restored to (\d+)$/.exec(l)?.[1]).find((v) => v !== undefined);
        if (raised !== undefined && restored === undefined) desired = Number(raised);
      }
      expect({ roomsReplicas: (await s.api.getScheduler(NAME)).spec.roomsReplicas, ops: ops.map(describeOp) }).toEqual({ roomsReplicas: desired, ops: ops.map(describeOp) });
      await expectConverged(s, NAME);
      expect((await s.api.listOperations(NAME)).items.filter((o) => o.spec.definitionName === 'remove_rooms').map(describeOp)).toEqual([]);

      desired += 1;
      await laterOperationFinishes(s, NAME);
      await expectConverged(s, NAME);
    } finally {
      proxy.clear();
      await players.stop();
      await watch.stop();
    }
    process.stdout.write(`[429 window] afterwards: ${replacedUnserved.size} rooms that never had a pod deleted as lost and replaced\n`);
    expect(watch.violations).toEqual([]);
  }, 900_000);
});
