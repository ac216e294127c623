import type { Operation } from '../generated/resources';
import { ATTEMPT_BACKOFF_MAX_MS, ATTEMPT_BACKOFF_MS, decideAttempt, nextAttempt, nextAttemptId, stuckVersionOperation, type AttemptRule } from './attempts';

const T0 = Date.parse('2026-11-25T10:00:00Z');

function op(id: string, definitionName: string, status: string | undefined, opts: { stuck?: boolean; finishedAt?: number; last?: string } = {}): Operation {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: id },
    spec: { schedulerName: 's', definitionName, input: {}, enqueuedAt: new Date(T0).toISOString() },
    ...(status ? {
      status: {
        status: status as never,
        ...(opts.finishedAt !== undefined ? { finishedAt: new Date(opts.finishedAt).toISOString() } : {}),
        ...(opts.stuck ? { conditions: [{ type: 'Stuck', status: 'True', reason: 'LeaseExpired', message: 'm', lastTransitionTime: new Date(T0).toISOString() }] } : {}),
        ...(opts.last ? { executionHistory: [{ createdAt: new Date(T0).toISOString(), event: opts.last }] } : {}),
      },
    } : {}),
  };
}

const del: AttemptRule = { definitionName: 'delete_scheduler', firstId: 'first', input: {} };
const create: AttemptRule = { definitionName: 'create_scheduler', firstId: 'first', input: { scheduler: { name: 's' } } };

describe('another attempt of what the Scheduler wants done', () => {
  test.each([
    ['no attempt yet: the first', del, [], T0, { action: 'enqueue', id: 'first' }],
    ['the first is pending: nothing', del, [op('first', 'delete_scheduler', undefined)], T0, { action: 'none' }],
    ['the first runs: nothing', del, [op('first', 'delete_scheduler', 'in_progress')], T0, { action: 'none' }],
    ['the first finished: nothing', del, [op('first', 'delete_scheduler', 'finished', { finishedAt: T0 })], T0 + 3_600_000, { action: 'none' }],
    ['a delete that ended in error: wait out the backoff', del, [op('first', 'delete_scheduler', 'error', { finishedAt: T0 })], T0 + 1000, { action: 'wait', ms: ATTEMPT_BACKOFF_MS - 1000 }],
    ['a delete that ended in error, backoff over: attempt 2', del, [op('first', 'delete_scheduler', 'error', { finishedAt: T0 })], T0 + ATTEMPT_BACKOFF_MS, { action: 'enqueue', id: nextAttemptId('first') }],
    ['a canceled delete gets another attempt too', del, [op('first', 'delete_scheduler', 'canceled', { finishedAt: T0 })], T0 + ATTEMPT_BACKOFF_MS, { action: 'enqueue', id: nextAttemptId('first') }],
    ['the backoff doubles with each failed attempt', del,
      [op('first', 'delete_scheduler', 'error', { finishedAt: T0 - 60_000 }), op(nextAttemptId('first'), 'delete_scheduler', 'error', { finishedAt: T0 })],
      T0, { action: 'wait', ms: 2 * ATTEMPT_BACKOFF_MS }],
    ['a create that ended in error: nothing (a new spec generation repairs it)', create, [op('first', 'create_scheduler', 'error', { finishedAt: T0 })], T0 + 3_600_000, { action: 'none' }],
    ['a create the cluster refused (a ResourceQuota): attempt 2 once the backoff is over', create,
      [op('first', 'create_scheduler', 'error', { finishedAt: T0, last: 'Operation execution failed: room creation failed after 0/2 rooms: 403 Forbidden: pods "s-x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0' })],
      T0 + ATTEMPT_BACKOFF_MS, { action: 'enqueue', id: nextAttemptId('first') }],
    ['a create the cluster refused, within the backoff: wait', create,
      [op('first', 'create_scheduler', 'error', { finishedAt: T0, last: 'Operation execution failed: room creation failed after 0/2 rooms: 403 Forbidden: pods "s-x" is forbidden: violates PodSecurity "baseline:latest": hostPort' })],
      T0 + 1000, { action: 'wait', ms: ATTEMPT_BACKOFF_MS - 1000 }],
    ['a create the API server found invalid (422): nothing (the definition\'s fault)', create,
      [op('first', 'create_scheduler', 'error', { finishedAt: T0, last: 'Operation execution failed: 422 Unprocessable Entity: Pod "s-x" is invalid: spec.containers[0].image: Required value' })],
      T0 + 3_600_000, { action: 'none' }],
    ['a create that got stuck: attempt 2', create, [op('first', 'create_scheduler', 'error', { finishedAt: T0, stuck: true })], T0 + ATTEMPT_BACKOFF_MS, { action: 'enqueue', id: nextAttemptId('first') }],
    ['operations of other definitions do not count', del, [op('first', 'create_scheduler', 'error', { finishedAt: T0 })], T0, { action: 'enqueue', id: 'first' }],
  ])('%s', (_name, rule, ops, now, expected) => {
    expect(decideAttempt(ops, rule, now)).toMatchObject(expected);
  });

  test('the next attempt says which attempt it follows and how that one ended', () => {
    const d = decideAttempt([op('first', 'delete_scheduler', 'error', { finishedAt: T0, stuck: true, last: 'Waiting for room pods to be deleted: 3' })], del, T0 + ATTEMPT_BACKOFF_MS);
    expect(d).toMatchObject({ action: 'enqueue', input: { attempt: 2, previousAttempt: 'first' } });
    expect(d.action === 'enqueue' && d.input.attemptNote).toBe('Attempt 2: attempt 1 (first) got stuck (its lease was not renewed in time: its operator stopped, or could not reach the API server); its last entry: Waiting for room pods to be deleted: 3');
  });

  test('asked again by a user (nextAttempt, no backoff): the next attempt at once; otherwise the latest attempt\'s id', () => {
    const canceled = [op('first', 'delete_scheduler', 'canceled', { finishedAt: T0 })];
    expect(nextAttempt(canceled, del)).toMatchObject({ action: 'enqueue', id: nextAttemptId('first'), input: { attempt: 2 } });
    const running = [...canceled, op(nextAttemptId('first'), 'delete_scheduler', 'in_progress')];
    expect(nextAttempt(running, del)).toEqual({ action: 'none', latest: nextAttemptId('first') });
  });

  test('the backoff is capped', () => {
    const chain: Operation[] = [];
    let id = 'first';
    for (let i = 0; i < 12; i++) {
      chain.push(op(id, 'delete_scheduler', 'error', { finishedAt: T0 }));
      id = nextAttemptId(id);
    }
    expect(decideAttempt(chain, del, T0)).toEqual({ action: 'wait', ms: ATTEMPT_BACKOFF_MAX_MS });
  });
});

