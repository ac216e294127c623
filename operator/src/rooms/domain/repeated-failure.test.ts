import type { Operation } from '../../../../common/src/generated/resources';
import { ATTEMPT_ANNOTATION, HEALTH_FINGERPRINT_ANNOTATION } from '../../../../common/src/resources/labels';
import { backoffMs, decideRetry, describeIncident, incidentOf, isTransientFailure, prunableFailures } from './repeated-failure';

const S = 1000;
const NOW = 1_000_000 * S;

let seq = 0;
function op(definitionName: string, status: string, finishedAgoMs: number, over: { attempt?: number; fingerprint?: string; source?: 'operator' | 'api' } = {}): Operation {
  seq++;
  const finishedAt = new Date(NOW - finishedAgoMs).toISOString();
  return {
    apiVersion: 'roomkeeper.io/v1',
    kind: 'Operation',
    metadata: {
      name: `op-${seq}`,
      annotations: {
        ...(over.attempt !== undefined ? { [ATTEMPT_ANNOTATION]: String(over.attempt) } : {}),
        [HEALTH_FINGERPRINT_ANNOTATION]: over.fingerprint ?? 'fp',
      },
    },
    spec: { schedulerName: 's', definitionName, input: {}, priority: true, enqueuedAt: new Date(NOW - finishedAgoMs - 100).toISOString(), source: over.source ?? 'operator' },
    status: {
      status: status as 'error',
      finishedAt,
      executionHistory: status === 'error' ? [{ createdAt: finishedAt, event: 'Operation execution failed: namespaces "s" not found' }] : [],
    },
  };
}

