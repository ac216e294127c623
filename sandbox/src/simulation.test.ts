/**
 * The simulated kubelet and rooms against the sandbox API server, through the public API only.
 */
import { PassThrough } from 'node:stream';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { createLogger } from '../../common/src/logger';
import { withToken } from '../../test/support/bearer-token';
import { waitFor } from '../../test/support/wait';
import { startSandbox, type Sandbox } from './index';
import { startPingRecorder, type PingRecorder } from './rooms/testing/ping-recorder';
import { SimKubelet } from './kubelet/sim-kubelet';
import { startSimulation, type Simulation } from './simulation';

type Env = Record<string, string>;

function roomPod(name: string, opts: { env?: Env; restartPolicy?: string; hostPort?: number; image?: string } = {}): V1Pod {
  const env = Object.entries(opts.env ?? {}).map(([k, v]) => ({ name: k, value: v }));
  const container: V1Container = { name: 'game', image: opts.image ?? 'example/game:1.0', env };
  if (opts.hostPort) container.ports = [{ name: 'game', containerPort: 7777, hostPort: opts.hostPort, protocol: 'UDP' }];
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels: { app: 'sim-test' } },
    spec: { restartPolicy: opts.restartPolicy ?? 'Never', terminationGracePeriodSeconds: 30, containers: [container] },
  };
}

function room(schedulerName: string, roomId: string, extra: Env = {}): Env {
  return { ROOMKEEPER_SCHEDULER_NAME: schedulerName, ROOMKEEPER_ROOM_ID: roomId, ...extra };
}

function statusesOf(recorder: PingRecorder, schedulerName: string, roomId: string): string[] {
  return recorder.pingsFor(schedulerName, roomId).map((p) => (p.body as { status: string }).status);
}

