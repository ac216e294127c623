/**
 * A game server that hangs stops pinging while its room still reads `ready`. Before the ping
 * timeout replaces it, the operator marks it silent (`status.silentSince`, after
 * ROOMKEEPER_ROOM_SILENCE_TIMEOUT) and the gateway allocates it no more: a matchmaker gets a room
 * that answers pings, or a 429 that says why the silent room is not offered, and the health check
 * makes a room in its place. Once the game server pings again the mark goes, and the room too many
 * is scaled down; `kubectl get -o wide` shows the mark. Runs on the sandbox, or on a real
 * cluster when E2E_KUBECONFIG is set (the real kube-apiserver tier runs it, under the chart's RBAC).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { GameRoom } from '../../common/src/generated/resources';
import { describeScheduler, managementCall, roomPing } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

const run = promisify(execFile);
const NAME = 'hung-servers';
const SILENCE_MS = 2_000;

describe('a room whose game server hangs', () => {
  let stack: Stack;
  beforeAll(async () => {
    // The ping timeout (20 s in tests) far beyond the silence timeout: the room is marked long before it would be replaced.
    // A validation room has a minute to report ready: a version change whose rooms never ping runs that long.
    stack = await startStack({ external: true, config: { healthInterval: 300, roomSilenceTimeout: SILENCE_MS, pingFlushInterval: 500, validationTimeout: 60_000 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Creates a scheduler of 2 rooms over HTTP: its live rooms, and the names of the two once both are ready, oldest first. */
  const twoReadyRooms = async (name: string): Promise<{ live: () => Promise<GameRoom[]>; rooms: [string, string] }> => {
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 2 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    const live = async (): Promise<GameRoom[]> => (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    const ready = await waitFor(async () => {
      const rooms = (await live()).filter((r) => r.status?.status === 'ready');
      return rooms.length === 2 ? rooms : undefined;
    }, { timeoutMs: 60_000, message: '2 ready rooms' });
    const byAge = (a: GameRoom, b: GameRoom) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)) || String(a.metadata.name).localeCompare(String(b.metadata.name));
    return { live, rooms: ready.sort(byAge).map((r) => r.metadata.name as string) as [string, string] };
  };

  test('is marked silent and not allocated, and a room is made in its place; once it pings again the room too many is scaled down', async () => {
    const { live, rooms: [hung, healthy] } = await twoReadyRooms(NAME);

    stack.simulation!.rooms!.silence(hung);
    const marked = await waitFor(async () => {
      const room = (await live()).find((r) => r.metadata.name === hung);
      return room?.status?.silentSince !== undefined ? room : undefined;
    }, { timeoutMs: 30_000, message: `${hung} marked silent` }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, NAME)}`, { cause: err });
    });
    // Marked with its last ping, still ready by status, and the room that pings is not marked.
    expect(Date.parse(marked.status?.silentSince ?? '')).toBeLessThanOrEqual(Date.now() - SILENCE_MS);
    expect(marked.status?.status).toBe('ready');
    expect((await live()).find((r) => r.metadata.name === healthy)?.status?.silentSince).toBeUndefined();
    // Counted ready all the same, and said to be silent: the Scheduler's status and Ready condition, and /schedulers/info.
    await waitFor(async () => {
      const s = await stack.api.getScheduler(NAME);
      return s.status?.rooms?.silent === 1 && /1 room marked silent \(no ping seen for ROOMKEEPER_ROOM_SILENCE_TIMEOUT: it is not allocated until it pings again/.test(s.status.conditions?.find((c) => c.type === 'Ready')?.message ?? '');
    }, { timeoutMs: 30_000, message: 'the Scheduler says 1 room is silent' });
    const info = (await managementCall(stack, 'GET', '/schedulers/info?game=test-game')).body as { schedulers: { name: string; roomsReady: number; roomsSilent: number }[] };
    // Counted ready: 2, or 3 once the room made in its place is ready.
    const counts = info.schedulers.find((i) => i.name === NAME);
    expect(counts?.roomsSilent).toBe(1);
    expect([2, 3]).toContain(counts?.roomsReady);
    // kubectl get -o wide shows how long ago the marked room last pinged, and nothing for the other.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-hung-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      stack.writeKubeconfig(kubeconfig);
      const { stdout } = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'rkgr', '-n', NAME, '-o', 'wide'], { timeout: 30_000 });
      const lines = stdout.split('\n');
      const header = lines[0] ?? '';
      expect(header).toMatch(/^NAME\s+STATUS\s+VERSION\s+HOST\s+PORT\s+SILENT\s+AGE$/);
      const silentColumn = (room: string) => lines.find((l) => l.startsWith(`${room} `))?.slice(header.indexOf('SILENT'), header.indexOf('AGE')).trim();
      expect(silentColumn(hung)).toMatch(/^\d+s$/);
      expect(['', '<none>']).toContain(silentColumn(healthy));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }

    // A room is made in its place: the scheduler is not a room short while the silent one stays.
    const standIn = await waitFor(async () => {
      const made = (await live()).filter((r) => r.metadata.name !== hung && r.metadata.name !== healthy);
      return made.length === 1 && made[0]?.status?.status === 'ready' ? made[0].metadata.name : undefined;
    }, { timeoutMs: 60_000, message: 'a ready room made in place of the silent one' }).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, NAME)}`, { cause: err });
    });
    const madeFor = (await stack.api.listOperations(NAME)).items.filter((op) => op.spec.definitionName === 'add_rooms'
      && /1 of them marked silent and not counted: a room is made in its place/.test(JSON.stringify(op.spec.input ?? {})));
    expect(madeFor).toHaveLength(1);
    expect((await live()).find((r) => r.metadata.name === hung)?.status?.silentSince).toBeDefined();

    // Allocations: the two rooms heard, then none, with words that say why the silent one is not offered.
    const allocate = async () => managementCall(stack, 'POST', `/scheduler/${NAME}/rooms/allocate`, { ttlSeconds: 600 });
    const given: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = await waitFor(async () => {
        const a = await allocate();
        return a.status === 200 ? a : undefined;
      }, { timeoutMs: 10_000, message: 'an allocation' });
      given.push((answer.body as { roomId: string }).roomId);
    }
    expect(given.sort()).toEqual([healthy, standIn].sort());
    const refused = await allocate();
    expect(refused.status).toBe(429);
    expect((refused.body as { message?: string }).message).toMatch(/1 room is not offered: no ping of its game server has been seen for longer than ROOMKEEPER_ROOM_SILENCE_TIMEOUT.*the health check makes a room in place of each/);

    // The game server comes back: its pings clear the mark, and the fleet has a room too many, which
    // the health check's scale-down removes: a free one (the others are allocated), here the one heard again.
    await waitFor(async () => {
      expect(await roomPing(stack, NAME, hung, 'ready')).toBe(200);
      const room = (await live()).find((r) => r.metadata.name === hung);
      return room === undefined || room.status?.silentSince === undefined;
    }, { timeoutMs: 30_000, intervalMs: 300, message: `${hung}'s mark cleared once it pings` });
    const settled = await waitFor(async () => {
      const rooms = await live();
      return rooms.length === 2 ? rooms : undefined;
    }, { timeoutMs: 60_000, message: 'the fleet back to its 2 desired rooms' });
    expect(settled.map((r) => r.metadata.name).sort()).toEqual([healthy, standIn].sort());
    expect(settled.every((r) => r.status?.silentSince === undefined)).toBe(true);
    const scaledDown = (await stack.api.listOperations(NAME)).items.filter((op) => op.spec.definitionName === 'remove_rooms' && op.spec.input?.reason === 'scale_down');
    expect(scaledDown.length).toBeGreaterThanOrEqual(1);
  }, 120_000);

  test('a removal by amount takes the silent room before the rooms heard, and its history names it', async () => {
    const name = `${NAME}-rm`;
    // The newest of the two hangs: by age alone, a removal by amount would take the other first.
    const { live, rooms: [healthy, hung] } = await twoReadyRooms(name);
    stack.simulation!.rooms!.silence(hung);
    const standIn = await waitFor(async () => {
      const rooms = await live();
      const made = rooms.filter((r) => r.metadata.name !== hung && r.metadata.name !== healthy);
      const marked = rooms.find((r) => r.metadata.name === hung)?.status?.silentSince !== undefined;
      return marked && made.length === 1 && made[0]?.status?.status === 'ready' ? made[0].metadata.name : undefined;
    }, { timeoutMs: 60_000, message: `${hung} marked silent and a ready room made in its place` });

    const removal = await managementCall(stack, 'POST', `/schedulers/${name}/remove-rooms`, { amount: 1 });
    expect(removal.status).toBe(200);
    const id = (removal.body as { operationId: string }).operationId;
    const done = await waitFor(async () => {
      const op = await stack.api.getOperation(id);
      return op.status?.status === 'finished' ? op : undefined;
    }, { timeoutMs: 30_000, message: 'the removal finished' });
    expect(JSON.stringify(done.status?.executionHistory ?? [])).toContain(`Removed 1 room (reason: api): ${hung}`);
    // One room desired now: the room made in place of the silent one is surplus, and goes too.
    const settled = await waitFor(async () => {
      const rooms = await live();
      return rooms.length === 1 ? rooms : undefined;
    }, { timeoutMs: 60_000, message: 'the fleet down to its 1 desired room' });
    expect([healthy, standIn]).toContain(settled[0]?.metadata.name);
  }, 120_000);

  test('is marked silent while an operation runs: a major change validating for minutes does not keep it allocatable', async () => {
    const name = `${NAME}-busy`;
    const { live, rooms: [hung] } = await twoReadyRooms(name);

    // A major change whose validation room never pings: its operation runs for the stack's
    // validation timeout at least, and the rest of the health check waits for it.
    const neverPing = [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }];
    expect((await managementCall(stack, 'PATCH', `/schedulers/${name}`, { spec: { containers: [{ image: 'example.com/game:2.0.0', environment: neverPing }] } })).status).toBe(200);
    const running = async () => (await stack.api.listOperations(name)).items.find((op) => op.spec.definitionName === 'create_new_scheduler_version' && op.status?.status === 'in_progress');
    const change = await waitFor(running, { timeoutMs: 30_000, message: 'the version change running' });

    stack.simulation!.rooms!.silence(hung);
    await waitFor(async () => (await live()).find((r) => r.metadata.name === hung)?.status?.silentSince !== undefined, { timeoutMs: 30_000, message: `${hung} marked silent` });
    // Marked while the change still ran.
    expect((await stack.api.getOperation(change.metadata.name as string)).status?.status).toBe('in_progress');
    expect((await managementCall(stack, 'POST', `/scheduler/${name}/rooms/allocate`, { ttlSeconds: 600 })).body).not.toMatchObject({ roomId: hung });
    expect((await managementCall(stack, 'POST', `/schedulers/${name}/operations/${change.metadata.name as string}/cancel`)).status).toBe(200);
  }, 120_000);
});
