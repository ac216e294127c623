/**
 * The kubectl path: a Scheduler applied, edited and deleted with the real kubectl goes through
 * the same operations as the HTTP API, and a bad Scheduler (or a cancel of an operation that has
 * ended) is refused at admission with the field named.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { isNotFound } from '../../common/src/kube/clients';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import type { Scheduler } from '../../common/src/generated/resources';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import { toolPath } from '../support/tools';

const run = promisify(execFile);

/**
 * Whether reading the object answers 404 Not Found. Any other error is thrown: inside `waitFor`
 * it counts as "not yet" and is named if the deadline passes, so an API server that does not
 * answer never passes for a deletion.
 */
async function isGone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

describe('Scheduler through kubectl', () => {
  let stack: Stack;
  let dir: string;
  let kubeconfig: string;

  const kubectl = async (args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> =>
    run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
  const kubectlFails = async (args: string[]): Promise<string> => {
    try {
      await kubectl(args);
    } catch (err) {
      return String((err as { stderr?: string }).stderr ?? err);
    }
    throw new Error(`kubectl ${args.join(' ')} succeeded; expected a failure`);
  };

  beforeAll(async () => {
    // On the sandbox, or on the cluster named by E2E_KUBECONFIG (the real-API-server tier runs it so).
    stack = await startStack({ external: true });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-kubectl-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    stack.writeKubeconfig(kubeconfig);
  });
  afterAll(async () => {
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `kubectl apply` of a Scheduler of one room, once that room is ready. */
  const applyWithOneRoom = async (name: string): Promise<void> => {
    const file = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(file, stringify(schedulerObject(name, { roomsReplicas: 1 })));
    await kubectl(['apply', '-f', file]);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.rooms?.ready === 1, { timeoutMs: 30_000, message: '1 room ready' });
  };
  /**
   * `kubectl create` of an add_rooms Operation named `<scheduler>-add`, as a kubectl user writes
   * it: the spec only, none of the labels the service puts on its operations.
   */
  const createAddRooms = async (name: string, amount: number): Promise<void> => {
    const opFile = path.join(dir, `${name}-op.yaml`);
    fs.writeFileSync(opFile, stringify({
      apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `${name}-add` },
      spec: { schedulerName: name, definitionName: 'add_rooms', enqueuedAt: new Date().toISOString(), input: { amount } },
    }));
    await kubectl(['create', '-f', opFile]);
  };

  /**
   * `kubectl apply` of a Scheduler of one room whose game server pings occupied, then a major
   * change (image 2.0.0) that its validation refuses: the validation room pings occupied too.
   */
  const applyAndRefuseMajor = async (name: string): Promise<void> => {
    const file = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(file, stringify(schedulerObject(name, { roomsReplicas: 1 }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'occupied' }])));
    await kubectl(['apply', '-f', file]);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.rooms?.occupied === 1, { timeoutMs: 30_000, message: '1 room occupied' });
    await kubectl(['patch', 'rks', name, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:2.0.0' }])]);
    await kubectl(['wait', 'rks', name, '--for=condition=Degraded', '--timeout=60s']);
  };

  test('apply, edit the image, delete: the history holds create, new version and switch, and v2.0.0 is active', async () => {
    const file = path.join(dir, 'scheduler.yaml');
    fs.writeFileSync(file, stringify(schedulerObject('kctl-game', { roomsReplicas: 2 })));
    await kubectl(['apply', '-f', file]);
    await waitFor(async () => (await stack.api.getScheduler('kctl-game')).status?.rooms?.ready === 2, { timeoutMs: 30_000, message: '2 rooms ready' });

    const table = (await kubectl(['get', 'rks', 'kctl-game'])).stdout;
    expect(table).toMatch(/GAME\s+STATE\s+VERSION\s+DESIRED\s+READY\s+ALLOCATED\s+ACTIVE\s+OCCUPIED/);
    expect(table).toMatch(/kctl-game\s+test-game\s+in-sync\s+v1\.0\.0/);

    await kubectl(['edit', 'scheduler', 'kctl-game'], { KUBE_EDITOR: 'sed -i s#example.com/game:1.0.0#example.com/game:2.0.0#' });
    await waitFor(async () => {
      const s = await stack.api.getScheduler('kctl-game');
      const rooms = (await stack.api.listGameRooms('kctl-game')).items.filter((r) => !r.metadata.deletionTimestamp);
      return s.status?.version === 'v2.0.0' && s.status.state === 'in-sync' && rooms.length === 2
        && rooms.every((r) => r.spec.version === 'v2.0.0' && r.status?.status === 'ready');
    }, { timeoutMs: 60_000, message: 'v2.0.0 active and every room replaced' });

    const ops = (await stack.api.listOperations('kctl-game')).items
      .sort((a, b) => Date.parse(a.spec.enqueuedAt) - Date.parse(b.spec.enqueuedAt))
      .filter((o) => !o.spec.priority);
    expect(ops.map((o) => [o.spec.definitionName, o.status?.status])).toEqual([
      ['create_scheduler', 'finished'],
      ['create_new_scheduler_version', 'finished'],
      ['switch_active_version', 'finished'],
    ]);
    expect(ops[0]!.spec.source).toBe('kubectl');
    // An operation that has ended cannot be asked to cancel: refused at admission, the field named.
    const ended = ops[0]!.metadata.name!;
    const refused = await kubectlFails(['patch', 'rkop', ended, '--type=merge', '-p', '{"spec":{"cancelRequested":true}}']);
    expect(refused).toMatch(/spec\.cancelRequested: Forbidden: the operation has already ended/);
    expect((await stack.api.getOperation(ended)).spec.cancelRequested).toBe(false);
    // A replaced room's pod is deleted by the garbage collector after its GameRoom (foreground
    // deletion): on kube-apiserver that takes a moment more than the room.
    await waitFor(async () => (await stack.core.listNamespacedPod({ namespace: 'kctl-game' })).items
      .filter((p) => !p.metadata?.deletionTimestamp).every((p) => p.spec?.containers[0]?.image === 'example.com/game:2.0.0'),
    { timeoutMs: 30_000, message: 'every live pod runs example.com/game:2.0.0' });

    await kubectl(['delete', 'scheduler', 'kctl-game', '--wait=false']);
    await waitFor(() => isGone(() => stack.api.getScheduler('kctl-game')), { timeoutMs: 30_000, message: 'scheduler deleted through delete_scheduler' });
    await waitFor(() => isGone(() => stack.core.readNamespace({ name: 'kctl-game' })), { message: 'namespace deleted' });
  });

  test('an Operation created with kubectl (no labels) is labeled by the operator, so kubectl wait -l finds it; it runs (a remove_rooms written so says reason kubectl), and the scheduler\'s deletion takes it with the others', async () => {
    const name = 'kctl-made-op';
    await applyWithOneRoom(name);
    await createAddRooms(name, 1);
    // The operator labels it as the gateway labels its own, so the README's label selectors find
    // it (kubectl wait -l answers "no matching resources found" until one matches).
    const selector = `roomkeeper.io/scheduler=${name},roomkeeper.io/definition=add_rooms`;
    await waitFor(async () => (await kubectl(['get', 'rkop', '-l', selector, '-o', 'name'])).stdout.trim() === `operation.roomkeeper.io/${name}-add`,
      { timeoutMs: 30_000, message: `kubectl get rkop -l ${selector} lists the kubectl-made add_rooms` });
    await kubectl(['wait', 'rkop', '-l', selector, '--for=jsonpath={.status.status}=finished', '--timeout=30s']);
    // Who enqueued it: kubectl (the CRD's default for an Operation written past the service).
    expect((await kubectl(['get', 'rkop', `${name}-add`, '-o', 'jsonpath={.spec.source} {.metadata.labels.app\\.kubernetes\\.io/managed-by}'])).stdout).toBe('kubectl roomkeeper');
    // A remove_rooms written with kubectl, with no reason of its own, names kubectl as its reason (not the HTTP API).
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.rooms?.ready === 2, { timeoutMs: 30_000, message: '2 rooms ready' });
    fs.writeFileSync(path.join(dir, `${name}-remove.yaml`), stringify({
      apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: `${name}-remove` },
      spec: { schedulerName: name, definitionName: 'remove_rooms', enqueuedAt: new Date().toISOString(), input: { amount: 1 } },
    }));
    await kubectl(['create', '-f', path.join(dir, `${name}-remove.yaml`)]);
    const removed = await waitFor(async () => {
      const op = await stack.api.getOperation(`${name}-remove`);
      return op.status?.status === 'finished' ? op : undefined;
    }, { timeoutMs: 30_000, message: 'the kubectl-made remove_rooms finished' });
    expect(removed.status?.executionHistory?.map((h) => h.event).join('\n')).toMatch(new RegExp(`^Removed 1 room \\(reason: kubectl\\): ${name}-[a-z0-9]{5}$`, 'm'));

    await kubectl(['delete', 'scheduler', name, '--timeout=60s']);
    // Only the deletion's own record stays (until a scheduler of that name is made again).
    const left = (await stack.api.listOperations()).items.filter((o) => o.spec.schedulerName === name)
      .map((o) => `${o.metadata.name as string} ${o.spec.definitionName}`);
    expect(left).toEqual([expect.stringMatching(/ delete_scheduler$/)]);
  }, 120_000);

  test('kubectl delete of a Scheduler while its add_rooms runs stops the add_rooms (a Normal OperationStopped): it does not go on making rooms for the deletion to remove', async () => {
    const name = 'kctl-going';
    // One room at a time, so the add_rooms still runs when the deletion comes.
    await stack.restartOperators({ addRoomsConcurrency: 1 });
    try {
      await applyWithOneRoom(name);
      await createAddRooms(name, 1000);
      await kubectl(['wait', 'rkop', `${name}-add`, '--for=jsonpath={.status.status}=in_progress', '--timeout=30s']);
      await kubectl(['delete', 'rks', name, '--timeout=120s']);

      const events = (await kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${name}`,
        '-o', 'jsonpath={range .items[*]}{.reason} {.message}{"\\n"}{end}'])).stdout;
      expect(events).toMatch(new RegExp(`^OperationStopped Operation ${name}-add \\(add_rooms\\) stopped after \\S+s: scheduler ${name} is being deleted, which removes its rooms and versions; nothing to do$`, 'm'));
      expect(events).not.toMatch(/OperationFinished Operation kctl-going-add /);
      // The rooms the deletion found: the one of the spec and those made before the stop, not 1,000.
      const deletion = (await stack.api.listOperations()).items.find((o) => o.spec.schedulerName === name && o.spec.definitionName === 'delete_scheduler');
      const found = deletion?.status?.executionHistory?.map((e) => /^Deleting namespace .*: (\d+) rooms?/.exec(e.event)?.[1]).find((n) => n !== undefined);
      expect(Number(found)).toBeLessThan(1000);
    } finally {
      await stack.restartOperators({});
    }
  }, 240_000);

  test('a major change whose validation room pings occupied fails saying what the room reported and what a game server must ping', async () => {
    const name = 'kctl-busy';
    await applyAndRefuseMajor(name);
    const degraded = (await kubectl(['get', 'rks', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Degraded")].message}'])).stdout;
    expect(degraded).toMatch(/\(create_new_scheduler_version\) failed: validation failed: the validation room did not report ready within \d+s \(it reported occupied; only ready validates a version: the game server must ping ready once it can take players, or set ROOMKEEPER_VALIDATION_ACCEPT_OCCUPIED \(the chart's operator\.validation\.acceptOccupied\) to true if it is taken by a matchmaker as soon as it starts\)/);

    // With the setting (Maestro's roomValidationAcceptOccupiedStatus), the same change validates by occupied.
    await stack.restartOperators({ validationAcceptOccupied: true });
    try {
      await kubectl(['patch', 'rks', name, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:3.0.0' }])]);
      const switched = await waitFor(async () => (await stack.api.listOperations(name)).items
        .find((o) => o.spec.definitionName === 'create_new_scheduler_version' && o.status?.status === 'finished'), { timeoutMs: 60_000, message: 'the change validated by occupied' });
      expect((switched.status?.executionHistory ?? []).map((h) => h.event)).toContain('1º Attempt: Game room validation success! (the room reported occupied, which ROOMKEEPER_VALIDATION_ACCEPT_OCCUPIED accepts)');
      await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v2.0.0', { timeoutMs: 30_000, message: 'the new major active' });
    } finally {
      await stack.restartOperators({});
    }
    await kubectl(['delete', 'rks', name, '--timeout=60s']);
  }, 180_000);

  test('kubectl scale after a refused major change scales the active version: the refused image is not tried again, and a Warning says so', async () => {
    const name = 'kctl-rebase';
    await applyAndRefuseMajor(name);

    await kubectl(['scale', 'rks', name, '--replicas=2']);
    // The count is in force (2 rooms) before its version is switched to: wait for both.
    const s = await waitFor(async () => {
      const now = await stack.api.getScheduler(name);
      return now.status?.rooms?.occupied === 2 && now.status.version === 'v1.1.0' ? now : undefined;
    }, { timeoutMs: 60_000, message: '2 rooms occupied and the count versioned as v1.1.0' });
    expect({ image: s.spec.spec.containers[0]?.image, roomsReplicas: s.spec.roomsReplicas, version: s.status?.version }).toEqual({ image: 'example.com/game:1.0.0', roomsReplicas: 2, version: 'v1.1.0' });
    const changes = (await stack.api.listOperations(name)).items.filter((o) => o.spec.definitionName === 'create_new_scheduler_version');
    // The refused change and the count's: no second validation of the refused image.
    expect(changes.map((o) => o.status?.status).sort()).toEqual(['error', 'finished']);
    const described = (await kubectl(['describe', 'rks', name])).stdout.replace(/\s+/g, ' ');
    expect(described).toMatch(/SpecRebasedOnActiveVersion .*roomsReplicas was set to 2 \(kubectl scale, or another client past the service\) on a spec whose last change failed \(operation \S+\); versioning that spec would try the refused change again, so the spec now holds the active version v1\.0\.0's definition with roomsReplicas 2\. To try the refused change again, apply it again/);
    await kubectl(['delete', 'rks', name, '--timeout=60s']);
  }, 180_000);

  test('a kubectl edit made while a switch waits in the queue is not overwritten by the switch: the switch runs, says it left the spec, and the edit is versioned after it', async () => {
    const name = 'kctl-edit-queued';
    // One room at a time: the add_rooms ahead of the switch runs long enough for both writes below.
    await stack.restartOperators({ addRoomsConcurrency: 1 });
    try {
      await applyWithOneRoom(name);
      await kubectl(['patch', 'rks', name, '--type=merge', '-p', '{"spec":{"maxSurge":"50%"}}']);
      await waitFor(async () => {
        const s = await stack.api.getScheduler(name);
        return s.status?.version === 'v1.1.0' && s.status.versionedGeneration === s.metadata.generation;
      }, { timeoutMs: 30_000, message: 'v1.1.0 active' });
      // A priority add_rooms (as the health check writes one) keeps the queue busy without moving roomsReplicas.
      const op = (id: string, definitionName: string, input: Record<string, unknown>, priority = false) =>
        stack.api.createOperation(buildOperation({ id, schedulerName: name, definitionName, input, priority, source: 'kubectl', enqueuedAt: Date.now() }));
      await op(`${name}-busy`, 'add_rooms', { amount: 40 }, true);
      await waitFor(async () => (await stack.api.getOperation(`${name}-busy`)).status?.status === 'in_progress', { timeoutMs: 30_000, message: 'the add_rooms running' });
      await op(`${name}-switch`, 'switch_active_version', { newActiveVersion: 'v1.0.0' });
      await stack.api.jsonPatchScheduler(name, [{ op: 'replace', path: '/spec/spec/containers/0/image', value: 'example.com/game:2.0.0' }]);
      expect((await stack.api.getOperation(`${name}-busy`)).status?.status).toBe('in_progress');

      const switched = await waitFor(async () => {
        const o = await stack.api.getOperation(`${name}-switch`);
        return o.status?.status === 'finished' ? o : undefined;
      }, { timeoutMs: 60_000, message: 'the switch finished' });
      expect(switched.status?.executionHistory?.map((h) => h.event)).toEqual(expect.arrayContaining([
        expect.stringMatching(/^Left the spec as it is, not replaced by v1\.0\.0's definition: it holds a change no version has yet \(generation \d+: spec\); the scheduler controller takes it up once no version operation is queued or running, on v1\.0\.0$/),
        'Switched the active version from v1.1.0 to v1.0.0',
      ]));
      // The edit is versioned on v1.0.0: a major version of the spec as kubectl wrote it, active, and the spec still holds it.
      const settled = await waitFor(async () => {
        const s = await stack.api.getScheduler(name);
        const pending = s.status?.conditions?.find((c) => c.type === 'PendingChanges');
        return s.status?.version === 'v2.0.0' && s.status.versionedGeneration === s.metadata.generation && pending?.status === 'False' ? s : undefined;
      }, { timeoutMs: 90_000, message: 'the edit versioned as v2.0.0 and active, nothing pending' });
      expect({ image: settled.spec.spec.containers[0]?.image, maxSurge: settled.spec.maxSurge }).toEqual({ image: 'example.com/game:2.0.0', maxSurge: '50%' });
      expect((await stack.api.getSchedulerVersion(`${name}-v2.0.0`)).spec.definition.spec.containers[0]?.image).toBe('example.com/game:2.0.0');
      expect(settled.status?.conditions?.find((c) => c.type === 'PendingChanges')).toMatchObject({ status: 'False', reason: 'VersionMatchesSpec' });
    } finally {
      await stack.restartOperators({});
    }
    await kubectl(['delete', 'rks', name, '--timeout=60s']);
  }, 240_000);

  test('kubectl scale after a refused count (above the limit) versions the new count as it is: nothing of the refused change is left to keep out', async () => {
    const name = 'kctl-count';
    await applyWithOneRoom(name);
    await kubectl(['scale', 'rks', name, '--replicas=20000']);
    await kubectl(['wait', 'rks', name, '--for=condition=Degraded', '--timeout=60s']);
    await kubectl(['scale', 'rks', name, '--replicas=2']);
    await waitFor(async () => {
      const s = await stack.api.getScheduler(name);
      return s.status?.version === 'v1.1.0' && s.status.rooms?.ready === 2;
    }, { timeoutMs: 60_000, message: 'v1.1.0 active with 2 ready rooms' });
    expect((await kubectl(['describe', 'rks', name])).stdout).not.toMatch(/SpecRebasedOnActiveVersion/);
    await kubectl(['delete', 'rks', name, '--timeout=60s']);
  }, 180_000);

  test('kubectl scale while autoscaling is enabled says the count is the autoscaler\'s, and what to do to set it by hand', async () => {
    const name = 'kctl-autoscaled';
    const file = path.join(dir, `${name}.yaml`);
    const scheduler = schedulerObject(name, { roomsReplicas: 1 });
    (scheduler.spec as Record<string, unknown>).autoscaling = {
      enabled: true, min: 1, max: 5, policy: { type: 'fixedBuffer', parameters: { fixedBuffer: { amount: 2 } } },
    };
    fs.writeFileSync(file, stringify(scheduler));
    await kubectl(['apply', '-f', file]);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.rooms?.ready === 2, { timeoutMs: 30_000, message: 'the autoscaler\'s 2 rooms ready' });

    expect((await kubectl(['scale', 'rks', name, '--replicas=4'])).stdout).toMatch(/scaled/);
    const told = /roomsReplicas 4 does not set the number of rooms while autoscaling is enabled: the autoscaler keeps it between min 1 and max 5; set spec\.autoscaling\.enabled to false to have 4 rooms/;
    const versionOp = await waitFor(async () => (await stack.api.listOperations(name)).items
      .find((o) => o.spec.definitionName === 'create_new_scheduler_version' && o.status?.status === 'finished'), { timeoutMs: 30_000, message: 'the scale made a version' });
    expect((versionOp.status?.executionHistory ?? []).map((h) => h.event).join('\n')).toMatch(told);
    await waitFor(async () => told.test((await kubectl(['describe', 'rks', name])).stdout), { timeoutMs: 30_000, message: 'kubectl describe tells it' });
    expect((await stack.api.getScheduler(name)).status?.rooms?.desired).toBe(2);
    await kubectl(['delete', 'rks', name, '--timeout=60s']);
  }, 120_000);

  test('kubectl wait --for=condition=Ready passes only once the desired count is decided and that many rooms serve; no status in between says Ready on rooms not counted', async () => {
    const name = 'kctl-ready';
    // Every status the API server stores, watched from before the apply.
    const seen: Scheduler[] = [];
    const watch = await new k8s.Watch(stack.kc).watch('/apis/roomkeeper.io/v1/schedulers', { fieldSelector: `metadata.name=${name}` },
      (_phase: string, obj: Scheduler) => { seen.push(obj); }, () => undefined);
    try {
      const file = path.join(dir, `${name}.yaml`);
      fs.writeFileSync(file, stringify(schedulerObject(name, { roomsReplicas: 2 })));
      await kubectl(['apply', '-f', file]);
      // kubectl wait prints the object it found Ready.
      const met = JSON.parse((await kubectl(['wait', 'rks', name, '--for=condition=Ready', '--timeout=60s', '-o', 'json'])).stdout) as Scheduler;
      const rooms = met.status?.rooms;
      expect(rooms?.desired).toBe(2);
      expect((rooms?.ready ?? 0) + (rooms?.occupied ?? 0) + (rooms?.allocated ?? 0) + (rooms?.active ?? 0)).toBeGreaterThanOrEqual(2);
      const readyTooEarly = seen.filter((s) => s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && s.status.rooms?.desired === undefined);
      expect(readyTooEarly.map((s) => s.status?.conditions?.find((c) => c.type === 'Ready')?.message)).toEqual([]);
      await kubectl(['delete', 'rks', name, '--timeout=60s']);
    } finally {
      watch.abort();
    }
  }, 120_000);

  test('a Scheduler whose create failed claims no applied spec and no finished rollout: kubectl wait on them does not pass', async () => {
    const name = 'kctl-taken';
    await kubectl(['create', 'namespace', name]); // not Roomkeeper's: create_scheduler refuses it
    try {
      const file = path.join(dir, `${name}.yaml`);
      fs.writeFileSync(file, stringify(schedulerObject(name, { roomsReplicas: 1 })));
      await kubectl(['apply', '-f', file]);
      await kubectl(['wait', 'rks', name, '--for=condition=Degraded', '--timeout=30s']);
      const conditions = JSON.parse((await kubectl(['get', 'rks', name, '-o', 'jsonpath={.status.conditions}'])).stdout) as Array<{ type: string; status: string; reason: string; message: string }>;
      const of = (type: string) => conditions.find((c) => c.type === type);
      expect(of('PendingChanges')).toMatchObject({ status: 'False', reason: 'CreateFailed' });
      expect(of('PendingChanges')?.message).toMatch(/^the spec was not applied: no version was made, as operation \S+ \(create_scheduler\) failed; Degraded says why and what to do$/);
      expect(of('Progressing')).toMatchObject({ status: 'False', reason: 'CreateFailed' });
      expect(of('Progressing')?.message).toMatch(/^no version is active, so no rooms roll out: operation \S+ \(create_scheduler\) failed; Degraded says why and what to do$/);
      expect(of('Ready')?.message).toBe('0 rooms ready, allocated, active or occupied (no desired count decided yet); state on-error');
      await kubectl(['delete', 'rks', name, '--timeout=60s']);
    } finally {
      await kubectl(['delete', 'namespace', name, '--wait=false']);
    }
  }, 120_000);

  test('an invalid Scheduler is refused at admission with the field named, and nothing is created', async () => {
    const file = path.join(dir, 'bad.yaml');
    const bad = schedulerObject('bad-game');
    (bad.spec as { spec: { containers: { ports: unknown[] }[] } }).spec.containers[0]!.ports = [
      { name: 'game', protocol: 'UDP', port: 7777, hostPortRange: { start: 10, end: 20 } },
    ];
    fs.writeFileSync(file, stringify(bad));
    const err1 = await kubectlFails(['apply', '-f', file]);
    expect(err1).toMatch(/spec\.(spec\.containers\[0\]\.ports\[0\]|portRange)/);

    const noContainers = schedulerObject('bad-game');
    (noContainers.spec as { spec: { containers: unknown[] } }).spec.containers = [];
    fs.writeFileSync(file, stringify(noContainers));
    const err2 = await kubectlFails(['apply', '-f', file]);
    expect(err2).toMatch(/spec\.spec\.containers/);

    const badGrace = schedulerObject('bad-game');
    (badGrace.spec as { spec: { terminationGracePeriod: string } }).spec.terminationGracePeriod = '0s';
    fs.writeFileSync(file, stringify(badGrace));
    const err3 = await kubectlFails(['apply', '-f', file]);
    expect(err3).toMatch(/spec\.spec\.terminationGracePeriod/);

    expect(await isGone(() => stack.api.getScheduler('bad-game'))).toBe(true);
    expect((await stack.api.listOperations('bad-game')).items).toHaveLength(0);
  });

  test('a maxSurge kubectl writes as "abc" is refused naming the field, the value and the accepted forms, in a Scheduler; a SchedulerVersion checks only its shape', async () => {
    const accepted = 'use an integer >= 1, a numeric string such as "3" or a percentage such as "10%"';
    const file = path.join(dir, 'surge.yaml');
    const bad = schedulerObject('surge-game', { maxSurge: 'abc' });
    fs.writeFileSync(file, stringify(bad));
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^ {2}maxSurge: abc$/m);
    expect(await kubectlFails(['apply', '-f', file])).toContain(`spec.maxSurge: Invalid value: "": maxSurge "abc" is not accepted: ${accepted}`);
    fs.writeFileSync(file, stringify(schedulerObject('surge-game', { maxSurge: 0 })));
    expect(await kubectlFails(['apply', '-f', file])).toContain(`maxSurge 0 is not accepted: ${accepted}`);

    const version = {
      apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 'surge-game-v1.0.0' },
      spec: { scheduler: 'surge-game', version: 'v1.0.0', kind: 'initial', definition: bad.spec },
    };
    // A SchedulerVersion's definition is checked for its shape only (crds/README.md: a check made
    // stricter by a later release must never refuse the writes of an older version): a value the
    // Scheduler refuses is taken, and never runs, as only versions Roomkeeper made for a scheduler
    // are activated (the next test); a value of the wrong type is still refused.
    fs.writeFileSync(file, stringify(version));
    await kubectl(['apply', '-f', file]);
    await kubectl(['delete', '-f', file]);
    fs.writeFileSync(file, stringify({ ...version, spec: { ...version.spec, definition: { ...(bad as { spec: Record<string, unknown> }).spec, roomsReplicas: 'many' } } }));
    expect(await kubectlFails(['apply', '-f', file])).toContain('spec.definition.roomsReplicas: Invalid value: "string": spec.definition.roomsReplicas in body must be of type integer');

    expect(await isGone(() => stack.api.getScheduler('surge-game'))).toBe(true);
    expect((await stack.api.listSchedulerVersions('surge-game')).items).toHaveLength(0);
  });

  test('a SchedulerVersion written by hand (kubectl create) is never made active: the switch ends in error saying why; a change of the spec numbers its version around it, and the scheduler\'s deletion deletes it', async () => {
    const name = 'handmade';
    await stack.api.createScheduler(schedulerObject(name, { roomsReplicas: 0 }) as never);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.0.0', { timeoutMs: 30_000, message: 'v1.0.0 active' });
    const first = await stack.api.getSchedulerVersion(`${name}-v1.0.0`);
    const file = path.join(dir, 'handmade.yaml');
    // As a user writes it: no label, no ownerReference.
    fs.writeFileSync(file, stringify({ apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: `${name}-v1.1.0` }, spec: { ...first.spec, version: 'v1.1.0', kind: 'minor' } }));
    await kubectl(['create', '-f', file]);
    await waitFor(() => stack.operators.some((o) => o.caches.versions.get(`${name}-v1.1.0`) !== undefined), { timeoutMs: 30_000, message: 'the operator sees the hand-written version' });
    const switched = buildOperation({ id: newOperationId(), schedulerName: name, definitionName: 'switch_active_version', input: { newActiveVersion: 'v1.1.0' }, source: 'api', enqueuedAt: Date.now() });
    await stack.api.createOperation(switched);
    const op = await waitFor(async () => {
      const o = await stack.api.getOperation(switched.metadata.name as string);
      return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 30_000, message: 'the switch ended' });
    expect(op.status?.status).toBe('error');
    expect(op.status?.executionHistory?.map((h) => h.event)).toContainEqual(expect.stringMatching(new RegExp(`^Operation execution failed: version v1\\.1\\.0 of scheduler ${name} was not made by Roomkeeper for this scheduler: SchedulerVersion ${name}-v1\\.1\\.0 has no ownerReference to Scheduler ${name} \\(uid [^)]+\\); it was written by hand, or left by an earlier scheduler of the same name, and was never validated\\.`)));
    expect((await stack.api.getScheduler(name)).status?.version).toBe('v1.0.0');

    await kubectl(['patch', 'rks', name, '--type=merge', '-p', '{"spec":{"maxSurge":7}}']);
    await waitFor(async () => (await stack.api.getScheduler(name)).status?.version === 'v1.2.0', { timeoutMs: 30_000, message: 'the minor change made v1.2.0, around the hand-written v1.1.0' });

    await kubectl(['delete', 'rks', name]);
    await waitFor(async () => (await stack.api.listSchedulerVersions()).items.every((v) => v.spec.scheduler !== name), { timeoutMs: 30_000, message: 'every version of the scheduler deleted, the hand-written one too' });
  });

  test('a SchedulerVersion or an Operation written by hand is refused saying what was wrong and what to do instead', async () => {
    const file = path.join(dir, 'by-hand.yaml');
    const version = {
      apiVersion: 'roomkeeper.io/v1', kind: 'SchedulerVersion', metadata: { name: 'hand-game-v1.0.1' },
      spec: { scheduler: 'hand-game', version: 'v1.0.0', kind: 'initial', definition: schedulerObject('hand-game').spec },
    };
    fs.writeFileSync(file, stringify(version));
    expect(await kubectlFails(['apply', '-f', file])).toContain('name must be <spec.scheduler>-<spec.version>, here "hand-game-v1.0.0"');

    version.metadata.name = 'hand-game-v1.0.0';
    fs.writeFileSync(file, stringify(version));
    await kubectl(['apply', '-f', file]);
    const operation = {
      apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name: 'hand-game-op' },
      // Its scheduler does not exist: the operator ends it (kept, as a recent operation is), and its spec stays immutable.
      spec: { schedulerName: 'hand-game', definitionName: 'add_rooms', enqueuedAt: new Date().toISOString(), input: { amount: 1 } },
    };
    fs.writeFileSync(file, stringify(operation));
    await kubectl(['apply', '-f', file]);
    try {
      expect(await kubectlFails(['patch', 'rksv', 'hand-game-v1.0.0', '--type=merge', '-p', '{"spec":{"kind":"major"}}']))
        .toContain('spec: Invalid value: "object": a SchedulerVersion is immutable: the operator writes one for each version of a scheduler; to change a scheduler, edit its Scheduler (kubectl edit rks <name>), which makes a new version');
      const immutable = 'spec: Forbidden: the input of an operation cannot change once it is created (schedulerName, definitionName, input, priority, source, enqueuedAt), whether it is pending, running or ended: create a new Operation instead (only cancelRequested may be set later)';
      expect(await kubectlFails(['patch', 'rkop', 'hand-game-op', '--type=merge', '-p', '{"spec":{"definitionName":"remove_rooms"}}'])).toContain(immutable);
      // Once the operator has ended it, its input cannot be edited either (kubectl edit sends the same patch).
      await waitFor(async () => ['finished', 'error', 'canceled', 'evicted'].includes((await stack.api.getOperation('hand-game-op')).status?.status ?? ''), { timeoutMs: 30_000, message: 'hand-game-op ended' });
      expect(await kubectlFails(['patch', 'rkop', 'hand-game-op', '--type=merge', '-p', '{"spec":{"input":{"amount":5}}}'])).toContain(immutable);
      expect((await stack.api.getOperation('hand-game-op')).spec.input).toEqual({ amount: 1 });
    } finally {
      await kubectl(['delete', 'rksv/hand-game-v1.0.0', 'rkop/hand-game-op', '--ignore-not-found']);
    }
  });
});
