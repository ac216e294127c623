/**
 * The operations engine against the sandbox API server, through the real client: queue order,
 * one operation at a time per scheduler, leases and stuck operations after a crash, cancel,
 * eviction, the rollbacks of the spec's table, and what a scheduler's deletion deletes and says.
 */
import * as k8s from '@kubernetes/client-node';
import type { Operation } from '../../common/src/generated/resources';
import { isConflict } from '../../common/src/kube/clients';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import type { ExecutionContext, OperationDefinition } from '../../operator/src/operations/execution';
import type { RunningOperator } from '../../operator/src/operator';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

/** A test-only operation: records when it starts and ends, and can wait for signals. */
class Journal {
  readonly events: { id: string; scheduler: string; phase: 'start' | 'end'; seq: number }[] = [];
  private seq = 0;
  private readonly signals = new Map<string, () => void>();
  private readonly raised = new Set<string>();
  executions = 0;

  raise(name: string): void {
    this.raised.add(name);
    this.signals.get(name)?.();
  }

  async wait(name: string, ctx: ExecutionContext): Promise<void> {
    while (!this.raised.has(name)) {
      ctx.checkpoint();
      await new Promise<void>((resolve) => {
        this.signals.set(name, resolve);
        setTimeout(resolve, 20);
      });
    }
  }

  definition(): OperationDefinition {
    return {
      name: 'test_operation',
      execute: async (ctx) => {
        this.executions++;
        const id = ctx.op.metadata.name as string;
        this.events.push({ id, scheduler: ctx.schedulerName, phase: 'start', seq: this.seq++ });
        if (typeof ctx.input.raise === 'string') this.raise(ctx.input.raise);
        if (typeof ctx.input.waitFor === 'string') await this.wait(ctx.input.waitFor, ctx);
        ctx.event('test step done');
        this.events.push({ id, scheduler: ctx.schedulerName, phase: 'end', seq: this.seq++ });
      },
    };
  }
}

async function enqueue(stack: Stack, schedulerName: string, input: Record<string, unknown>, enqueuedAt: number, definitionName = 'test_operation'): Promise<string> {
  const op = buildOperation({ id: newOperationId(), schedulerName, definitionName, input, source: 'api', enqueuedAt });
  await stack.api.createOperation(op);
  return op.metadata.name as string;
}

async function opStatus(stack: Stack, id: string): Promise<Operation> {
  return stack.api.getOperation(id);
}

