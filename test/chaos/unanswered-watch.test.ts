/**
 * A cache watch the API server never answers: the gateway's /healthz answers 503 naming the
 * gamerooms cache once its watch has waited longer than ROOMKEEPER_LIVENESS_CACHE_TIMEOUT (the
 * kubelet would restart it), and 200 again once the watch is answered.
 *
 * On the sandbox the watch is held by its fault injection (an answer 10 s late, for the gateway's
 * bearer token only); on a cluster (E2E_KUBECONFIG, the real-API-server tier through
 * test/real-apiserver/chaos-suite.test.ts) by test/support/fault-proxy.ts, which only the gateway
 * goes through, holding the watch open and silent until the fault is cleared.
 */
import type { FailingCheck } from '../../common/src/runtime/liveness';
import type { FaultProxy } from '../support/fault-proxy';
import { startFaultedStack, type FaultedStack } from '../support/faulted-stack';
import type { Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const SUBJECT_TOKEN = 'liveness-subject';

describe('a cache watch that is never answered', () => {
  let faulted: FaultedStack | undefined;
  let stack: Stack;
  let proxy: FaultProxy | undefined;

  beforeAll(async () => {
    faulted = await startFaultedStack('gateway', SUBJECT_TOKEN, { operators: 0, simulation: false, config: { livenessCacheTimeout: 2000 } });
    ({ stack, proxy } = faulted);
  });
  afterAll(async () => {
    await faulted?.stop();
  });

  test('the gateway\'s /healthz answers 503 naming the gamerooms cache, then 200 once its watch is answered', async () => {
    const healthz = async () => {
      const res = await fetch(`${stack.gateway!.managementUrl}/healthz`);
      return { status: res.status, body: await res.json() as { status: string; failing?: FailingCheck[] } };
    };
    await waitFor(async () => (await healthz()).status === 200, { timeoutMs: 30_000, message: '/healthz answers 200 at the start' });

    if (proxy) {
      proxy.set([{ verbs: ['watch'], resources: ['gamerooms'], fault: { kind: 'unanswered' } }]);
      proxy.cutWatches();
    } else {
      stack.sandbox!.faults.set({ latencyMs: 10_000, match: { verb: 'watch', resource: 'gamerooms', token: SUBJECT_TOKEN } });
      stack.sandbox!.faults.cutWatches();
    }
    // Cutting the watches cuts the other caches' too: on a loaded machine one of them may take more
    // than the 2 s to be answered again and be named first, truly; the gamerooms one never is.
    const failing = await waitFor(async () => {
      const answer = await healthz();
      return answer.status === 503 && answer.body.failing?.some((f) => f.what.startsWith('the gamerooms cache')) ? answer.body.failing : undefined;
    }, { timeoutMs: 9_000, intervalMs: 50, message: '/healthz answers 503 naming the gamerooms cache' });
    expect(failing).toEqual([expect.objectContaining({ check: 'caches', what: expect.stringMatching(/^the gamerooms cache's watch request has had no answer since /) as unknown })]);

    faulted?.clear();
    await waitFor(async () => (await healthz()).status === 200, { timeoutMs: 30_000, message: '/healthz answers 200 once the watch is answered' });
  }, 120_000);
});
