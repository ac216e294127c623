/**
 * Leader election on the real API server: two operator processes (each the operator alone, as
 * `operator/src/main.ts` runs it) with the chart's ServiceAccount, the chart's environment and
 * production timings (15 s lease, 10 s renew deadline, 2 s retry).
 * - SIGKILL of the leader while operations are queued: the other replica takes the Lease once it
 *   expires (at most lease duration + one retry period after the kill) and finishes the queue;
 *   an operation the dead leader had in progress ends `error` as stuck, with that in its history.
 * - SIGTERM of the leader: it releases the Lease, and the other leads within one retry period.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { forkChild, type ChildHandle } from '../../bench/support/child-rpc';
import type { OperatorChildArg } from '../../bench/processes/operator-child';
import { realApiServer, realClusterEnv, reportNotRun } from '../support/real-apiserver';
import { REPO_ROOT, schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const OPERATOR_CHILD = path.join(REPO_ROOT, 'bench', 'processes', 'operator-child.ts');
const NAME = 'failover-arena';
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;

async function management(stack: Stack, method: string, p: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${String(stack.managementUrl)}${p}`, {
    method, headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as unknown : undefined };
}

describe('leader failover on the real API server', () => {
  test('SIGKILL of the leader: the standby leads once the Lease expires and finishes the queue; SIGTERM: the Lease is released at once', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('leader failover')).toMatch(/NOT RUN/);
      return;
    }
    const saved = { ...process.env };
    Object.assign(process.env, realClusterEnv(plane));
    const children = new Map<string, ChildHandle<{ opsUrl: string | undefined }>>();
    let stack: Stack | undefined;
    const admin = new k8s.KubeConfig();
    admin.loadFromFile(plane.adminKubeconfig);
    const coordination = admin.makeApiClient(k8s.CoordinationV1Api);
    const env = plane.chartEnv.operator;
    const lease = { name: env.ROOMKEEPER_LEASE_NAME ?? 'roomkeeper-operator', namespace: env.ROOMKEEPER_LEASE_NAMESPACE ?? plane.releaseNamespace };
    const holder = async (): Promise<string> => (await coordination.readNamespacedLease(lease).catch(() => undefined))?.spec?.holderIdentity ?? '';
    const start = async (identity: string): Promise<void> => {
      const arg: OperatorChildArg = {
        kubeconfigYaml: fs.readFileSync(plane.operatorKubeconfig, 'utf8'),
        config: {
          identity, operatorPort: 0, logLevel: 'error', roomsApiUrl: stack?.roomsUrl ?? '',
          leaseDuration: LEASE_MS, renewDeadline: 10_000, retryPeriod: RETRY_MS, healthInterval: 1000, roomInitTimeout: 60_000, roomPingTimeout: 60_000,
        },
      };
      children.set(identity, await forkChild(OPERATOR_CHILD, { arg, env: { ...env, ROOMKEEPER_POD_NAME: identity } }));
    };
    try {
      // Gateway, simulated kubelet and rooms from the stack; the operators are the two children.
      stack = await startStack({ external: true, operators: 0, simulation: { pingIntervalMs: 1000 } });
      const s = stack;
      await start('operator-a');
      await start('operator-b');
      const first = await waitFor(async () => {
        const h = await holder();
        return children.has(h) ? h : undefined;
      }, { timeoutMs: 60_000, message: 'one of the two operators leads' });
      const standby = first === 'operator-a' ? 'operator-b' : 'operator-a';

      // Work for the queue: a scheduler and three add-rooms.
      const spec = (schedulerObject(NAME, { roomsReplicas: 2 }) as { spec: Record<string, unknown> }).spec;
      expect((await management(s, 'POST', '/schedulers', { name: NAME, ...spec })).status).toBe(200);
      await waitFor(async () => (await s.api.getScheduler(NAME)).status?.state === 'in-sync', { timeoutMs: 60_000, message: 'scheduler in sync' });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await waitFor(async () => {
          const r = await management(s, 'POST', `/schedulers/${NAME}/add-rooms`, { amount: 2 });
          return r.status === 200 ? r : undefined;
        }, { timeoutMs: 30_000, message: 'add-rooms accepted' });
        ids.push((res.body as { operationId: string }).operationId);
      }

      // SIGKILL: no goodbye, the Lease is left held.
      const killedAt = Date.now();
      process.kill(children.get(first)?.pid ?? 0, 'SIGKILL');
      await waitFor(async () => (await holder()) === standby, { timeoutMs: LEASE_MS + RETRY_MS + 5_000, intervalMs: 200, message: `${standby} leads after the SIGKILL of ${first}` });
      const failoverMs = Date.now() - killedAt;
      process.stdout.write(`\n[real-apiserver] leader failover after SIGKILL: ${(failoverMs / 1000).toFixed(1)} s (lease ${LEASE_MS / 1000} s, retry ${RETRY_MS / 1000} s)\n`);
      children.delete(first);

      // The queue is finished: every operation ended; one cut off mid-run says it was stuck.
      for (const id of ids) {
        const op = await waitFor(async () => {
          const o = await s.api.getOperation(id);
          return ['finished', 'error'].includes(o.status?.status ?? '') ? o : undefined;
        }, { timeoutMs: 120_000, message: `operation ${id} ended` });
        if (op.status?.status === 'error') expect((op.status.executionHistory ?? []).map((h) => h.event).join('\n')).toMatch(/stuck/);
      }
      await waitFor(async () => {
        const sch = await s.api.getScheduler(NAME);
        const rooms = (await s.api.listGameRooms(NAME)).items.filter((r) => !r.spec.validation && !r.metadata.deletionTimestamp);
        return sch.status?.state === 'in-sync' && rooms.length === sch.spec.roomsReplicas;
      }, { timeoutMs: 120_000, message: 'the scheduler converged under the new leader' });

      // SIGTERM: a graceful stop releases the Lease; a new replica takes it within a retry period.
      await start('operator-c');
      const terminatedAt = Date.now();
      await children.get(standby)?.stop();
      children.delete(standby);
      await waitFor(async () => (await holder()) === 'operator-c', { timeoutMs: 3 * RETRY_MS, intervalMs: 100, message: 'operator-c leads after the SIGTERM' });
      process.stdout.write(`[real-apiserver] leader handover after SIGTERM: ${((Date.now() - terminatedAt) / 1000).toFixed(1)} s\n`);
    } finally {
      // The scheduler is deleted while an operator still runs; then the Lease goes too.
      await stack?.stop();
      for (const child of children.values()) await child.stop().catch(() => undefined);
      await coordination.deleteNamespacedLease(lease).catch(() => undefined);
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]; // eslint-disable-line @typescript-eslint/no-dynamic-delete -- the environment is a dictionary: restoring it removes the variables the test added
      Object.assign(process.env, saved);
    }
  }, 600_000);
});