describe('operations engine', () => {
  const journal = new Journal();
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ extraDefinitions: [journal.definition()], simulation: false });
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('20 operations of one scheduler run one at a time in enqueue order while another scheduler runs concurrently', async () => {
    const base = Date.now();
    const ids: string[] = [];
    // Operation 5 of scheduler A waits until scheduler B's operation has started, and B's waits
    // for A's 5th to start: if schedulers did not run concurrently this would never finish.
    for (let i = 0; i < 20; i++) {
      const input = i === 4 ? { raise: 'a5-started', waitFor: 'b-started' } : {};
      ids.push(await enqueue(stack, 'sched-a', input, base + i));
    }
    const bId = await enqueue(stack, 'sched-b', { waitFor: 'a5-started', raise: 'b-started' }, base);
    await waitFor(async () => {
      const all = await Promise.all([...ids, bId].map((id) => opStatus(stack, id)));
      return all.every((op) => op.status?.status === 'finished');
    }, { timeoutMs: 30_000, message: 'all operations finished' });

    const a = journal.events.filter((e) => e.scheduler === 'sched-a');
    const starts = a.filter((e) => e.phase === 'start').map((e) => e.id);
    expect(starts).toEqual(ids);
    for (let i = 1; i < ids.length; i++) {
      const prevEnd = a.find((e) => e.id === ids[i - 1] && e.phase === 'end')!.seq;
      const start = a.find((e) => e.id === ids[i] && e.phase === 'start')!.seq;
      expect(start).toBeGreaterThan(prevEnd);
    }
    const history = (await opStatus(stack, ids[0]!)).status?.executionHistory?.map((h) => h.event);
    expect(history).toEqual(['Starting operation', 'test step done', 'Operation finished']);
  });

  test('an ended operation whose status is edited back to pending never runs again: its end is written back, and the history says so', async () => {
    const id = await enqueue(stack, 'sched-reopened', {}, Date.now());
    const done = await waitFor(async () => {
      const o = await opStatus(stack, id);
      return o.status?.status === 'finished' ? o : undefined;
    }, { timeoutMs: 15_000, message: 'finished' });
    const runs = () => journal.events.filter((e) => e.id === id && e.phase === 'start').length;
    expect(runs()).toBe(1);
    // kubectl patch rkop <id> --subresource=status --type=merge -p '{"status":{"status":"pending"}}'
    await stack.api.patchOperationStatus(id, { status: { status: 'pending' } });
    const restored = await waitFor(async () => {
      const o = await opStatus(stack, id);
      return o.status?.status === 'finished' && (o.status.executionHistory?.length ?? 0) > 3 ? o : undefined;
    }, { timeoutMs: 15_000, message: 'set back to finished' });
    expect(restored.status?.executionHistory?.map((h) => h.event)).toEqual(['Starting operation', 'test step done', 'Operation finished',
      `status.status was set to pending after the operation had ended (at ${done.status?.finishedAt as string}), an edit of its status: it is set back to finished, as its history ends, and it does not run again; to do the same again, send a new request (or create a new Operation)`]);
    expect(restored.status?.finishedAt).toBe(done.status?.finishedAt);
    expect(runs()).toBe(1);
  });

  test('priority operations go to the head of the queue', async () => {
    const base = Date.now();
    const blocker = await enqueue(stack, 'sched-p', { waitFor: 'release-p' }, base);
    await waitFor(async () => (await opStatus(stack, blocker)).status?.status === 'in_progress');
    const normal = await enqueue(stack, 'sched-p', {}, base + 1);
    const prio = buildOperation({ id: newOperationId(), schedulerName: 'sched-p', definitionName: 'test_operation', input: {}, priority: true, source: 'operator', enqueuedAt: base + 2 });
    await stack.api.createOperation(prio);
    journal.raise('release-p');
    await waitFor(async () => (await opStatus(stack, normal)).status?.status === 'finished', { timeoutMs: 15_000 });
    const order = journal.events.filter((e) => e.scheduler === 'sched-p' && e.phase === 'start').map((e) => e.id);
    expect(order).toEqual([blocker, prio.metadata.name, normal]);
  });

  test('an unknown definition is evicted, with the reason in its history', async () => {
    const id = await enqueue(stack, 'sched-e', {}, Date.now(), 'no_such_operation');
    const op = await waitFor(async () => {
      const o = await opStatus(stack, id);
      return o.status?.status === 'evicted' ? o : undefined;
    });
    expect(op.status?.conditions?.find((c) => c.type === 'Invalid')?.status).toBe('True');
    expect(op.status?.executionHistory?.[0]?.event).toMatch(/Unknown operation definition "no_such_operation"/);
  });

  test('cancel: a pending operation ends canceled without running; an in-progress one is aborted and ends canceled', async () => {
    const running = await enqueue(stack, 'sched-c', { waitFor: 'never' }, Date.now());
    const pending = await enqueue(stack, 'sched-c', {}, Date.now() + 1);
    await waitFor(async () => (await opStatus(stack, running)).status?.status === 'in_progress');
    const startsBefore = journal.events.filter((e) => e.id === pending).length;
    await stack.api.patchOperation(pending, { spec: { cancelRequested: true } });
    await stack.api.patchOperation(running, { spec: { cancelRequested: true } });
    const [r, p] = await waitFor(async () => {
      const both = await Promise.all([opStatus(stack, running), opStatus(stack, pending)]);
      return both.every((o) => o.status?.status === 'canceled') ? both : undefined;
    }, { timeoutMs: 15_000 });
    expect(journal.events.filter((e) => e.id === pending).length).toBe(startsBefore);
    expect(r.status?.executionHistory?.map((h) => h.event)).toContain('Operation canceled by the user');
    // The last line says how it ended: a canceled operation never says it finished.
    expect(r.status?.executionHistory?.at(-1)?.event).toBe('Operation canceled');
    expect(r.status?.lease).toBeUndefined();
    expect(p.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/canceled by the user before it started/);
  });
});

describe('leases and leader election', () => {
  test('killing the leader mid-operation: the lease expires, the operation is shown stuck and never re-run, and the queue moves on', async () => {
    const journal = new Journal();
    const stack = await startStack({ operators: 2, extraDefinitions: [journal.definition()], simulation: false });
    try {
      await waitFor(() => stack.operators.filter((o) => o.isLeader).length === 1, { message: 'one leader' });
      const leader = stack.operators.find((o) => o.isLeader)!;
      const standby = stack.operators.find((o) => !o.isLeader)!;
      const stuck = await enqueue(stack, 'sched-k', { waitFor: 'never' }, Date.now());
      const next = await enqueue(stack, 'sched-k', {}, Date.now() + 1);
      const running = await waitFor(async () => {
        const o = await opStatus(stack, stuck);
        return o.status?.status === 'in_progress' ? o : undefined;
      });
      expect(running.status?.lease?.holder).toBe(leader.identity);
      expect(Date.parse(running.status?.lease?.ttl ?? '')).toBeGreaterThan(Date.now() - 5_000);

      await leader.crash();
      await waitFor(() => standby.isLeader, { timeoutMs: 15_000, message: 'the standby took over within 15 s' });
      const marked = await waitFor(async () => {
        const o = await opStatus(stack, stuck);
        return o.status?.status === 'error' ? o : undefined;
      }, { timeoutMs: 15_000 });
      expect(marked.status?.conditions?.find((c) => c.type === 'Stuck')?.status).toBe('True');
      expect(marked.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/lease expired .* stuck/);
      await waitFor(async () => (await opStatus(stack, next)).status?.status === 'finished', { timeoutMs: 15_000 });
      expect(journal.events.filter((e) => e.id === stuck && e.phase === 'start')).toHaveLength(1);
      expect(journal.events.filter((e) => e.id === next && e.phase === 'start')).toHaveLength(1);
    } finally {
      await stack.stop();
    }
  });
});