async function podOrUndefined(core: CoreV1Api, namespace: string, name: string): Promise<V1Pod | undefined> {
  try {
    return await core.readNamespacedPod({ name, namespace });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

function waiting(pod: V1Pod | undefined): string | undefined {
  return pod?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
}

describe('simulation against the sandbox API server', () => {
  const ns = 'sim-test';
  let sandbox: Sandbox;
  let recorder: PingRecorder;
  let sim: Simulation;
  let core: CoreV1Api;

  beforeAll(async () => {
    recorder = await startPingRecorder();
    sandbox = await startSandbox();
    const kc = sandbox.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    sim = await startSimulation({
      kubeConfig: kc, nodes: 3, startDelayMs: 50, deletionCapMs: 300, restartBackoffMs: 300,
      roomsApiUrl: recorder.url, pingIntervalMs: 100, firstPingMaxDelayMs: 0,
    });
  });

  afterAll(async () => {
    // Undefined when beforeAll failed before assigning them.
    await (sim as Simulation | undefined)?.stop();
    await (sandbox as Sandbox | undefined)?.stop();
    await (recorder as PingRecorder | undefined)?.close();
  });

  const get = (name: string) => podOrUndefined(core, ns, name);

  it('registers Ready nodes with addresses, capacity and the simulated label', async () => {
    const nodes = await core.listNode({ labelSelector: 'roomkeeper.io/simulated=true' });
    expect(nodes.items.map((n) => n.metadata?.name).sort()).toEqual(['roomkeeper-sim-node-0', 'roomkeeper-sim-node-1', 'roomkeeper-sim-node-2']);
    const node = nodes.items.find((n) => n.metadata?.name === 'roomkeeper-sim-node-0');
    expect(node?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(node?.status?.addresses?.map((a) => a.type).sort()).toEqual(['ExternalIP', 'Hostname', 'InternalIP']);
    expect(node?.status?.allocatable?.pods).toBe('5000');
  });

  it('runs a room pod like a kubelet and its room pings the rooms API with the token', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-a', { env: room('fleet', 'room-a', { ROOMKEEPER_ROOM_TOKEN: 'tok-a' }) }) });
    const pod = await waitFor(async () => {
      const p = await get('room-a');
      return p?.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
    }, { message: 'room-a Running and Ready' });
    expect(pod.spec?.nodeName).toMatch(/^roomkeeper-sim-node-\d$/);
    expect(pod.status?.hostIP).toMatch(/^10\.240\./);
    expect(pod.status?.podIP).toMatch(/^10\.2\d\d\./);
    expect(pod.status?.startTime).toBeDefined();
    const cs = pod.status?.containerStatuses?.[0];
    expect(cs).toMatchObject({ name: 'game', ready: true, started: true, restartCount: 0, image: 'example/game:1.0' });
    expect(cs?.state?.running?.startedAt).toBeDefined();
    expect(cs?.containerID).toMatch(/^containerd:\/\//);
    expect(pod.status?.conditions?.map((c) => c.type).sort()).toEqual(['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'PodScheduled', 'Ready']);

    const ping = await waitFor(() => recorder.pingsFor('fleet', 'room-a')[0], { message: 'first ping of room-a' });
    expect(ping.method).toBe('PUT');
    expect(ping.authorization).toBe('Bearer tok-a');
    expect(ping.body).toEqual({ status: 'ready', timestamp: expect.any(Number) as unknown });
    await waitFor(() => recorder.pingsFor('fleet', 'room-a').length >= 3, { message: 'periodic pings' });
    expect(sim.rooms?.room('room-a')).toMatchObject({ status: 'ready', state: 'running', namespace: ns, podName: 'room-a' });
  });

  it('sets Ready back, as a kubelet does, after the node lifecycle controller marked the pod not ready', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('ready-again', { env: room('s-ready', 'ready-again') }) });
    const ready = (p: V1Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    await waitFor(async () => ready(await podOrUndefined(core, ns, 'ready-again')) === 'True', { timeoutMs: 10_000, message: 'pod Ready' });
    // What kube-controller-manager does to the pods of a node that missed its heartbeats.
    const pod = await core.readNamespacedPod({ name: 'ready-again', namespace: ns });
    const conditions = (pod.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False', reason: 'NodeNotReady' } : c));
    await core.patchNamespacedPodStatus({ name: 'ready-again', namespace: ns, body: { status: { conditions } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await waitFor(async () => ready(await podOrUndefined(core, ns, 'ready-again')) === 'True', { timeoutMs: 10_000, message: 'the simulated kubelet set Ready=True again' });
  });

  it('deletes a running pod gracefully: terminating ping, then the pod is gone within the cap', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-del', { env: room('fleet', 'room-del') }) });
    await waitFor(() => recorder.pingsFor('fleet', 'room-del').length >= 1, { message: 'room-del pings' });
    await core.deleteNamespacedPod({ name: 'room-del', namespace: ns });
    const terminating = await get('room-del');
    expect(terminating?.metadata?.deletionTimestamp).toBeDefined();
    await waitFor(() => statusesOf(recorder, 'fleet', 'room-del').includes('terminating'), { message: 'terminating ping' });
    await waitFor(async () => (await get('room-del')) === undefined, { message: 'room-del deleted by the kubelet' });
    expect(sim.rooms?.room('room-del')).toBeUndefined();
    // What its game server did stays readable after the pod is gone.
    expect(sim.rooms?.endedRoom('room-del')).toMatchObject({ state: 'stopped', lastPingStatus: 'terminating', podName: 'room-del', lastOkAt: expect.any(Number) as unknown });
  });

  it('reports image pull failures as Kubernetes does', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('pull-env', { env: { ROOMKEEPER_SIM_POD: 'image-pull-failure' } }) });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('pull-tag', { image: 'example/game:imagepullbackoff' }) });
    for (const name of ['pull-env', 'pull-tag']) {
      const pod = await waitFor(async () => {
        const p = await get(name);
        return waiting(p) === 'ImagePullBackOff' ? p : undefined;
      }, { message: `${name} ImagePullBackOff` });
      expect(pod.status?.phase).toBe('Pending');
      expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.message).toMatch(/^Back-off pulling image "example\/game:/);
    }
  });

  it('crash-loop: Failed with exit code 1 under restartPolicy Never, CrashLoopBackOff under Always', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('crash-never', { env: { ROOMKEEPER_SIM_POD: 'crash-loop' } }) });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('crash-always', { env: { ROOMKEEPER_SIM_POD: 'crash-loop' }, restartPolicy: 'Always' }) });
    const failed = await waitFor(async () => {
      const p = await get('crash-never');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, { message: 'crash-never Failed' });
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    const looping = await waitFor(async () => {
      const p = await get('crash-always');
      return waiting(p) === 'CrashLoopBackOff' && (p?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2 ? p : undefined;
    }, { message: 'crash-always CrashLoopBackOff with restarts' });
    expect(looping.status?.phase).toBe('Running');
    expect(looping.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(1);
  });

  it('never-ready: Running with Ready=False', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('unready', { env: { ROOMKEEPER_SIM_POD: 'never-ready' } }) });
    const pod = await waitFor(async () => {
      const p = await get('unready');
      return p?.status?.phase === 'Running' ? p : undefined;
    }, { message: 'unready Running' });
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    expect(pod.status?.containerStatuses?.[0]?.ready).toBe(false);
  });

  it('exit-after: Succeeded with reason Completed, or Failed with the exit code', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('exit-0', { env: { ROOMKEEPER_SIM_POD: 'exit-after:0.2' } }) });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('exit-3', { env: { ROOMKEEPER_SIM_POD: 'exit-after:0.2:3' } }) });
    const ok = await waitFor(async () => {
      const p = await get('exit-0');
      return p?.status?.phase === 'Succeeded' ? p : undefined;
    }, { message: 'exit-0 Succeeded' });
    expect(ok.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const bad = await waitFor(async () => {
      const p = await get('exit-3');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, { message: 'exit-3 Failed' });
    expect(bad.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  it('plays scripted occupancy: occupied-after then free-after', async () => {
    // Each phase lasts ten ping intervals, so a loaded machine that delays a ping still samples it.
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-occ', { env: room('fleet', 'room-occ', { ROOMKEEPER_SIM_ROOM: 'occupied-after:1,free-after:1' }) }) });
    const statuses = await waitFor(() => {
      const s = statusesOf(recorder, 'fleet', 'room-occ');
      const occ = s.indexOf('occupied');
      if (occ < 0 || !s.slice(occ).includes('ready')) throw new Error(`pings so far: ${s.join(', ') || 'none'}`);
      return s;
    }, { message: 'ready -> occupied -> ready', timeoutMs: 30_000 });
    expect(statuses[0]).toBe('ready');
  });

  it('plays scripted silence: stop-after stops pinging and never-ping sends nothing', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-stop', { env: room('fleet', 'room-stop', { ROOMKEEPER_SIM_ROOM: 'stop-after:0.3' }) }) });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-mute', { env: room('fleet', 'room-mute', { ROOMKEEPER_SIM_ROOM: 'never-ping' }) }) });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-ref', { env: room('fleet', 'room-ref') }) });
    await waitFor(() => sim.rooms?.room('room-stop')?.status === 'silent', { message: 'room-stop silent' });
    const stopped = recorder.pingsFor('fleet', 'room-stop').length;
    expect(stopped).toBeGreaterThanOrEqual(1);
    // The reference room started after both; once it has pinged five times, the others had time to ping.
    await waitFor(() => recorder.pingsFor('fleet', 'room-ref').length >= 5, { message: 'reference room pings' });
    expect(recorder.pingsFor('fleet', 'room-stop').length).toBe(stopped);
    expect(recorder.pingsFor('fleet', 'room-mute')).toEqual([]);
    expect(sim.rooms?.room('room-mute')).toMatchObject({ status: 'silent', state: 'running' });
  });

  it('sends pings to the pod\'s own ROOMKEEPER_ROOMS_API_URL when set', async () => {
    const other = await startPingRecorder();
    try {
      await core.createNamespacedPod({ namespace: ns, body: roomPod('room-url', { env: room('fleet', 'room-url', { ROOMKEEPER_ROOMS_API_URL: `${other.url}/prefix` }) }) });
      await waitFor(() => other.pings.some((p) => p.path === '/prefix/scheduler/fleet/rooms/room-url/ping'), { message: 'ping at the override URL' });
      expect(recorder.pingsFor('fleet', 'room-url')).toEqual([]);
    } finally {
      await core.deleteNamespacedPod({ name: 'room-url', namespace: ns });
      await waitFor(async () => (await get('room-url')) === undefined, { message: 'room-url gone' });
      await other.close();
    }
  });

  it('leaves pods on nodes it does not simulate alone', async () => {
    await core.createNode({ body: { metadata: { name: 'real-node' } } });
    const body = roomPod('room-real', { env: room('fleet', 'room-real') });
    body.spec!.nodeName = 'real-node';
    await core.createNamespacedPod({ namespace: ns, body });
    await core.patchNamespacedPodStatus({
      name: 'room-real', namespace: ns,
      body: { status: { phase: 'Running', containerStatuses: [{ name: 'game', image: 'example/game:1.0', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }] } },
    }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.createNamespacedPod({ namespace: ns, body: roomPod('room-sim', { env: room('fleet', 'room-sim') }) });
    await waitFor(() => recorder.pingsFor('fleet', 'room-sim').length >= 3, { message: 'simulated room pings' });
    expect(recorder.pingsFor('fleet', 'room-real')).toEqual([]);
    expect(sim.rooms?.room('room-real')).toBeUndefined();
    const real = await get('room-real');
    expect(real?.status?.containerStatuses?.[0]?.containerID).toBeUndefined();
  });

  it('counts pings for benchmarks', () => {
    const stats = sim.rooms?.stats();
    expect(stats?.pingsSent).toBeGreaterThan(0);
    expect(stats?.pingsByStatus.ready).toBeGreaterThan(0);
    expect(stats?.pingsByStatus.terminating).toBeGreaterThanOrEqual(1);
    expect(sim.kubelet.stats().bindings).toBeGreaterThan(0);
  });
});

