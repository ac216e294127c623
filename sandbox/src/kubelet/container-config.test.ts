/**
 * The simulated kubelet creates no container whose environment reads a missing Secret or ConfigMap
 * (or a missing key of one), as a kubelet does: the container waits `CreateContainerConfigError`
 * with the kubelet's message, and starts once the object is there. Against the sandbox API server,
 * through the public API only.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../../test/support/wait';
import { startSandbox, type Sandbox } from '../index';
import { SimKubelet } from './sim-kubelet';

const ns = 'sim-config';

function pod(name: string, env: V1EnvVar[]): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name },
    spec: {
      restartPolicy: 'Never', terminationGracePeriodSeconds: 0,
      containers: [{ name: 'game', image: 'example/game:1.0', env }, { name: 'sidecar', image: 'example/sidecar:1.0' }],
    },
  };
}

describe('simulated kubelet: environment from Secrets and ConfigMaps', () => {
  let sandbox: Sandbox;
  let kubelet: SimKubelet | undefined;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    kubelet = await SimKubelet.start({ kubeConfig: sandbox.kubeConfig(), nodes: 1, startDelayMs: 0, deletionCapMs: 0, heartbeatMs: 0, restartBackoffMs: 50 });
  });

  afterAll(async () => {
    await kubelet?.stop();
    await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
  });

  const read = (name: string) => core.readNamespacedPod({ name, namespace: ns });
  const waitingOf = (p: V1Pod, container: string) => p.status?.containerStatuses?.find((c) => c.name === container)?.state?.waiting;

  async function waitingWith(name: string, message: string): Promise<V1Pod> {
    return waitFor(async () => {
      const p = await read(name);
      return waitingOf(p, 'game')?.message === message ? p : undefined;
    }, { message: `${name} waiting with "${message}"` });
  }

  async function running(name: string): Promise<V1Pod> {
    return waitFor(async () => {
      const p = await read(name);
      return p.status?.phase === 'Running' ? p : undefined;
    }, { message: `${name} Running` });
  }

  it('holds a container whose Secret is missing, then whose key is missing, and starts it once both are there', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('secret-user', [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'game-secrets', key: 'api-key' } } }]) });
    const held = await waitingWith('secret-user', 'secret "game-secrets" not found');
    expect(held.status?.phase).toBe('Pending');
    expect(waitingOf(held, 'game')?.reason).toBe('CreateContainerConfigError');
    expect(waitingOf(held, 'sidecar')?.reason).toBe('ContainerCreating');
    expect(held.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });

    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'game-secrets' }, stringData: { other: 'x' } } });
    await waitingWith('secret-user', `couldn't find key api-key in Secret ${ns}/game-secrets`);

    await core.replaceNamespacedSecret({ namespace: ns, name: 'game-secrets', body: { metadata: { name: 'game-secrets' }, stringData: { 'api-key': 's3cr3t' } } });
    const started = await running('secret-user');
    expect(started.status?.containerStatuses?.every((c) => c.state?.running !== undefined)).toBe(true);
  });

  it('holds a container whose ConfigMap is missing, and starts a pod whose references are optional', async () => {
    await core.createNamespacedPod({ namespace: ns, body: pod('config-user', [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'game-config', key: 'mode' } } }]) });
    await waitingWith('config-user', 'configmap "game-config" not found');

    await core.createNamespacedPod({
      namespace: ns,
      body: pod('optional-user', [
        { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'absent-config', key: 'mode', optional: true } } },
        { name: 'KEY', valueFrom: { secretKeyRef: { name: 'absent-secret', key: 'key', optional: true } } },
      ]),
    });
    await running('optional-user');

    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'game-config' }, data: { mode: 'duel' } } });
    await running('config-user');
  });
});
