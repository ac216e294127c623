/**
 * What the operator's /healthz and /readyz answer while it starts (sandbox): it listens before its
 * caches make their first list; meanwhile /healthz answers 200 (a start is no fault: the chart's
 * startupProbe only waits for the port, and liveness must not fail because the start takes long)
 * and /readyz 503 naming the cache still listing and for how long. Once every cache has listed,
 * /readyz answers 200 whether this replica leads or not.
 */
import { loadConfig } from '../../common/src/config';
import type { ReadinessState } from '../../common/src/health-answers';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import { startSandbox, type Sandbox } from '../../sandbox/src/index';
import { captureLogs } from '../support/log-capture';
import { freePort } from '../support/ports';
import { CRD_DIR, TEST_CONFIG } from '../support/stack';
import { waitFor } from '../support/wait';

describe('the operator\'s probes while it starts (sandbox)', () => {
  let sandbox: Sandbox;
  let operator: RunningOperator | undefined;

  beforeAll(async () => {
    sandbox = await startSandbox({ crdDirs: [CRD_DIR] });
  });
  afterAll(async () => {
    sandbox.faults.clear();
    await operator?.stop('test end', { drainMs: 0 });
    await sandbox.stop();
  });

  test('listening with a cache still listing: /healthz 200, /readyz 503 naming it; ready once every cache listed', async () => {
    const port = await freePort();
    // The rooms cache's first list is answered 3 s late.
    sandbox.faults.set({ latencyMs: 3000, match: { verb: 'list', resource: 'gamerooms' } });
    const config = loadConfig({}, { ...TEST_CONFIG, operatorPort: port, identity: 'startup-probes', roomsApiUrl: 'http://127.0.0.1:1' });
    const starting = startOperator({ kubeConfig: sandbox.kubeConfig(), config, logger: captureLogs('info', 'operator').logger });
    const url = `http://127.0.0.1:${port}`;
    const probe = async (path: string) => {
      const res = await fetch(`${url}${path}`);
      return { status: res.status, body: await res.json() as { status: string; reason?: string; checks: ReadinessState[] } };
    };

    const listing = await waitFor(async () => {
      const ready = await probe('/readyz');
      return ready.status === 503 && /gamerooms \(listing for \d+ s\)/.test(ready.body.reason ?? '') ? ready : undefined;
    }, { timeoutMs: 10_000, intervalMs: 50, message: '/readyz 503 naming the gamerooms cache still listing' });
    expect(listing.body.reason).toMatch(/^the caches have not all made their first list: .*gamerooms \(listing for \d+ s\).*; this replica is ready once they have/);
    expect(listing.body.checks.find((c) => c.check === 'caches')).toMatchObject({ ready: false });
    expect(listing.body.checks.filter((c) => c.check !== 'caches').every((c) => c.ready)).toBe(true);
    const health = await probe('/healthz');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');

    operator = await starting;
    sandbox.faults.clear();
    const ready = await probe('/readyz');
    expect(ready).toEqual({ status: 200, body: { status: 'ready', checks: expect.arrayContaining([{ check: 'caches', ready: true }]) as unknown } });
    expect((await probe('/healthz')).status).toBe(200);
  }, 60_000);
});
