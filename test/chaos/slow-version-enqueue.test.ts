/**
 * An HTTP version change whose operation the operator enqueues first. The gateway writes the new
 * spec, then creates the version operation; the operator, watching Schedulers, may see the new
 * generation before that operation exists and create it itself (same id, derived from uid and
 * generation). It then has to know that the API made the change, not a kubectl user: the spec
 * write says so (roomkeeper.io/spec-change-source), and it waits up to 10 s for the gateway's
 * operation, which carries what only the gateway knows (countBefore, the count the change
 * replaced). On kube-apiserver the operator won this race in about one PATCH in two before it
 * waited. Here the sandbox holds the gateway's operation creates (its bearer token): 3 s, and the
 * gateway's operation is the one; 14 s (a gateway that stopped between its write and its create),
 * and the operator makes it. Sandbox only (the latency is a sandbox fault).
 */
import type { Operation } from '../../common/src/generated/resources';
import { withToken } from '../support/bearer-token';
import { managementCall } from '../support/http';
import { schedulerObject, startStack, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';

const NAME = 'slow-enqueue';
const GATEWAY_TOKEN = 'slow-enqueue-gateway';

describe("the gateway's version operation is created after the operator saw the spec change", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ simulation: false, kubeConfigFor: (component, kc) => (component === 'gateway' ? withToken(kc, GATEWAY_TOKEN) : kc) });
  });
  afterAll(async () => {
    stack.sandbox?.faults.clear();
    await stack.stop();
  });

  test('a PATCH is recorded as the API\'s (source api), whoever creates its operation first', async () => {
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: 0 }) as { spec: object }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    await waitFor(async () => (await stack.api.getScheduler(NAME)).status?.state === 'in-sync', { timeoutMs: 30_000, message: `${NAME} created` });

    const versionOps = async (): Promise<Operation[]> => (await stack.api.listOperations(NAME)).items
      .filter((o) => o.spec.definitionName === 'create_new_scheduler_version');

    // Held 3 s: the operator waits for the gateway's operation, which says the count it replaced.
    stack.sandbox!.faults.set({ latencyMs: 3000, match: { verb: 'create', resource: 'operations', token: GATEWAY_TOKEN } });
    const counted = await managementCall(stack, 'PATCH', `/schedulers/${NAME}`, { roomsReplicas: 1 });
    stack.sandbox!.faults.clear();
    expect(counted.status).toBe(200);
    const first = await waitFor(async () => {
      const o = (await versionOps()).find((x) => x.metadata.name === (counted.body as { operationId: string }).operationId);
      return o?.status?.status === 'finished' ? o : undefined;
    }, { timeoutMs: 30_000, message: 'the count change finished' });
    expect(first.spec.input).toMatchObject({ countBefore: 0 });

    stack.sandbox!.faults.set({ latencyMs: 14_000, match: { verb: 'create', resource: 'operations', token: GATEWAY_TOKEN } });
    let answered = false;
    const patch = managementCall(stack, 'PATCH', `/schedulers/${NAME}`, { maxSurge: '2' }).finally(() => { answered = true; });
    // The operator's operation exists while the gateway's create is still held: the race is on.
    const early = await waitFor(async () => (await versionOps()).find((o) => o.metadata.name !== first.metadata.name), { timeoutMs: 20_000, message: 'the version operation enqueued by the operator' });
    expect(answered).toBe(false);
    const res = await patch;
    stack.sandbox!.faults.clear();
    expect(res.status).toBe(200);
    const { operationId } = res.body as { operationId: string };
    expect(early.metadata.name).toBe(operationId);

    const op = await waitFor(async () => {
      const o = (await versionOps()).find((x) => x.metadata.name === operationId);
      return o?.status?.status === 'finished' ? o : undefined;
    }, { timeoutMs: 30_000, message: 'the version operation finished' });
    expect(op.spec.source).toBe('api');
    expect((await versionOps()).length).toBe(2);
  }, 60_000);
});
