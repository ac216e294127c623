import type { Operation } from '../../../common/src/generated/resources';
import { planQueue, type QueueView } from './queue-plan';

const NOW = Date.parse('2026-11-26T12:00:00Z');

interface OpShape { at?: number; status?: string; definition?: string; cancel?: boolean; ttl?: number; holder?: string; priority?: boolean }

function op(name: string, o: OpShape = {}): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name },
    spec: {
      schedulerName: 's', definitionName: o.definition ?? 'add_rooms', enqueuedAt: new Date(NOW + (o.at ?? 0)).toISOString(),
      priority: o.priority ?? false, ...(o.cancel ? { cancelRequested: true } : {}),
    },
    status: {
      status: (o.status ?? 'pending') as never,
      ...(o.ttl !== undefined ? { lease: { ttl: new Date(NOW + o.ttl).toISOString(), holder: o.holder ?? 'other' } } : {}),
    },
  };
}

const known = (name: string) => ['add_rooms', 'remove_rooms', 'delete_scheduler'].includes(name);
/** Leases are written 5 s ahead (ROOMKEEPER_OPERATION_LEASE_TTL). */
const LEASE_TTL = 5_000;
const view = (runningHere?: string): QueueView => ({ isKnown: known, leaseTtlMs: LEASE_TTL, ...(runningHere ? { runningHere } : {}) });

/** The plan in a form a table can state: what ends (name:status), what starts, idle, requeue. */
function summary(ops: Operation[], runningHere?: string) {
  const plan = planQueue(ops, NOW, view(runningHere));
  return {
    end: plan.end.map((e) => `${String(e.op.metadata.name)}:${e.status}`),
    start: plan.start?.metadata.name,
    idle: plan.idle,
    requeueAfterMs: plan.requeueAfterMs,
  };
}

