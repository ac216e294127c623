/**
 * Why Roomkeeper enforces no Pod Security level by default (issue 12, L5), measured on
 * kube-apiserver v1.28 (its PodSecurity admission is on by default): a room pod as the operator
 * builds it has a hostPort, which `baseline` refuses; in a namespace with the operator's default
 * labels (warn restricted, audit baseline) the same pod is admitted. Without host ports, the room
 * pod passes `baseline` enforced.
 */
import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '../../common/src/config';
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
    const admitted = await core.createNamespacedPod({ namespace: defaults, body: pod(defaults, [[20001]]) });
    expect(admitted.spec?.automountServiceAccountToken).toBe(false);
    expect((admitted.spec?.volumes ?? []).filter((v) => v.name.startsWith('kube-api-access'))).toEqual([]);

    await core.deleteNamespace({ name: enforced });
    await core.deleteNamespace({ name: defaults });
  });
});