describe('scheduling with host ports on one node', () => {
  const ns = 'sim-ports';
  let sandbox: Sandbox;
  let sim: Simulation;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    const kc = sandbox.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    sim = await startSimulation({ kubeConfig: kc, nodes: 1, podsPerNode: 3, startDelayMs: 0, deletionCapMs: 0, heartbeatMs: 50 });
  });

  afterAll(async () => {
    // Undefined when beforeAll failed before assigning them.
    await (sim as Simulation | undefined)?.stop();
    await (sandbox as Sandbox | undefined)?.stop();
  });

  const get = (name: string) => podOrUndefined(core, ns, name);
  const scheduledCondition = (p: V1Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'PodScheduled');

  it('keeps the second pod on the same host port Pending until the first is deleted', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('first', { hostPort: 30000 }) });
    await waitFor(async () => (await get('first'))?.status?.phase === 'Running', { message: 'first Running' });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('second', { hostPort: 30000 }) });
    const pending = await waitFor(async () => {
      const p = await get('second');
      return scheduledCondition(p)?.status === 'False' ? p : undefined;
    }, { message: 'second Unschedulable' });
    expect(pending.spec?.nodeName).toBeUndefined();
    expect(pending.status?.phase).toBe('Pending');
    expect(scheduledCondition(pending)).toMatchObject({
      reason: 'Unschedulable',
      message: "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.",
    });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('other-port', { hostPort: 30001 }) });
    await waitFor(async () => (await get('other-port'))?.status?.phase === 'Running', { message: 'other port Running' });

    await core.deleteNamespacedPod({ name: 'first', namespace: ns });
    const running = await waitFor(async () => {
      const p = await get('second');
      return p?.status?.phase === 'Running' ? p : undefined;
    }, { message: 'second Running after first is gone' });
    expect(running.spec?.nodeName).toBe('roomkeeper-sim-node-0');
    expect(scheduledCondition(running)?.status).toBe('True');
  });

  it('keeps its node Ready with heartbeats, and writes nothing for pods that did not change', async () => {
    const before = sandbox.writeCount('nodes');
    const podWrites = sandbox.writeCount('pods');
    const kubeletWrites = sim.kubelet.stats().statusWrites;
    await waitFor(() => sandbox.writeCount('nodes') >= before + 3, { message: 'node heartbeats' });
    const node = await core.readNode({ name: 'roomkeeper-sim-node-0' });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(sim.kubelet.stats().statusWrites).toBe(kubeletWrites);
    expect(sandbox.writeCount('pods')).toBe(podWrites);
  });

  it('reports its node NotReady when told, keeps it so through its heartbeats, and Ready again when told', async () => {
    const name = 'roomkeeper-sim-node-0';
    const ready = async () => (await core.readNode({ name })).status?.conditions?.find((c) => c.type === 'Ready');
    await sim.kubelet.setNodeReady(name, false, 'container runtime is down');
    const notReady = await ready();
    expect(notReady).toMatchObject({ status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down' });
    const writes = sandbox.writeCount('nodes');
    await waitFor(() => sandbox.writeCount('nodes') >= writes + 3, { message: 'node heartbeats' });
    const kept = await ready();
    expect(kept).toMatchObject({ status: 'False', reason: 'KubeletNotReady', lastTransitionTime: notReady?.lastTransitionTime });
    await expect(sim.kubelet.setNodeReady('no-such-node', false)).rejects.toThrow(/no-such-node is not a node of this simulated kubelet \(its nodes: roomkeeper-sim-node-0\)/);
    await sim.kubelet.setNodeReady(name, true);
    await waitFor(() => sandbox.writeCount('nodes') >= writes + 6, { message: 'node heartbeats' });
    expect(await ready()).toMatchObject({ status: 'True', reason: 'KubeletReady' });
  });

  it('honours the pods capacity of the node', async () => {
    // capacity 3: second + other-port + this one fill it; the next waits.
    await core.createNamespacedPod({ namespace: ns, body: roomPod('fill') });
    await waitFor(async () => (await get('fill'))?.status?.phase === 'Running', { message: 'fill Running' });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('overflow') });
    const p = await waitFor(async () => {
      const pod = await get('overflow');
      return scheduledCondition(pod)?.status === 'False' ? pod : undefined;
    }, { message: 'overflow Unschedulable' });
    expect(scheduledCondition(p)?.message).toBe('0/1 nodes are available: 1 Too many pods.');
  });
});

