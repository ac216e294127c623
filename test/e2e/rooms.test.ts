/**
 * Game rooms end to end: HTTP -> gateway -> API server -> operator -> simulated kubelet, with
 * simulated rooms pinging the gateway. Runs on the sandbox, or on a real cluster when
 * E2E_KUBECONFIG is set.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import { roomToken } from '../../common/src/rooms/room-token';
import { managementCall } from '../support/http';
import type { OperationEnqueued, SchedulerAnswer, SchedulersInfoAnswer } from './management-bodies';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const http = managementCall;

function createBody(name: string, overrides: Record<string, unknown> = {}, env: { name: string; value: string }[] = []): Record<string, unknown> {
  const obj = schedulerObject(name, overrides, env) as { spec: Record<string, unknown> };
  return { name, ...obj.spec };
}

async function liveRooms(stack: Stack, scheduler: string): Promise<GameRoom[]> {
  return (await stack.api.listGameRooms(scheduler)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
}

async function counts(stack: Stack, scheduler: string): Promise<{ ready: number; occupied: number; total: number }> {
  const rooms = await liveRooms(stack, scheduler);
  return {
    ready: rooms.filter((r) => r.status?.status === 'ready').length,
    occupied: rooms.filter((r) => r.status?.status === 'occupied').length,
    total: rooms.length,
  };
}

/** Allocates a room for each allocation id, as a matchmaker does, and waits until the rooms show it. */
async function allocate(stack: Stack, scheduler: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    const res = await fetch(`${stack.managementUrl as string}/scheduler/${scheduler}/rooms/allocate`, {
      method: 'POST', headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: JSON.stringify({ allocationId: id, ttlSeconds: 600 }),
    });
    expect(res.status).toBe(200);
  }
  await waitFor(async () => (await liveRooms(stack, scheduler)).filter((r) => r.status?.status === 'allocated').length === ids.length, { timeoutMs: 10_000, message: `${ids.length} allocated rooms` });
}

