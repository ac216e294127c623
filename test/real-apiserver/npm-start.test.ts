/**
 * `npm start` against a real cluster (KUBECONFIG = the real API server's administrator): operator,
 * gateway and, as the cluster has no nodes, the simulated kubelet and rooms come up; a scheduler
 * created over HTTP gets its rooms ready; Ctrl-C stops everything cleanly and keeps only the
 * simulated nodes that hold room pods (the next `npm start` on that cluster takes them up again);
 * the next `npm start` keeps the rooms' addresses (their nodes' ExternalIPs: the simulated nodes
 * are registered again before the operator looks at the rooms, which gave them the pods' host
 * IPs, the nodes' InternalIPs, when it came first); a node whose ExternalIP then changes gives its
 * room the new one; an npm start killed with kill -9 leaves its simulated nodes behind, and the next
 * one runs its simulation on them (it took them for real nodes, and every new room stayed Pending).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { MERGE_PATCH } from '../../common/src/kube/clients';
import { isSimulatedNode } from '../../sandbox/src/simulation';
import { spawnNpmStart, type NpmStart } from '../support/npm-start';
import { realApiServer, reportNotRun } from '../support/real-apiserver';
import { schedulerObject } from '../support/stack';
import { waitFor } from '../support/wait';

test('npm start on a real cluster: rooms become ready and keep their addresses across a restart, follow their node\'s new ExternalIP, get ready after a kill -9 and a restart, and Ctrl-C keeps only the simulated nodes that hold room pods', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('npm start on a real cluster')).toMatch(/NOT RUN/);
    return;
  }
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(plane.adminKubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-start-real-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env, KUBECONFIG: plane.adminKubeconfig, ROOMKEEPER_STATE_DIR: state,
    ROOMKEEPER_GATEWAY_PORT: '0', ROOMKEEPER_ROOMS_PORT: '0', ROOMKEEPER_OPERATOR_PORT: '0',
    // A lease of its own: the chart's release Lease belongs to the suites' operators.
    ROOMKEEPER_LEASE_NAME: 'roomkeeper-npm-start',
  };
  delete env.E2E_KUBECONFIG;
  const otherNamespace = 'npm-start-not-rooms';
  await core.createNamespace({ body: { metadata: { name: otherNamespace } } });
  await waitFor(() => core.createNamespacedPod({ namespace: otherNamespace, body: { metadata: { name: 'not-a-room' }, spec: { containers: [{ name: 'app', image: 'example/app:1' }] } } }).then(() => true, () => false),
    { timeoutMs: 30_000, message: 'a pod created (once its namespace has its default ServiceAccount)' });
  let run: NpmStart = spawnNpmStart(env);
  const out = (): string => run.output();
  const stop = async (r: NpmStart): Promise<void> => {
    process.kill(-(r.child.pid as number), 'SIGINT');
    await r.exited;
  };
  const roomHosts = async (scheduler: string): Promise<Record<string, string | undefined>> => {
    const list = await custom.listNamespacedCustomObject({ group: 'roomkeeper.io', version: 'v1', namespace: scheduler, plural: 'gamerooms' }) as { items: { metadata: { name: string }; status?: { host?: string } }[] };
    return Object.fromEntries(list.items.map((r) => [r.metadata.name, r.status?.host]));
  };
  const name = 'npm-start-real';
  try {
    const url = await waitFor(() => /Management API: (http:\/\/127\.0\.0\.1:\d+)/.exec(out())?.[1], { timeoutMs: 90_000, message: `npm start is running; output so far:\n${out()}` });
    const auth = await waitFor(() => /\(HTTP Basic: (\S+) \/ (\S+)\)/.exec(out()), { timeoutMs: 5_000, message: 'credentials printed' });
    expect(out()).toMatch(/Kubernetes cluster from KUBECONFIG/);
    expect(out()).toMatch(/Simulated nodes and game rooms: on/);
    const spec = (schedulerObject(name, { roomsReplicas: 2 }) as { spec: Record<string, unknown> }).spec;
    const res = await fetch(`${url}/schedulers`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${String(auth[1])}:${String(auth[2])}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, ...spec }),
    });
    expect(res.status).toBe(200);
    await waitFor(async () => {
      const s = await custom.getClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name }) as { status?: { rooms?: { ready?: number } } };
      return s.status?.rooms?.ready === 2;
    }, { timeoutMs: 90_000, message: '2 rooms ready' });
    const hosts = await roomHosts(name);
    expect(Object.values(hosts)).toEqual([expect.stringMatching(/^127\.0\.0\.\d+$/), expect.stringMatching(/^127\.0\.0\.\d+$/)]);
    // A pod that is no room (a Helm release's operator, anything of the user's), there before npm
    // start listed the pods, is left to the cluster: with no nodes it stays Pending, never shown
    // Running with nothing in it.
    const other = await core.readNamespacedPod({ name: 'not-a-room', namespace: otherNamespace });
    expect({ node: other.spec?.nodeName, phase: other.status?.phase }).toEqual({ node: undefined, phase: 'Pending' });
    await core.deleteNamespace({ name: otherNamespace });

    // Ctrl-C and npm start again: once its operator has looked at both rooms, their addresses are unchanged.
    await stop(run);
    expect(out()).toContain('Stopped.');
    // The simulated nodes holding the room pods stay (deleted, kube-controller-manager deletes their
    // pods about 40 s later: a longer restart lost every room), and the stop says so.
    const podNodes = (await core.listNamespacedPod({ namespace: name })).items.map((p) => p.spec?.nodeName);
    const left = (await core.listNode()).items.filter(isSimulatedNode).map((n) => n.metadata?.name);
    expect(podNodes.filter((n) => !left.includes(n))).toEqual([]);
    expect(out()).toMatch(/Kept the \d+ simulated nodes that hold room pods \(roomkeeper-sim-node-\d+/);
    run = spawnNpmStart(env);
    const metrics = await waitFor(() => /Operator: +(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(out())?.[1], { timeoutMs: 90_000, message: `npm start is running again; output so far:\n${out()}` });
    await waitFor(async () => {
      const text = await (await fetch(metrics)).text();
      return Number(/^roomkeeper_reconcile_total\{controller="gamerooms",outcome="success"\} (\d+)/m.exec(text)?.[1] ?? 0) >= 2;
    }, { timeoutMs: 60_000, message: 'the restarted operator reconciled both rooms' });
    expect(await roomHosts(name)).toEqual(hosts);

    // A room's node gets another ExternalIP (as a cloud may give it): the room takes it.
    const room = Object.keys(hosts)[0] as string;
    const nodeName = (await core.readNamespacedPod({ name: room, namespace: name })).spec?.nodeName as string;
    const node = await core.readNode({ name: nodeName });
    const addresses = [...(node.status?.addresses ?? []).filter((a) => a.type !== 'ExternalIP'), { type: 'ExternalIP', address: '127.0.0.99' }];
    await core.patchNodeStatus({ name: nodeName, body: { status: { addresses } } }, MERGE_PATCH);
    await waitFor(async () => (await roomHosts(name))[room] === '127.0.0.99', { timeoutMs: 30_000, message: `${room}'s host its node's new ExternalIP` });
    // Killed (kill -9: its stop never runs), npm start leaves its simulated nodes behind. The next
    // one does not take them for real nodes: it runs the simulation on them again, and a room
    // added then gets ready (taken for real, they left every new room Pending).
    process.kill(-(run.child.pid as number), 'SIGKILL');
    await run.exited;
    expect((await core.listNode()).items.filter(isSimulatedNode)).not.toEqual([]);
    run = spawnNpmStart(env);
    await waitFor(() => /Operator: /.test(out()), { timeoutMs: 90_000, message: `npm start is running after a kill; output so far:\n${out()}` });
    expect(out()).toMatch(/Simulated nodes and game rooms: on/);
    await custom.patchClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name, body: { spec: { roomsReplicas: 3 } } }, MERGE_PATCH);
    await waitFor(async () => {
      const s = await custom.getClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name }) as { status?: { rooms?: { ready?: number } } };
      return s.status?.rooms?.ready === 3;
    }, { timeoutMs: 120_000, message: '3 rooms ready after npm start was killed and started again' });
    // Delete it while npm start still runs (its operator removes the finalizer).
    await custom.deleteClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name });
    await waitFor(async () => !(await core.listNamespace()).items.some((n) => n.metadata?.name === name), { timeoutMs: 120_000, message: 'scheduler and its namespace deleted' });
  } finally {
    await stop(run);
  }
  await waitFor(() => out().includes('Stopped.'), { timeoutMs: 30_000, message: `clean stop; output:\n${out()}` });
  expect(out()).not.toMatch(/failed to start/);
  const simulated = (await core.listNode()).items.filter(isSimulatedNode);
  expect(simulated.map((n) => n.metadata?.name)).toEqual([]);
  await kc.makeApiClient(k8s.CoordinationV1Api).deleteNamespacedLease({ name: 'roomkeeper-npm-start', namespace: plane.releaseNamespace }).catch(() => undefined);
  fs.rmSync(state, { recursive: true, force: true });
}, 300_000);