describe('planQueue', () => {
  test.each<[string, Operation[], string | undefined, ReturnType<typeof summary>]>([
    ['an empty queue is idle', [], undefined, { end: [], start: undefined, idle: true, requeueAfterMs: undefined }],
    ['only finished operations: idle (they may be pruned)', [op('f', { status: 'finished' })], undefined, { end: [], start: undefined, idle: true, requeueAfterMs: undefined }],
    ['the first pending in queue order starts', [op('b', { at: 2 }), op('a', { at: 1 })], undefined, { end: [], start: 'a', idle: false, requeueAfterMs: undefined }],
    ['a priority operation goes first', [op('n', { at: 1 }), op('p', { at: 5, priority: true })], undefined, { end: [], start: 'p', idle: false, requeueAfterMs: undefined }],
    ['a cancel asked before the start ends it; the next one starts', [op('a', { at: 1, cancel: true }), op('b', { at: 2 })], undefined, { end: ['a:canceled'], start: 'b', idle: false, requeueAfterMs: undefined }],
    ['an unknown definition is evicted; the next one starts', [op('a', { at: 1, definition: 'nope' }), op('b', { at: 2 })], undefined, { end: ['a:evicted'], start: 'b', idle: false, requeueAfterMs: undefined }],
    ['nothing starts while this replica runs one', [op('r', { status: 'in_progress', ttl: 5_000, holder: 'me' }), op('b', { at: 2 })], 'r', { end: [], start: undefined, idle: false, requeueAfterMs: undefined }],
    ['another replica\'s valid lease holds the queue until it expires (+50 ms)', [op('r', { status: 'in_progress', ttl: 5_000 }), op('b')], undefined, { end: [], start: undefined, idle: false, requeueAfterMs: 5_050 }],
    ['an expired lease: the operation is stuck (error), the next one starts', [op('r', { status: 'in_progress', ttl: -1 }), op('b')], undefined, { end: ['r:error'], start: 'b', idle: false, requeueAfterMs: undefined }],
    ['in progress without a lease: invalid (error)', [op('r', { status: 'in_progress' })], undefined, { end: ['r:error'], start: undefined, idle: true, requeueAfterMs: undefined }],
    ['a lease clocks 60 s apart could write still holds the queue', [op('r', { status: 'in_progress', ttl: LEASE_TTL + 60_000 }), op('b')], undefined, { end: [], start: undefined, idle: false, requeueAfterMs: LEASE_TTL + 60_050 }],
    ['a lease further ahead than any replica writes (year 9999, by kubectl): stuck (error), the next one starts', [op('r', { status: 'in_progress', ttl: Date.parse('9999-12-31T23:59:59Z') - NOW }), op('b')], undefined, { end: ['r:error'], start: 'b', idle: false, requeueAfterMs: undefined }],
    ['cancels are written even while another replica holds the queue', [op('r', { status: 'in_progress', ttl: 100 }), op('c', { cancel: true })], undefined, { end: ['c:canceled'], start: undefined, idle: false, requeueAfterMs: 150 }],
  ])('%s', (_name, ops, runningHere, expected) => {
    expect(summary(ops, runningHere)).toEqual(expected);
  });

  test('a stuck operation says what follows for its definition, with a condition and a scheduler Event', () => {
    const [ending] = planQueue([op('d', { status: 'in_progress', ttl: -1_000, holder: 'op-2', definition: 'delete_scheduler' })], NOW, view()).end;
    const text = `Operation lease expired at ${new Date(NOW - 1_000).toISOString()} (holder op-2): the operation is stuck, its execution and rollback are not guaranteed. It is not resumed; the scheduler controller enqueues another attempt of the deletion.`;
    expect(ending).toMatchObject({ status: 'error', events: [text], condition: { type: 'Stuck', reason: 'LeaseExpired', message: text } });
    expect(ending?.stuck).toBe(`Operation d (delete_scheduler) ended in error: ${text}`);
  });

  test('a stuck operation whose cancel was requested says that no rollback ran', () => {
    const [add] = planQueue([op('a', { status: 'in_progress', ttl: -1_000, holder: 'op-2', cancel: true })], NOW, view()).end;
    expect(add?.events[0]).toMatch(/; the health check brings the rooms to the desired count\. The cancel requested for it ran no rollback: its operator stopped first\.$/);
  });

  test('a stuck add_rooms or remove_rooms says how many rooms the scheduler had when it was found so (its own account went with its process); other definitions do not', () => {
    const fleetNow = () => ({ rooms: 267, roomsReplicas: 300 });
    const [add] = planQueue([op('a', { status: 'in_progress', ttl: -1_000, holder: 'op-2' })], NOW, { ...view(), fleetNow }).end;
    expect(add?.events[0]).toMatch(/; the health check brings the rooms to the desired count\. When it was found stuck, the scheduler had 267 rooms for roomsReplicas 300\.$/);
    const [remove] = planQueue([op('r', { status: 'in_progress', ttl: -1_000, holder: 'op-2', definition: 'remove_rooms', cancel: true })], NOW, { ...view(), fleetNow }).end;
    expect(remove?.events[0]).toMatch(/When it was found stuck, the scheduler had 267 rooms for roomsReplicas 300\. The cancel requested for it ran no rollback: its operator stopped first\.$/);
    const [del] = planQueue([op('d', { status: 'in_progress', ttl: -1_000, holder: 'op-2', definition: 'delete_scheduler' })], NOW, { ...view(), fleetNow }).end;
    expect(del?.events[0]).not.toContain('When it was found stuck');
  });

  test('an operation in progress without a lease is Invalid (NoLease)', () => {
    const [ending] = planQueue([op('x', { status: 'in_progress' })], NOW, view()).end;
    expect(ending?.condition).toMatchObject({ type: 'Invalid', reason: 'NoLease' });
  });

  test('a lease too far ahead is Invalid (LeaseTooFarAhead), and says when it would have expired and what follows', () => {
    const [ending] = planQueue([op('a', { status: 'in_progress', ttl: Date.parse('9999-12-31T23:59:59Z') - NOW, holder: 'ghost' })], NOW, view()).end;
    const text = 'Operation lease expires at 9999-12-31T23:59:59.000Z (holder ghost), further ahead than any operator replica writes one (5 s, ROOMKEEPER_OPERATION_LEASE_TTL, plus 60 s of clock skew): '
      + 'it was not written by a running operation (an edit of the status?), so the operation is taken as stuck, its execution and rollback are not guaranteed. It is not resumed; the health check brings the rooms to the desired count.';
    expect(ending).toMatchObject({ status: 'error', events: [text], condition: { type: 'Invalid', reason: 'LeaseTooFarAhead', message: text } });
    expect(ending?.stuck).toBe(`Operation a (add_rooms) ended in error: ${text}`);
  });

  test('an evicted operation is Invalid (UnknownDefinition)', () => {
    const [ending] = planQueue([op('x', { definition: 'nope' })], NOW, view()).end;
    expect(ending).toMatchObject({ status: 'evicted', events: ['Unknown operation definition "nope": evicted'], condition: { type: 'Invalid', reason: 'UnknownDefinition' } });
  });

  test('an operation enqueued before its scheduler was created (a restored record) is evicted, never run; one enqueued within clock skew of it runs', () => {
    const scheduler = { metadata: { name: 's', creationTimestamp: new Date(NOW - 60_000) } };
    // A restored delete_scheduler of an earlier scheduler of the name, with no status (the API server dropped it).
    const restored = op('old-delete', { definition: 'delete_scheduler', at: -3_600_000 });
    delete restored.status;
    const justBefore = op('gateway', { at: -90_000 }); // 30 s before the creation, by the gateway's clock
    const plan = planQueue([restored, justBefore], NOW, { ...view(), scheduler });
    const text = `Not run, evicted: enqueued at ${new Date(NOW - 3_600_000).toISOString()}, before scheduler s was created (at ${new Date(NOW - 60_000).toISOString()}), so it was asked of an earlier scheduler of that name `
      + 'and written back later (restored from a backup, or applied again from an old record); an operation never acts on a scheduler it was not asked of. '
      + 'To do it now, send the request again, or create a new Operation whose enqueuedAt is the time you create it';
    expect(plan.end).toEqual([{ op: restored, status: 'evicted', events: [text], condition: { type: 'Invalid', reason: 'EnqueuedBeforeScheduler', message: text } }]);
    expect(plan.start?.metadata.name).toBe('gateway');
    // Alone, it is not started either.
    expect(planQueue([restored], NOW, { ...view(), scheduler }).start).toBeUndefined();
    // With no Scheduler of the name, nothing is judged by time.
    expect(planQueue([restored], NOW, view()).start?.metadata.name).toBe('old-delete');
  });

  test('a canceled pending delete_scheduler says the deletion goes on; another canceled operation says only that it was canceled', () => {
    const ends = planQueue([op('d', { definition: 'delete_scheduler', cancel: true }), op('a', { at: 1, cancel: true })], NOW, view()).end;
    expect(ends.map((e) => e.events)).toEqual([
      ['Operation canceled by the user before it started', 'A cancel does not undo a deletion: scheduler s stays marked for deletion, and the scheduler controller enqueues another delete_scheduler after a backoff (DELETE /schedulers/s enqueues it at once)'],
      ['Operation canceled by the user before it started'],
    ]);
  });

  test('the plan is the same when made twice (pure)', () => {
    const ops = [op('r', { status: 'in_progress', ttl: -1 }), op('a', { cancel: true }), op('b')];
    expect(planQueue(ops, NOW, view())).toEqual(planQueue(ops, NOW, view()));
  });
});