describe('a leader that loses its Lease', () => {
  test('stops reconciling at once: its health checks do not go on while another holds the Lease', async () => {
    const stack = await startStack({ simulation: false });
    try {
      const [operator] = stack.operators as [RunningOperator];
      await waitFor(() => operator.isLeader, { message: 'the operator leads' });
      await stack.api.createScheduler(schedulerObject('lease-lost', { roomsReplicas: 0 }) as never);
      const healthChecks = () => operator.metrics.counter('roomkeeper_reconcile_total', '').sum({ controller: 'health' });
      await waitFor(() => healthChecks() >= 3, { timeoutMs: 15_000, message: 'the health check runs on its interval' });
      // Another holder takes the Lease (a replica that won it while this one's renewals were late).
      const coordination = stack.kc.makeApiClient(k8s.CoordinationV1Api);
      const { leaseNamespace: namespace, leaseName: name } = stack.config;
      // The leader renews the Lease every retry period, so a read-then-replace can lose to a
      // renewal (409): read again and retry, as any other writer of it would.
      await waitFor(async () => {
        const lease = await coordination.readNamespacedLease({ name, namespace });
        try {
          await coordination.replaceNamespacedLease({
            name, namespace,
            body: { metadata: { name, namespace, resourceVersion: lease.metadata?.resourceVersion }, spec: { holderIdentity: 'another-replica', renewTime: new k8s.V1MicroTime(), leaseDurationSeconds: 3600 } },
          });
          return true;
        } catch (err) {
          if (isConflict(err)) return false;
          throw err;
        }
      }, { timeoutMs: 15_000, message: 'the Lease taken by another holder' });
      await waitFor(() => !operator.isLeader, { timeoutMs: 15_000, message: 'the operator stepped down' });
      const atStepDown = healthChecks();
      // Time passes as the stepped-down replica counts it: it reads the Lease every retry period
      // (500 ms here), and the health interval is 500 ms too.
      const leaseReads = () => stack.sandbox!.faults.requests({ verb: 'get', resource: 'leases' });
      const readsBefore = leaseReads();
      await waitFor(() => leaseReads() >= readsBefore + 8, { timeoutMs: 30_000, message: 'eight more Lease reads' });
      // At most the reconcile that was running when it stepped down.
      expect(healthChecks() - atStepDown).toBeLessThanOrEqual(1);
      expect(operator.isLeader).toBe(false);
    } finally {
      await stack.stop();
    }
  });
});

describe('a leader whose Lease renewals stop (a paused process)', () => {
  test('writes nothing once its renew deadline passed: it steps down at its next write, the standby ends the operation, and work resumed later is not sent', async () => {
    let resume: () => void = () => undefined;
    const resumed = new Promise<void>((r) => { resume = r; });
    let lateWrite: unknown;
    const paused: OperationDefinition = {
      name: 'paused_writer',
      execute: async (ctx) => {
        await ctx.deps.core.createNamespace({ body: { metadata: { name: 'paused-writer-1' } } });
        ctx.event('made namespace paused-writer-1');
        // No checkpoint: as in a frozen process, nothing here learns that time passed.
        await resumed;
        try {
          await ctx.deps.core.createNamespace({ body: { metadata: { name: 'paused-writer-2' } } });
        } catch (err) {
          lateWrite = err;
          throw err;
        }
      },
    };
    const stack = await startStack({ operators: 2, extraDefinitions: [paused], simulation: false });
    try {
      const leader = await waitFor(() => stack.operators.find((o) => o.isLeader), { message: 'a leader' });
      const standby = stack.operators.find((o) => o !== leader)!;
      const id = await enqueue(stack, 'paused-sched', {}, Date.now(), 'paused_writer');
      await waitFor(async () => (await opStatus(stack, id)).status?.executionHistory?.some((h) => h.event === 'made namespace paused-writer-1'), { message: 'the first write and its history line' });

      leader.stallElection();
      await waitFor(() => standby.isLeader, { timeoutMs: 20_000, message: 'the standby took over' });
      expect(leader.isLeader).toBe(false);
      const fenced = () => leader.metrics.counter('roomkeeper_kube_api_request_errors_total', '').sum({ code: 'fenced' });
      // The operation's lease renewal, due every second, was the write that found the deadline passed.
      expect(fenced()).toBeGreaterThanOrEqual(1);
      const ended = await waitFor(async () => {
        const o = await opStatus(stack, id);
        return o.status?.status === 'error' ? o : undefined;
      }, { timeoutMs: 15_000, message: 'the standby ended the operation' });
      const history = ended.status?.executionHistory?.map((h) => h.event) ?? [];
      expect(history).toEqual(['Starting operation', 'made namespace paused-writer-1', expect.stringMatching(/^Operation lease expired at \S+ \(holder \S+\): the operation is stuck/)]);

      // The frozen work goes on: its write is not sent, and the history stays as the standby wrote it.
      const fencedBefore = fenced();
      resume();
      await waitFor(() => lateWrite !== undefined, { message: 'the late write settled' });
      expect((lateWrite as Error).name).toBe('WriteFencedError');
      expect((lateWrite as Error).message).toMatch(/^create namespaces not sent: its leader Lease .* was not renewed within the renew deadline/);
      expect(fenced()).toBe(fencedBefore + 1);
      await expect(stack.core.readNamespace({ name: 'paused-writer-2' })).rejects.toMatchObject({ code: 404 });
      expect((await opStatus(stack, id)).status?.executionHistory?.map((h) => h.event)).toEqual(history);
    } finally {
      await stack.stop();
    }
  });
});

