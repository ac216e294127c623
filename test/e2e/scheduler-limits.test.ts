/**
 * Per-scheduler limits end to end (issue 12, M4), with small limits: at most 6 rooms per scheduler,
 * at most 2 created per operation. create_scheduler creates 2 and the health check adds the rest in
 * add_rooms of at most 2; a roomsReplicas above the limit is refused over HTTP naming the field, and
 * one written with kubectl (past the gateway) is refused by the operator: the count last decided is kept, during a rolling update too. The room count is checked on
 * every room event. An add-rooms above the add limit moves roomsReplicas by its whole amount. Add-rooms
 * queued behind a running operation, each accepted by the gateway against the count of the moment,
 * are checked again when they run: the one that would pass the limit ends in error, changing nothing.
 * Runs on the sandbox, or on a real cluster when E2E_KUBECONFIG is set.
 */
import * as k8s from '@kubernetes/client-node';
import type { GameRoom } from '../../common/src/generated/resources';
import type { ErrorBody } from '../../api-gateway/src/errors';
import type { OperationDefinition } from '../../operator/src/operations/execution';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { describeScheduler, managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'limits';
const MAX_ROOMS = 6;
const ADD_LIMIT = 2;

/**
 * A test-only operation that runs until released (or its execution is stopped): while it runs, the
 * operations of its scheduler queued after it wait, as behind any long operation.
 */
function queueHolder(): { definition: OperationDefinition; release(): void } {
  let released = false;
  const waiting = new Set<() => void>();
  return {
    definition: {
      name: 'test_hold_queue',
      execute: async (ctx) => {
        await new Promise<void>((resolve) => {
          if (released || ctx.signal.aborted) {
            resolve();
            return;
          }
          waiting.add(resolve);
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        ctx.checkpoint();
        ctx.event('released by the test');
      },
    },
    release: () => {
      released = true;
      for (const resolve of waiting) resolve();
    },
  };
}

describe('per-scheduler limits', () => {
  let stack: Stack;
  const holder = queueHolder();
  beforeAll(async () => {
    stack = await startStack({ external: true, extraDefinitions: [holder.definition], config: { healthInterval: 300, maxRoomsPerScheduler: MAX_ROOMS, addRoomsLimit: ADD_LIMIT } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** The most fleet rooms (not deleted, not validation) a scheduler had at any room event since the call. */
  async function mostRooms(scheduler: string): Promise<{ readonly most: number; stop(): Promise<void> }> {
    let most = 0;
    const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(stack.kc, `/apis/roomkeeper.io/v1/namespaces/${scheduler}/gamerooms`, () => stack.api.listGameRooms(scheduler));
    const count = () => {
      most = Math.max(most, informer.list(scheduler).filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation).length);
    };
    informer.on('add', count);
    informer.on('update', count);
    informer.on('delete', count);
    await informer.start();
    return { get most() { return most; }, stop: () => informer.stop() };
  }

  test('create_scheduler creates in batches of the add limit, and the fleet never passes the room limit', async () => {
    const live = async () => (await stack.api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    const body = (over: Record<string, unknown>) => ({ name: NAME, ...(schedulerObject(NAME, over) as { spec: Record<string, unknown> }).spec });

    const refused = await managementCall(stack, 'POST', '/schedulers', body({ roomsReplicas: MAX_ROOMS + 1 }));
    expect(refused.status).toBe(400);
    expect((refused.body as ErrorBody).details).toEqual([{ field: 'roomsReplicas', message: `must be at most ${MAX_ROOMS}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); got ${MAX_ROOMS + 1}` }]);

    // Every room event: never more fleet rooms than the limit.
    const rooms = await mostRooms(NAME);
    try {
      expect((await managementCall(stack, 'POST', '/schedulers', body({ roomsReplicas: 5 }))).status).toBe(200);
      await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 5, { timeoutMs: 60_000, message: '5 ready rooms' });
      const ops = (await stack.api.listOperations(NAME)).items;
      const create = ops.find((o) => o.spec.definitionName === 'create_scheduler');
      expect(create?.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining([
        `Creating ${ADD_LIMIT} of 5 rooms (the add limit, ROOMKEEPER_ADD_ROOMS_LIMIT); the health check adds the other 3`,
      ]));
      // The other 3 came from add_rooms operations of the health check (each creates at most the add limit).
      const adds = ops.filter((o) => o.spec.definitionName === 'add_rooms');
      expect(adds.length).toBeGreaterThanOrEqual(2);
      for (const add of adds) expect(Number((add.spec.input as { amount?: unknown }).amount)).toBeLessThanOrEqual(5);

      // kubectl (past the gateway): roomsReplicas far above the limit is refused as the gateway
      // refuses it: the fleet keeps its 5 rooms, and the status and a Warning say which field.
      await stack.api.patchScheduler(NAME, { spec: { roomsReplicas: 1000 } });
      const refusal = `spec.roomsReplicas 1000 is above ${MAX_ROOMS}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER)`;
      await waitFor(async () => (await stack.api.getScheduler(NAME)).status?.autoscaling?.lastDecision?.startsWith(refusal), { timeoutMs: 60_000, intervalMs: 200, message: 'the refusal in status.autoscaling.lastDecision' });
      const events = stack.kc.makeApiClient(k8s.EventsV1Api);
      await waitFor(async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
        .some((e) => e.reason === 'RoomCountNotDecided' && e.type === 'Warning' && e.regarding?.name === NAME && e.note?.includes(refusal)), { timeoutMs: 30_000, intervalMs: 200, message: 'a RoomCountNotDecided Warning' });
      // Many health cycles later (the rooms' pings measure the wait), still the 5 rooms.
      const pings = stack.simulation!.rooms!.stats().pingsSent;
      await waitFor(() => stack.simulation!.rooms!.stats().pingsSent > pings + 20 * 5, { timeoutMs: 60_000, message: '20 more pings per room' });
      expect((await live()).length).toBe(5);
      expect((await stack.api.getScheduler(NAME)).spec.roomsReplicas).toBe(1000);
      expect(rooms.most).toBeLessThanOrEqual(5);
      // The change's version operation refused it, naming the field, and made no version: the
      // active version keeps its count, and the conditions say the spec's change was not applied.
      const versionOp = await waitFor(async () => (await stack.api.listOperations(NAME)).items
        .find((o) => o.spec.definitionName === 'create_new_scheduler_version' && o.status?.status === 'error'), { timeoutMs: 30_000, message: 'the version operation refused the change' });
      expect(versionOp.status?.executionHistory?.map((h) => h.event).join('\n')).toContain(
        `no version made: spec.roomsReplicas must be at most ${MAX_ROOMS}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); got 1000`);
      const refused = await stack.api.getScheduler(NAME);
      expect((await stack.api.listSchedulerVersions(NAME)).items.map((v) => v.spec.definition.roomsReplicas)).not.toContain(1000);
      expect(refused.status?.conditions?.find((c) => c.type === 'PendingChanges')).toMatchObject({ status: 'False', reason: 'SpecChangeFailed' });
      // Back within the limit, the count is acted on again.
      await stack.api.patchScheduler(NAME, { spec: { roomsReplicas: MAX_ROOMS } });
      await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === MAX_ROOMS, { timeoutMs: 60_000, message: `${MAX_ROOMS} ready rooms` });
      expect(rooms.most).toBeLessThanOrEqual(MAX_ROOMS);
    } finally {
      await rooms.stop();
    }
  });

  test('a roomsReplicas above the limit written during a rolling update keeps the count last decided: the fleet does not grow', async () => {
    const name = `${NAME}-roll`;
    const live = async () => (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 3, maxSurge: 1 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 3, { timeoutMs: 60_000, message: '3 ready rooms' });
    // A matchmaker holds one room of v1: the update to v2 cannot replace it until it is free.
    const allocated = await managementCall(stack, 'POST', `/scheduler/${name}/rooms/allocate`, { ttlSeconds: 300 });
    expect(allocated.status).toBe(200);
    const held = (allocated.body as { roomId: string }).roomId;
    expect((await managementCall(stack, 'PATCH', `/schedulers/${name}`, { spec: { containers: [{ image: 'example.com/game:2.0.0' }] } })).status).toBe(200);
    await waitFor(async () => (await live()).filter((r) => r.spec.version.startsWith('v2.') && r.status?.status === 'ready').length === 3, { timeoutMs: 60_000, message: '3 ready rooms of v2' });

    // kubectl (past the gateway) asks for more rooms than the limit while the update waits for the held room.
    await stack.api.patchScheduler(name, { spec: { roomsReplicas: 1000 } });
    const refusal = `spec.roomsReplicas 1000 is above ${MAX_ROOMS}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER)`;
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.autoscaling?.lastDecision?.startsWith(refusal), { timeoutMs: 60_000, intervalMs: 200, message: 'the refusal in status.autoscaling.lastDecision' });
    const counted = await mostRooms(name);
    try {
      // Many health cycles later (the rooms' pings measure the wait): 3 rooms of v2 and the held one, no more.
      const pings = stack.simulation!.rooms!.stats().pingsSent;
      await waitFor(() => stack.simulation!.rooms!.stats().pingsSent > pings + 20 * 4, { timeoutMs: 60_000, message: '20 more pings per room' });
      const rooms = await live();
      expect(rooms.map((r) => r.metadata.name)).toContain(held);
      expect(rooms).toHaveLength(4);
      expect(counted.most).toBeLessThanOrEqual(4);
      const status = (await stack.api.getScheduler(name)).status;
      expect(status?.rooms?.desired).toBe(3);
      expect(status?.autoscaling?.lastDecision).toBe(`${refusal}: the spec is refused, as the gateway refuses it, and the fleet keeps the desired count last decided, 3 rooms; set it to at most ${MAX_ROOMS}`);
    } finally {
      await counted.stop();
    }
  });

  test('a Scheduler written with kubectl above the limit is refused by its create_scheduler, which makes nothing; kubectl scale within the limit creates it', async () => {
    const name = `${NAME}-kubectl`;
    await stack.api.createScheduler(schedulerObject(name, { roomsReplicas: 2_147_483_647 }) as never);
    const failed = await waitFor(async () => (await stack.api.listOperations(name)).items
      .find((o) => o.spec.definitionName === 'create_scheduler' && o.status?.status === 'error'), { timeoutMs: 60_000, message: 'create_scheduler refused the count' });
    expect(failed.status?.executionHistory?.map((h) => h.event).join('\n')).toContain(`nothing made: spec.roomsReplicas must be at most ${MAX_ROOMS}, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); got 2147483647; `
      + `set it to at most ${MAX_ROOMS} (kubectl scale rks/${name} --replicas=<n>, kubectl edit scheduler ${name}, or PATCH /schedulers/${name}), which creates the scheduler`);
    expect((await stack.api.listGameRooms(name)).items).toEqual([]);
    expect((await stack.api.listSchedulerVersions(name)).items).toEqual([]);
    expect((await stack.api.getScheduler(name)).status?.version).toBeUndefined();

    await stack.api.patchScheduler(name, { spec: { roomsReplicas: 2 } });
    await waitFor(async () => (await stack.api.listGameRooms(name)).items.filter((r) => r.status?.status === 'ready').length === 2, { timeoutMs: 60_000, message: '2 ready rooms after the fix' });
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');
  });

  test('add-rooms above the add limit moves roomsReplicas by the whole amount; the health check adds what one operation does not', async () => {
    const name = `${NAME}-add`;
    const live = async () => (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 0 }) as { spec: Record<string, unknown> }).spec };
    const created = await managementCall(stack, 'POST', '/schedulers', body);
    expect(created.status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version !== undefined, { timeoutMs: 60_000, message: `${name} created` });
    const added = await managementCall(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount: 5 });
    expect(added.status).toBe(200);
    const operationId = (added.body as { operationId: string }).operationId;
    const op = await waitFor(async () => {
      const o = (await stack.api.listOperations(name)).items.find((x) => x.metadata.name === operationId);
      return o?.status?.status === 'finished' ? o : undefined;
    }, { timeoutMs: 60_000, message: 'add_rooms finished' });
    expect(op.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining([
      'roomsReplicas changed from 0 to 5',
      `Asked for 5 rooms; adding ${ADD_LIMIT} now (the add limit, ROOMKEEPER_ADD_ROOMS_LIMIT); the health check adds the other 3`,
      `Added ${ADD_LIMIT} rooms`,
    ]));
    expect((await stack.api.getScheduler(name)).spec.roomsReplicas).toBe(5);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 5, { timeoutMs: 60_000, message: '5 ready rooms' });
    // The version its roomsReplicas change made is the API's doing, not a kubectl user's.
    const versionOps = (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'create_new_scheduler_version');
    expect(versionOps.map((o) => o.spec.source)).toEqual(['api']);
  });

  test('add-rooms queued behind a running operation that together pass the room limit: the one that would pass it ends in error when it runs, changing nothing', async () => {
    const name = `${NAME}-queued`;
    const live = async () => (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
    const body = { name, ...(schedulerObject(name, { roomsReplicas: 3 }) as { spec: Record<string, unknown> }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 3, { timeoutMs: 60_000, message: '3 ready rooms' });

    const rooms = await mostRooms(name);
    try {
      // An operation runs, and holds the scheduler's queue until released.
      const hold = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: holder.definition.name, input: {}, source: 'kubectl', enqueuedAt: Date.now() });
      await stack.api.createOperation(hold);
      await waitFor(async () => (await stack.api.getOperation(hold.metadata.name as string)).status?.status === 'in_progress', { timeoutMs: 30_000, message: 'the holding operation running' });

      // Each add-rooms fits the count of the moment (3 + 2 <= 6), so the gateway accepts both; together they pass it.
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const added = await managementCall(stack, 'POST', `/schedulers/${name}/add-rooms`, { amount: 2 });
        expect(added.status).toBe(200);
        ids.push((added.body as { operationId: string }).operationId);
      }
      const [first, second] = ids as [string, string];
      expect((await stack.api.getOperation(first)).status?.status).toBeUndefined();
      expect((await stack.api.getOperation(second)).status?.status).toBeUndefined();
      holder.release();

      const ended = async (id: string) => {
        const o = await stack.api.getOperation(id);
        return o.status?.status === 'finished' || o.status?.status === 'error' ? o : undefined;
      };
      const done = await waitFor(() => ended(first), { timeoutMs: 60_000, message: 'the first add-rooms ended' });
      const refused = await waitFor(() => ended(second), { timeoutMs: 60_000, message: 'the second add-rooms ended' })
        .catch(async (err: unknown) => { throw new Error(`${(err as Error).message}\n${await describeScheduler(stack, name)}`); });
      expect(done.status?.status).toBe('finished');
      expect(done.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining(['roomsReplicas changed from 3 to 5', 'Added 2 rooms']));
      expect(refused.status?.status).toBe('error');
      const history = refused.status?.executionHistory?.map((h) => h.event) ?? [];
      expect(history).toContain('Operation execution failed: no room added: adding 2 rooms would take roomsReplicas from 5 to 7, above 6, the most rooms one scheduler may have (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); roomsReplicas stays 5: '
        + `send add-rooms again for at most 1 more (POST /schedulers/${name}/add-rooms with {"amount": 1}), or raise ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER (the chart's limits.maxRoomsPerScheduler)`);
      // It changed nothing: no roomsReplicas line, no room created.
      expect(history.filter((e) => e.startsWith('roomsReplicas') || e.startsWith('Created') || e.startsWith('Added'))).toEqual([]);
      expect((await stack.api.getScheduler(name)).spec.roomsReplicas).toBe(5);
      await waitFor(async () => (await live()).filter((r) => r.status?.status === 'ready').length === 5, { timeoutMs: 60_000, message: '5 ready rooms' });
      // Many health cycles later (the rooms' pings measure the wait), still the 5 rooms.
      const pings = stack.simulation!.rooms!.stats().pingsSent;
      await waitFor(() => stack.simulation!.rooms!.stats().pingsSent > pings + 10 * 5, { timeoutMs: 60_000, message: '10 more pings per room' });
      expect((await live()).length).toBe(5);
      expect(rooms.most).toBeLessThanOrEqual(MAX_ROOMS);
    } finally {
      holder.release();
      await rooms.stop();
    }
  });
});