describe('an ended operation whose status was edited back to pending or in progress', () => {
  const ended = (name: string, status: string, last: string | undefined): Operation => {
    const o = op(name, { status });
    o.status = { ...o.status, finishedAt: new Date(NOW - 60_000).toISOString(), executionHistory: last === undefined ? [] : [{ createdAt: '', event: 'Starting operation' }, { createdAt: '', event: last }] };
    return o;
  };

  it('never runs again: its end is written back as its history tells it, and the next pending one starts', () => {
    const plan = planQueue([ended('done', 'pending', 'Operation finished'), ended('gone', 'in_progress', 'Operation canceled'), ended('lost', 'pending', undefined), op('next', { at: 1 })], NOW, view());
    expect(plan.end.map((e) => [e.op.metadata.name, e.status, e.restored])).toEqual([['done', 'finished', true], ['gone', 'canceled', true], ['lost', 'error', true]]);
    expect(plan.end[0]?.events).toEqual([`status.status was set to pending after the operation had ended (at ${new Date(NOW - 60_000).toISOString()}), an edit of its status: it is set back to finished, as its history ends, and it does not run again; to do the same again, send a new request (or create a new Operation)`]);
    expect(plan.end[2]?.events[0]).toContain('its history does not say how it ended, so it is set to error');
    expect(plan.start?.metadata.name).toBe('next');
  });

  it('reads the end from the last line that tells one, whatever lines follow it', () => {
    const o = ended('deletion', 'pending', 'Operation canceled by the user before it started');
    o.status?.executionHistory?.push({ createdAt: '', event: 'A cancel does not undo a deletion: …' });
    expect(planQueue([o], NOW, view()).end.map((e) => e.status)).toEqual(['canceled']);
  });
});
