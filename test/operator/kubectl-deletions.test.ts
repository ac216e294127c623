/**
 * kubectl users cannot break a scheduler (issue 21): what they delete of what the operator owns is
 * rebuilt or protected, and a failure that repeats is told once. Each case deletes one thing with
 * the real kubectl and ends with the scheduler back in sync within 2 minutes with exactly the
 * desired rooms, nothing leaked (pods, GameRooms, host ports), at most 3 failed operations, and
 * `kubectl describe scheduler` telling what happened: a GameRoom deleted by hand, or a running
 * Operation, is told in a Scheduler Event, and so is the pod a GameRoom deleted with
 * `--cascade=orphan` left running, which the operator deletes. Last, the GameRoom CRD itself is
 * deleted and applied again.
 *
 * On the sandbox by default; on the cluster named by E2E_KUBECONFIG (the real-API-server tier runs
 * it so: test/real-apiserver/kubectl-deletions.test.ts) with the chart's identities.
 */
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { TAKEOVER_SETTLE_MS } from '../../operator/src/runtime/leader-election';
import { CRD_DIR, schedulerObject, startStack, type Stack } from '../support/stack';
import { toolPath } from '../support/tools';
import { waitFor } from '../support/wait';

const run = promisify(execFile);
const RECOVERY_MS = 120_000;
const DESIRED = 2;
/** The schedulers of the suite; the last tests take them all. */
const SCHEDULERS = ['del-ns', 'del-version', 'del-op', 'del-add', 'del-stopped', 'del-room', 'del-orphan', 'del-lease', 'del-pod', 'del-secret'];