describe('recovery from API errors', () => {
  const ns = 'sim-faults';
  let sandbox: Sandbox;
  let sim: Simulation | undefined;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
  });

  afterAll(async () => {
    await sim?.stop();
    await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
  });

  it('retries a failed list of the pod informer until it syncs, and retries failed status writes', async () => {
    const lines: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const logger = createLogger('sim-test', { stream, level: 'warn' });

    sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'list', resource: 'pods' } });
    const starting = startSimulation({ kubeConfig: sandbox.kubeConfig(), nodes: 1, startDelayMs: 0, logger });
    await waitFor(() => lines.some((l) => l.includes('list failed, retrying') && l.includes('"informer":"pods"')), { message: 'a failed list logged' });
    sandbox.faults.clear();
    sim = await starting;
    expect(sim.kubelet.stats().informerListFailures).toBeGreaterThanOrEqual(1);

    // 500, not 429: the clients themselves wait out a 429's Retry-After (as client-go does).
    sandbox.faults.set({ errorRate: 1, errorStatus: 500, match: { verb: 'patch', resource: 'pods' } });
    await core.createNamespacedPod({ namespace: ns, body: roomPod('after-faults') });
    await waitFor(() => (sim?.kubelet.stats().errors ?? 0) >= 2, { message: 'status writes failing' });
    sandbox.faults.clear();
    await waitFor(async () => (await podOrUndefined(core, ns, 'after-faults'))?.status?.phase === 'Running', { message: 'Running once writes succeed' });
  });
});

