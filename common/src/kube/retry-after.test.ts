import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { makeKubeClients, retryAfterMs } from './clients';

describe('Retry-After', () => {
  test.each([
    [429, '1', 1000],
    [503, '3', 3000],
    [429, '120', 10_000],
    [429, undefined, undefined],
    [429, 'Wed, 21 Oct 2026 07:28:00 GMT', undefined],
    [500, '1', undefined],
    [409, '1', undefined],
  ])('%i with Retry-After %s waits %s ms', (status, header, expected) => {
    expect(retryAfterMs(status, header)).toBe(expected);
  });

  describe('against the sandbox API server', () => {
    let sandbox: Sandbox;
    beforeAll(async () => {
      sandbox = await startSandbox({ crdDirs: [] });
    });
    afterAll(async () => {
      await sandbox.stop();
    });

    test('a request answered 429 with Retry-After is asked again, as client-go does, and succeeds', async () => {
      const clients = makeKubeClients(sandbox.kubeConfig(), { qps: 100, burst: 100 });
      try {
        await clients.core.createNamespace({ body: { metadata: { name: 'throttled-once' } } });
        // Every request refused until the fault is lifted while the client waits.
        sandbox.faults.set({ errorRate: 1, errorStatus: 429 });
        setTimeout(() => sandbox.faults.clear(), 1500);
        const ns = await clients.core.readNamespace({ name: 'throttled-once' });
        expect(ns.metadata?.name).toBe('throttled-once');
      } finally {
        sandbox.faults.clear();
        await clients.close();
      }
    });
  });
});
