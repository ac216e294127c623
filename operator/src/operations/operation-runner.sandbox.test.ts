/**
 * The operation runner alone on the sandbox API server, with the operator's real caches and
 * clients (test/support/controller-harness.ts): it runs a real operation to its end, ends the
 * operations it must not run, and a reconcile of a queue with nothing to do makes no write at all;
 * and a graceful stop hands a running operation over to the next leader.
 */
import { buildOperation } from '../../../common/src/operations/operation-factory';
import { createSchedulerOperationId, newOperationId } from '../../../common/src/operations/operation-id';
import { OperationDefinition, OperationSourceName } from '../../../common/src/resources/operation-names';
import { OPERATION_RUNNING_FINALIZER, SCHEDULER_FINALIZER, SCHEDULER_LABEL } from '../../../common/src/resources/labels';
import { startControllerHarness, type ControllerHarness } from '../../../test/support/controller-harness';
import { schedulerObject } from '../../../test/support/scheduler-object';
import { waitFor } from '../../../test/support/wait';
import { DEFINITIONS } from './definitions';
import type { OperationDefinition as Definition } from './execution';
import { OperationRunner } from './operation-runner';
import { stoppedByDeletion } from './operation-ending';

describe('OperationRunner on the sandbox', () => {
  let h: ControllerHarness;
  let runner: OperationRunner;

  beforeAll(async () => {
    h = await startControllerHarness();
    runner = h.runner;
    runner.setLeading(true);
  });

  afterAll(async () => {
    await h.stop();
  });

  /** The operation `id` once it has ended in error (read from the API server). */
  const endedInError = (id: string, message: string) => waitFor(async () => {
    const o = await h.api.getOperation(id);
    return o.status?.status === 'error' ? o : undefined;
  }, { timeoutMs: 30_000, message });

  test('runs create_scheduler to its end (namespace, version, status); once more: no write', async () => {
    const s = await h.api.createScheduler({ ...schedulerObject('run', { roomsReplicas: 0 }), metadata: { name: 'run', finalizers: [SCHEDULER_FINALIZER] } } as never);
    const id = createSchedulerOperationId(s.metadata.uid as string, 1);
    await h.api.createOperation(buildOperation({ id, schedulerName: 'run', definitionName: OperationDefinition.CreateScheduler, input: {}, source: OperationSourceName.Kubectl }));
    await h.caughtUp();

    await runner.reconcile('run'); // starts the execution, which runs on after the reconcile
    await waitFor(() => h.runnerAsked.includes('run') && !runner.isRunning('run'), { timeoutMs: 30_000, message: 'create_scheduler executed' });
    const op = await h.api.getOperation(id);
    expect(op.status?.status).toBe('finished');
    expect(op.status?.executionHistory?.map((e) => e.event)).toEqual(expect.arrayContaining(['Created namespace run', 'Created version v1.0.0', 'Operation finished']));
    expect((await h.core.readNamespace({ name: 'run' })).metadata?.labels?.[SCHEDULER_LABEL]).toBe('run');
    expect((await h.api.getSchedulerVersion('run-v1.0.0')).status?.active).toBe(true);
    expect((await h.api.getScheduler('run')).status?.version).toBe('v1.0.0');

    await h.converge(() => runner.reconcile('run'));
    expect(await h.writesOf(() => runner.reconcile('run'))).toBe(0);
    expect(runner.isRunning('run')).toBe(false);
  });

  test('ends an unknown definition (evicted) and a cancel asked before the start (canceled); once more: no write', async () => {
    await h.createdScheduler('ends', { roomsReplicas: 0 });
    const unknown = newOperationId(h.deps.now());
    await h.api.createOperation(buildOperation({ id: unknown, schedulerName: 'ends', definitionName: 'no_such_definition', input: {}, source: OperationSourceName.Api }));
    const canceled = buildOperation({ id: newOperationId(h.deps.now() + 1), schedulerName: 'ends', definitionName: OperationDefinition.AddRooms, input: { amount: 1 }, source: OperationSourceName.Api });
    canceled.spec.cancelRequested = true;
    await h.api.createOperation(canceled);

    const passes = await h.converge(() => runner.reconcile('ends'));
    expect(passes[0]).toBeGreaterThan(0);
    expect(runner.isRunning('ends')).toBe(false);
    expect((await h.api.getOperation(unknown)).status).toMatchObject({ status: 'evicted' });
    expect((await h.api.getOperation(canceled.metadata.name as string)).status).toMatchObject({ status: 'canceled' });
    // kubectl describe scheduler tells the cancel, as it tells one of a running operation.
    const told = await waitFor(async () => (await h.clients.events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === 'ends' && e.reason === 'OperationCanceled'), { timeoutMs: 30_000, message: 'the Event of the cancel' });
    expect(told.note).toBe(`Operation ${canceled.metadata.name as string} (add_rooms) canceled by the user before it started: it did nothing`);

    expect(await h.writesOf(() => runner.reconcile('ends'))).toBe(0);
  });

  test('an operation marked for deletion before it started (another tool\'s finalizer holds it) never runs and is told deleted; an ended one that still carries the running finalizer (a crash between its end and its release) has it released; once more: no write', async () => {
    await h.createdScheduler('marked', { roomsReplicas: 0 });
    const held = buildOperation({ id: newOperationId(h.deps.now()), schedulerName: 'marked', definitionName: OperationDefinition.AddRooms, input: { amount: 1 }, source: OperationSourceName.Api });
    held.metadata.finalizers = ['example.com/keep'];
    const heldId = held.metadata.name as string;
    await h.api.createOperation(held);
    await h.api.deleteOperation(heldId);
    const ended = buildOperation({ id: newOperationId(h.deps.now() + 1), schedulerName: 'marked', definitionName: OperationDefinition.AddRooms, input: { amount: 1 }, source: OperationSourceName.Api });
    ended.metadata.finalizers = [OPERATION_RUNNING_FINALIZER];
    const endedId = ended.metadata.name as string;
    await h.api.createOperation(ended);
    const at = new Date(h.deps.now()).toISOString();
    await h.api.patchOperationStatus(endedId, { status: { status: 'finished', startedAt: at, finishedAt: at, executionHistory: [{ createdAt: at, event: 'Starting operation' }, { createdAt: at, event: 'Operation finished' }] } });
    await h.caughtUp();

    await h.converge(() => runner.reconcile('marked'));
    expect(runner.isRunning('marked')).toBe(false);
    const marked = await h.api.getOperation(heldId);
    expect(marked.status?.status).toBe('canceled');
    expect(marked.status?.executionHistory?.map((e) => e.event)).toEqual(['Operation deleted before it started (by kubectl or another client, not by Roomkeeper): it does not run']);
    expect(marked.metadata.finalizers).toEqual(['example.com/keep']);
    expect((await h.api.getOperation(endedId)).metadata.finalizers ?? []).toEqual([]);
    expect((await h.api.getScheduler('marked')).spec.roomsReplicas).toBe(0);
    const told = await waitFor(async () => (await h.clients.events.listNamespacedEvent({ namespace: 'default' })).items
      .find((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === 'marked' && e.reason === 'OperationDeleted'), { timeoutMs: 30_000, message: 'the Event of the deletion' });
    expect(told.note).toMatch(new RegExp(`^Operation ${heldId} \\(add_rooms\\) was deleted before it started \\(by kubectl or another client, not by Roomkeeper\\); it did nothing and will not run\\.`));
    expect(await h.writesOf(() => runner.reconcile('marked'))).toBe(0);
    await h.api.jsonPatchOperation(heldId, [{ op: 'remove', path: '/metadata/finalizers' }]);
  });

  test('a cancel that landed as the operation ended (admitted while it ran) is told in its history once: nothing was canceled', async () => {
    await h.createdScheduler('late-cancel', { roomsReplicas: 0 });
    const late = buildOperation({ id: newOperationId(h.deps.now()), schedulerName: 'late-cancel', definitionName: OperationDefinition.AddRooms, input: { amount: 1 }, source: OperationSourceName.Api });
    late.spec.cancelRequested = true;
    const id = late.metadata.name as string;
    await h.api.createOperation(late);
    const at = new Date(h.deps.now()).toISOString();
    await h.api.patchOperationStatus(id, { status: { status: 'finished', startedAt: at, finishedAt: at, executionHistory: [{ createdAt: at, event: 'Starting operation' }, { createdAt: at, event: 'Added 1 room' }, { createdAt: at, event: 'Operation finished' }] } });
    await h.caughtUp();

    await h.converge(() => runner.reconcile('late-cancel'));
    expect((await h.api.getOperation(id)).status?.executionHistory?.map((e) => e.event)).toEqual([
      'Starting operation', 'Added 1 room', 'Operation finished',
      'Cancel requested by the user as the operation ended: it had done its work and ended finished, so nothing was canceled',
    ]);
    expect(await h.writesOf(() => runner.reconcile('late-cancel'))).toBe(0);
  });

  test("an operation whose scheduler is being deleted ends in error, told as a stop by the deletion (a Normal Event), not as a failure", async () => {
    await h.createdScheduler('going', { roomsReplicas: 0 });
    await h.api.deleteScheduler('going'); // its finalizer holds it: it is being deleted
    const id = newOperationId(h.deps.now());
    await h.api.createOperation(buildOperation({ id, schedulerName: 'going', definitionName: OperationDefinition.AddRooms, input: { amount: 1 }, source: OperationSourceName.Api }));
    await waitFor(() => h.deps.caches.schedulers.get('going')?.metadata.deletionTimestamp !== undefined, { message: 'the cache shows the deletion' });
    await h.caughtUp();

    await runner.reconcile('going');
    const op = await endedInError(id, 'add_rooms ended');
    expect(op.status?.executionHistory?.map((e) => e.event)).toEqual(expect.arrayContaining([
      'Operation stopped: scheduler going is being deleted, which removes its rooms and versions; nothing is left for this operation to do',
      "Operation ended in error: stopped by its scheduler's deletion (nothing to do)",
    ]));
    // What the Scheduler's Degraded condition reads (scheduler-status.ts): a stop, not a failure.
    expect(stoppedByDeletion(op)).toBe(true);
    const told = await waitFor(async () => {
      const found = (await h.clients.events.listNamespacedEvent({ namespace: 'default' })).items
        .filter((e) => e.regarding?.kind === 'Scheduler' && e.regarding.name === 'going' && e.reason !== 'OperationStarted');
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 30_000, message: 'the Event of the end' });
    expect(told.map((e) => [e.type, e.reason])).toEqual([['Normal', 'OperationStopped']]);
    expect(told[0]?.note).toMatch(new RegExp(`^Operation ${id} \\(add_rooms\\) stopped after \\S+s: scheduler going is being deleted, which removes its rooms and versions; nothing to do$`));
  });

  /** A definition that runs until its test lets it go, and runners of it (each a leader in turn). */
  function waiting(): { letGo(): void; leaderOf(asked: string[]): OperationRunner; create(scheduler: string): Promise<string> } {
    let free = false;
    const waits: Definition = {
      name: 'test_waits',
      async execute(ctx) {
        ctx.event('Waiting to be let go');
        for (;;) {
          ctx.checkpoint();
          if (free) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    };
    return {
      letGo: () => {
        free = true;
      },
      leaderOf: (asked) => new OperationRunner(h.deps, { definitions: [...DEFINITIONS, waits], enqueue: (s) => asked.push(s) }),
      async create(scheduler) {
        const id = newOperationId(h.deps.now());
        await h.api.createOperation(buildOperation({ id, schedulerName: scheduler, definitionName: 'test_waits', input: {}, source: OperationSourceName.Api }));
        await h.caughtUp();
        return id;
      },
    };
  }

  test('a user\'s add_rooms or remove_rooms canceled, then stuck before its rollback (its operator killed): the count it moved is set back as the cancel asked, or said when it changed since', async () => {
    const stuckAdd = async (name: string, replicas: number, moves = ['roomsReplicas changed from 2 to 5'], definitionName: string = OperationDefinition.AddRooms): Promise<string> => {
      await h.createdScheduler(name, { roomsReplicas: replicas });
      const op = buildOperation({ id: newOperationId(h.deps.now()), schedulerName: name, definitionName, input: { amount: 3 }, source: OperationSourceName.Api });
      const id = op.metadata.name as string;
      await h.api.createOperation(op);
      // As a killed operator leaves it: started, the count moved (2 -> 5), the cancel asked, its lease expired.
      const at = new Date(h.deps.now() - 60_000).toISOString();
      await h.api.patchOperation(id, { spec: { cancelRequested: true } });
      await h.api.patchOperationStatus(id, { status: { status: 'in_progress', startedAt: at, lease: { holder: 'killed-replica', ttl: at },
        executionHistory: [{ createdAt: at, event: 'Starting operation' }, ...moves.map((event) => ({ createdAt: at, event }))] } });
      await h.caughtUp();
      await runner.reconcile(name);
      return id;
    };
    const events = async (id: string) => (await h.api.getOperation(id)).status?.executionHistory?.map((e) => e.event) ?? [];

    const restored = await stuckAdd('stuck-cancel', 5);
    expect((await h.api.getOperation(restored)).status?.status).toBe('error');
    expect(await events(restored)).toEqual(expect.arrayContaining([
      expect.stringMatching(/The cancel requested for it ran no rollback: its operator stopped first\.$/),
      'roomsReplicas restored to 2, as the cancel asked; the health check removes the rooms above it, never one with players',
    ]));
    expect((await h.api.getScheduler('stuck-cancel')).spec.roomsReplicas).toBe(2);

    // The count changed since (another change): left as it is, and said so with what to do.
    const changed = await stuckAdd('stuck-cancel-moved', 7);
    expect(await events(changed)).toContain('roomsReplicas was not set back to 2, as the cancel asked: it is 7 now, not the 5 this operation made it, so it changed since; to undo this operation, PATCH /schedulers/stuck-cancel-moved with {"roomsReplicas": 2}, or kubectl scale rks/stuck-cancel-moved --replicas=2');
    expect((await h.api.getScheduler('stuck-cancel-moved')).spec.roomsReplicas).toBe(7);

    // A removal that moved the count twice (down by the rooms chosen, up by those kept): set back from its last move to its first.
    const removal = await stuckAdd('stuck-cancel-removal', 10, ['roomsReplicas changed from 12 to 8', 'roomsReplicas changed from 8 to 10'], OperationDefinition.RemoveRooms);
    expect(await events(removal)).toContain('roomsReplicas restored to 12, as the cancel asked; the health check adds rooms up to it');
    expect((await h.api.getScheduler('stuck-cancel-removal')).spec.roomsReplicas).toBe(12);
  });

  test('a remove_rooms by amount for a scheduler that does not exist ends in error saying so, as an add_rooms does', async () => {
    const id = newOperationId(h.deps.now());
    await h.api.createOperation(buildOperation({ id, schedulerName: 'no-such-scheduler', definitionName: OperationDefinition.RemoveRooms, input: { amount: 1 }, source: OperationSourceName.Kubectl }));
    await h.caughtUp();
    await runner.reconcile('no-such-scheduler');
    const op = await endedInError(id, 'the removal ended in error');
    expect(op.status?.executionHistory?.map((e) => e.event)).toContain('Operation execution failed: scheduler no-such-scheduler not found');
  });

  test('an operation enqueued by a writer whose clock runs behind the API server\'s keeps its history once it ends', async () => {
    await h.createdScheduler('skewed', { roomsReplicas: 0 });
    // enqueuedAt from a clock a minute behind: before the Scheduler's creationTimestamp, which the
    // API server wrote. An unknown definition ends at once (evicted), with its history.
    const id = newOperationId(h.deps.now() - 60_000);
    await h.api.createOperation(buildOperation({ id, schedulerName: 'skewed', definitionName: 'no_such_definition', input: {}, source: OperationSourceName.Api, enqueuedAt: h.deps.now() - 60_000 }));
    await h.caughtUp();
    await h.converge(() => runner.reconcile('skewed'));
    await h.converge(() => runner.reconcile('skewed'));
    expect((await h.api.getOperation(id)).status).toMatchObject({ status: 'evicted' });
  });

  test('a graceful stop starts no operation and lets the running one end as it would within the drain', async () => {
    await h.createdScheduler('drain', { roomsReplicas: 0 });
    await h.createdScheduler('drain-next', { roomsReplicas: 0 });
    const w = waiting();
    const asked: string[] = [];
    const leader = w.leaderOf(asked);
    leader.setLeading(true);
    const running = await w.create('drain');
    await leader.reconcile('drain');
    await waitFor(async () => (await h.api.getOperation(running)).status?.executionHistory?.some((e) => e.event === 'Waiting to be let go'), { message: 'the execution under way' });

    const down = leader.shutDown('SIGTERM', { drainMs: 120_000, handOverMs: 10_000 });
    const queued = await w.create('drain-next');
    await leader.reconcile('drain-next');
    expect(leader.isRunning('drain-next')).toBe(false);
    w.letGo();
    await down;
    leader.setLeading(false);
    expect((await h.api.getOperation(running)).status?.executionHistory?.map((e) => e.event)).toEqual(['Starting operation', 'Waiting to be let go', 'Operation finished']);
    expect((await h.api.getOperation(queued)).status?.status ?? 'pending').toBe('pending');
  });

  test('an execution abandoned when leadership was lost (an API server that stopped answering) is ended by this replica once it leads again: finished with what it did when its definition can tell it, else stuck; each history says why it stopped', async () => {
    const why = 'this replica stopped leading: its leader Lease roomkeeper-system/roomkeeper-operator was not renewed within the renew deadline, 10 s (its last attempt: connect ECONNREFUSED)';
    const definition = (name: string, handOver?: Definition['handOver']): Definition => ({
      name,
      async execute(ctx) {
        ctx.event('Did the first step');
        for (;;) {
          ctx.checkpoint();
          await new Promise((r) => setTimeout(r, 20));
        }
      },
      ...(handOver ? { handOver } : {}),
    });
    const defs = [...DEFINITIONS, definition('test_done_so_far', () => ({ outcome: 'finished', account: 'the first step, which is all it had to do' })), definition('test_not_done')];
    const runUntilAbandoned = async (scheduler: string, definitionName: string): Promise<{ id: string; again: OperationRunner }> => {
      await h.createdScheduler(scheduler, { roomsReplicas: 0 });
      const id = newOperationId(h.deps.now());
      await h.api.createOperation(buildOperation({ id, schedulerName: scheduler, definitionName, input: {}, source: OperationSourceName.Api }));
      await h.caughtUp();
      const again = new OperationRunner(h.deps, { definitions: defs, enqueue: () => undefined });
      again.setLeading(true);
      await again.reconcile(scheduler);
      await waitFor(async () => (await h.api.getOperation(id)).status?.executionHistory?.some((e) => e.event === 'Did the first step'), { message: 'the execution under way' });
      again.setLeading(false, why);
      await waitFor(() => !again.isRunning(scheduler), { message: 'the execution abandoned' });
      expect((await h.api.getOperation(id)).status?.status).toBe('in_progress');
      again.setLeading(true);
      return { id, again };
    };
    const endOf = async (runner: OperationRunner, scheduler: string, id: string) => waitFor(async () => {
      await h.caughtUp();
      await runner.reconcile(scheduler);
      const op = await h.api.getOperation(id);
      return op.status?.status === 'in_progress' ? undefined : op;
    }, { timeoutMs: 30_000, intervalMs: 200, message: 'the operation ended once its lease expired' });

    const done = await runUntilAbandoned('abandoned-done', 'test_done_so_far');
    const finished = await endOf(done.again, 'abandoned-done', done.id);
    expect(finished.status?.status).toBe('finished');
    expect(finished.status?.conditions?.find((c) => c.type === 'Stuck')).toBeUndefined();
    expect(finished.status?.executionHistory?.map((e) => e.event)).toEqual([
      'Starting operation', 'Did the first step',
      `The operator stopped running this operation (${why}), after "Did the first step"; what it did stays: the first step, which is all it had to do`,
      'Operation finished',
    ]);
    done.again.setLeading(false);

    const notDone = await runUntilAbandoned('abandoned-not-done', 'test_not_done');
    const stuck = await endOf(notDone.again, 'abandoned-not-done', notDone.id);
    expect(stuck.status?.status).toBe('error');
    expect(stuck.status?.conditions?.find((c) => c.type === 'Stuck')?.status).toBe('True');
    expect(stuck.status?.executionHistory?.map((e) => e.event)).toEqual([
      'Starting operation', 'Did the first step',
      `The operator stopped running this operation (${why}), after "Did the first step"`,
      expect.stringMatching(/^Operation lease expired at \S+ \(holder controller-test\): the operation is stuck, its execution and rollback are not guaranteed\. It is not resumed/),
    ]);
    notDone.again.setLeading(false);
  });

  test('an execution that ended while the API server refused every write of its end (and leadership was lost meanwhile) has that end written, with its lines, once the API server answers and its lease has expired; not the stuck account', async () => {
    await h.createdScheduler('unwritten-end', { roomsReplicas: 0 });
    let free = false;
    const fails: Definition = {
      name: 'test_fails_when_let_go',
      async execute(ctx) {
        ctx.event('Did the first step');
        while (!free) await new Promise((r) => setTimeout(r, 20));
        throw new Error('the second step failed');
      },
    };
    const leader = new OperationRunner(h.deps, { definitions: [...DEFINITIONS, fails], enqueue: () => undefined });
    leader.setLeading(true);
    const id = newOperationId(h.deps.now());
    await h.api.createOperation(buildOperation({ id, schedulerName: 'unwritten-end', definitionName: 'test_fails_when_let_go', input: {}, source: OperationSourceName.Api }));
    await h.caughtUp();
    await leader.reconcile('unwritten-end');
    await waitFor(async () => (await h.api.getOperation(id)).status?.executionHistory?.some((e) => e.event === 'Did the first step'), { message: 'the execution under way' });
    h.sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'patch', resource: 'operations' } });
    try {
      free = true;
      // Leadership is lost while the end's write is retried (as in an outage): its retries write nothing more.
      await waitFor(() => h.sandbox.faults.injected > 2, { timeoutMs: 30_000, message: 'the end\'s write retried' });
      leader.setLeading(false, 'this replica stopped leading: its leader Lease was not renewed within the renew deadline');
      await waitFor(() => !leader.isRunning('unwritten-end'), { timeoutMs: 60_000, message: 'the execution ended, its end not written' });
      expect((await h.api.getOperation(id)).status?.status).toBe('in_progress');
    } finally {
      h.sandbox.faults.clear();
    }
    leader.setLeading(true);
    const ended = await waitFor(async () => {
      await h.caughtUp();
      await leader.reconcile('unwritten-end');
      const op = await h.api.getOperation(id);
      return op.status?.status === 'in_progress' ? undefined : op;
    }, { timeoutMs: 30_000, intervalMs: 200, message: 'its end written' });
    expect(ended.status?.status).toBe('error');
    expect(ended.status?.conditions?.find((c) => c.type === 'Stuck')).toBeUndefined();
    expect(ended.status?.executionHistory?.map((e) => e.event)).toEqual([
      'Starting operation', 'Did the first step', 'Operation execution failed: the second step failed',
      'Its end could not be written when it came (this replica stopped leading: its leader Lease was not renewed within the renew deadline); written once the API server answered again',
      'Operation ended in error',
    ]);
    leader.setLeading(false);
  });

  test('a running operation whose status is edited to an end (kubectl) is set back to in_progress at its next lease renewal, and can be canceled', async () => {
    await h.createdScheduler('edited-end', { roomsReplicas: 0 });
    const w = waiting();
    const leader = w.leaderOf([]);
    leader.setLeading(true);
    const id = await w.create('edited-end');
    await leader.reconcile('edited-end');
    await waitFor(async () => (await h.api.getOperation(id)).status?.executionHistory?.some((e) => e.event === 'Waiting to be let go'), { message: 'the execution under way' });
    await h.api.patchOperationStatus(id, { status: { status: 'finished' } });
    await waitFor(async () => (await h.api.getOperation(id)).status?.status === 'in_progress', { timeoutMs: 10_000, message: 'set back to in_progress' });
    await h.api.patchOperation(id, { spec: { cancelRequested: true } });
    await h.caughtUp();
    leader.observe(await h.api.getOperation(id));
    await waitFor(async () => (await h.api.getOperation(id)).status?.status === 'canceled', { timeoutMs: 10_000, message: 'canceled' });
    leader.setLeading(false);
  });

  test('a graceful stop puts a running operation back at the head of its queue, its history said; the next leader runs it again to its end', async () => {
    await h.createdScheduler('handover', { roomsReplicas: 0 });
    // Runs until it is let go: the first leader's execution is still running when it stops.
    const w = waiting();
    const asked: string[] = [];
    const id = await w.create('handover');

    const first = w.leaderOf(asked);
    first.setLeading(true);
    await first.reconcile('handover');
    await waitFor(async () => (await h.api.getOperation(id)).status?.executionHistory?.some((e) => e.event === 'Waiting to be let go'), { message: 'the execution under way' });
    await first.shutDown('SIGTERM', { drainMs: 0, handOverMs: 10_000 });
    first.setLeading(false);
    const stopped = await h.api.getOperation(id);
    expect(stopped.status?.status).toBe('pending');
    expect(stopped.status?.lease).toBeUndefined();
    expect(stopped.status?.executionHistory?.map((e) => e.event).slice(-1)).toEqual([
      'The operator stopped (SIGTERM) during this operation, after "Waiting to be let go"; what it did stays: its steps are safe to run again. Put back at the head of the queue: the next leader runs it again',
    ]);

    await h.caughtUp();
    const next = w.leaderOf(asked);
    next.setLeading(true);
    w.letGo();
    await next.reconcile('handover');
    await waitFor(() => asked.includes('handover') && !next.isRunning('handover'), { timeoutMs: 30_000, message: 'the next leader ran it' });
    const ended = await h.api.getOperation(id);
    expect(ended.status?.status).toBe('finished');
    expect(ended.status?.conditions?.find((c) => c.type === 'Stuck')).toBeUndefined();
    expect(ended.status?.executionHistory?.map((e) => e.event)).toEqual([
      'Starting operation', 'Waiting to be let go', expect.stringMatching(/^The operator stopped \(SIGTERM\)/),
      'Starting operation', 'Waiting to be let go', 'Operation finished',
    ]);
    next.setLeading(false);
  });
});
