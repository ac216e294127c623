/**
 * Why Roomkeeper enforces no Pod Security level by default (issue 12, L5), measured on
 * kube-apiserver v1.28 (its PodSecurity admission is on by default): a room pod as the operator
 * builds it has a hostPort, which `baseline` refuses; in a namespace with the operator's default
 * labels (warn restricted, audit baseline) the same pod is admitted. Without host ports, the room
 * pod passes `baseline` enforced. The API server's warning of the default `warn` label reaches
 * the operator's log (api-warnings.ts).
 */
import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '../../common/src/config';
import { makeKubeClients } from '../../common/src/kube/clients';
import { captureLogs } from '../support/log-capture';
import { buildRoomPod } from '../../operator/src/rooms/domain/pod-template';
import { roomNamespaceLabels } from '../../operator/src/schedulers/room-namespace';
import { realApiServer, reportNotRun } from '../support/real-apiserver';
import { schedulerObject } from '../support/stack';

const definition = (schedulerObject('psa') as { spec: never }).spec;

describe('Pod Security Admission and room pods (kube-apiserver v1.28)', () => {
  test('baseline refuses the hostPort every room with ports has; the default labels admit the room pod', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('pod security')).toMatch(/NOT RUN/);
      return;
    }
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(plane.adminKubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const run = Date.now().toString(36);
    const pod = (ns: string, hostPorts: number[][]) => buildRoomPod({ schedulerName: ns, roomName: `${ns}-room1`, version: 'v1.0.0', definition, hostPorts, maestroEnv: true });

    const enforced = `psa-baseline-${run}`;
    await core.createNamespace({ body: { metadata: { name: enforced, labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } } });
    const refused = await core.createNamespacedPod({ namespace: enforced, body: pod(enforced, [[20001]]) }).then(() => undefined, (err: unknown) => err as { code?: number; body?: unknown });
    expect(refused?.code).toBe(403);
    const message = (JSON.parse(String(refused?.body)) as { message?: string }).message;
    expect(message).toMatch(/violates PodSecurity "baseline:latest": hostPort \(container "server" uses hostPort 20001\)/);
    // The same room without a host port passes baseline enforced.
    await core.createNamespacedPod({ namespace: enforced, body: pod(enforced, [[]]) });

    const defaults = `psa-defaults-${run}`;
    await core.createNamespace({ body: { metadata: { name: defaults, labels: roomNamespaceLabels(defaults, loadConfig({})) } } });
    // Through Roomkeeper's own clients, as the operator creates rooms: admitted, and the API
    // server's warning (the namespace's warn label) is logged once, not dropped.
    const logs = captureLogs('info');
    const clients = makeKubeClients(kc, { qps: 100, burst: 100 }, { logger: logs.logger });
    const admitted = await clients.core.createNamespacedPod({ namespace: defaults, body: pod(defaults, [[20001]]) });
    const second = pod(defaults, [[20002]]);
    second.metadata = { name: `${defaults}-room2`, labels: second.metadata?.labels ?? {} };
    await clients.core.createNamespacedPod({ namespace: defaults, body: second });
    const warned = logs.lines.filter((l) => l.message === 'the Kubernetes API server warned about a request of this process, which it carried out');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ request: `create pods in namespace ${defaults}` });
    expect(String(warned[0]?.warning)).toMatch(/^would violate PodSecurity "restricted:latest": .*hostPort \(container "server" uses hostPort 20001\)/);
    expect(String(warned[0]?.whatToDo)).toMatch(/^nothing was refused: the namespace's pod-security\.kubernetes\.io\/warn label \(ROOMKEEPER_ROOM_NAMESPACE_PSA_WARN/);
    clients.limiter.drain();
    expect(admitted.spec?.automountServiceAccountToken).toBe(false);
    expect((admitted.spec?.volumes ?? []).filter((v) => v.name.startsWith('kube-api-access'))).toEqual([]);

    await core.deleteNamespace({ name: enforced });
    await core.deleteNamespace({ name: defaults });
  });
});