describe('simulated kubelet and a binding answered 409', () => {
  it('schedules again a pod whose binding was answered 409 while it stayed unbound (as after an etcd pause): kept assumed bound, it stayed Pending for good', async () => {
    const ns = 'sim-bind-409';
    const token = 'kubelet-409';
    const sandbox = await startSandbox();
    let kubelet: SimKubelet | undefined;
    try {
      const core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: ns } } });
      // The kubelet's bindings only (a create of pods/binding with its token).
      sandbox.faults.set({ errorRate: 1, errorStatus: 409, match: { verb: 'create', resource: 'pods', token } });
      kubelet = await SimKubelet.start({ kubeConfig: withToken(sandbox.kubeConfig(), token), nodes: 1, startDelayMs: 0, heartbeatMs: 0, restartBackoffMs: 100 });
      await core.createNamespacedPod({ namespace: ns, body: roomPod('bind-409') });
      await waitFor(() => sandbox.faults.injected >= 1, { message: 'a binding answered 409' });
      sandbox.faults.clear();
      await waitFor(async () => (await podOrUndefined(core, ns, 'bind-409'))?.status?.phase === 'Running', { message: 'bound and Running once bindings are taken again' });
    } finally {
      sandbox.faults.clear();
      await kubelet?.stop();
      await sandbox.stop();
    }
  });
});

