/**
 * Which Nodes can take rooms (Ready and not cordoned), as the health check's fingerprint of what a
 * healing operation depends on reads them, and which Node events change that. Pure rules, no I/O.
 */
import type { V1Node } from '@kubernetes/client-node';

/** A Node whose Ready condition is True: its kubelet reports, and its pods' conditions are its kubelet's. */
export function isNodeReady(node: V1Node | undefined): boolean {
  return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** A Node that can take rooms: its Ready condition True and not cordoned (`spec.unschedulable`). */
export function canTakeRooms(node: V1Node | undefined): boolean {
  return node !== undefined && !node.spec?.unschedulable && isNodeReady(node);
}

/**
 * Whether a Node event changes which Nodes can take rooms: a Ready Node added or deleted, a Node
 * turning NotReady (or Unknown) or Ready again, cordoned or uncordoned. A heartbeat (the kubelet
 * writes its conditions' times every ~10 s) and every other change leave it as it was: false.
 * A Node deleted while NotReady changes nothing either: its pods' own events tell their rooms.
 */
export function nodeAvailabilityChanged(type: 'add' | 'update' | 'delete', node: V1Node, before: V1Node | undefined): boolean {
  return type === 'update' ? canTakeRooms(node) !== canTakeRooms(before) : canTakeRooms(node);
}
