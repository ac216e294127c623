import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';
import { AFTER_PAUSE_MS, PauseWatch } from '../runtime/pauses';
import { ApiAccess, type AccessRequest } from './api-access';

const SERVER = 'https://10.0.0.1:6443';
const getScheduler: AccessRequest = { verb: 'get', path: '/apis/roomkeeper.io/v1/schedulers/s1' };
const patchLease: AccessRequest = { verb: 'patch', path: '/apis/coordination.k8s.io/v1/namespaces/rk/leases/roomkeeper' };
const watchRooms: AccessRequest = { verb: 'watch', path: '/apis/roomkeeper.io/v1/gamerooms' };
const listRooms: AccessRequest = { verb: 'list', path: '/apis/roomkeeper.io/v1/gamerooms' };

type Answer = [AccessRequest, number, string?];

describe('whether the API server serves this process', () => {
  const refusedCredentials = /^the Kubernetes API server refuses this replica's requests \(ready again by itself once it serves them\): get schedulers\.roomkeeper\.io was answered 401 Unauthorized: the API server at https:\/\/10\.0\.0\.1:6443 rejected the credentials: .*check its ServiceAccount token/;
  const forbiddenWatch = /watch gamerooms\.roomkeeper\.io \(all namespaces\) was answered 403 Forbidden: this identity may not watch gamerooms\.roomkeeper\.io \(all namespaces\): install with the Helm chart, whose RBAC grants it \(rbac\.create=true/;
  const cases: [string, Answer[], RegExp | undefined][] = [
    ['nothing answered yet', [], undefined],
    ['a 401', [[getScheduler, 401]], refusedCredentials],
    ['a 401, then any other answer (a 404 too: the credentials passed)', [[getScheduler, 401], [patchLease, 404]], undefined],
    ['a 401, then more 401s: the first request refused is named', [[getScheduler, 401], [patchLease, 401]], refusedCredentials],
    ['a 403 of a request that is not a cache\'s list or watch', [[patchLease, 403]], undefined],
    ['a 403 of a cache\'s watch', [[watchRooms, 403, 'gamerooms']], forbiddenWatch],
    ['a 403 of a cache\'s watch, then its list served: the watch still refused', [[watchRooms, 403, 'gamerooms'], [listRooms, 200, 'gamerooms']], forbiddenWatch],
    ['a 403 of a cache\'s watch, then a watch of another cache served', [[watchRooms, 403, 'gamerooms'], [watchRooms, 200, 'other']], forbiddenWatch],
    ['a 403 of a cache\'s watch, then its watch served', [[watchRooms, 403, 'gamerooms'], [watchRooms, 200, 'gamerooms']], undefined],
    ['a 403 of a cache\'s watch, then a 500 of it: still refused', [[watchRooms, 403, 'gamerooms'], [watchRooms, 500, 'gamerooms']], forbiddenWatch],
  ];
  it.each(cases)('%s', (_name, answers, reason) => {
    const access = new ApiAccess({ logger: captureLogs('info').logger, server: SERVER });
    for (const [request, status, cache] of answers) access.answered(request, status, cache);
    if (reason) expect(access.notReadyReason()).toMatch(reason);
    else expect(access.notReadyReason()).toBeUndefined();
  });

  it('names every refusal at once: the credentials and a cache', () => {
    const access = new ApiAccess({ logger: captureLogs('info').logger, server: SERVER });
    access.answered(watchRooms, 403, 'gamerooms');
    access.answered(getScheduler, 401);
    expect(access.notReadyReason()).toMatch(/401 Unauthorized: .*; also, watch gamerooms\.roomkeeper\.io \(all namespaces\) was answered 403 Forbidden/);
  });

  it('logs each change once, with the request and status, and no more while it lasts', async () => {
    const logs = captureLogs('info');
    const access = new ApiAccess({ logger: logs.logger, server: SERVER });
    for (const [request, status, cache] of [[getScheduler, 401], [patchLease, 401], [getScheduler, 200], [getScheduler, 200], [watchRooms, 403, 'gamerooms'], [watchRooms, 403, 'gamerooms'], [watchRooms, 200, 'gamerooms']] as Answer[]) {
      access.answered(request, status, cache);
    }
    await waitFor(() => logs.lines.length >= 4, { timeoutMs: 5_000, message: 'four log lines' });
    expect(logs.lines.map((l) => [l.level, l.request, l.statusCode])).toEqual([
      ['error', 'get schedulers.roomkeeper.io', 401],
      ['info', 'get schedulers.roomkeeper.io', 200],
      ['warn', 'watch gamerooms.roomkeeper.io (all namespaces)', 403],
      ['info', 'watch gamerooms.roomkeeper.io (all namespaces)', 200],
    ]);
    expect(logs.lines[0]).toMatchObject({ message: 'the API server rejects our credentials: /readyz answers 503 until it accepts them', whatToDo: expect.stringMatching(/ServiceAccount token/) as unknown });
    expect(logs.lines[2]).toMatchObject({ cache: 'gamerooms', whatToDo: expect.stringMatching(/rbac\.create=true/) as unknown });
  });

  it('asks again while the credentials are refused, and stops once they are accepted', () => {
    // Timers of the test's own: after the acceptance, no probe in five more intervals.
    jest.useFakeTimers();
    let probes = 0;
    let accept = false;
    const access = new ApiAccess({
      logger: captureLogs('info').logger,
      probeIntervalMs: 20,
      probe: () => {
        probes++;
        access.answered(getScheduler, accept ? 200 : 401);
        return Promise.resolve();
      },
    });
    try {
      access.answered(patchLease, 401);
      jest.advanceTimersByTime(40);
      expect(probes).toBe(2);
      expect(access.notReadyReason()).toBeDefined();
      accept = true;
      jest.advanceTimersByTime(20);
      expect(access.notReadyReason()).toBeUndefined();
      jest.advanceTimersByTime(100);
      expect(probes).toBe(3);
    } finally {
      access.stop();
      jest.useRealTimers();
    }
  });

});

describe('whether the API server answers at all', () => {
  it('from a request left unanswered until the next answer of any status: says since when, which request and what to do; logged once each way', () => {
    const logs = captureLogs('info');
    let now = Date.parse('2026-12-03T12:00:00Z');
    const access = new ApiAccess({ logger: logs.logger, server: SERVER, now: () => now });
    expect(access.unreachableReason()).toBeUndefined();
    // Never answered: said so, with the first request left unanswered.
    access.unanswered(patchLease, 'The operation was aborted due to timeout');
    expect(access.unreachableReason()).toMatch(/^the Kubernetes API server at https:\/\/10\.0\.0\.1:6443 has answered no request \(no request of this process was ever answered; the first one left unanswered, at 2026-12-03T12:00:00\.000Z: patch leases/);
    access.answered(getScheduler, 200);
    // The last answer at 12:00:00; the request it left unanswered timed out 10 s later.
    now += 10_000;
    access.unanswered(patchLease, 'The operation was aborted due to timeout');
    now += 30_000;
    access.unanswered(getScheduler, 'connect ECONNREFUSED 10.0.0.1:6443');
    expect(access.unreachableReason()).toBe('the Kubernetes API server at https://10.0.0.1:6443 has answered no request since 2026-12-03T12:00:00.000Z (the first request left unanswered since, noticed at 2026-12-03T12:00:10.000Z: patch leases.coordination.k8s.io in namespace rk: The operation was aborted due to timeout): check that the cluster runs and that the kubeconfig (E2E_KUBECONFIG, KUBECONFIG or the in-cluster ServiceAccount, in that order) points at it, and that this pod reaches it (network policies, the node\'s network); this replica goes on by itself once it answers, and a restart would not help (/healthz stays 200)');
    // Unanswered is not refused: /readyz's refusals are another matter.
    expect(access.notReadyReason()).toBeUndefined();
    access.answered(getScheduler, 500);
    expect(access.unreachableReason()).toBeUndefined();
    expect(logs.lines.filter((l) => /answer/.test(String(l.message))).map((l) => [l.level, l.message, l.silentForMs])).toEqual([
      ['warn', 'the Kubernetes API server does not answer: /readyz says so until it answers again; /healthz stays 200 (a restart would not help and would lose the caches)', undefined],
      ['info', 'the Kubernetes API server answers again', 0],
      ['warn', 'the Kubernetes API server does not answer: /readyz says so until it answers again; /healthz stays 200 (a restart would not help and would lose the caches)', undefined],
      // Silent from the last answer, not from when the first timeout was noticed.
      ['info', 'the Kubernetes API server answers again', 40_000],
    ]);
  });

  it('a request left unanswered just after this process was paused is told with the pause, not as the API server not answering; later ones as before', () => {
    const logs = captureLogs('info');
    let now = Date.parse('2026-12-06T12:00:00Z');
    const pauses = new PauseWatch({ logger: logs.logger, now: () => now });
    const access = new ApiAccess({ logger: logs.logger, server: SERVER, now: () => now, pauses });
    access.answered(getScheduler, 200);
    // SIGSTOP for 30 s: the timer's next turn comes 31 s after its last.
    now += 31_000;
    pauses.tick();
    access.unanswered(patchLease, 'The operation was aborted due to timeout');
    access.answered(patchLease, 200);
    // Long after the pause, an unanswered request is the API server's again.
    now += AFTER_PAUSE_MS + 1;
    access.unanswered(patchLease, 'The operation was aborted due to timeout');
    expect(logs.lines.filter((l) => l.level === 'warn').map((l) => [l.message, l.afterPause, l.pausedForMs])).toEqual([
      ['this process did not run for a while: the request timeouts and broken watches that follow are its own, not the API server\'s', undefined, 31_000],
      ['a request to the Kubernetes API server got no answer just after this process was paused: /readyz says the API server does not answer until a request is answered again, which, if the pause was the cause, is at once',
        'this process did not run for 31.0s until 2026-12-06T12:00:31.000Z (it was stopped: SIGSTOP, a frozen node or VM; or its event loop was blocked): requests in flight then timed out on its own clock and its watches broke, which says nothing about the API server', undefined],
      ['the Kubernetes API server does not answer: /readyz says so until it answers again; /healthz stays 200 (a restart would not help and would lose the caches)', undefined, undefined],
    ]);
  });

  it('a request this process could not send for want of a file descriptor (EMFILE) is told as that, not as the API server not answering', () => {
    const logs = captureLogs('info');
    const access = new ApiAccess({ logger: logs.logger, server: SERVER });
    access.answered(getScheduler, 200);
    access.unanswered(patchLease, 'no answer from the Kubernetes API server: connect EMFILE 10.0.0.1:6443 (this process has no file descriptor left for a connection; the request was not sent)');
    expect(access.unreachableReason()).toMatch(/: this process has no file descriptor left for a connection \(EMFILE: .*\), so the request never reached the API server, which may well be up: look for a flood of connections to this process's ports \(ROOMKEEPER_MAX_CONNECTIONS caps each API listener\), or raise the open-files limit/);
    expect(access.unreachableReason()).not.toContain('check that the cluster runs');
    const warned = logs.lines.filter((l) => l.level === 'warn');
    expect(warned.map((l) => l.message)).toEqual(['a request to the Kubernetes API server could not be sent: this process has no file descriptor left; /readyz says the API server does not answer until a request is answered again']);
    expect(String(warned[0]?.whatToDo)).toMatch(/^this process has no file descriptor left for a connection/);
  });
});
