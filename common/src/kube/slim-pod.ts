/**
 * What Roomkeeper reads of a room's Pod: identity, placement, host ports, phase, conditions and
 * container states. Caches keep only this, so 10,000 rooms do not cost 10,000 full Pods.
 */
import type * as k8s from '@kubernetes/client-node';

export function slimPod(pod: k8s.V1Pod): k8s.V1Pod {
  const m = pod.metadata ?? {};
  return {
    metadata: {
      name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, labels: m.labels,
      creationTimestamp: m.creationTimestamp, deletionTimestamp: m.deletionTimestamp, ownerReferences: m.ownerReferences,
    },
    spec: {
      nodeName: pod.spec?.nodeName,
      containers: (pod.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image, ports: c.ports })),
    },
    status: {
      phase: pod.status?.phase,
      reason: pod.status?.reason,
      message: pod.status?.message,
      hostIP: pod.status?.hostIP,
      conditions: pod.status?.conditions?.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: c.lastTransitionTime })),
      containerStatuses: pod.status?.containerStatuses?.map((s) => ({ name: s.name, ready: s.ready, restartCount: s.restartCount, image: s.image, imageID: s.imageID, state: s.state })),
    },
  };
}