async function ping(stack: Stack, scheduler: string, room: string, status: string): Promise<unknown> {
  const res = await fetch(`${stack.roomsUrl}/scheduler/${scheduler}/rooms/${room}/ping`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(stack.config.roomTokenSecret, scheduler, room)}` },
    body: JSON.stringify({ status, timestamp: Math.floor(Date.now() / 1000) }),
  });
  return res.json();
}

describe('rooms', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { roomInitTimeout: 3000, healthInterval: 300 }, simulation: { pingIntervalMs: 300 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('a scheduler with roomsReplicas 3 gets 3 ready rooms whose pods carry the env vars, ports from the range and the annotations', async () => {
    const res = await http(stack, 'POST', '/schedulers', createBody('rooms-basic', { roomsReplicas: 3, annotations: { team: 'arena' } }));
    expect(res.status).toBe(200);
    await waitFor(async () => (await counts(stack, 'rooms-basic')).ready === 3, { timeoutMs: 30_000, message: '3 ready rooms' });
    const pods = (await stack.core.listNamespacedPod({ namespace: 'rooms-basic' })).items;
    expect(pods).toHaveLength(3);
    for (const pod of pods) {
      const env = Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      expect(env.ROOMKEEPER_SCHEDULER_NAME).toBe('rooms-basic');
      expect(env.ROOMKEEPER_ROOM_ID).toBe(pod.metadata?.name);
      expect(env.MAESTRO_SCHEDULER_NAME).toBe('rooms-basic');
      expect(env.MAESTRO_ROOM_ID).toBe(pod.metadata?.name);
      expect(env.ROOMKEEPER_ROOM_TOKEN).toBe(roomToken(stack.config.roomTokenSecret, 'rooms-basic', pod.metadata?.name as string));
      const hostPort = pod.spec?.containers[0]?.ports?.[0]?.hostPort ?? 0;
      expect(hostPort).toBeGreaterThanOrEqual(20000);
      expect(hostPort).toBeLessThanOrEqual(30000);
      expect(pod.metadata?.annotations?.team).toBe('arena');
      expect(pod.spec?.restartPolicy).toBe('Never');
    }
    const info = await http(stack, 'GET', '/schedulers/info?game=test-game');
    expect((info.body as SchedulersInfoAnswer).schedulers.find((s) => s.name === 'rooms-basic')).toMatchObject({ roomsReady: 3, roomsOccupied: 0 });
  });

  test('killing a room\'s pod: a replacement appears, and the history says why', async () => {
    await waitFor(async () => (await counts(stack, 'rooms-basic')).ready === 3, { timeoutMs: 30_000 });
    const victim = (await liveRooms(stack, 'rooms-basic'))[0]!.metadata.name as string;
    await stack.core.deleteNamespacedPod({ name: victim, namespace: 'rooms-basic', gracePeriodSeconds: 0 });
    await waitFor(async () => {
      const rooms = await liveRooms(stack, 'rooms-basic');
      return rooms.length === 3 && !rooms.some((r) => r.metadata.name === victim) && rooms.every((r) => r.status?.status === 'ready');
    }, { timeoutMs: 30_000, message: 'replacement ready' });
    const adds = (await stack.api.listOperations('rooms-basic')).items.filter((o) => o.spec.definitionName === 'add_rooms');
    const reasons = adds.map((o) => (o.spec.input?.reason as string | undefined) ?? '').join('\n'); // join prints any value as String() would
    expect(reasons).toContain(victim);
    expect(reasons).toMatch(/pod was deleted/);
  });

  test('a room that never pings is removed after the initialisation timeout, once a newer room of its version failed to ping too (failing-rooms.ts: the newest silent room is kept)', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-silent', { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]));
    const first = await waitFor(async () => (await liveRooms(stack, 'rooms-silent'))[0]?.metadata.name, { timeoutMs: 20_000 });
    await waitFor(async () => {
      const rooms = await liveRooms(stack, 'rooms-silent');
      return rooms.length >= 1 && rooms.every((r) => r.metadata.name !== first);
    }, { timeoutMs: 60_000, message: 'the silent room was removed, and another made' });
    const removals = (await stack.api.listOperations('rooms-silent')).items.filter((o) => o.spec.definitionName === 'remove_rooms');
    const expired = removals.find((o) => (o.spec.input?.roomsIds)?.includes(first));
    expect(expired?.spec.input?.reason).toBe('expired_room');
    expect(expired?.spec.priority).toBe(true);
    // Its history says why the room went, not only that it did.
    const history = await waitFor(async () => {
      const op = await stack.api.getOperation(expired?.metadata.name as string);
      return op.status?.status === 'finished' ? (op.status.executionHistory ?? []).map((h) => h.event) : undefined;
    }, { timeoutMs: 20_000, message: 'the expiry removal finished' });
    // ... and what its game server's developer should do about it.
    const fix = '(unready .*; no ping of its game server was recorded: make it ping the rooms API \\(ROOMKEEPER_ROOMS_API_URL\\) within that time of its start; pings the gateway refused \\(a 401 for the room token, say\\) are not recorded: see the gateway\'s warnings|pending .*; its pod never became ready and no ping of its game server was recorded: see the pod\'s conditions and its game server\'s log)';
    expect(history).toContainEqual(expect.stringMatching(new RegExp(`^Why: ${first}: (pending|unready) \\S+ after (its pod started|creation) \\(initialization timeout \\S+\\); `)));
    expect(history).toContainEqual(expect.stringMatching(new RegExp(`^Why: ${first}: ${fix}$`)));
  });

  test('a room whose game server pings but whose pod never becomes ready is removed after the initialisation timeout and replaced, its history saying to look at the pod\'s readiness', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-never-ready', { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_POD', value: 'never-ready' }]));
    const first = await waitFor(async () => {
      const [room] = await liveRooms(stack, 'rooms-never-ready');
      return room?.status?.pingStatus === 'ready' && room.status.status === 'pending' ? room.metadata.name : undefined;
    }, { timeoutMs: 20_000, message: 'a pending room whose game server pings ready' });
    await waitFor(async () => {
      const rooms = await liveRooms(stack, 'rooms-never-ready');
      return rooms.length === 1 && rooms[0]!.metadata.name !== first;
    }, { timeoutMs: 30_000, message: 'the never-ready room was replaced' });
    const expired = (await stack.api.listOperations('rooms-never-ready')).items
      .find((o) => o.spec.definitionName === 'remove_rooms' && (o.spec.input?.roomsIds)?.includes(first));
    expect(expired?.spec.input?.reason).toBe('expired_room');
    const history = await waitFor(async () => {
      const op = await stack.api.getOperation(expired?.metadata.name as string);
      return op.status?.status === 'finished' ? (op.status.executionHistory ?? []).map((h) => h.event) : undefined;
    }, { timeoutMs: 20_000, message: 'the expiry removal finished' });
    expect(history).toContainEqual(expect.stringMatching(new RegExp(`^Why: ${first}: pending \\S+ with its pod not ready \\(initialization timeout 3s\\), though its game server pings: see the pod's conditions and its readiness probe \\(kubectl describe pod\\)$`)));
  });

  test('a room that reports terminated is removed once, within its grace period, and replaced', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-ended', { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]));
    const room = await waitFor(async () => (await liveRooms(stack, 'rooms-ended'))[0]?.metadata.name, { timeoutMs: 20_000 });
    // The gateway's cache may learn of the room a moment after the API server has it (the answer says so meanwhile).
    await waitFor(async () => (await ping(stack, 'rooms-ended', room, 'ready') as { success: boolean }).success, { timeoutMs: 10_000, message: 'the gateway records the room\'s ready ping' });
    // As a game server does: terminated is sent until answered success (it is, once written).
    await waitFor(async () => (await ping(stack, 'rooms-ended', room, 'terminated') as { success: boolean }).success, { timeoutMs: 10_000, message: 'terminated answered success' });
    await waitFor(async () => {
      const rooms = await liveRooms(stack, 'rooms-ended');
      return rooms.length === 1 && rooms[0]!.metadata.name !== room && !(await stack.api.listGameRooms('rooms-ended')).items.some((r) => r.metadata.name === room);
    }, { timeoutMs: 30_000, message: 'the terminated room gone and replaced' });
    const removals = await waitFor(async () => {
      const ops = (await stack.api.listOperations('rooms-ended')).items.filter((o) => o.spec.definitionName === 'remove_rooms' && (o.spec.input?.roomsIds)?.includes(room));
      return ops.every((o) => o.status?.status === 'finished') ? ops : undefined;
    }, { timeoutMs: 20_000, message: 'the removals finished' });
    // One removal: while its deletion runs, the room is not removed again (a second removal took
    // it for a room stuck terminating and force-deleted its pod).
    expect(removals).toHaveLength(1);
    expect(removals[0]?.status?.executionHistory?.map((h) => h.event)).toContain(`Why: ${room}: room reported terminated`);
    expect(removals[0]?.status?.executionHistory?.some((h) => h.event.startsWith('Force-deleted'))).toBe(false);
  });

  test('a room that pinged terminating and then ready is told why the ping was not recorded and what to send, and stays terminating', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-ending', { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]));
    const room = await waitFor(async () => (await liveRooms(stack, 'rooms-ending'))[0]?.metadata.name, { timeoutMs: 20_000 });
    // The gateway's cache may learn of the room a moment after the API server has it (the answer says so meanwhile).
    await waitFor(async () => (await ping(stack, 'rooms-ending', room, 'ready') as { success: boolean }).success, { timeoutMs: 10_000, message: 'the gateway records the room\'s ready ping' });
    expect(await ping(stack, 'rooms-ending', room, 'terminating')).toEqual({ success: true });
    expect(await ping(stack, 'rooms-ending', room, 'ready')).toEqual({
      success: false,
      message: `room ${room} reported terminating, so this ready ping was not recorded: a terminating room accepts no new players and only terminated follows; finish or hand over its matches, ping terminated and exit (keep pinging terminating meanwhile)`,
    });
    await waitFor(async () => (await stack.api.listGameRooms('rooms-ending')).items.find((r) => r.metadata.name === room)?.status?.pingStatus === 'terminating', { timeoutMs: 10_000, message: 'the room terminating on the API server' });
    expect((await stack.api.listGameRooms('rooms-ending')).items.find((r) => r.metadata.name === room)?.status?.status).toBe('terminating');
  });

  test('a room whose GameRoom was deleted without waiting for its pod (kubectl delete\'s default) is told at its next ping that it is gone and to exit, not to ping again', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-gone', { roomsReplicas: 1 }));
    const room = await waitFor(async () => (await liveRooms(stack, 'rooms-gone')).find((r) => r.status?.status === 'ready')?.metadata.name, { timeoutMs: 30_000, message: 'a ready room' });
    await stack.api.deleteGameRoom('rooms-gone', room, undefined, 'Background');
    const answer = await waitFor(async () => {
      const a = await ping(stack, 'rooms-gone', room, 'terminating') as { success: boolean; message?: string };
      return a.message?.includes('is gone') ? a : undefined;
    }, { timeoutMs: 10_000, message: 'the gateway tells the room it is gone' });
    expect(answer).toEqual({
      success: false, roomGone: true,
      message: expect.stringMatching(new RegExp(`^room ${room} not found in scheduler rooms-gone, so the ping was not recorded: its GameRoom is gone \\(deleted by its scheduler or by a user; this gateway saw it go at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\), and its pod is deleted with it; no ping brings the room back: finish or hand over its matches and exit$`)) as unknown,
    });
  });

  test('remove-rooms with an amount never deletes an occupied room', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-protect', { roomsReplicas: 3 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'occupied-after:0.5' }]));
    await waitFor(async () => (await counts(stack, 'rooms-protect')).occupied === 3, { timeoutMs: 30_000, message: '3 occupied rooms' });
    const before = (await liveRooms(stack, 'rooms-protect')).map((r) => r.metadata.name).sort();
    const res = await http(stack, 'POST', '/schedulers/rooms-protect/remove-rooms', { amount: 2 });
    expect(res.status).toBe(200);
    const op = await waitFor(async () => {
      const o = await stack.api.getOperation((res.body as OperationEnqueued).operationId);
      return o.status?.status === 'finished' ? o : undefined;
    }, { timeoutMs: 20_000 });
    expect(op.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/Removed 0 rooms[\s\S]*Asked to remove 2 rooms; 0 could be removed: the scheduler had 3 rooms, 3 of them held by players or a matchmaker, which a removal by amount never takes/);
    expect((await liveRooms(stack, 'rooms-protect')).map((r) => r.metadata.name).sort()).toEqual(before);
  });

  test('a scale-down that keeps allocated rooms above the desired count says so in its history', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-held', { roomsReplicas: 3 }));
    await waitFor(async () => (await counts(stack, 'rooms-held')).ready === 3, { timeoutMs: 30_000, message: '3 ready rooms' });
    await allocate(stack, 'rooms-held', ['m-1', 'm-2']);
    expect((await http(stack, 'PATCH', '/schedulers/rooms-held', { roomsReplicas: 1 })).status).toBe(200);
    const op = await waitFor(async () => {
      const removal = (await stack.api.listOperations('rooms-held')).items.find((o) => o.spec.definitionName === 'remove_rooms' && o.spec.input?.reason === 'scale_down');
      return removal?.status?.status === 'finished' ? removal : undefined;
    }, { timeoutMs: 30_000, message: 'the scale-down finished' });
    expect(op.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/^Removed 1 room \(reason: scale_down\): rooms-held-[a-z0-9]{5}; kept 2 rooms held by players or a matchmaker \(2 allocated\), 1 above the desired count of 1: scale-down never removes such a room; the health check removes it once it is free$/m);
    expect((await liveRooms(stack, 'rooms-held')).map((r) => r.status?.status)).toEqual(['allocated', 'allocated']);
  });

  test('a scale-down whose surplus rooms are all allocated removes none and says so in a Scheduler Event', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-all-held', { roomsReplicas: 2 }));
    await waitFor(async () => (await counts(stack, 'rooms-all-held')).ready === 2, { timeoutMs: 30_000, message: '2 ready rooms' });
    await allocate(stack, 'rooms-all-held', ['m-1', 'm-2']);
    expect((await http(stack, 'PATCH', '/schedulers/rooms-all-held', { roomsReplicas: 1 })).status).toBe(200);
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const event = await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.reason === 'RoomsKeptAboveDesired' && e.regarding?.name === 'rooms-all-held'), { timeoutMs: 30_000, intervalMs: 200, message: 'a RoomsKeptAboveDesired Event' });
    expect([event.type, event.note]).toEqual(['Normal', '2 rooms, 1 desired: kept 2 rooms held by players or a matchmaker (2 allocated), 1 above the desired count, and removed none: scale-down never removes such a room; the health check removes it once it is free']);
    expect((await stack.api.listOperations('rooms-all-held')).items.filter((o) => o.spec.definitionName === 'remove_rooms')).toEqual([]);
    expect((await liveRooms(stack, 'rooms-all-held')).map((r) => r.status?.status)).toEqual(['allocated', 'allocated']);
  });
});

