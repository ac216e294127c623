/**
 * Control-plane outages in the middle of the work (issue 20, scenarios 2 and 3), on a real control
 * plane of their own (so the shared one is never disturbed), one stack for both scenarios:
 *
 * 2. kube-apiserver SIGKILLed for 60 s while three operations are under way at once: add_rooms of
 *    500 (scheduler A, rooms that report `occupied`), a major rollout with maxSurge 5 (scheduler
 *    B, 30 rooms, 3 of them occupied), and delete_scheduler (scheduler C, 100 rooms whose pods take
 *    their 60 s grace period). Afterwards every operation ended finished or in error with a
 *    reason, a later operation is accepted and finishes, the rollout completes, the deletion
 *    completes, and no room or pod is left over.
 * 3. kube-apiserver restarted gracefully (SIGTERM, then started again) while 1,000 rooms ping:
 *    status changes answered during the gap are all written afterwards, the management API
 *    answers 503 code 14 with Retry-After during the gap, no room is expired or removed, and the
 *    operator leads again and takes an operation.
 *
 * Checked on every room event while kube-apiserver is up (a cluster-wide GameRoom informer, and on
 * its re-list after the outage for what happened while it was down): no occupied room is deleted
 * (scheduler C's deletion excepted: deleting a scheduler is explicit); during the rollout, never
 * more than desired + maxSurge live rooms of B, and no deletion of a serving room of B that leaves
 * fewer than desired ready-or-occupied. A deletion is checked when the room's deletionTimestamp
 * appears; its final removal, once its pods are gone, is not a second deletion (CI once failed on
 * five such removals in the re-list after the outage, all against the same 26 serving rooms: most
 * likely the batch deleted just before it, counted again against the fleet as
 * kube-controller-manager had just marked it). Rooms also stop being ready without any deletion
 * after the outage, kube-controller-manager marking the pods of nodes whose heartbeats it missed
 * not ready: counted and printed, not the rollout's doing; a deletion within 3 s of such a drop
 * raced it, and is counted and printed too. A deletion found by the re-list after the outage
 * happened in the same unwatched seconds as those drops, in an unknown order: it fails the test
 * only if fewer than desired served even counting the rooms that stopped serving meanwhile (CI
 * failed twice on three such deletions, each "leaving 27", the re-listed fleet's count, with
 * drops meanwhile).
 * During scenario 3 no room at all is deleted or added (a room whose pod cannot be placed for a
 * host port conflict excepted: it never served). Every ping during an outage is answered
 * `success` (the simulated rooms' failure count, and the answers to the pings the test sends),
 * except those of scheduler C's rooms: its deletion may have removed a GameRoom whose pod still
 * pings.
 * Production timeouts (the chart's): a 120 s initialization timeout, a 240 s ping timeout, and the
 * expiry brake's default grace (one ping timeout).
 */
import type { Operation } from '../../common/src/generated/resources';
import { describeScheduler, managementCall } from '../support/http';
import { createBody, describeOp, ENDED, expectConverged, expectEndedWithReason, expectNoPingFailedSince, expectUnavailable, key, laterOperationFinishes, live, pendingWrites, pingStats, pinger, readyOrOccupied, removedNow, RoomWatch, serving, startOutageLab, type OutageLab } from '../support/outage-checks';
import { reportNotRun } from '../support/real-apiserver';
import { waitFor } from '../support/wait';

const OUTAGE_MS = 60_000;
/** A rollout deletion this soon after another serving room of B stopped serving raced that drop. */
const DROP_RACE_MS = 3000;

let lab: OutageLab | undefined;