describe('rollbacks (spec: "Moves that are shown")', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ config: { addRoomsConcurrency: 1 } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const historyOf = async (name: string, definition: string): Promise<Operation[]> =>
    (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === definition);

  test('create_scheduler fails: the rollback deletes the namespace, version and rooms it created, and nothing else', async () => {
    const sb = stack.sandbox!;
    sb.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'create', resource: 'pods' } });
    await stack.api.createScheduler(schedulerObject('rb-create') as never);
    const [op] = await waitFor(async () => {
      const ops = await historyOf('rb-create', 'create_scheduler');
      return ops[0]?.status?.status === 'error' ? ops : undefined;
    }, { timeoutMs: 30_000 });
    sb.faults.clear();
    const events = op!.status?.executionHistory?.map((h) => h.event) ?? [];
    expect(events).toEqual(expect.arrayContaining([
      'Created namespace rb-create', 'Created version v1.0.0', 'Starting operation rollback',
      // The version was active: the scheduler controller's protection holds it until the rollback's
      // last step, which clears the Scheduler's version.
      'Deleting version v1.0.0 (it goes once roomkeeper.io/version-protection is released)',
      'Deleting namespace rb-create (the cluster removes it once it is empty)', 'Operation rollback flow execution finished with success',
    ]));
    await waitFor(async () => {
      try {
        await stack.core.readNamespace({ name: 'rb-create' });
        return false;
      } catch {
        return true;
      }
    }, { message: 'namespace deleted' });
    await waitFor(async () => (await stack.api.listSchedulerVersions('rb-create')).items.length === 0, { message: 'version deleted' });
    const scheduler = await waitFor(async () => {
      const s = await stack.api.getScheduler('rb-create');
      return s.status?.state === 'on-error' ? s : undefined;
    });
    expect(scheduler.status?.version).toBeUndefined();
  });

  test('create_scheduler after a failed one waits for the namespace and version that one\'s rollback is still removing, then makes them anew', async () => {
    // On kube-apiserver even an empty namespace stays Terminating for seconds, and a version waits on
    // its protection finalizer: here a test finalizer holds both until the test lets them go.
    const name = 'rb-retry';
    const hold = 'test.roomkeeper.io/hold';
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const holdNamespace = (on: boolean) => stack.core.patchNamespace({ name, body: { metadata: { finalizers: on ? [hold] : [] } } }, merge);
    const holdVersion = async (on: boolean) => {
      const v = (await stack.api.listSchedulerVersions(name)).items[0];
      if (!v) return false;
      const others = (v.metadata.finalizers ?? []).filter((f) => f !== hold);
      await stack.api.patchSchedulerVersion(v.metadata.name as string, { metadata: { resourceVersion: v.metadata.resourceVersion, finalizers: on ? [...others, hold] : others } });
      return true;
    };
    /** The attempts in enqueue order, and the second one's history. */
    const history = async () => {
      const ops = (await historyOf(name, 'create_scheduler')).sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt));
      return { ops, events: (ops[1]?.status?.executionHistory ?? []).map((h) => h.event) };
    };
    // Rooms fail slowly enough for the holds to be on before the rollback deletes what it made.
    stack.sandbox!.faults.set({ latencyMs: 1000, errorRate: 1, errorStatus: 500, match: { verb: 'create', resource: 'pods' } });
    await stack.api.createScheduler(schedulerObject(name, { roomsReplicas: 1 }) as never);
    await waitFor(async () => Boolean(await holdNamespace(true)), { timeoutMs: 20_000, message: 'namespace held' });
    await waitFor(() => holdVersion(true), { timeoutMs: 20_000, message: 'version held' });
    await waitFor(async () => (await history()).ops[0]?.status?.status === 'error', { timeoutMs: 60_000, message: 'the first create_scheduler ended in error' });
    stack.sandbox!.faults.clear();
    expect((await stack.core.readNamespace({ name })).metadata?.deletionTimestamp).toBeDefined();

    await stack.api.patchScheduler(name, { spec: { roomsReplicas: 2 } });
    await waitFor(async () => (await history()).events.includes(`Waiting for namespace ${name} to be removed`), { timeoutMs: 30_000, message: 'the second attempt waits for the namespace' });
    expect((await history()).events.join('\n')).toMatch(new RegExp(`^Namespace ${name} is being removed \\(since \\S+\\); it is made anew once it is gone$`, 'm'));
    await holdNamespace(false);
    await waitFor(async () => (await history()).events.includes('Waiting for version v1.0.0 to be removed'), { timeoutMs: 30_000, message: 'the second attempt waits for the version' });
    await waitFor(() => holdVersion(false), { timeoutMs: 10_000, message: 'version released' });
    const { events } = await waitFor(async () => {
      const h = await history();
      return h.ops[1]?.status?.status === 'finished' ? h : undefined;
    }, { timeoutMs: 30_000, message: 'the second create_scheduler finished' });
    expect(events).toEqual(expect.arrayContaining([`Namespace ${name} removed`, `Created namespace ${name}`, 'Version v1.0.0 removed', 'Created version v1.0.0']));
    await waitFor(async () => (await stack.api.listGameRooms(name)).items.filter((r) => r.status?.status === 'ready').length === 2, { timeoutMs: 30_000, message: '2 ready rooms' });
  });

  test('add_rooms fails part-way: the rollback deletes the rooms it created and keeps the others', async () => {
    await stack.api.createScheduler(schedulerObject('rb-add', { roomsReplicas: 2 }) as never);
    const before = await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('rb-add')).items;
      return rooms.length === 2 && rooms.every((r) => r.status?.status === 'ready') ? rooms.map((r) => r.metadata.name).sort() : undefined;
    }, { timeoutMs: 20_000 });
    const id = await enqueue(stack, 'rb-add', { amount: 200 }, Date.now(), 'add_rooms');
    await waitFor(async () => (await stack.api.listGameRooms('rb-add')).items.length >= 5, { timeoutMs: 20_000 });
    stack.sandbox!.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'create', resource: 'pods' } });
    const op = await waitFor(async () => {
      const o = await opStatus(stack, id);
      return o.status?.status === 'error' ? o : undefined;
    }, { timeoutMs: 30_000 });
    stack.sandbox!.faults.clear();
    expect(op.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(/Deleted the \d+ rooms? created by this operation/);
    expect(op.status?.executionHistory?.map((h) => h.event)).toContainEqual(expect.stringMatching(/^Operation execution failed: \S/));
    expect(op.status?.executionHistory?.at(-1)?.event).toBe('Operation ended in error');
    await waitFor(async () => {
      const names = (await stack.api.listGameRooms('rb-add')).items.filter((r) => !r.metadata.deletionTimestamp).map((r) => r.metadata.name).sort();
      return JSON.stringify(names) === JSON.stringify(before);
    }, { timeoutMs: 20_000, message: 'only the rooms from before remain' });
  });

  test('create_new_scheduler_version fails validation: no version is created, the validation room is gone, rooms are untouched; a later add_rooms builds on the active version', async () => {
    await stack.api.createScheduler(schedulerObject('rb-version', { roomsReplicas: 1 }) as never);
    const before = await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('rb-version')).items;
      return rooms.length === 1 && rooms[0]!.status?.status === 'ready' ? rooms.map((r) => r.metadata.name) : undefined;
    }, { timeoutMs: 20_000 });
    const broken = schedulerObject('rb-version', { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_POD', value: 'image-pull-failure' }]);
    // A kubectl edit of the spec alone (an update naming a resourceVersion lost to the operator's status writes).
    await stack.api.jsonPatchScheduler('rb-version', [{ op: 'replace', path: '/spec', value: (broken as { spec: never }).spec }]);
    const op = await waitFor(async () => {
      const ops = await historyOf('rb-version', 'create_new_scheduler_version');
      return ops[0]?.status?.status === 'error' ? ops[0] : undefined;
    }, { timeoutMs: 30_000 });
    const events = op.status?.executionHistory?.map((h) => h.event).join('\n') ?? '';
    expect(events).toMatch(/Major version detected, starting game room validation process/);
    expect(events).toMatch(/All validation attempts have failed/);
    expect((await stack.api.listSchedulerVersions('rb-version')).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    expect((await historyOf('rb-version', 'switch_active_version'))).toHaveLength(0);
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('rb-version')).items;
      return JSON.stringify(rooms.map((r) => r.metadata.name)) === JSON.stringify(before);
    }, { timeoutMs: 10_000, message: 'validation room deleted, original room kept' });
    // The room serves on the active version: in-sync (as Maestro after a new version's rollback), and Degraded tells the refusal.
    const refused = await waitFor(async () => {
      const s = await stack.api.getScheduler('rb-version');
      return s.status?.conditions?.some((c) => c.type === 'Degraded' && c.status === 'True' && c.message.startsWith(`operation ${op.metadata.name as string} (create_new_scheduler_version) failed`)) ? s : undefined;
    }, { timeoutMs: 10_000, message: 'Degraded tells the failed change' });
    expect(refused.status?.state).toBe('in-sync');

    // An add_rooms after the refusal builds on the active version, not on the refused definition:
    // the spec holds v1.0.0's again, one room more, and the version change that follows is minor.
    const addId = await enqueue(stack, 'rb-version', { amount: 1 }, Date.now(), 'add_rooms');
    const add = await waitFor(async () => {
      const o = await opStatus(stack, addId);
      return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 30_000, message: 'add_rooms ended' });
    expect(add.status?.status).toBe('finished');
    expect(add.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining([
      'The scheduler\'s spec held a definition whose version change failed; it now holds the active version v1.0.0\'s, with this change',
      'roomsReplicas changed from 1 to 2',
    ]));
    const spec = (await stack.api.getScheduler('rb-version')).spec;
    expect(JSON.stringify(spec)).not.toContain('image-pull-failure');
    expect(spec.roomsReplicas).toBe(2);
    const minor = await waitFor(async () => (await stack.api.listSchedulerVersions('rb-version')).items.find((v) => v.spec.version === 'v1.1.0'), { timeoutMs: 30_000, message: 'minor version v1.1.0' });
    expect(minor.spec.kind).toBe('minor');
  });

  test('create_new_scheduler_version whose validation room is never scheduled: the history names the pod\'s reason and what to check, not the game server', async () => {
    await stack.api.createScheduler(schedulerObject('rb-unplaced', { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await stack.api.getScheduler('rb-unplaced')).status?.version === 'v1.0.0', { timeoutMs: 20_000, message: 'v1.0.0 active' });
    // A required node label no node has: the validation room's pod stays Pending, Unschedulable.
    await stack.api.jsonPatchScheduler('rb-unplaced', [{ op: 'add', path: '/spec/spec/affinity', value: 'no-node-has-this-label' }]);
    const op = await waitFor(async () => {
      const ops = await historyOf('rb-unplaced', 'create_new_scheduler_version');
      return ops[0]?.status?.status === 'error' ? ops[0] : undefined;
    }, { timeoutMs: 40_000, message: 'the version change failed' });
    const events = op.status?.executionHistory?.map((h) => h.event) ?? [];
    // Told while it waits, before the attempt's time runs out.
    const early = events.findIndex((e) => /^Validation room rb-unplaced-\w+ \(attempt 1 of 1\) is not scheduled on a node: Unschedulable: 0\/\d+ nodes are available: .*; it waits until \S+Z, and meanwhile the health check replaces no lost room of this scheduler; check the version's affinity, toleration and resource requests against the cluster's nodes, or cancel this operation$/.test(e));
    expect(early).toBeGreaterThan(0);
    expect(events.filter((e) => e.startsWith('Validation room '))).toHaveLength(1);
    const attempt = events.find((e) => e.startsWith('1º Attempt: '));
    expect(events.indexOf(attempt as string)).toBeGreaterThan(early);
    expect(attempt).toMatch(/^1º Attempt: the validation room did not report ready within 10s \(it never reported ready: its pod was never scheduled on a node: Unschedulable: 0\/\d+ nodes are available: .*didn't match Pod's node affinity\/selector.*; check the version's affinity, toleration and resource requests against the cluster's nodes, then send the change again\)$/);
  });

  test('create_new_scheduler_version whose validation room is deleted by someone else: the attempt ends at once, saying so, not blaming the game server', async () => {
    await stack.api.createScheduler(schedulerObject('rb-vroom-deleted', { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await stack.api.getScheduler('rb-vroom-deleted')).status?.version === 'v1.0.0', { timeoutMs: 20_000, message: 'v1.0.0 active' });
    // A room that never becomes ready (the sandbox's `never-ready` image): validation waits on it.
    await stack.api.jsonPatchScheduler('rb-vroom-deleted', [{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:never-ready' }]);
    const room = await waitFor(async () => (await stack.api.listGameRooms('rb-vroom-deleted')).items.find((r) => r.spec.validation), { timeoutMs: 20_000, message: 'the validation room' });
    // Seen by the operator's cache before it goes, as kubectl would delete it.
    await waitFor(async () => (await historyOf('rb-vroom-deleted', 'create_new_scheduler_version'))[0]?.status?.executionHistory?.some((h) => h.event.startsWith('Major version detected')), { timeoutMs: 10_000, message: 'validating' });
    await stack.api.deleteGameRoom('rb-vroom-deleted', room.metadata.name as string);
    const op = await waitFor(async () => {
      const ops = await historyOf('rb-vroom-deleted', 'create_new_scheduler_version');
      return ops[0]?.status?.status === 'error' ? ops[0] : undefined;
    }, { timeoutMs: 40_000, message: 'the version change failed' });
    expect(op.status?.executionHistory?.map((h) => h.event)).toContain(
      `1º Attempt: the validation room ${room.metadata.name as string} was deleted before it reported ready, not by Roomkeeper (kubectl delete, or a deletion of namespace rb-vroom-deleted); nothing says the game server failed`);
  });

  test('create_new_scheduler_version deletes a validation room an earlier run left (its operator stopped mid-validation), and says so', async () => {
    await stack.api.createScheduler(schedulerObject('rb-vroom-left', { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await stack.api.getScheduler('rb-vroom-left')).status?.version === 'v1.0.0', { timeoutMs: 20_000, message: 'v1.0.0 active' });
    // A room that never becomes ready (the sandbox's `never-ready` image): validation waits on it.
    await stack.api.jsonPatchScheduler('rb-vroom-left', [{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:never-ready' }]);
    const left = await waitFor(async () => (await stack.api.listGameRooms('rb-vroom-left')).items.find((r) => r.spec.validation), { timeoutMs: 20_000, message: 'the validation room' });
    // The operator stops mid-validation (a rolling restart): the operation is put back in the queue, its room left.
    await stack.restartOperators({});
    const op = await waitFor(async () => {
      const ops = await historyOf('rb-vroom-left', 'create_new_scheduler_version');
      return ops[0]?.status?.status === 'error' ? ops[0] : undefined;
    }, { timeoutMs: 60_000, message: 'the version change ended' });
    // The stopped run handed the operation over without deleting its room; the next run deletes it first.
    expect(op.status?.executionHistory?.map((h) => h.event)).toContain(`Deleted validation room ${left.metadata.name as string}, left by an earlier validation that stopped before deleting it (its operator stopped)`);
    await waitFor(async () => !(await stack.api.listGameRooms('rb-vroom-left')).items.some((r) => r.metadata.name === left.metadata.name), { timeoutMs: 10_000, message: 'the left room gone' });
  });

  test('create_new_scheduler_version whose validation room pings ready but whose pod never becomes Ready: the history says the game server pinged and points at the pod\'s readiness', async () => {
    await stack.api.createScheduler(schedulerObject('rb-unready', { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await stack.api.getScheduler('rb-unready')).status?.version === 'v1.0.0', { timeoutMs: 20_000, message: 'v1.0.0 active' });
    // The sandbox's `never-ready` image: the pod runs (its game server pings ready) but never passes readiness.
    await stack.api.jsonPatchScheduler('rb-unready', [{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:never-ready' }]);
    let pinged: string | undefined;
    const op = await waitFor(async () => {
      // What the validation room reported while it lived: the test's own record of its ping.
      const room = (await stack.api.listGameRooms('rb-unready')).items.find((r) => r.spec.validation);
      if (room?.status?.pingStatus === 'ready' && room.status.lastPingAt) pinged = room.metadata.name;
      const ops = await historyOf('rb-unready', 'create_new_scheduler_version');
      return ops[0]?.status?.status === 'error' ? ops[0] : undefined;
    }, { timeoutMs: 40_000, intervalMs: 200, message: 'the version change failed' });
    expect(pinged).toBeDefined();
    const attempt = op.status?.executionHistory?.map((h) => h.event).find((e) => e.startsWith('1º Attempt: '));
    expect(attempt).toMatch(new RegExp('^1º Attempt: the validation room did not report ready within 10s \\(the game server pinged ready, last at \\S+, but its pod never became ready: containers not ready; '
      + 'check the readiness probe of the version\'s containers against the game server: the pod\'s Events, kept about an hour after the room is deleted, show its failed probes '
      + `\\(kubectl get events -n rb-unready --field-selector involvedObject.name=${pinged as string}\\); then send the change again\\)$`));
    expect(attempt).not.toContain('pings the rooms API');
  });

  test('switch_active_version to a version that does not exist ends in error, saying where the versions are listed, and the active version stays', async () => {
    await stack.api.createScheduler(schedulerObject('rb-switch', { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await stack.api.getScheduler('rb-switch')).status?.version === 'v1.0.0', { timeoutMs: 20_000, message: 'v1.0.0 active' });
    const id = await enqueue(stack, 'rb-switch', { newActiveVersion: 'v9.0.0' }, Date.now(), 'switch_active_version');
    const op = await waitFor(async () => {
      const o = await opStatus(stack, id);
      return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 30_000, message: 'the switch ended' });
    expect(op.status?.status).toBe('error');
    expect(op.status?.executionHistory?.map((h) => h.event)).toContain('Operation execution failed: version v9.0.0 of scheduler rb-switch not found: only versions the service created can be activated; '
      + 'GET /schedulers/rb-switch/versions (or kubectl get rksv -l roomkeeper.io/scheduler=rb-switch) lists them');
    expect((await stack.api.getScheduler('rb-switch')).status?.version).toBe('v1.0.0');
  });

  test('create_new_scheduler_version whose validation room the API server refuses: the history says it was the validation room, tries it once, and says what to fix', async () => {
    await stack.api.createScheduler(schedulerObject('rb-refused', { roomsReplicas: 1 }) as never);
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms('rb-refused')).items;
      return rooms.length === 1 && rooms[0]!.status?.status === 'ready';
    }, { timeoutMs: 20_000, message: 'rb-refused has a ready room' });
    const next = schedulerObject('rb-refused', { roomsReplicas: 1 }, [{ name: 'NEW_MAJOR', value: '1' }]);
    // As a ResourceQuota of the scheduler's namespace refuses a pod: every pod creation gets a 403.
    stack.sandbox!.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'create', resource: 'pods' } });
    let events: string[];
    try {
      await stack.api.jsonPatchScheduler('rb-refused', [{ op: 'replace', path: '/spec', value: (next as { spec: never }).spec }]);
      const op = await waitFor(async () => {
        const ops = await historyOf('rb-refused', 'create_new_scheduler_version');
        return ops[0]?.status?.status === 'error' ? ops[0] : undefined;
      }, { timeoutMs: 30_000, message: 'the version change ended in error' });
      events = op.status?.executionHistory?.map((h) => h.event) ?? [];
    } finally {
      stack.sandbox!.faults.clear();
    }
    const attempts = events.filter((e) => /^\dº Attempt/.test(e));
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatch(/^1º Attempt: the validation room could not be created: 403 /);
    expect(events).toContainEqual(expect.stringMatching(/^Operation execution failed: validation failed: the validation room could not be created: 403 .*; fix what it names \(the spec; a ResourceQuota, LimitRange or admission policy of namespace rb-refused; or what the operator sets on every room pod: runAsNonRoot by ROOMKEEPER_ROOM_RUN_AS_NON_ROOT, the namespace's Pod Security labels by ROOMKEEPER_ROOM_NAMESPACE_PSA_\*\), then send the change again; the active version keeps running$/));
    expect((await stack.api.listSchedulerVersions('rb-refused')).items.map((v) => v.spec.version)).toEqual(['v1.0.0']);
    expect((await stack.api.listGameRooms('rb-refused')).items.filter((r) => r.spec.validation)).toEqual([]);
  });
});

describe('delete_scheduler', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.stop();
  });

  const deletion = async (name: string, rooms = 2): Promise<string[]> => {
    await stack.api.createScheduler(schedulerObject(name, { roomsReplicas: rooms }) as never);
    await waitFor(async () => (await stack.api.listGameRooms(name)).items.filter((r) => r.status?.status === 'ready').length === rooms, { timeoutMs: 60_000, message: `${rooms} ready rooms` });
    await stack.api.deleteScheduler(name);
    await waitFor(async () => !(await stack.api.listSchedulers()).items.some((s) => s.metadata.name === name), { timeoutMs: 60_000, message: `scheduler ${name} deleted` });
    // The operation sees the Scheduler gone, says so, then finishes: its end is written after.
    const op = await waitFor(async () => {
      const [found] = (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'delete_scheduler');
      return ['finished', 'error', 'canceled'].includes(found?.status?.status ?? '') ? found : undefined;
    }, { timeoutMs: 30_000, message: `the delete_scheduler of ${name} ended` });
    expect(op.status?.status).toBe('finished');
    return op.status?.executionHistory?.map((h) => h.event) ?? [];
  };

  test('deletes the room pods with the namespace and says so', async () => {
    const events = await deletion('del-pods');
    expect(events).toContain('Deleting namespace del-pods and its room pods: 2 rooms, 2 room pods');
    expect(events.at(-2)).toBe('Scheduler del-pods deleted');
  });

  test('leaves the pods of a fleet over 100 rooms to the namespace controller, and says only what it did', async () => {
    const asked = () => stack.sandbox!.faults.requests({ verb: 'deletecollection', resource: 'pods' });
    const before = asked();
    const events = await deletion('del-large', 101);
    expect(events).toContain('Deleting namespace del-large: 101 rooms, 101 room pods');
    expect(asked()).toBe(before);
  }, 120_000);

  test('an operator that may not deletecollection pods leaves them to the namespace controller: slower, never stuck, and the history says so', async () => {
    stack.sandbox!.faults.set({ errorRate: 1, errorStatus: 403, match: { verb: 'deletecollection', resource: 'pods' } });
    try {
      const events = await deletion('del-forbidden');
      expect(events).toContain('Deleting namespace del-forbidden and its room pods: 2 rooms, 2 room pods');
      expect(events).toContain('Could not delete the room pods at once (403 pods is forbidden: cannot deletecollection resource "pods" in API group "": injected fault: '
        + 'the operator may not deletecollection pods; upgrade the chart\'s RBAC); the cluster\'s namespace controller deletes them, later');
      expect(events.at(-2)).toBe('Scheduler del-forbidden deleted');
      expect(stack.sandbox!.faults.injected).toBeGreaterThan(0);
    } finally {
      stack.sandbox!.faults.clear();
    }
  });
});