describe('rooms whose pods wait for the cluster', () => {
  let stack: Stack;
  beforeAll(async () => {
    // The kubelet starts each pod 4 s after it is bound, longer than the 1.5 s initialization timeout.
    stack = await startStack({ external: true, config: { roomInitTimeout: 1500, healthInterval: 300 }, simulation: { pingIntervalMs: 300, startDelayMs: 4000 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('are not replaced while their pods have not started: the initialization timeout counts from the pod\'s start', async () => {
    await http(stack, 'POST', '/schedulers', createBody('rooms-slow-start', { roomsReplicas: 2 }));
    const first = await waitFor(async () => {
      const names = (await liveRooms(stack, 'rooms-slow-start')).map((r) => r.metadata.name as string);
      return names.length === 2 ? names.sort() : undefined;
    }, { timeoutMs: 20_000, message: 'two rooms created' });
    await waitFor(async () => (await counts(stack, 'rooms-slow-start')).ready === 2, { timeoutMs: 30_000, message: '2 ready rooms' });
    expect((await liveRooms(stack, 'rooms-slow-start')).map((r) => r.metadata.name as string).sort()).toEqual(first);
    const removals = (await stack.api.listOperations('rooms-slow-start')).items.filter((o) => o.spec.definitionName === 'remove_rooms');
    expect(removals).toEqual([]);
  });
});

describe('autoscaling', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ external: true, config: { healthInterval: 300, autoscaleDebounce: 100 }, simulation: { pingIntervalMs: 200 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('roomOccupancy (readyTarget 0.5, min 1, max 10) with rooms that turn occupied follows Maestro\'s sequence up to 10 rooms', async () => {
    const autoscaling = { enabled: true, min: 1, max: 10, cooldown: 0, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } };
    // The test plays the game servers: each room pings ready once it exists, and occupied once the
    // test fills it (every ready room, each time the fleet shows the next state), so each state is
    // the autoscaler's answer to the last, whatever the machine's speed (rooms that turned occupied
    // on a timer skipped 4/4 on a loaded CI machine: one was occupied before the last was ready).
    await http(stack, 'POST', '/schedulers', createBody('auto-up', { roomsReplicas: 1, autoscaling }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]));
    const filled = new Set<string>();
    const seen: string[] = [];
    for (const state of ['1/0', '1/1', '2/2', '4/4', '2/8', '0/10']) {
      await waitFor(async () => {
        const rooms = await liveRooms(stack, 'auto-up');
        // Every room pings, so none expires while the sequence runs.
        await Promise.all(rooms.map((r) => ping(stack, 'auto-up', r.metadata.name as string, filled.has(r.metadata.name as string) ? 'occupied' : 'ready')));
        const c = await counts(stack, 'auto-up');
        const key = `${c.ready}/${c.occupied}`;
        if (seen[seen.length - 1] !== key) seen.push(key);
        return key === state && c.total === c.ready + c.occupied;
      }, { timeoutMs: 30_000, intervalMs: 100, message: `the state ${state} (ready/occupied)` }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; states seen: ${seen.join(', ')}`, { cause: err });
      });
      // Players take every ready room.
      for (const r of await liveRooms(stack, 'auto-up')) filled.add(r.metadata.name as string);
    }
    // The autoscaler's decision at 10 occupied rooms is the max: no room beyond it.
    await waitFor(async () => {
      await Promise.all((await liveRooms(stack, 'auto-up')).map((r) => ping(stack, 'auto-up', r.metadata.name as string, 'occupied')));
      const c = await counts(stack, 'auto-up');
      return c.occupied === 10 && (await stack.api.getScheduler('auto-up')).status?.autoscaling?.desired === 10;
    }, { timeoutMs: 30_000, intervalMs: 100, message: 'ten occupied rooms, and the desired count clamped at max' });
    expect((await counts(stack, 'auto-up')).total).toBe(10);
  });

  test('with every room idle, autoscaling scales down to 1 ready room', async () => {
    await http(stack, 'POST', '/schedulers', createBody('auto-down', { roomsReplicas: 10 }));
    await waitFor(async () => (await counts(stack, 'auto-down')).ready === 10, { timeoutMs: 30_000, message: '10 ready rooms' });
    const autoscaling = { enabled: true, min: 1, max: 10, cooldown: 1, policy: { type: 'roomOccupancy', parameters: { roomOccupancy: { readyTarget: 0.5 } } } };
    const res = await http(stack, 'PATCH', '/schedulers/auto-down', { autoscaling });
    expect(res.status).toBe(200);
    await waitFor(async () => {
      const c = await counts(stack, 'auto-down');
      return c.ready === 1 && c.total === 1;
    }, { timeoutMs: 60_000, message: 'scaled down to 1 ready room' });
    const s = await stack.api.getScheduler('auto-down');
    expect(s.status?.autoscaling?.lastDownscaleAt).toBeDefined();
  });
});

describe('rolling replacement', () => {
  test('a major switch with 10 rooms and maxSurge 3 replaces every room, never dropping below 10 ready-or-occupied, and keeps an occupied old room until it is free', async () => {
    // Pings are sent by hand for one room, so the simulated rooms ping rarely and expiry is long.
    const stack = await startStack({ external: true, config: { healthInterval: 300, roomPingTimeout: 120_000 }, simulation: { pingIntervalMs: 400 } });
    try {
      await http(stack, 'POST', '/schedulers', createBody('rolling', { roomsReplicas: 10, maxSurge: 3 }));
      await waitFor(async () => (await counts(stack, 'rolling')).ready === 10, { timeoutMs: 30_000, message: '10 ready rooms' });

      // Watch every room change and record the lowest ready-or-occupied count.
      let lowest = Number.POSITIVE_INFINITY;
      let armed = false; // the initial list arrives one room at a time: count only after it
      const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(stack.kc, '/apis/roomkeeper.io/v1/namespaces/rolling/gamerooms',
        () => stack.api.listGameRooms('rolling'));
      const check = () => {
        if (!armed) return;
        const serving = informer.list('rolling').filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation
          && (r.status?.status === 'ready' || r.status?.status === 'occupied')).length;
        lowest = Math.min(lowest, serving);
      };
      informer.on('add', check);
      informer.on('update', check);
      informer.on('delete', check);
      await informer.start();
      armed = true;
      check();

      // One old room holds players: the simulated room is silenced for it, and the test pings occupied.
      const occupiedRoom = (await liveRooms(stack, 'rolling'))[0]!.metadata.name as string;
      stack.simulation!.rooms!.silence(occupiedRoom);
      await ping(stack, 'rolling', occupiedRoom, 'occupied');
      await waitFor(async () => (await stack.api.getGameRoom('rolling', occupiedRoom)).status?.status === 'occupied');

      const current = (await http(stack, 'GET', '/schedulers/rolling')).body as SchedulerAnswer;
      const next = { ...current.scheduler, spec: { ...current.scheduler.spec } };
      next.spec.containers = next.spec.containers.map((c) => ({ ...c, image: 'example.com/game:2.0.0' }));
      delete next.spec.version;
      const res = await http(stack, 'POST', '/schedulers/rolling', next);
      expect(res.status).toBe(200);

      await waitFor(async () => {
        const rooms = await liveRooms(stack, 'rolling');
        const old = rooms.filter((r) => r.spec.version === 'v1.0.0');
        return old.length === 1 && old[0]!.metadata.name === occupiedRoom && rooms.filter((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready').length >= 9;
      }, { timeoutMs: 60_000, message: 'every free old room replaced; the occupied one kept' });
      expect(lowest).toBeGreaterThanOrEqual(10);
      const switchOp = await waitFor(async () => (await stack.api.listOperations('rolling')).items
        .find((o) => o.spec.definitionName === 'switch_active_version' && o.status?.status === 'finished'), { timeoutMs: 30_000, message: 'switch finished' });
      expect(switchOp.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/Switched the active version from v1\.0\.0 to v2\.0\.0\n10 rooms run another major version than v2\.0\.0's; the health check replaces them/);
      // The rollout is the health check's job, shown on the Scheduler while the occupied room stays.
      const progressing = await waitFor(async () => {
        const s = await stack.api.getScheduler('rolling');
        const c = s.status?.conditions?.find((x) => x.type === 'Progressing');
        // Every room but the occupied one is on v2.0.0: 10 new rooms (the desired count) beside it.
        return c?.status === 'True' && s.status?.rooms?.current === 11 && s.status.rooms.updated === 10 ? c : undefined;
      }, { timeoutMs: 30_000, message: 'Progressing True with 10 of 11 rooms updated' });
      expect(progressing.message).toBe('10 of 11 rooms run the major of the active version v2.0.0; the health check is replacing the others; of the older rooms, 1 room held by players or a matchmaker (1 occupied) is replaced once free');

      // The players leave: the old room is replaced by the health check.
      await ping(stack, 'rolling', occupiedRoom, 'ready');
      await waitFor(async () => {
        const rooms = await liveRooms(stack, 'rolling');
        return rooms.length === 10 && rooms.every((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready');
      }, { timeoutMs: 60_000, message: 'the last old room replaced once free' });
      await waitFor(async () => {
        const st = (await stack.api.getScheduler('rolling')).status;
        return st?.rooms?.updated === 10 && st.conditions?.find((x) => x.type === 'Progressing')?.reason === 'RolloutComplete';
      }, { timeoutMs: 30_000, message: 'rollout reported complete' });
      expect(lowest).toBeGreaterThanOrEqual(10);
      await informer.stop();
    } finally {
      await stack.stop();
    }
  });
});

describe('rooms stuck terminating', () => {
  test('a room still terminating after the deletion timeout has its pod force-deleted, and the history says so', async () => {
    // The simulated kubelet holds deleted pods for up to 10 minutes here (a stuck node), while
    // the operator's deletion timeout is 1 s.
    const stack = await startStack({ external: true, config: { healthInterval: 300, roomDeletionTimeout: 1000 }, simulation: { pingIntervalMs: 300, deletionCapMs: 600_000 } });
    try {
      await http(stack, 'POST', '/schedulers', createBody('stuck-rooms', { roomsReplicas: 2, spec: { ...(schedulerObject('x') as { spec: { spec: object } }).spec.spec, terminationGracePeriod: '600s' } }));
      await waitFor(async () => (await counts(stack, 'stuck-rooms')).ready === 2, { timeoutMs: 30_000, message: '2 ready rooms' });
      const res = await http(stack, 'POST', '/schedulers/stuck-rooms/remove-rooms', { amount: 1 });
      expect(res.status).toBe(200);
      const victim = await waitFor(async () => (await stack.api.listGameRooms('stuck-rooms')).items.find((r) => r.metadata.deletionTimestamp)?.metadata.name, { message: 'a room terminating' });
      await waitFor(async () => !(await stack.api.listGameRooms('stuck-rooms')).items.some((r) => r.metadata.name === victim), { timeoutMs: 30_000, message: 'the stuck room is gone' });
      // The operation writes its history after the deletion it tells of: wait for the line.
      const forced = await waitFor(async () => (await stack.api.listOperations('stuck-rooms')).items
        .find((o) => (o.status?.executionHistory ?? []).some((h) => h.event.includes('Force-deleted') && h.event.includes(victim))), { timeoutMs: 30_000, message: 'a history line saying the stuck room was force-deleted' });
      expect(forced.spec.input?.reason).toBe('expired_room');
    } finally {
      await stack.stop();
    }
  });
});
