/** The cache keeps itself alive through list failures and broken watches (sandbox fault injection). */
import { silentLogger } from '../../../common/src/logger';
import { makeKubeClients, type KubeClients } from '../../../common/src/kube/clients';
import type { GameRoom } from '../../../common/src/generated/resources';
import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { waitFor } from '../../../test/support/wait';
import { ResourceCache } from './resource-cache';

jest.setTimeout(30_000);

let sandbox: Sandbox;
let clients: KubeClients;
beforeAll(async () => {
  sandbox = await startSandbox({ crdDirs: ['crds'] });
  clients = makeKubeClients(sandbox.kubeConfig(), { qps: 1000, burst: 1000 });
  await clients.core.createNamespace({ body: { metadata: { name: 'cache-ns' } } });
});
afterAll(async () => {
  // Undefined when beforeAll failed before assigning it.
  (sandbox as Sandbox | undefined)?.faults.clear();
  await (sandbox as Sandbox | undefined)?.stop();
});

function roomCache(): ResourceCache<GameRoom> {
  return new ResourceCache<GameRoom>({
    kc: sandbox.kubeConfig(),
    path: '/apis/roomkeeper.io/v1/gamerooms',
    resource: 'gamerooms',
    logger: silentLogger(),
    initialBackoffMs: 20,
    maxBackoffMs: 200,
    list: () => clients.custom.listClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'gamerooms' }),
  });
}

const createRoom = (name: string) =>
  clients.custom.createNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace: 'cache-ns', plural: 'gamerooms', body: { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 'cache-ns' }, spec: { scheduler: 'cache-ns', version: 'v1.0.0' } } });

it('retries a failing list until it syncs', async () => {
  sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'list', resource: 'gamerooms' } });
  const cache = roomCache();
  try {
    await cache.start();
    expect(cache.isSynced).toBe(false);
    expect(cache.error).toBeDefined();
    sandbox.faults.clear();
    await waitFor(() => cache.isSynced, { timeoutMs: 10_000, message: 'cache synced after the fault cleared' });
  } finally {
    sandbox.faults.clear();
    await cache.stop();
  }
});

it('keeps following changes after watches are cut and resumes are refused (410)', async () => {
  const cache = roomCache();
  try {
    await cache.start();
    await waitFor(() => cache.isSynced);
    await createRoom('before');
    await waitFor(() => cache.get('before', 'cache-ns'));
    sandbox.faults.set({ cutWatchAfterEvents: 1, match: { verb: 'watch', resource: 'gamerooms' } });
    sandbox.faults.forceGone();
    await createRoom('during-1');
    await createRoom('during-2');
    sandbox.faults.clear();
    await createRoom('after');
    await waitFor(() => ['during-1', 'during-2', 'after'].every((n) => cache.get(n, 'cache-ns')), { timeoutMs: 15_000, message: 'every room seen' });
  } finally {
    sandbox.faults.clear();
    await cache.stop();
  }
});
