import { captureLogs } from '../../test/support/log-capture';
import { healthzAnswer, readyzAnswer } from './health-answers';
import { Liveness, type LivenessCheck } from './runtime/liveness';

const T0 = Date.parse('2026-12-03T12:00:00Z');

describe('/healthz answers', () => {
  const check = (since: number | undefined): LivenessCheck => ({
    name: 'reconciles', timeoutMs: 60_000, meaning: 'a reconcile never ends', idle: 'no reconcile runs',
    oldest: () => (since === undefined ? undefined : { since, what: `the health reconcile of s1 has run since ${new Date(since).toISOString()}` }),
  });

  test('200 with every check and what it sees; 503 naming the failing one, since when, what it means and what to do', () => {
    const now = () => T0 + 120_000;
    const logger = captureLogs('info').logger;
    expect(healthzAnswer(new Liveness([check(undefined)], { logger, now }))).toEqual({
      statusCode: 200, body: { status: 'ok', checks: [{ check: 'reconciles', ok: true, sees: 'no reconcile runs', timeoutSeconds: 60 }] },
    });
    expect(healthzAnswer(new Liveness([check(T0)], { logger, now }))).toEqual({
      statusCode: 503,
      body: {
        status: 'unhealthy',
        failing: [{ check: 'reconciles', failingSince: new Date(T0 + 60_000).toISOString(), what: `the health reconcile of s1 has run since ${new Date(T0).toISOString()}`, meaning: 'a reconcile never ends' }],
        checks: [{ check: 'reconciles', ok: false, sees: `the health reconcile of s1 has run since ${new Date(T0).toISOString()}`, timeoutSeconds: 60 }],
        whatToDo: expect.stringMatching(/^the kubelet restarts the container after the livenessProbe's failureThreshold .*report it with the log line/) as unknown,
      },
    });
  });

  test('a process without liveness checks answers 200 while it answers HTTP', () => {
    expect(healthzAnswer(undefined)).toEqual({ statusCode: 200, body: { status: 'ok', checks: [] } });
  });
});

describe('/readyz answers', () => {
  test('every check with its state; 503 with the reasons of the checks that gate readiness; one that does not gate says why the process is ready all the same', () => {
    const reasons: Record<string, string | undefined> = { caches: undefined, 'api server': undefined };
    const checks = [
      { name: 'caches', notReadyReason: () => reasons.caches },
      { name: 'api server', notReadyReason: () => reasons['api server'], gates: false, whyStillReady: 'it serves from its caches' },
    ];
    expect(readyzAnswer(checks)).toEqual({ statusCode: 200, body: { status: 'ready', checks: [{ check: 'caches', ready: true }, { check: 'api server', ready: true }] } });
    reasons['api server'] = 'the API server has answered no request since T';
    expect(readyzAnswer(checks)).toEqual({
      statusCode: 200,
      body: { status: 'ready', checks: [{ check: 'caches', ready: true }, { check: 'api server', ready: false, reason: 'the API server has answered no request since T', stillReadyBecause: 'it serves from its caches' }] },
    });
    reasons.caches = 'gamerooms still listing: wait';
    expect(readyzAnswer(checks)).toEqual({
      statusCode: 503,
      body: {
        status: 'not ready', reason: 'gamerooms still listing: wait',
        checks: [{ check: 'caches', ready: false, reason: 'gamerooms still listing: wait' }, { check: 'api server', ready: false, reason: 'the API server has answered no request since T', stillReadyBecause: 'it serves from its caches' }],
      },
    });
  });
});
