/**
 * Who owns what a kubectl user applies (server-side apply, real field ownership, only on the real
 * API server): the operator's writes of a Scheduler's spec are owned by the field manager
 * `roomkeeper-operator` (its User-Agent up to the first `/`), so `kubectl apply --server-side` of a
 * manifest whose `roomsReplicas` an add_rooms moved meets a conflict that names the operator, and
 * `--force-conflicts` takes the field back. Before, the manager was `roomkeeper-operator (linux`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { makeKubeClients } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { buildOperation } from '../../common/src/operations/operation-factory';
import { newOperationId } from '../../common/src/operations/operation-id';
import { startChartOperator, type ChartOperator } from '../support/chart-operator';
import { kubectl, realApiServer, reportNotRun } from '../support/real-apiserver';
import { schedulerObject } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'owned-fields';

/** What kubectl wrote on stderr when it failed. */
function kubectlError(run: () => string): string {
  try {
    run();
  } catch (err) {
    return String((err as { stderr?: unknown }).stderr ?? err);
  }
  throw new Error('kubectl succeeded; a conflict was expected');
}

test('an add_rooms\'s roomsReplicas is owned by roomkeeper-operator: kubectl apply --server-side names it in the conflict, and --force-conflicts takes the field back', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('field ownership')).toMatch(/NOT RUN/);
    return;
  }
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(plane.adminKubeconfig);
  const clients = makeKubeClients(admin, { qps: 1000, burst: 1000 });
  const api = new RoomkeeperApi(clients.custom);
  const manifest = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rk-owned-')), 'scheduler.json');
  fs.writeFileSync(manifest, JSON.stringify(schedulerObject(NAME, { roomsReplicas: 0 })));
  let operator: ChartOperator | undefined;
  try {
    const operatorKc = new k8s.KubeConfig();
    operatorKc.loadFromFile(plane.operatorKubeconfig);
    operator = await startChartOperator(plane, { kubeConfig: operatorKc });
    kubectl(plane.adminKubeconfig, ['apply', '--server-side', '-f', manifest]);
    await waitFor(async () => (await api.getScheduler(NAME)).status?.version === 'v1.0.0', { timeoutMs: 60_000, message: `${NAME} created` });

    const id = newOperationId();
    await api.createOperation(buildOperation({ id, schedulerName: NAME, definitionName: 'add_rooms', input: { amount: 1 }, source: 'api', enqueuedAt: Date.now() }));
    await waitFor(async () => (await api.getOperation(id)).status?.status === 'finished', { timeoutMs: 60_000, message: 'add_rooms finished' });
    const raw = await clients.custom.getClusterCustomObject({ group: 'roomkeeper.io', version: 'v1', plural: 'schedulers', name: NAME }) as { spec: { roomsReplicas: number }; metadata: k8s.V1ObjectMeta };
    expect(raw.spec.roomsReplicas).toBe(1);
    const owners = (raw.metadata.managedFields ?? []).filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('"f:roomsReplicas"')).map((f) => f.manager);
    expect(owners).toEqual(['roomkeeper-operator']);

    const conflict = kubectlError(() => kubectl(plane.adminKubeconfig, ['apply', '--server-side', '-f', manifest]));
    expect(conflict).toContain('error: Apply failed with 1 conflict: conflict with "roomkeeper-operator" using roomkeeper.io/v1: .spec.roomsReplicas');
    kubectl(plane.adminKubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', manifest]);
    expect((await api.getScheduler(NAME)).spec.roomsReplicas).toBe(0);
  } finally {
    // Deleted while this operator runs, so the shared plane is left without it.
    await api.deleteScheduler(NAME).catch(() => undefined);
    await waitFor(async () => !(await api.listSchedulers()).items.some((s) => s.metadata.name === NAME), { timeoutMs: 120_000, message: `${NAME} deleted` }).catch(() => undefined);
    await operator?.operator.stop();
    clients.limiter.drain();
  }
}, 240_000);
