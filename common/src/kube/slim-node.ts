/**
 * What Roomkeeper reads of a Node: its name, the addresses a room takes its address from, whether
 * it is cordoned and its conditions' type and status (Ready). The operator's cache keeps only this:
 * a whole Node (its images, capacity, nodeInfo, heartbeat times) is several KB, tens of MB at 5,000 nodes.
 */
import type * as k8s from '@kubernetes/client-node';

export function slimNode(node: k8s.V1Node): k8s.V1Node {
  const m = node.metadata ?? {};
  return {
    metadata: { name: m.name, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp, deletionTimestamp: m.deletionTimestamp },
    spec: { unschedulable: node.spec?.unschedulable },
    status: {
      addresses: node.status?.addresses?.map((a) => ({ type: a.type, address: a.address })),
      conditions: node.status?.conditions?.map((c) => ({ type: c.type, status: c.status })),
    },
  };
}