describe('decideRetry', () => {
  const cases: { name: string; ops: Operation[]; fingerprint?: string; want: string }[] = [
    { name: 'no history: enqueue try 1', ops: [], want: 'enqueue 1 first' },
    { name: 'last one finished: enqueue try 1', ops: [op('add_rooms', 'error', 50 * S), op('add_rooms', 'finished', 40 * S)], want: 'enqueue 1 first' },
    { name: 'failed just now: wait 1 s', ops: [op('add_rooms', 'error', 100, { attempt: 1 })], want: `wait ${NOW - 100 + S}` },
    { name: 'failed 2 s ago once: try 2', ops: [op('add_rooms', 'error', 2 * S, { attempt: 1 })], want: 'enqueue 2 backoff-passed' },
    { name: 'third failure 3 s ago: wait 4 s after it', ops: [op('add_rooms', 'error', 3 * S, { attempt: 3 })], want: `wait ${NOW - 3 * S + 4 * S}` },
    { name: 'something changed: try 1 of a new incident', ops: [op('add_rooms', 'error', 100, { attempt: 5 })], fingerprint: 'other', want: 'enqueue 1 changed' },
    { name: 'other definitions do not count', ops: [op('remove_rooms', 'error', 100, { attempt: 1 })], want: 'enqueue 1 first' },
    { name: 'the API\'s operations do not count', ops: [op('add_rooms', 'error', 100, { attempt: 1, source: 'api' })], want: 'enqueue 1 first' },
    { name: 'the backoff is capped at a minute', ops: [op('add_rooms', 'error', 61 * S, { attempt: 20 })], want: 'enqueue 21 backoff-passed' },
  ];
  test.each(cases)('$name', ({ ops, fingerprint, want }) => {
    const d = decideRetry({ ops, definitionName: 'add_rooms', fingerprint: fingerprint ?? 'fp', now: NOW });
    expect(d.action === 'enqueue' ? `enqueue ${d.attempt} ${d.reason}` : `wait ${d.retryAt}`).toBe(want);
  });

  test('a failure the API server caused is tried again within 5 s, however often it repeated', () => {
    const failed = op('add_rooms', 'error', 6 * S, { attempt: 9 });
    failed.status!.executionHistory = [{ createdAt: '', event: 'Operation execution failed: room creation failed after 0/1 room: 500 Internal error occurred: injected fault' }];
    expect(decideRetry({ ops: [failed], definitionName: 'add_rooms', fingerprint: 'fp', now: NOW })).toMatchObject({ action: 'enqueue', attempt: 10 });
    expect(isTransientFailure('429 Too Many Requests')).toBe(true);
    expect(isTransientFailure('403 pods "x" is forbidden: exceeded quota: rooms')).toBe(false);
    expect(isTransientFailure('namespaces "s" not found')).toBe(false);
  });

  test('an add_rooms that failed but kept rooms it made moved the fleet on: the next try is made at once, and a failure after it starts a new incident', () => {
    const refused = 'Operation execution failed: room creation failed after 1/2 rooms: pods "r" is forbidden: exceeded quota: q, requested: pods=1, used: pods=7, limited: pods=7';
    const failedAfter = (o: Operation, kept: number | undefined): Operation => {
      o.status!.executionHistory = [{ createdAt: '', event: refused }, ...(kept === undefined ? [] : [{ createdAt: '', event: `Kept ${kept} of the rooms created by this operation: the rolling update to v2.0.0 wants it` }])];
      return o;
    };
    // A minute-long backoff (try 9) behind it, then a try that kept 1 room: no wait.
    const earlier = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => failedAfter(op('add_rooms', 'error', (40 - n) * S, { attempt: n }), undefined));
    const kept = failedAfter(op('add_rooms', 'error', 100, { attempt: 9 }), 1);
    expect(incidentOf([...earlier, kept], 'add_rooms')).toBeUndefined();
    expect(decideRetry({ ops: [...earlier, kept], definitionName: 'add_rooms', fingerprint: 'fp', now: NOW })).toEqual({ action: 'enqueue', attempt: 1, reason: 'first' });
    // The next try made none: an incident of 1 try, backed off 1 s, not a minute.
    const none = failedAfter(op('add_rooms', 'error', 50, { attempt: 1 }), undefined);
    const incident = incidentOf([...earlier, kept, none], 'add_rooms');
    expect(incident?.tries).toBe(1);
    expect(incident?.failed.map((o) => o.metadata.name)).toEqual([none.metadata.name]);
    expect(decideRetry({ ops: [...earlier, kept, none], definitionName: 'add_rooms', fingerprint: 'fp', now: NOW })).toMatchObject({ action: 'wait', retryAt: NOW - 50 + S });
  });

  test('the backoff doubles from one second up to a minute', () => {
    expect([1, 2, 3, 4, 6, 7, 20].map((n) => backoffMs(n) / S)).toEqual([1, 2, 4, 8, 32, 60, 60]);
  });
});

describe('incidentOf and prunableFailures', () => {
  test('counts tries from the attempt annotation and keeps the first and the two latest failures', () => {
    const ops = [op('add_rooms', 'finished', 100 * S), ...[1, 2, 3, 4, 5].map((n) => op('add_rooms', 'error', (10 - n) * S, { attempt: n }))];
    const incident = incidentOf(ops, 'add_rooms');
    expect(incident?.tries).toBe(5);
    expect(incident?.message).toBe('namespaces "s" not found');
    const names = incident?.failed.map((o) => o.metadata.name) ?? [];
    expect(prunableFailures(incident as NonNullable<typeof incident>)).toEqual(names.slice(1, 3));
    expect(describeIncident(incident as NonNullable<typeof incident>)).toMatch(/^add_rooms failed 5 times in a row .*last try at .*namespaces "s" not found; .*next try at /);
  });

  test('pruned history still counts: the latest try\'s attempt number wins', () => {
    const incident = incidentOf([op('add_rooms', 'error', 9 * S, { attempt: 1 }), op('add_rooms', 'error', 2 * S, { attempt: 6 }), op('add_rooms', 'error', S, { attempt: 7 })], 'add_rooms');
    expect(incident?.tries).toBe(7);
    expect(prunableFailures(incident as NonNullable<typeof incident>)).toEqual([]);
  });

  test('running operations are not part of an incident', () => {
    const running = op('add_rooms', 'in_progress', 0);
    expect(incidentOf([running], 'add_rooms')).toBeUndefined();
  });
});