describe('kubectl deletions: the scheduler comes back', () => {
  let stack: Stack;
  let dir: string;
  let kubeconfig: string;
  const figures: string[] = [];

  const kubectl = async (args: string[]): Promise<string> =>
    (await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 })).stdout;

  /** Rooms, pods and ports as they are: what "in sync, nothing leaked" means, or why not. */
  const notInSync = async (name: string, desired = DESIRED): Promise<string | undefined> => {
    const s = await stack.api.getScheduler(name);
    const rooms = (await stack.api.listGameRooms(name)).items;
    const pods = (await stack.core.listNamespacedPod({ namespace: name })).items;
    const liveRooms = rooms.filter((r) => !r.metadata.deletionTimestamp);
    const livePods = pods.filter((p) => !p.metadata?.deletionTimestamp);
    if (s.status?.state !== 'in-sync') return `state ${String(s.status?.state)}`;
    const generation = s.metadata.generation ?? 1;
    if ((s.status.observedGeneration ?? 0) < generation || (s.status.versionedGeneration ?? 0) < generation) return `generation ${generation} not yet observed and versioned`;
    if (liveRooms.length !== desired || rooms.length !== desired) return `${liveRooms.length} live of ${rooms.length} GameRooms`;
    if (livePods.length !== desired || pods.length !== desired) return `${livePods.length} live of ${pods.length} pods`;
    if (!liveRooms.every((r) => r.status?.status === 'ready')) return 'rooms not all ready';
    const roomNames = new Set(liveRooms.map((r) => r.metadata.name));
    if (!livePods.every((p) => roomNames.has(p.metadata?.name))) return 'a pod without its GameRoom';
    const ports = livePods.flatMap((p) => p.spec?.containers.flatMap((c) => (c.ports ?? []).map((x) => x.hostPort)) ?? []);
    if (new Set(ports).size !== ports.length) return 'a host port held twice';
    if ((s.status.rooms?.ready ?? 0) !== desired) return `status says ${String(s.status.rooms?.ready)} ready`;
    return undefined;
  };

  const failedOperations = async (name: string): Promise<number> =>
    (await stack.api.listOperations(name)).items.filter((o) => o.status?.status === 'error').length;

  /** Waits for the scheduler to be back in sync; returns how long it took (ms). */
  const backInSync = async (name: string, since: number, desired = DESIRED): Promise<number> => {
    let why: string | undefined = 'not checked';
    await waitFor(async () => {
      why = await notInSync(name, desired);
      return why === undefined;
    }, { timeoutMs: RECOVERY_MS, intervalMs: 250, message: `${name} back in sync (last seen: ${why})` }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; last: ${String(why)}\n${await kubectl(['describe', 'scheduler', name]).catch(() => '')}`);
    });
    return Date.now() - since;
  };

  const describeScheduler = (name: string): Promise<string> => kubectl(['describe', 'scheduler', name]);

  /** A leader tells deletions outside Roomkeeper (rooms, operations not started) once it has led for TAKEOVER_SETTLE_MS. */
  // As the operator counts it (it leads once it has looked at the other operators' Leases, which
  // can be seconds after its Lease's acquireTime on a loaded API server).
  const leaderSettled = (): Promise<unknown> => waitFor(() => stack.operators.some((o) => (o.ledForMs ?? 0) > TAKEOVER_SETTLE_MS), {
    timeoutMs: TAKEOVER_SETTLE_MS + 30_000, intervalMs: 500, message: `the leader has led for ${TAKEOVER_SETTLE_MS / 1000} s`,
  });

  const record = async (name: string, what: string, ms: number): Promise<void> => {
    const failed = await failedOperations(name);
    figures.push(`${what}: back in sync in ${(ms / 1000).toFixed(1)} s, ${failed} failed operations`);
    expect(failed).toBeLessThanOrEqual(3);
  };

  const roomsOf = async (name: string) => (await stack.api.listGameRooms(name)).items.filter((r) => !r.metadata.deletionTimestamp);

  beforeAll(async () => {
    // Rooms made a few at a time: a running add_rooms is caught mid-way (test 'kubectl delete of a running add_rooms').
    stack = await startStack({ external: true, config: { addRoomsConcurrency: 4 } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-deletions-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    stack.writeKubeconfig(kubeconfig);
    const names = [...SCHEDULERS, 'quota'];
    await Promise.all(names.map((n) => stack.api.createScheduler(schedulerObject(n, { roomsReplicas: DESIRED }) as never)));
    await Promise.all(names.map((n) => backInSync(n, Date.now())));
  }, 180_000);

  afterAll(async () => {
    process.stdout.write(`\n[kubectl-deletions] ${process.env.E2E_KUBECONFIG ? 'real cluster' : 'sandbox'}:\n  ${figures.join('\n  ')}\n`);
    await (stack as Stack | undefined)?.stop(); // undefined when beforeAll failed
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('kubectl delete namespace: rebuilt with its labels once gone, and the rooms replaced', async () => {
    const name = 'del-ns';
    const before = (await stack.core.readNamespace({ name })).metadata;
    const t0 = Date.now();
    await kubectl(['delete', 'namespace', name, '--wait=false']);
    await waitFor(async () => (await stack.core.readNamespace({ name })).metadata?.uid !== before?.uid, { timeoutMs: RECOVERY_MS, intervalMs: 250, message: 'namespace rebuilt' });
    const ms = await backInSync(name, t0);
    const ns = (await stack.core.readNamespace({ name })).metadata;
    expect(ns?.labels).toEqual(before?.labels);
    const described = await describeScheduler(name);
    expect(described).toMatch(/Reason:\s+Rebuilt[\s\S]*?Type:\s+NamespaceReady|Type:\s+NamespaceReady[\s\S]*?Reason:\s+Rebuilt/);
    expect(described).toMatch(/namespace del-ns was deleted and rebuilt/);
    await record(name, 'namespace deleted', ms);
  }, RECOVERY_MS + 30_000);

  test('kubectl label that removes the namespace\'s labels: NamespaceReady says it exists unlabelled and how to hand it back; the rooms run on', async () => {
    const name = 'del-ns';
    const labels = ['app.kubernetes.io/managed-by', 'roomkeeper.io/scheduler'];
    await kubectl(['label', 'namespace', name, ...labels.map((l) => `${l}-`)]);
    const unlabelled = /Reason:\s+NamespaceNotLabelled[\s\S]*?Type:\s+NamespaceReady|Type:\s+NamespaceReady[\s\S]*?Reason:\s+NamespaceNotLabelled/;
    await waitFor(async () => unlabelled.test(await describeScheduler(name)), { timeoutMs: 30_000, message: 'NamespaceReady says the namespace is unlabelled' });
    const described = await describeScheduler(name);
    expect(described).not.toMatch(/was deleted; rebuilding/);
    expect(described.replace(/\s+/g, ' ')).toContain(`kubectl label namespace ${name} app.kubernetes.io/managed-by=roomkeeper roomkeeper.io/scheduler=${name} --overwrite`);
    expect(await notInSync(name)).toBeUndefined();

    await kubectl(['label', 'namespace', name, 'app.kubernetes.io/managed-by=roomkeeper', `roomkeeper.io/scheduler=${name}`, '--overwrite']);
    await waitFor(async () => !unlabelled.test(await describeScheduler(name)), { timeoutMs: 30_000, message: 'NamespaceReady no longer says unlabelled' });
    expect(await notInSync(name)).toBeUndefined();
  }, 90_000);

  test('kubectl delete of the active version waits on its finalizer and says why; gone anyway, it is rebuilt from the spec', async () => {
    const name = 'del-version';
    const versionName = `${name}-v1.0.0`;
    await waitFor(async () => (await stack.api.getSchedulerVersion(versionName)).metadata.finalizers?.includes('roomkeeper.io/version-protection'), { timeoutMs: 30_000, message: 'active version protected' });
    const t0 = Date.now();
    await kubectl(['delete', 'rksv', versionName, '--wait=false']);
    await waitFor(async () => /deletion of del-version-v1\.0\.0 \(it is the active version\) waits/.test(await describeScheduler(name)), { timeoutMs: 30_000, message: 'the waiting deletion described' });
    expect((await stack.api.getSchedulerVersion(versionName)).metadata.deletionTimestamp).toBeDefined();

    // Gone anyway: the finalizer removed by hand.
    const uid = (await stack.api.getSchedulerVersion(versionName)).metadata.uid;
    await kubectl(['patch', 'rksv', versionName, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    const rebuilt = await waitFor(async () => {
      const v = await stack.api.getSchedulerVersion(versionName);
      return v.metadata.uid !== uid && !v.metadata.deletionTimestamp && v.status?.active ? v : undefined;
    }, { timeoutMs: RECOVERY_MS, intervalMs: 250, message: 'active version rebuilt' });
    expect(rebuilt.spec.definition.spec).toEqual((await stack.api.getScheduler(name)).spec.spec);

    // Rooms are made from it again: one deleted room is replaced.
    const [room] = await roomsOf(name);
    await kubectl(['delete', 'rkgr', room?.metadata.name as string, '-n', name, '--wait=false']);
    await waitFor(async () => !(await roomsOf(name)).some((r) => r.metadata.name === room?.metadata.name), { timeoutMs: 30_000, message: 'room gone' });
    const ms = await backInSync(name, t0);
    const described = await describeScheduler(name);
    expect(described).toMatch(/active version v1\.0\.0 was deleted and rebuilt from the Scheduler's spec/);
    expect(described).toMatch(/no deletion of a version is waiting/);
    await record(name, 'active version deleted (finalizer removed by hand)', ms);
  }, RECOVERY_MS + 60_000);

  test('kubectl delete of an Operation while it runs', async () => {
    const name = 'del-op';
    await kubectl(['scale', 'rks', name, '--replicas=6']);
    const t0 = Date.now();
    const running = await waitFor(async () => (await stack.api.listOperations(name)).items.find((o) => o.status?.status === 'in_progress'),
      { timeoutMs: 30_000, intervalMs: 10, message: 'an operation in progress' });
    await kubectl(['delete', 'rkop', running.metadata.name as string, '--wait=false']);
    await kubectl(['scale', 'rks', name, `--replicas=${DESIRED}`]);
    const ms = await backInSync(name, t0);
    expect(await describeScheduler(name)).toMatch(/State:\s+in-sync/);
    await record(name, `operation ${running.spec.definitionName} deleted while it ran`, ms);
  }, RECOVERY_MS + 30_000);

  test('kubectl delete rkop of a running add_rooms: it stops as a cancel does, roomsReplicas and rooms as before, and a Scheduler Event tells how far it got; one deleted before it started is told too', async () => {
    const name = 'del-add';
    await leaderSettled();
    // Enough that kubectl's request lands mid-way on a loaded machine too (8-13 rooms made on a quiet one).
    const amount = 300;
    // The sandbox answers in microseconds: its pod creations are slowed so that the operation is
    // still running when kubectl's request lands (a real API server is slow enough at 4 at a time).
    stack.sandbox?.faults.set({ latencyMs: 100, match: { verb: 'create', resource: 'pods' } });
    try {
      const op = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: 'add_rooms', input: { amount }, source: 'api', enqueuedAt: Date.now() });
      const id = op.metadata.name as string;
      const t0 = Date.now();
      await stack.api.createOperation(op);
      await waitFor(async () => (await stack.api.listGameRooms(name)).items.length > DESIRED + 2, { timeoutMs: 30_000, intervalMs: 20, message: 'the add_rooms mid-way' });
      // A second operation waits behind the running one; deleted before it starts.
      const queued = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: 'add_rooms', input: { amount: 1 }, source: 'api', enqueuedAt: Date.now() });
      const queuedId = queued.metadata.name as string;
      await stack.api.createOperation(queued);
      await kubectl(['delete', 'rkop', queuedId]);
      const deleting = Date.now();
      await kubectl(['delete', 'rkop', id]); // waits until the object is gone
      const deleteMs = Date.now() - deleting;
      stack.sandbox?.faults.clear();
      await expect(stack.api.getOperation(id)).rejects.toThrow();
      const ms = await backInSync(name, t0);
      expect((await stack.api.getScheduler(name)).spec.roomsReplicas).toBe(DESIRED);
      const told = await waitFor(async () => {
        const described = await describeScheduler(name);
        return /was deleted while it ran/.test(described) && /was deleted before it started/.test(described) ? described : undefined;
      }, { timeoutMs: 30_000, intervalMs: 250, message: 'the two OperationDeleted Events' });
      expect(told).toMatch(new RegExp(`Operation ${id} \\(add_rooms\\) was deleted while it ran \\(by kubectl or another client, not by Roomkeeper\\); it stopped after [\\d.]+s as a cancel does\\. Its history went with it; it recorded: roomsReplicas changed from ${DESIRED} to ${DESIRED + amount}`));
      const stopped = new RegExp(`Room creation stopped by the deletion of the operation: (\\d+)/${amount} rooms created \\(the \\d+ requests in flight completed\\)`).exec(told);
      expect(stopped).toBeTruthy();
      const made = stopped?.[1] ?? '';
      expect(Number(made)).toBeLessThan(amount);
      expect(told).toMatch(new RegExp(`roomsReplicas restored to ${DESIRED}; Deleted the ${made} rooms created by this operation; Operation rollback flow execution finished with success\\.`));
      expect(told).not.toMatch(/Operation canceled by the user/);
      expect(told).toMatch(new RegExp(`Operation ${queuedId} \\(add_rooms\\) was deleted before it started \\(by kubectl or another client, not by Roomkeeper\\); it did nothing and will not run\\.`));
      figures.push(`running add_rooms deleted with kubectl: the deletion took ${(deleteMs / 1000).toFixed(1)} s (its finalizer holds it through the rollback); it had created ${made}/${amount} rooms`);
      await record(name, 'running add_rooms deleted', ms);
    } finally {
      stack.sandbox?.faults.clear();
    }
  }, RECOVERY_MS + 60_000);

  test('kubectl delete rkop of an add_rooms whose operator was killed: its finalizer holds it, and the next leader ends it as a cancel does, roomsReplicas and rooms as before, told in a Scheduler Event', async () => {
    const name = 'del-stopped';
    await leaderSettled();
    const amount = 300;
    stack.sandbox?.faults.set({ latencyMs: 100, match: { verb: 'create', resource: 'pods' } });
    const op = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: 'add_rooms', input: { amount }, source: 'api', enqueuedAt: Date.now() });
    const id = op.metadata.name as string;
    const t0 = Date.now();
    try {
      await stack.api.createOperation(op);
      // Mid-way, with the count it moved written in its history (what the next leader undoes).
      await waitFor(async () => {
        const rooms = (await stack.api.listGameRooms(name)).items.length;
        const written = (await stack.api.getOperation(id)).status?.executionHistory ?? [];
        return rooms > DESIRED + 2 && written.some((h) => h.event === `roomsReplicas changed from ${DESIRED} to ${DESIRED + amount}`);
      }, { timeoutMs: 30_000, intervalMs: 20, message: 'the add_rooms mid-way' });
      // Each replica killed (kept in the stack, which stops them again at the end): the next one,
      // started below, is a new pod, with an identity of its own.
      for (const operator of stack.operators) await operator.crash();
      const held = await stack.api.getOperation(id);
      expect(held.metadata.finalizers).toContain('roomkeeper.io/operation-running');
      await kubectl(['delete', 'rkop', id, '--wait=false']);
      // With no operator, the deletion waits: the object stays, marked, in progress.
      const marked = await stack.api.getOperation(id);
      expect(marked.metadata.deletionTimestamp).toBeDefined();
      expect(marked.status?.status).toBe('in_progress');
    } finally {
      stack.sandbox?.faults.clear();
      if (!stack.operators.some((o) => o.isLeader)) await stack.addOperator();
    }
    await waitFor(async () => stack.api.getOperation(id).then(() => false, () => true), { timeoutMs: RECOVERY_MS, intervalMs: 250, message: 'the deleted operation released by the next leader' });
    const ms = await backInSync(name, t0);
    expect((await stack.api.getScheduler(name)).spec.roomsReplicas).toBe(DESIRED);
    const told = await waitFor(async () => {
      const described = await describeScheduler(name);
      return /after its operator had stopped running it/.test(described) ? described : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250, message: 'the OperationDeleted Event' });
    expect(told).toMatch(new RegExp(`Operation ${id} \\(add_rooms\\) was deleted \\(by kubectl or another client, not by Roomkeeper\\) after its operator had stopped running it \\(its lease expired at [^)]+\\); it ended as a cancel does, as far as its written history allows\\. Its history went with it; it recorded: roomsReplicas changed from ${DESIRED} to ${DESIRED + amount}`));
    expect(told).toMatch(new RegExp(`roomsReplicas restored to ${DESIRED}, as the operation's deletion asked; the health check removes the rooms above it, never one with players`));
    expect(told).not.toMatch(/OperationStuck/);
    figures.push(`add_rooms deleted with kubectl while its operator was down: released and undone by the next leader, back in sync ${(ms / 1000).toFixed(1)} s after it was enqueued`);
    await record(name, 'add_rooms deleted while its operator was down', ms);
  }, RECOVERY_MS * 2 + 60_000);

  test('kubectl delete gameroom: the Scheduler tells the room was deleted outside Roomkeeper and what replaces it; --all is one Event per add_rooms, not one per room', async () => {
    const name = 'del-room';
    const [room] = await roomsOf(name);
    const roomName = room?.metadata.name as string;
    await leaderSettled();
    const t0 = Date.now();
    await kubectl(['delete', 'gameroom', roomName, '-n', name]);
    const ms = await backInSync(name, t0);
    const described = await waitFor(async () => {
      const d = await describeScheduler(name);
      return /RoomsDeletedOutsideRoomkeeper/.test(d) ? d : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250, message: 'the RoomsDeletedOutsideRoomkeeper Event' }).catch(async (err: unknown) => {
      // What the Scheduler and its operations said instead (CI on 51b635c timed out here once,
      // the room replaced all the same), so that the next failure says why.
      const ops = (await stack.api.listOperations(name)).items.map((o) => `${o.metadata.name as string} ${o.spec.definitionName} ${o.status?.status ?? 'pending'}: ${JSON.stringify(o.spec.input)}`);
      throw new Error(`${(err as Error).message}; the room ${roomName}; operations:\n${ops.join('\n')}\n${await describeScheduler(name)}`, { cause: err });
    });
    const told = new RegExp(`Room ${roomName} was deleted outside Roomkeeper \\(by kubectl or another client; no operation deleted it\\)\\. The health check enqueued add_rooms (\\S+) for 1 room \\(1 available of ${DESIRED} desired\\)\\.`).exec(described);
    expect(told).toBeTruthy();
    const replacing = await stack.api.getOperation(told?.[1] as string);
    expect(replacing.spec.input?.reason).toContain(`lost: ${roomName} (deleted outside Roomkeeper)`);
    await record(name, 'GameRoom deleted', ms);

    // Many at once: one Event per decision of the health check, not one per room.
    const many = 16;
    await kubectl(['scale', 'rks', name, `--replicas=${many}`]);
    await backInSync(name, Date.now(), many);
    const t1 = Date.now();
    await kubectl(['delete', 'gamerooms', '--all', '-n', name]);
    const events = stack.kc.makeApiClient(k8s.EventsV1Api);
    const outside = async () => (await events.listNamespacedEvent({ namespace: 'default' })).items
      .filter((e) => e.regarding?.name === name && e.reason === 'RoomsDeletedOutsideRoomkeeper' && !(e.note ?? '').startsWith(`Room ${roomName} `));
    const countOf = (note: string): number => (/^Room \S+ was deleted/.test(note) ? 1 : Number(/^(\d+) rooms were deleted/.exec(note)?.[1] ?? 0));
    const told16 = await waitFor(async () => {
      const found = await outside();
      return found.reduce((n, e) => n + countOf(e.note ?? '') * (e.series?.count ?? 1), 0) >= many ? found : undefined;
    }, { timeoutMs: RECOVERY_MS, intervalMs: 250, message: `every one of the ${many} rooms told` });
    expect(told16.reduce((n, e) => n + countOf(e.note ?? '') * (e.series?.count ?? 1), 0)).toBe(many);
    expect(told16.length).toBeLessThanOrEqual(many / 2);
    const ms16 = await backInSync(name, t1, many);
    figures.push(`kubectl delete gamerooms --all (${many} rooms): ${told16.length} Event${told16.length === 1 ? '' : 's'}, back in sync in ${(ms16 / 1000).toFixed(1)} s`);
    await kubectl(['scale', 'rks', name, `--replicas=${DESIRED}`]);
    await backInSync(name, Date.now());
  }, 2 * RECOVERY_MS + 60_000);

  test('kubectl delete gameroom --cascade=orphan: the pod it left running is deleted by the operator and told, the room replaced, no other pod deleted', async () => {
    const name = 'del-orphan';
    const [room] = await roomsOf(name);
    const roomName = room?.metadata.name as string;
    const pods = (await stack.core.listNamespacedPod({ namespace: name })).items;
    const orphanUid = pods.find((p) => p.metadata?.name === roomName)?.metadata?.uid;
    const othersUids = pods.filter((p) => p.metadata?.name !== roomName).map((p) => p.metadata?.uid);
    expect(orphanUid).toBeDefined();
    const t0 = Date.now();
    // kubectl waits until the GameRoom is gone: the garbage collector took the pod's ownerReference away first.
    await kubectl(['delete', 'gameroom', roomName, '-n', name, '--cascade=orphan']);
    // In sync: as many pods as rooms, each with its GameRoom, so the orphaned pod is gone.
    const ms = await backInSync(name, t0);
    const left = (await stack.core.listNamespacedPod({ namespace: name })).items.map((p) => p.metadata?.uid);
    expect(left).not.toContain(orphanUid);
    expect(left).toEqual(expect.arrayContaining(othersUids));
    const described = await waitFor(async () => {
      const d = await describeScheduler(name);
      return /OrphanedRoomPodsDeleted/.test(d) ? d : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250, message: 'the OrphanedRoomPodsDeleted Event' });
    // Told as orphaned: the pod had no ownerReference to a GameRoom any more when it was deleted.
    expect(described).toContain(`Deleted room pod ${roomName}, which ran without its GameRoom: its GameRoom was deleted with its pod orphaned (kubectl delete gameroom --cascade=orphan`);
    await record(name, `GameRoom deleted --cascade=orphan (its pod deleted after a ${stack.config.orphanedPodGrace / 1000} s grace)`, ms);
  }, RECOVERY_MS + 30_000);

  test('kubectl delete of the leader Lease: leadership is taken again and the fleet healed', async () => {
    const name = 'del-lease';
    const t0 = Date.now();
    await kubectl(['delete', 'lease', stack.config.leaseName, '-n', stack.config.leaseNamespace, '--wait=false']);
    await waitFor(async () => (await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'lease', stack.config.leaseName, '-n', stack.config.leaseNamespace], { timeout: 30_000 })).stdout,
      { timeoutMs: 30_000, intervalMs: 250, message: 'Lease taken again' });
    const [room] = await roomsOf(name);
    await kubectl(['delete', 'pod', room?.metadata.name as string, '-n', name, '--wait=false']);
    await waitFor(async () => !(await roomsOf(name)).some((r) => r.metadata.name === room?.metadata.name), { timeoutMs: 30_000, message: 'room gone' });
    const ms = await backInSync(name, t0);
    expect(stack.operators.some((o) => o.isLeader)).toBe(true);
    await record(name, 'leader Lease deleted', ms);
  }, RECOVERY_MS + 30_000);

  test('kubectl delete pod --force --grace-period=0: the room is replaced, nothing leaked', async () => {
    const name = 'del-pod';
    const [room] = await roomsOf(name);
    const t0 = Date.now();
    await kubectl(['delete', 'pod', room?.metadata.name as string, '-n', name, '--force', '--grace-period=0']);
    await waitFor(async () => !(await roomsOf(name)).some((r) => r.metadata.name === room?.metadata.name), { timeoutMs: 30_000, message: 'room gone' });
    const ms = await backInSync(name, t0);
    expect((await stack.api.listOperations(name)).items.some((o) => o.spec.definitionName === 'add_rooms' && o.status?.status === 'finished')).toBe(true);
    await record(name, 'pod force-deleted', ms);
  }, RECOVERY_MS + 30_000);

  test('kubectl delete of the rooms-token Secret: running rooms keep their tokens, new rooms get theirs', async () => {
    const name = 'del-secret';
    const secrets = (await stack.core.listNamespacedSecret({ namespace: stack.config.leaseNamespace }).catch(() => ({ items: [] }))).items
      .filter((s) => /room-token/.test(s.metadata?.name ?? ''));
    const t0 = Date.now();
    for (const s of secrets) await kubectl(['delete', 'secret', s.metadata?.name as string, '-n', stack.config.leaseNamespace]);
    try {
      const [room] = await roomsOf(name);
      await kubectl(['delete', 'pod', room?.metadata.name as string, '-n', name, '--wait=false']);
      await waitFor(async () => !(await roomsOf(name)).some((r) => r.metadata.name === room?.metadata.name), { timeoutMs: 30_000, message: 'room gone' });
      const ms = await backInSync(name, t0);
      await record(name, `rooms-token Secret deleted (${secrets.length} found)`, ms);
    } finally {
      // Put it back as the chart made it, for the suites that follow on the same cluster.
      for (const s of secrets) {
        await stack.core.createNamespacedSecret({ namespace: stack.config.leaseNamespace, body: { metadata: { name: s.metadata?.name, labels: s.metadata?.labels, annotations: s.metadata?.annotations }, data: s.data, type: s.type } });
      }
    }
  }, RECOVERY_MS + 30_000);

  // Not a deletion, but the failure it used to cause: every add_rooms failing the same way. A
  // ResourceQuota is enforced by kube-apiserver only (the sandbox stores it and admits anything).
  test('a failure that repeats is told once: tried with backoff, at most 3 failed operations kept, the count in a condition', async () => {
    const name = 'quota';
    if (!process.env.E2E_KUBECONFIG) {
      figures.push('repeated failure: not run on the sandbox (it does not enforce ResourceQuota)');
      return;
    }
    await kubectl(['create', 'quota', 'rooms', '--hard=pods=2', '-n', name]);
    const t0 = Date.now();
    await kubectl(['scale', 'rks', name, '--replicas=3']);
    // Tries 1..4 fail (1 + 2 + 4 s of backoff between them, plus the room expectations' TTL when
    // the watch showed a room's deletion before the DELETE answered); only 3 stay in the history.
    const tries = async () => Math.max(0, ...(await stack.api.listOperations(name)).items
      .filter((o) => o.spec.definitionName === 'add_rooms' && o.status?.status === 'error')
      .map((o) => Number(o.metadata.annotations?.['roomkeeper.io/attempt'] ?? 0)));
    await waitFor(async () => (await tries()) >= 4, { timeoutMs: 150_000, intervalMs: 250, message: 'four tries of add_rooms' }).catch(async (err: unknown) => {
      const ops = (await stack.api.listOperations(name)).items.map((o) => `${o.spec.enqueuedAt} ${o.spec.definitionName} ${String(o.status?.status)} ${JSON.stringify(o.metadata.annotations ?? {})} ${(o.status?.executionHistory ?? []).slice(-2).map((h) => h.event).join(' | ')}`);
      throw new Error(`${String(err)}\n${ops.sort().join('\n')}\n${await describeScheduler(name)}`);
    });
    // The 4th failed try is pruned by the next health check, a moment after it ended.
    await waitFor(async () => (await failedOperations(name)) <= 3, { timeoutMs: 5_000, intervalMs: 100, message: 'at most 3 failed operations kept' });
    const described = await describeScheduler(name);
    expect(described).toMatch(/add_rooms failed \d+ times in a row \(first at .*, last try at .*exceeded quota/);
    expect(described).toMatch(/Type:\s+HealingHeld/);

    await kubectl(['delete', 'quota', 'rooms', '-n', name]);
    const ms = await backInSync(name, t0, 3);
    const failed = await failedOperations(name);
    figures.push(`repeated failure (pod quota): ${await tries()} tries, ${failed} failed operations kept; back in sync ${(ms / 1000).toFixed(1)} s after the scale, once the quota was lifted`);
    expect(failed).toBeLessThanOrEqual(3);
    expect(await describeScheduler(name)).toMatch(/no healing operation is held back by a repeated failure/);
  }, RECOVERY_MS + 180_000);

  // Last: it takes every scheduler's rooms at once.
  test('kubectl delete of the GameRoom CRD, then applied again: every scheduler gets its rooms back, nothing leaked', async () => {
    const t0 = Date.now();
    await kubectl(['delete', 'crd', 'gamerooms.roomkeeper.io', '--timeout=90s']);
    await kubectl(['apply', '--server-side', '-f', path.join(CRD_DIR, 'roomkeeper.io_gamerooms.yaml')]);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/gamerooms.roomkeeper.io']);
    const names = SCHEDULERS;
    const ms = Math.max(...await Promise.all(names.map((n) => backInSync(n, t0))));
    for (const n of names) expect(await failedOperations(n)).toBeLessThanOrEqual(3);
    figures.push(`GameRoom CRD deleted and applied again: ${names.length} schedulers back in sync in ${(ms / 1000).toFixed(1)} s`);
  }, RECOVERY_MS + 120_000);

  test('the protected versions never block a Scheduler deletion: schedulers, versions and namespaces all go', async () => {
    const names = [...SCHEDULERS, 'quota'];
    const t0 = Date.now();
    await kubectl(['delete', 'rks', ...names, '--wait=false']);
    await waitFor(async () => {
      const schedulers = (await stack.api.listSchedulers()).items.filter((x) => names.includes(x.metadata.name as string));
      const versions = (await stack.api.listSchedulerVersions()).items.filter((v) => names.includes(v.spec.scheduler));
      const namespaces = (await stack.core.listNamespace()).items.filter((n) => names.includes(n.metadata?.name as string));
      return schedulers.length + versions.length + namespaces.length === 0;
    }, { timeoutMs: 90_000, intervalMs: 250, message: 'schedulers, versions and namespaces deleted' });
    figures.push(`${names.length} schedulers deleted with their protected versions and namespaces in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }, 120_000);
});