describe('simulated kubelet behind its work queue', () => {
  const ns = 'sim-late';
  let sandbox: Sandbox;
  let kubelet: SimKubelet | undefined;
  let core: CoreV1Api;
  let skewMs = 0;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    kubelet = await SimKubelet.start({ kubeConfig: sandbox.kubeConfig(), nodes: 1, startDelayMs: 3000, heartbeatMs: 0, clock: () => Date.now() + skewMs });
  });

  afterAll(async () => {
    await kubelet?.stop();
    await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
  });

  it('dates a container\'s start when it got round to starting it, never in the past', async () => {
    await core.createNamespacedPod({ namespace: ns, body: roomPod('late') });
    const bound = await waitFor(async () => {
      const p = await podOrUndefined(core, ns, 'late');
      return waiting(p) === 'ContainerCreating' ? p : undefined;
    }, { message: 'late bound and ContainerCreating' });
    const boundAt = new Date(bound.status?.startTime ?? 0).getTime();
    // The kubelet's queue reaches the pod ten minutes after its start was due.
    skewMs = 10 * 60_000;
    const lateBy = Date.now() + skewMs;
    const running = await waitFor(async () => {
      const p = await podOrUndefined(core, ns, 'late');
      return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    }, { message: 'late Running' });
    const startedAt = new Date(running.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? 0).getTime();
    expect(startedAt).toBeGreaterThanOrEqual(lateBy - 1000); // RFC 3339 in whole seconds
    expect(startedAt).toBeGreaterThan(boundAt + 3000);
  });
});

describe('simulated kubelet whose cache skipped its own write', () => {
  const ns = 'sim-relist';
  let sandbox: Sandbox;
  let kubelet: SimKubelet | undefined;
  let core: CoreV1Api;

  beforeAll(async () => {
    sandbox = await startSandbox();
    core = sandbox.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
    kubelet = await SimKubelet.start({ kubeConfig: sandbox.kubeConfig(), nodes: 1, startDelayMs: 0, heartbeatMs: 0 });
  });

  afterAll(async () => {
    await kubelet?.stop();
    await (sandbox as Sandbox | undefined)?.stop(); // undefined when beforeAll failed before assigning it
  });

  it('sets Ready back when a re-list shows the node lifecycle controller\'s write and never its own', async () => {
    // The kubelet's pod watch runs 4 s late, so its own Ready write is not in its cache yet when
    // the pod is marked not ready and a re-list (as after an API server outage) skips past it.
    sandbox.faults.set({ watchDelayMs: 4000, match: { verb: 'watch', resource: 'pods' } });
    sandbox.faults.cutWatches();
    await core.createNamespacedPod({ namespace: ns, body: roomPod('skipped') });
    const ready = (p: V1Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const pod = await waitFor(async () => {
      const p = await podOrUndefined(core, ns, 'skipped');
      return ready(p) === 'True' ? p : undefined;
    }, { timeoutMs: 30_000, intervalMs: 20, message: 'pod Ready' });
    const conditions = (pod.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False', reason: 'NodeNotReady' } : c));
    await core.patchNamespacedPodStatus({ name: 'skipped', namespace: ns, body: { status: { conditions } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    sandbox.faults.clear();
    sandbox.faults.forceGone();
    sandbox.faults.cutWatches();
    await waitFor(async () => ready(await podOrUndefined(core, ns, 'skipped')) === 'True', { timeoutMs: 20_000, message: 'the simulated kubelet set Ready=True again' });
  });
});
