/**
 * A new scheduler's rooms wait for its namespace's ServiceAccount, on the real API server under the
 * chart's RBAC. kube-apiserver refuses every pod of a namespace until its `default` ServiceAccount
 * exists, and kube-controller-manager creates it moments after the namespace; after a control-plane
 * outage it took long enough that create_scheduler failed on the 403 and rolled the scheduler back.
 * Here kube-controller-manager is paused (SIGSTOP) while the scheduler is created, so the namespace
 * has no ServiceAccount; once it runs again (SIGCONT) the operation finishes with every room.
 */
import * as k8s from '@kubernetes/client-node';
import { makeKubeClients } from '../../common/src/kube/clients';
import { RoomkeeperApi } from '../../common/src/kube/roomkeeper-api';
import { startChartOperator, type ChartOperator } from '../support/chart-operator';
import { realApiServer, reportNotRun } from '../support/real-apiserver';
import { schedulerObject } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'no-account-yet';
const ROOMS = 3;

test('create_scheduler waits for the namespace\'s default ServiceAccount and finishes with every room once kube-controller-manager creates it', async () => {
  const plane = realApiServer();
  if (!plane) {
    expect(reportNotRun('rooms waiting for their namespace\'s ServiceAccount')).toMatch(/NOT RUN/);
    return;
  }
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(plane.adminKubeconfig);
  const clients = makeKubeClients(admin, { qps: 1000, burst: 1000 });
  const api = new RoomkeeperApi(clients.custom);
  let operator: ChartOperator | undefined;
  let paused = false;
  const resume = (): void => {
    if (paused) process.kill(plane.pids.controllerManager, 'SIGCONT');
    paused = false;
  };
  try {
    const operatorKc = new k8s.KubeConfig();
    operatorKc.loadFromFile(plane.operatorKubeconfig);
    const started = await startChartOperator(plane, { kubeConfig: operatorKc });
    operator = started;

    process.kill(plane.pids.controllerManager, 'SIGSTOP');
    paused = true;
    await api.createScheduler(schedulerObject(NAME, { roomsReplicas: ROOMS }) as never);
    await waitFor(() => /pod refused until the namespace's default ServiceAccount exists/.test(started.logged()), { timeoutMs: 60_000, message: 'a room pod refused for want of the ServiceAccount' })
      .catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${started.logged().slice(-3000)}`);
      });
    await expect(clients.core.readNamespacedServiceAccount({ name: 'default', namespace: NAME })).rejects.toMatchObject({ code: 404 });
    resume();

    const created = await waitFor(async () => {
      const o = (await api.listOperations(NAME)).items.find((x) => x.spec.definitionName === 'create_scheduler');
      return ['finished', 'error', 'canceled'].includes(o?.status?.status ?? '') ? o : undefined;
    }, { timeoutMs: 180_000, message: 'create_scheduler ended' });
    const events = created.status?.executionHistory?.map((h) => h.event) ?? [];
    expect({ status: created.status?.status, events }).toMatchObject({ status: 'finished' });
    expect(events.join('\n')).not.toMatch(/failed|rollback/i);
    const rooms = (await api.listGameRooms(NAME)).items.filter((r) => !r.metadata.deletionTimestamp);
    const pods = (await clients.core.listNamespacedPod({ namespace: NAME })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(rooms).toHaveLength(ROOMS);
    expect(pods.map((p) => p.metadata?.name).sort()).toEqual(rooms.map((r) => r.metadata.name).sort());
  } finally {
    resume();
    // Deleted while this operator runs, so the shared plane is left without it.
    await api.deleteScheduler(NAME).catch(() => undefined);
    await waitFor(async () => !(await api.listSchedulers()).items.some((s) => s.metadata.name === NAME), { timeoutMs: 120_000, message: `${NAME} deleted` }).catch(() => undefined);
    await operator?.operator.stop();
    clients.limiter.drain();
  }
}, 300_000);