describe('control-plane outages in the middle of the work (a real control plane of their own)', () => {
  beforeAll(async () => {
    lab = await startOutageLab({ config: { addRoomsConcurrency: 10 }, simulation: { pingIntervalMs: 5000, deletionCapMs: 600_000 } });
  }, 180_000);

  afterAll(async () => {
    await lab?.stop();
  }, 300_000);

  test('2. kube-apiserver SIGKILLed for 60 s in the middle of add_rooms of 500, a major rollout and delete_scheduler: each ends with a true history, nothing is wedged, leaked or wrongly removed', async () => {
    if (!lab) {
      expect(reportNotRun('outage in the middle of operations')).toMatch(/NOT RUN/);
      return;
    }
    const { plane, stack: s } = lab;
    const [A, B, C] = ['outage-adds', 'outage-rollout', 'outage-delete'];
    const occupiedEnv = [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'occupied' }];
    for (const body of [createBody(A, '1s', { roomsReplicas: 5 }, occupiedEnv), createBody(B, '1s', { roomsReplicas: 30, maxSurge: 5 }), createBody(C, '60s', { roomsReplicas: 100 })]) {
      expect((await managementCall(s, 'POST', '/schedulers', body)).status).toBe(200);
    }
    await waitFor(async () => {
      const [a, b, c] = await Promise.all([A, B, C].map(async (n) => (await s.api.listGameRooms(n)).items));
      return serving(a!).length === 5 && a!.every((r) => r.status?.status === 'occupied') && serving(b!).length === 30 && serving(c!).length === 100;
    }, { timeoutMs: 180_000, intervalMs: 500, message: 'A: 5 occupied rooms, B: 30 serving, C: 100 serving' });
    // Three rooms of B hold players: the test pings them `occupied` itself, through the outage too.
    const held = new Map(live((await s.api.listGameRooms(B)).items).slice(0, 3).map((r) => [r.metadata.name as string, 'occupied']));
    for (const room of held.keys()) s.simulation?.rooms?.silence(room);
    const players = pinger(s, B, held);
    await waitFor(async () => {
      const b = live((await s.api.listGameRooms(B)).items);
      return [...held.keys()].every((n) => b.some((r) => r.metadata.name === n && r.status?.status === 'occupied'));
    },
      { timeoutMs: 30_000, message: 'three rooms of B occupied' });

    let rolloutArmed = true;
    let lastDropAt = 0;
    let lastDrop = '';
    const racedDrops: string[] = [];
    /** Serving rooms of B deleted while the watch was down, leaving fewer than 30 serving once it listed again. */
    const unwatchedDeletions: string[] = [];
    /** Rooms of B whose deletion was checked when it began, gone for good while fewer than 30 served. */
    const finalRemovals: string[] = [];
    const watch = new RoomWatch(s, (event, room, prev, all, unwatchedSince) => {
      const out: string[] = [];
      const ns = room.metadata.namespace;
      const removed = removedNow(event, room, prev);
      if (removed && ns !== C && (room.status?.status === 'occupied' || prev?.status?.status === 'occupied')) {
        out.push(`${event}: occupied room ${key(room)} deleted`);
      }
      if (rolloutArmed && ns === B) {
        const b = all.filter((r) => r.metadata.namespace === B);
        if (live(b).length > 35) {
          const by = new Map<string, number>();
          for (const r of live(b)) by.set(`${r.spec.version} ${String(r.status?.status)}`, (by.get(`${r.spec.version} ${String(r.status?.status)}`) ?? 0) + 1);
          out.push(`${live(b).length} live rooms of B (more than desired 30 + maxSurge 5) on ${event} of ${key(room)}: ${JSON.stringify(Object.fromEntries(by))}`);
        }
        // The rollout's own part: it never deletes a serving room while that leaves fewer than 30
        // serving. (Serving rooms can also drop without a deletion after the outage, likely pods
        // marked not ready for the nodes' missed heartbeats; counted apart.)
        // A deletion within a few seconds of another room's drop raced that drop (the removal counts
        // its floor a moment before it deletes, on the server's rooms and its cache): counted apart.
        const last = prev?.status?.status ?? room.status?.status;
        const left = serving(b).length;
        if (readyOrOccupied(last) && left < 30) {
          if (removed && unwatchedSince) {
            // Deleted while the watch was down (between the outage's end and the re-list), as were
            // the drops meanwhile, in an order nobody saw: a drop after this deletion does not count
            // against it. Whatever the order, no more rooms served when the last of these
            // deletions left than serve now plus those that stopped serving meanwhile.
            const droppedMeanwhile = serving([...unwatchedSince.values()].filter((r) => r.metadata.namespace === B))
              .filter((r) => all.some((now) => key(now) === key(r) && !now.metadata.deletionTimestamp && !readyOrOccupied(now.status?.status))).length;
            const what = `serving room ${key(room)} deleted while unwatched, leaving ${left} ready-or-occupied rooms of B now; ${droppedMeanwhile} more stopped serving meanwhile`;
            if (left + droppedMeanwhile < 30) out.push(`${what}: fewer than desired 30 served, whatever the order`);
            else unwatchedDeletions.push(what);
          } else if (removed) {
            const what = `${event}: serving room ${key(room)} deleted, leaving ${left} ready-or-occupied rooms of B (fewer than desired 30)`;
            if (Date.now() - lastDropAt < DROP_RACE_MS) racedDrops.push(`${what}, ${Date.now() - lastDropAt} ms after ${lastDrop} stopped serving`);
            else out.push(what);
          } else if (event === 'delete') {
            finalRemovals.push(`${key(room)} (${left} serving)`);
          }
        }
        if (!removed && readyOrOccupied(prev?.status?.status) && !readyOrOccupied(room.status?.status)) {
          lastDropAt = Date.now();
          lastDrop = key(room);
        }
        if (!removed && serving(b).length < lowestServing) {
          lowestServing = serving(b).length;
          lowestSample = `${String(room.metadata.name)}: ${String(prev?.status?.status)} -> ${String(room.status?.status)} (instance ${String(room.status?.instanceStatus)}, ping ${String(room.status?.pingStatus)}, reason ${room.status?.reason ?? '-'})`;
        }
      }
      return out;
    });
    let lowestServing = 30;
    let lowestSample = '';
    await watch.start();

    // The three operations, and the outage once all three are under way: the rollout first (it
    // begins after its version's validation room), then the deletion (whose pods take their 60 s
    // grace) and the add_rooms (10 rooms at a time).
    const current = ((await managementCall(s, 'GET', `/schedulers/${B}`)).body as { scheduler: { spec: { containers: object[] } & Record<string, unknown> } & Record<string, unknown> }).scheduler;
    const { name: _n, state: _s, createdAt: _c, ...rest } = current;
    const major = await managementCall(s, 'POST', `/schedulers/${B}`, { ...rest, spec: { ...current.spec, version: undefined, containers: current.spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' })) } });
    expect(major.status).toBe(200);
    const rollout = async () => {
      const b = live((await s.api.listGameRooms(B)).items);
      return { started: b.some((r) => r.spec.version === 'v2.0.0'), old: b.filter((r) => r.spec.version === 'v1.0.0').length };
    };
    await waitFor(async () => (await rollout()).started, { timeoutMs: 120_000, intervalMs: 50, message: 'the rollout begun' });
    const deletion = await managementCall(s, 'DELETE', `/schedulers/${C}`);
    expect(deletion.status).toBe(200);
    const adds = await managementCall(s, 'POST', `/schedulers/${A}/add-rooms`, { amount: 500 });
    expect(adds.status).toBe(200);
    let progress = '';
    const underWay = await waitFor(async () => {
      const created = (await s.api.getOperation((adds.body as { operationId: string }).operationId)).status?.executionHistory?.map((h) => h.event).filter((e) => e.startsWith('Created ')).at(-1) ?? 'none created';
      const b = await rollout();
      const del = (await s.api.getOperation((deletion.body as { operationId: string }).operationId)).status?.executionHistory ?? [];
      const podsLeft = (await s.core.listNamespacedPod({ namespace: C })).items.length;
      progress = `A: ${created}; B: ${b.old} old rooms; C: ${podsLeft} pods, history: ${del.map((h) => h.event).join(' | ')}`;
      const adding = /^Created (\d+)\/500 rooms$/.test(created) && created !== 'Created 500/500 rooms';
      const deleting = del.some((h) => h.event.startsWith('Waiting for room pods to be deleted')) && podsLeft > 0;
      return adding && b.old >= 10 && deleting ? progress : undefined;
    }, { timeoutMs: 120_000, intervalMs: 50, message: 'add_rooms, the rollout and delete_scheduler all under way' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}; last seen: ${progress}\n${await describeScheduler(s, B)}`);
    });
    await watch.stop();
    const pingsBefore = pingStats(s);
    await plane.stopApiServer('SIGKILL');
    const downAt = Date.now();
    process.stdout.write(`[outage 2] kube-apiserver SIGKILLed with ${String(underWay.split(', history')[0])}\n`);

    await expectUnavailable(s, A);
    await waitFor(() => Date.now() - downAt >= OUTAGE_MS, { timeoutMs: OUTAGE_MS + 10_000, intervalMs: 500, message: 'the outage window' });
    const pingsDuring = pingStats(s);
    await plane.startApiServer();
    process.stdout.write(`[outage 2] kube-apiserver down ${Math.round((Date.now() - downAt) / 1000)} s (SIGKILL to ready); ${pingsDuring.pingsSent - pingsBefore.pingsSent} pings sent meanwhile\n`);
    expect(pingsDuring.pingsSent - pingsBefore.pingsSent).toBeGreaterThan(0);
    // The scheduler's deletion is explicit: its namespace's deletion removes GameRooms and pods
    // apart, so a pod not yet marked for deletion when kube-apiserver died pings a room that is
    // gone (`success: false`, as for any unknown room) until the deletion goes on.
    const deletedRoomPings = expectNoPingFailedSince(pingsBefore, pingsDuring, [C]);
    process.stdout.write(`[outage 2] ${deletedRoomPings} pings of ${C}'s rooms failed meanwhile (allowed: the rooms went with their scheduler)\n`);
    expect(players.failures).toEqual([]);
    await watch.start();

    try {
      // The deletion completes (another attempt of it, if the first got stuck).
      await waitFor(async () => !(await s.api.listSchedulers()).items.some((x) => x.metadata.name === C), { timeoutMs: 240_000, intervalMs: 1000, message: `scheduler ${C} deleted` });
      await waitFor(async () => (await s.core.listNamespace()).items.every((n) => n.metadata?.name !== C), { timeoutMs: 120_000, intervalMs: 1000, message: `namespace ${C} removed` });
      expect((await s.api.listGameRooms(C)).items).toEqual([]);
      // The deletion writes its last lines once the Scheduler is gone (it sees its finalizer released):
      // wait for them, on a deadline, rather than read its history a moment before they land.
      const deletions = await waitFor(async () => {
        const ops = (await s.api.listOperations(C)).items;
        return ops.every((o) => ENDED.includes(o.status?.status ?? '')) ? ops : undefined;
      }, { timeoutMs: 60_000, intervalMs: 500, message: `every operation of ${C} ended` });
      expectEndedWithReason(deletions);
      expect(deletions.some((o) => o.status?.status === 'finished' && o.status.executionHistory?.some((h) => h.event === `Scheduler ${C} deleted`))).toBe(true);

      // add_rooms ended; A converges (500 more rooms, each occupied: every accepted status written).
      const added = await waitFor(async () => {
        const op = await s.api.getOperation((adds.body as { operationId: string }).operationId);
        return ENDED.includes(op.status?.status ?? '') ? op : undefined;
      }, { timeoutMs: 240_000, intervalMs: 1000, message: 'add_rooms ended' });
      process.stdout.write(`[outage 2] add_rooms ended ${String(added.status?.status)}; its last lines: ${JSON.stringify((added.status?.executionHistory ?? []).slice(-3).map((h) => h.event))}\n`);
      await expectConverged(s, A);
      // Rooms made after the outage start and ping on a loaded machine too: a generous deadline,
      // and the statuses seen when it passes.
      await waitFor(async () => live((await s.api.listGameRooms(A)).items).every((r) => r.status?.status === 'occupied'), { timeoutMs: 240_000, intervalMs: 1000, message: `every room of ${A} occupied` })
        .catch(async (err: unknown) => {
          const byStatus = new Map<string, number>();
          const rooms = live((await s.api.listGameRooms(A)).items);
          for (const r of rooms) byStatus.set(r.status?.status ?? 'none', (byStatus.get(r.status?.status ?? 'none') ?? 0) + 1);
          // Which side is behind: the ping (the gateway), or the pod (the kubelet, or the operator's cache).
          const pods = new Map((await s.core.listNamespacedPod({ namespace: A })).items.map((p) => [p.metadata?.name, p]));
          const others = rooms.filter((r) => r.status?.status !== 'occupied').slice(0, 10).map((r) => {
            const pod = pods.get(r.metadata.name);
            const ready = pod?.status?.conditions?.find((c) => c.type === 'Ready');
            return `${r.metadata.name as string}: ping ${r.status?.pingStatus ?? 'none'}, instance ${r.status?.instanceStatus ?? 'none'}; pod ${pod ? `${pod.status?.phase ?? 'no phase'}, Ready ${ready?.status ?? 'none'}${ready?.reason ? ` (${ready.reason})` : ''}` : 'missing'}`;
          });
          throw new Error(`${(err as Error).message}; rooms of ${A} by status: ${JSON.stringify(Object.fromEntries(byStatus))}\n${others.join('\n')}`);
        });

      // The rollout completes within its bounds; the occupied old rooms stay until their players leave.
      await waitFor(async () => {
        const b = live((await s.api.listGameRooms(B)).items);
        const old = b.filter((r) => r.spec.version === 'v1.0.0').map((r) => r.metadata.name as string).sort();
        return JSON.stringify(old) === JSON.stringify([...held.keys()].sort()) && serving(b).filter((r) => r.spec.version === 'v2.0.0').length === 30;
      }, { timeoutMs: 240_000, intervalMs: 1000, message: 'every free room of B on v2.0.0, the occupied ones kept' }).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}\n${await describeScheduler(s, B)}`);
      });
      for (const room of held.keys()) held.set(room, 'ready');
      await waitFor(async () => {
        const b = live((await s.api.listGameRooms(B)).items);
        return b.length === 30 && b.every((r) => r.spec.version === 'v2.0.0');
      }, { timeoutMs: 120_000, intervalMs: 1000, message: 'B: 30 rooms, all on v2.0.0, once the players left' });
      await players.stop();
      rolloutArmed = false;
      process.stdout.write(`[outage 2] fewest ready-or-occupied rooms of B seen during the rollout: ${lowestServing} (status changes, no deletion)${lowestSample ? `; the last drop: ${lowestSample}` : ''}\n`);
      process.stdout.write(`[outage 2] rooms of B whose deletion was checked when it began, gone for good while fewer than 30 served (not a deletion; allowed): ${finalRemovals.length}${finalRemovals.length > 0 ? ` (${finalRemovals.join(', ')})` : ''}\n`);
      process.stdout.write(`[outage 2] serving rooms of B deleted while unwatched, leaving fewer than 30 serving at the re-list, which the rooms that stopped serving meanwhile make up for (order unknown; allowed): ${unwatchedDeletions.length}${unwatchedDeletions.length > 0 ? ` (${unwatchedDeletions.join('; ')})` : ''}\n`);
      process.stdout.write(`[outage 2] deletions that left fewer than 30 serving within ${DROP_RACE_MS} ms of another room's drop (raced it; allowed): ${racedDrops.length}${racedDrops.length > 0 ? ` (${racedDrops.join('; ')})` : ''}\n`);
      await expectConverged(s, B);
      expectEndedWithReason([...(await s.api.listOperations(A)).items, ...(await s.api.listOperations(B)).items]);

      // Nothing wedged: a later operation is taken and finishes.
      await laterOperationFinishes(s, A);
      await expectConverged(s, A);
    } finally {
      await players.stop();
      await watch.stop();
    }
    expect(watch.violations).toEqual([]);
  }, 1_200_000);

  test('3. kube-apiserver restarted gracefully while 1,000 rooms ping: every status answered in the gap is written, 503 code 14 meanwhile, no room expired or removed, and the operator takes an operation afterwards', async () => {
    if (!lab) {
      expect(reportNotRun('graceful restart of kube-apiserver')).toMatch(/NOT RUN/);
      return;
    }
    const { plane, stack: s } = lab;
    const D = 'outage-restart';
    const scenarioStart = Date.now();
    const fleet = async () => live((await s.api.listGameRooms()).items).length;
    const others = await fleet();
    expect((await managementCall(s, 'POST', '/schedulers', createBody(D, '1s', { roomsReplicas: 1000 - others }))).status).toBe(200);
    await waitFor(async () => serving((await s.api.listGameRooms(D)).items).length === 1000 - others,
      { timeoutMs: 240_000, intervalMs: 1000, message: `${1000 - others} serving rooms of ${D}` }).catch(async (err: unknown) => {
      // Failed once in a clean-clone CI run (2026-11-26) and passed alone: say where the rooms were.
      const rooms = (await s.api.listGameRooms(D)).items;
      const byStatus = new Map<string, number>();
      for (const r of rooms) {
        const k = `${r.status?.status ?? 'none'}${r.metadata.deletionTimestamp ? ' (deleting)' : ''}`;
        byStatus.set(k, (byStatus.get(k) ?? 0) + 1);
      }
      const pods = (await s.core.listNamespacedPod({ namespace: D })).items;
      const phases = new Map<string, number>();
      for (const p of pods) {
        const k = `${p.status?.phase ?? 'none'}${p.spec?.nodeName ? '' : ' unbound'}${p.status?.conditions?.find((c) => c.status === 'False')?.reason ? ` ${p.status.conditions.find((c) => c.status === 'False')?.reason ?? ''}` : ''}`;
        phases.set(k, (phases.get(k) ?? 0) + 1);
      }
      const ops = (await s.api.listOperations(D)).items.map(describeOp).join('; ');
      throw new Error(`${(err as Error).message}; rooms by status: ${JSON.stringify(Object.fromEntries(byStatus))}; pods: ${JSON.stringify(Object.fromEntries(phases))}; operations: ${ops}`);
    });
    expect(await fleet()).toBe(1000);
    // Every room's game server runs (the ones a test plays itself, silenced, included).
    await waitFor(() => (s.simulation?.rooms?.rooms() ?? []).filter((r) => r.state !== 'terminated').length >= 1000, { timeoutMs: 60_000, message: '1,000 simulated rooms pinging' });

    // 40 rooms whose game servers the test plays: their status changes in the gap.
    const played = new Map(live((await s.api.listGameRooms(D)).items).slice(0, 40).map((r) => [r.metadata.name as string, 'ready']));
    for (const room of played.keys()) s.simulation?.rooms?.silence(room);
    const players = pinger(s, D, played);
    let addsAllowed = false;
    const watch = new RoomWatch(s, (event, room, prev) => {
      if (event === 'add' && !prev && (addsAllowed || !watchStarted)) return [];
      if (removedNow(event, room, prev)) return [`${event}: room ${key(room)} deleted (status ${String(prev?.status?.status ?? room.status?.status)})`];
      return event === 'add' && !prev ? [`room ${key(room)} added`] : [];
    });
    let watchStarted = false;
    await watch.start();
    watchStarted = true;

    const sentBefore = pingStats(s);
    await watch.stop();
    const stopping = Date.now();
    await plane.stopApiServer('SIGTERM');
    const downAt = Date.now();
    // In the gap: 40 rooms become occupied, then 20 of them free again (the latest report wins).
    const names = [...played.keys()];
    for (const room of names) played.set(room, 'occupied');
    const roundAfter = async (from: number) => waitFor(() => players.rounds > from, { timeoutMs: 30_000, message: 'a round of the played rooms\' pings' });
    await roundAfter(players.rounds);
    await roundAfter(players.rounds);
    for (const room of names.slice(20)) played.set(room, 'ready');
    await roundAfter(players.rounds);
    await roundAfter(players.rounds);
    await expectUnavailable(s, D);
    const pending = await pendingWrites(s);
    expect(pending).toBeGreaterThanOrEqual(20);
    const sentDuring = pingStats(s);
    await plane.startApiServer();
    process.stdout.write(`[outage 3] kube-apiserver: SIGTERM to exit ${Math.round((downAt - stopping) / 1000)} s, then down ${Math.round((Date.now() - downAt) / 1000)} s until ready again; ${sentDuring.pingsSent - sentBefore.pingsSent} pings sent meanwhile, ${pending} status writes pending in the gateway\n`);
    expectNoPingFailedSince(sentBefore, sentDuring);
    expect(players.failures).toEqual([]);
    await watch.start();

    try {
      // Every status answered in the gap reached the API server; nothing is left pending.
      let seen = '';
      let wrong: string[] = [];
      await waitFor(async () => {
        const rooms = new Map(live((await s.api.listGameRooms(D)).items).map((r) => [r.metadata.name as string, r]));
        wrong = names.filter((n) => rooms.get(n)?.status?.status !== played.get(n));
        // What each room not as reported says of itself: its pod's side (instance) and its pings'.
        seen = wrong.map((n) => {
          const st = rooms.get(n)?.status;
          return `${n}=${String(st?.status)} (instance ${String(st?.instanceStatus)}${st?.reason ? `: ${st.reason}` : ''}, ping ${String(st?.pingStatus)})`;
        }).join(', ');
        return wrong.length === 0 && await pendingWrites(s) === 0;
      }, { timeoutMs: 120_000, intervalMs: 500, message: 'the statuses answered in the gap written' }).catch(async (err: unknown) => {
        // Failed twice in CI (4 rooms left pending; then writes still pending with every room right): say what waits, and on what.
        const pods = new Map((await s.core.listNamespacedPod({ namespace: D })).items.map((p) => [p.metadata?.name ?? '', p]));
        const podsOfWrong = wrong.map((n) => `${n}: ${JSON.stringify(pods.get(n)?.status?.conditions?.map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}`))}`);
        const leader = s.operators.some((o) => o.isLeader);
        throw new Error(`${(err as Error).message}; rooms not (yet) as reported: ${seen}; their pods' conditions: ${podsOfWrong.join('; ')}; an operator leads: ${String(leader)}; `
          + `the gateway's pending status writes: ${JSON.stringify(s.gateway?.pendingPingWrites().slice(0, 20))}`);
      });
      await waitFor(() => s.operators.some((o) => o.isLeader), { timeoutMs: 120_000, message: 'the operator leads again' });
      addsAllowed = true;
      await laterOperationFinishes(s, D);
      await expectConverged(s, D);
      const removals = (await Promise.all(['outage-adds', 'outage-rollout', D].map(async (n) => (await s.api.listOperations(n)).items)))
        .flat().filter((o) => o.spec.definitionName === 'remove_rooms' && Date.parse(o.spec.enqueuedAt) >= scenarioStart);
      // A room whose pod cannot be placed (two rooms on one node given the same host port) never
      // served; replacing it is not the restart's doing.
      const unplaceable = (o: Operation): boolean => {
        const details = (o.spec.input as { details?: string[] } | undefined)?.details ?? [];
        return details.length > 0 && details.every((d) => d.endsWith('its pod cannot be placed: its host ports are taken on every node that can take it (replaced by a room that draws others)'));
      };
      process.stdout.write(`[outage 3] rooms replaced meanwhile because their pods could not be placed (host port conflict; allowed): ${removals.filter(unplaceable).length}\n`);
      expect(removals.filter((o) => !unplaceable(o)).map(describeOp)).toEqual([]);
    } finally {
      await players.stop();
      await watch.stop();
    }
    expect(watch.violations).toEqual([]);
  }, 900_000);
});
