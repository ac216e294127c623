import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';
import { apiRequestStarted } from './api-waits';
import { cacheCheck, leaderLeaseCheck, Liveness, reconcileCheck, type CacheRequests, type LeaseHolder, type LivenessCheck } from './liveness';
import { WorkQueue } from './work-queue';

const MIN = 60_000;
const T0 = Date.parse('2026-12-03T12:00:00Z');

/** A clock the test moves. */
function testClock(): { now: () => number; advance: (ms: number) => void } {
  let t = T0;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

function livenessOf(checks: LivenessCheck[], now: () => number) {
  const logs = captureLogs('info');
  return { liveness: new Liveness(checks, { logger: logs.logger, now }), logs };
}

describe('reconcileCheck', () => {
  test('fails once the oldest running reconcile has run longer than the timeout, naming its queue and key; passes once it ends', async () => {
    const clock = testClock();
    let release: (() => void) | undefined;
    const queue = new WorkQueue({ concurrency: 2, now: clock.now, handler: (key) => (key === 'stuck' ? new Promise<undefined>((r) => { release = () => r(undefined); }) : Promise.resolve(undefined)) });
    const health = Object.assign(queue, { name: 'health' });
    const { liveness } = livenessOf([reconcileCheck([health], 10 * MIN)], clock.now);

    expect(liveness.report()).toEqual({ ok: true, failing: [], checks: [{ check: 'reconciles', ok: true, sees: 'no reconcile runs', timeoutSeconds: 600 }] });
    queue.add('stuck');
    await waitFor(() => release);
    clock.advance(10 * MIN);
    expect(liveness.report().ok).toBe(true); // exactly the timeout: not yet
    clock.advance(1);
    expect(liveness.report()).toEqual({
      ok: false,
      failing: [expect.objectContaining({ check: 'reconciles', failingSince: new Date(T0 + 10 * MIN).toISOString(), what: `the health reconcile of stuck has run since ${new Date(T0).toISOString()}` })],
      checks: [{ check: 'reconciles', ok: false, sees: `the health reconcile of stuck has run since ${new Date(T0).toISOString()}`, timeoutSeconds: 600 }],
    });
    release?.();
    await waitFor(() => queue.inFlight === 0);
    expect(liveness.report().ok).toBe(true);
    await queue.shutDown();
  });

  test('does not count the time a reconcile waits on the Kubernetes API (an outage that drops packets): only the rest of its run', async () => {
    const clock = testClock();
    const gates: { answer?: () => void; finish?: () => void } = {};
    const queue = new WorkQueue({
      concurrency: 1, now: clock.now,
      handler: async () => {
        // As the Kubernetes clients do for each request (common/src/kube/clients.ts): 11 minutes unanswered.
        const ended = apiRequestStarted();
        await new Promise<void>((r) => { gates.answer = r; });
        ended();
        await new Promise<void>((r) => { gates.finish = r; });
        return undefined;
      },
    });
    const { liveness } = livenessOf([reconcileCheck([Object.assign(queue, { name: 'schedulers' })], 10 * MIN)], clock.now);
    queue.add('s1');
    await waitFor(() => gates.answer);
    clock.advance(11 * MIN);
    const waiting = liveness.report();
    expect(waiting.ok).toBe(true);
    expect(waiting.checks[0]?.sees).toBe(`the schedulers reconcile of s1 has run since ${new Date(T0).toISOString()}, 11 min of it waiting on the Kubernetes API (not counted: requests time out)`);
    gates.answer?.();
    await waitFor(() => gates.finish);
    // Answered: from here its time counts. 10 minutes more is the timeout; one more ms fails.
    clock.advance(10 * MIN);
    expect(liveness.report().ok).toBe(true);
    clock.advance(1);
    expect(liveness.report().failing).toEqual([expect.objectContaining({ check: 'reconciles', failingSince: new Date(T0 + 21 * MIN).toISOString() })]);
    gates.finish?.();
    await queue.shutDown();
  });

  test('ages the oldest of several queues', () => {
    const clock = testClock();
    const queues = [
      { name: 'schedulers', oldestRunning: () => ({ key: 'young', since: T0 + 5 * MIN }) },
      { name: 'gamerooms', oldestRunning: () => ({ key: 'ns/old', since: T0 }) },
      { name: 'operations', oldestRunning: () => undefined },
    ];
    const { liveness } = livenessOf([reconcileCheck(queues, 10 * MIN)], clock.now);
    clock.advance(12 * MIN);
    expect(liveness.report().failing.map((f) => f.what)).toEqual([`the gamerooms reconcile of ns/old has run since ${new Date(T0).toISOString()}`]);
  });
});

describe('leaderLeaseCheck', () => {
  test('fails when this replica leads but has not renewed for the lease duration plus the slack; never for a standby', () => {
    const clock = testClock();
    const elector: LeaseHolder & { isLeader: boolean; lastRenewedAt: number } = { isLeader: true, lastRenewedAt: T0, lease: 'roomkeeper-system/roomkeeper-operator' };
    const { liveness } = livenessOf([leaderLeaseCheck(elector, 15_000, MIN)], clock.now);
    clock.advance(15_000 + MIN);
    expect(liveness.report().ok).toBe(true);
    clock.advance(1);
    const report = liveness.report();
    expect(report.failing).toEqual([expect.objectContaining({ check: 'leader-lease', failingSince: new Date(T0 + 75_000).toISOString(), what: `this replica leads and last renewed the Lease roomkeeper-system/roomkeeper-operator at ${new Date(T0).toISOString()}` })]);
    expect(report.failing[0]?.meaning).toContain('another replica may lead by now');
    elector.isLeader = false;
    expect(liveness.report().ok).toBe(true);
    elector.isLeader = true;
    elector.lastRenewedAt = clock.now();
    expect(liveness.report().ok).toBe(true);
  });
});

describe('cacheCheck', () => {
  test('fails when a list or watch start has had no answer for longer than the timeout; a running watch never fails it', () => {
    const clock = testClock();
    const rooms: { name: string; pendingRequest: CacheRequests['pendingRequest'] } = { name: 'gamerooms', pendingRequest: { since: T0, verb: 'watch' } };
    const pods: CacheRequests = { name: 'pods', pendingRequest: undefined };
    const { liveness } = livenessOf([cacheCheck([rooms, pods], 10 * MIN)], clock.now);
    clock.advance(10 * MIN + 1);
    expect(liveness.report().failing).toEqual([expect.objectContaining({ check: 'caches', what: `the gamerooms cache's watch request has had no answer since ${new Date(T0).toISOString()}` })]);
    rooms.pendingRequest = undefined;
    clock.advance(60 * MIN);
    expect(liveness.report().ok).toBe(true);
  });
});

describe('Liveness', () => {
  test('logs one warning when a check starts failing and one info when it passes again, however often it is asked', () => {
    const clock = testClock();
    let since: number | undefined = T0;
    const check: LivenessCheck = { name: 'reconciles', timeoutMs: MIN, meaning: 'm', idle: 'i', oldest: () => (since === undefined ? undefined : { since, what: 'w' }) };
    const { liveness, logs } = livenessOf([check], clock.now);
    clock.advance(2 * MIN);
    for (let i = 0; i < 5; i++) expect(liveness.report().ok).toBe(false);
    since = undefined;
    for (let i = 0; i < 5; i++) expect(liveness.report().ok).toBe(true);
    const said = logs.lines.filter((l) => String(l.message).startsWith('liveness check'));
    expect(said.map((l) => [l.level, l.message])).toEqual([
      ['warn', 'liveness check reconciles fails: w; /healthz answers 503 and the kubelet restarts the container after the liveness probe\'s failureThreshold; if it happens again, report it with this log'],
      ['info', 'liveness check reconciles passes again: /healthz answers 200'],
    ]);
    expect(said[0]).toMatchObject({ check: 'reconciles', failingSince: new Date(T0 + MIN).toISOString(), timeoutMs: MIN });
    expect(said[1]).toMatchObject({ failedForMs: MIN });
  });
});
