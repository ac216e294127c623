import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { waitFor } from '../../../test/support/wait';
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
        // Every request refused until the client has been refused twice; it keeps asking.
        sandbox.faults.set({ errorRate: 1, errorStatus: 429 });
        const before = sandbox.faults.injected;
        const read = clients.core.readNamespace({ name: 'throttled-once' });
        await waitFor(() => sandbox.faults.injected - before >= 2, { timeoutMs: 10_000, message: 'two 429 answers' });
        sandbox.faults.clear();
        const ns = await read;
        expect(ns.metadata?.name).toBe('throttled-once');
      } finally {
        sandbox.faults.clear();
        await clients.close();
      }
    });
  });
});
