/**
 * The operator's cache 5 s late (the operations issue's fault scenario 8): every watch event
 * reaches the operator 5 s after it happened (the sandbox's watch delay, for the operator's
 * bearer token only), while rooms flip between ready and occupied (a player joins a room; its
 * game server says ready again a moment later) and the fleet is scaled down and rolled out to a
 * new major version. Checked on every room event: no room starts its deletion while occupied
 * (the operator decides on a stale view, so its deletions must carry the resourceVersion it
 * decided on, and one refused with 409 must leave the room), and the live rooms never exceed
 * roomsReplicas + maxSurge (a decision on a late cache must not add or remove twice). At the end the rollout completes,
 * the fleet is roomsReplicas serving rooms and no operation is left pending or running.
 * Sandbox only (the delay is a sandbox fault).
 */
import type { GameRoom } from '../../common/src/generated/resources';
import { describeScheduler, managementCall, roomPing } from '../support/http';
import { withToken } from '../support/bearer-token';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { SchedulerAnswer } from '../e2e/management-bodies';
import { liveRooms, servingRooms, watchFleet } from './fleet-watch';

const NAME = 'stale-cache';
const REPLICAS = 12;
const REMOVED = 4;
const MAX_SURGE = 3;
const DELAY_MS = 5_000;
const FLIP_WINDOW_MS = 25_000;
const OPERATOR_TOKEN = 'stale-operator';

describe("the operator's cache is 5 s late", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      operators: 0,
      // The validation room of a new version is seen 5 s late at each step (its creation, its
      // pod, its first ping): give it 30 s instead of the tests' 10 s.
      config: { healthInterval: 300, roomPingTimeout: 30_000, validationTimeout: 30_000 },
      simulation: { pingIntervalMs: 1000 },
      kubeConfigFor: (component, kc) => (component === 'operator' ? withToken(kc, OPERATOR_TOKEN) : kc),
    });
    stack.sandbox!.faults.set({ watchDelayMs: DELAY_MS, match: { verb: 'watch', token: OPERATOR_TOKEN } });
    await stack.addOperator();
  });
  afterAll(async () => {
    stack.sandbox?.faults.clear();
    await stack.stop();
  });

  test('no occupied room is deleted while rooms flip ready <-> occupied through a scale-down and a rollout', async () => {
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: REPLICAS, maxSurge: MAX_SURGE }) as { spec: object }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    await waitFor(async () => servingRooms((await stack.api.listGameRooms(NAME)).items).length === REPLICAS,
      { timeoutMs: 120_000, message: `${REPLICAS} serving rooms` });

    const deleting = new Set<string>();
    let deletions = 0;
    // A removal lowers roomsReplicas before it deletes its rooms (a crash mid-way keeps the count
    // asked for): until it ends, the rooms it deletes stand above the new count.
    let removalCeiling: number | undefined;
    const everOccupied = new Set<string>();
    const watch = await watchFleet(stack, NAME, (fleet, e) => {
      if (e.kind !== 'room') return undefined;
      const desired = Math.max(removalCeiling ?? 0, fleet.scheduler()?.spec.roomsReplicas ?? REPLICAS);
      const live = liveRooms(fleet.rooms()).length;
      if (live > desired + MAX_SURGE) return `${live} live rooms, more than roomsReplicas ${desired} + maxSurge ${MAX_SURGE} (${e.type} ${e.name})`;
      const room = e.object as GameRoom;
      if (room.status?.status === 'occupied' && !room.metadata.deletionTimestamp) everOccupied.add(e.name);
      if (deleting.has(e.name) || (e.type !== 'delete' && !room.metadata.deletionTimestamp)) return undefined;
      // The first sign of this room's deletion: the object as it was when the deletion began.
      deleting.add(e.name);
      deletions++;
      return room.status?.status === 'occupied' ? `room ${e.name} (${room.spec.version}) was deleted while occupied (resourceVersion ${String(room.metadata.resourceVersion)})` : undefined;
    });
    let flipping = true;
    let flips = 0;
    const players = (async () => {
      // A player joins a random free room every 300 ms; its game server says ready again at its
      // next ping (within about a second).
      while (flipping) {
        const free = liveRooms(watch.rooms()).filter((r) => r.status?.status === 'ready');
        const room = free[Math.floor(Math.random() * free.length)];
        if (room && (await roomPing(stack, NAME, room.metadata.name as string, 'occupied').catch(() => 0)) === 200) flips++;
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    try {
      // Scale down by 4 (removal by amount), then a new major version (a rolling replacement).
      await new Promise((r) => setTimeout(r, 3000));
      removalCeiling = REPLICAS;
      const removal = await managementCall(stack, 'POST', `/schedulers/${NAME}/remove-rooms`, { amount: REMOVED });
      expect(removal.status).toBe(200);
      const removalId = (removal.body as { operationId: string }).operationId;
      void waitFor(async () => ['finished', 'error', 'canceled'].includes((await stack.api.getOperation(removalId)).status?.status ?? ''), { timeoutMs: 120_000, message: 'the removal ended' })
        .catch(() => undefined).finally(() => { removalCeiling = undefined; });
      const current = ((await managementCall(stack, 'GET', `/schedulers/${NAME}`)).body as SchedulerAnswer).scheduler;
      const { name: _n, state: _s, createdAt: _c, ...rest } = current;
      const next = { ...rest, spec: { ...current.spec, version: undefined, containers: current.spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' })) } };
      expect((await managementCall(stack, 'POST', `/schedulers/${NAME}`, next)).status).toBe(200);
      await new Promise((r) => setTimeout(r, FLIP_WINDOW_MS));
    } finally {
      flipping = false;
      await players;
    }
    try {
      // remove-rooms by amount removes the rooms that did not change since its decision (on a late
      // cache, maybe none) and lowers roomsReplicas by as many (its history says how many it kept).
      await waitFor(async () => {
        const s = await stack.api.getScheduler(NAME);
        const want = s.spec.roomsReplicas ?? 0;
        const rooms = liveRooms((await stack.api.listGameRooms(NAME)).items);
        const ops = (await stack.api.listOperations(NAME)).items;
        // All on the new major (v2.0.0, or a minor of it made for the new roomsReplicas).
        return want <= REPLICAS && want >= REPLICAS - REMOVED && rooms.length === want && servingRooms(rooms).length === want
          && rooms.every((r) => r.spec.version.startsWith('v2.')) && ops.every((o) => !['pending', 'in_progress'].includes(o.status?.status ?? 'pending'));
      }, { timeoutMs: 150_000, message: 'roomsReplicas serving rooms, all on major 2, no operation pending or running' }).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}\nviolations: ${watch.violations.join('; ') || 'none'}\n${await describeScheduler(stack, NAME)}`);
      });
      const kept = (await stack.api.listOperations(NAME)).items.flatMap((o) => (o.status?.executionHistory ?? []).map((h) => h.event))
        .filter((e) => /before (its|their) deletion and (was|were) kept|changed since they were chosen/.test(e));
      process.stdout.write(`\n[chaos] stale cache (${DELAY_MS} ms): ${flips} occupied pings over ${everOccupied.size} rooms, ${deletions} room deletions, none of an occupied room; histories: ${kept.join(' | ') || 'no deletion refused'}\n`);
      expect(deletions).toBeGreaterThanOrEqual(REPLICAS);
      expect(watch.violations).toEqual([]);
    } finally {
      await watch.stop();
    }
  }, 420_000);
});