describe('the latest version operation, when stuck, gets another attempt', () => {
  const at = (o: Operation, enqueuedAt: number, input: Record<string, unknown> = {}): Operation => ({ ...o, spec: { ...o.spec, enqueuedAt: new Date(enqueuedAt).toISOString(), input } });

  test('a stuck switch, the latest: the rule for its next attempt, with its input and without the attempt fields', () => {
    const ops = [
      at(op('cnv', 'create_new_scheduler_version', 'finished', { finishedAt: T0 }), T0 - 2000),
      at(op('sw', 'switch_active_version', 'error', { finishedAt: T0, stuck: true }), T0 - 1000, { newActiveVersion: 'v2.0.0' }),
    ];
    const rule = stuckVersionOperation(ops);
    expect(rule).toEqual({ definitionName: 'switch_active_version', firstId: 'sw', input: { newActiveVersion: 'v2.0.0' } });
    expect(decideAttempt(ops, rule!, T0 + ATTEMPT_BACKOFF_MS)).toMatchObject({ action: 'enqueue', id: nextAttemptId('sw'), input: { newActiveVersion: 'v2.0.0', attempt: 2, previousAttempt: 'sw' } });
  });

  test('a stuck second attempt: the chain starts at the first, so the third attempt is next', () => {
    const second = nextAttemptId('cnv');
    const ops = [
      at(op('cnv', 'create_new_scheduler_version', 'error', { finishedAt: T0 - 60_000, stuck: true }), T0 - 90_000, { scheduler: { name: 's' } }),
      at(op(second, 'create_new_scheduler_version', 'error', { finishedAt: T0, stuck: true }), T0 - 50_000, { scheduler: { name: 's' }, attempt: 2, previousAttempt: 'cnv', attemptNote: 'n' }),
    ];
    const rule = stuckVersionOperation(ops);
    expect(rule).toEqual({ definitionName: 'create_new_scheduler_version', firstId: 'cnv', input: { scheduler: { name: 's' }, firstAttempt: 'cnv' } });
    expect(decideAttempt(ops, rule!, T0 + 3_600_000)).toMatchObject({ action: 'enqueue', id: nextAttemptId(second), input: { attempt: 3, previousAttempt: second } });
  });

  test('previousAttempt links that loop (written by hand) end the walk where they come back', () => {
    const ops = [
      at(op('a', 'switch_active_version', 'error', { finishedAt: T0 - 60_000, stuck: true }), T0 - 90_000, { newActiveVersion: 'v2.0.0', previousAttempt: 'b' }),
      at(op('b', 'switch_active_version', 'error', { finishedAt: T0, stuck: true }), T0 - 50_000, { newActiveVersion: 'v2.0.0', previousAttempt: 'a' }),
      at(op('self', 'create_new_scheduler_version', 'finished', { finishedAt: T0 }), T0 - 95_000, { previousAttempt: 'self' }),
    ];
    expect(stuckVersionOperation(ops)).toEqual({ definitionName: 'switch_active_version', firstId: 'a', input: { newActiveVersion: 'v2.0.0' } });
    const selfLoop = [at(op('self', 'switch_active_version', 'error', { finishedAt: T0, stuck: true }), T0, { newActiveVersion: 'v3.0.0', previousAttempt: 'self' })];
    expect(stuckVersionOperation(selfLoop)).toEqual({ definitionName: 'switch_active_version', firstId: 'self', input: { newActiveVersion: 'v3.0.0' } });
  });

  test.each([
    ['a later version operation supersedes the stuck one', [
      at(op('old', 'create_new_scheduler_version', 'error', { finishedAt: T0, stuck: true }), T0 - 2000),
      at(op('new', 'switch_active_version', 'finished', { finishedAt: T0 }), T0 - 1000),
    ]],
    ['an error that is not stuck is the operation\'s verdict', [at(op('sw', 'switch_active_version', 'error', { finishedAt: T0 }), T0)]],
    ['no version operation', [at(op('add', 'add_rooms', 'error', { finishedAt: T0, stuck: true }), T0)]],
  ])('%s: none', (_name, ops) => {
    expect(stuckVersionOperation(ops)).toBeUndefined();
  });
});
