/**
 * A room's address (GameRoom `status.host`, what matchmakers and the allocate API hand to players):
 * its pod's Node address as a matchmaker needs it, and which Node changes move it. Pure rules, no I/O.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';

/** The Node address types a room's address is taken from, first found first (Maestro's order). */
const ADDRESS_TYPES = ['ExternalDNS', 'ExternalIP', 'InternalDNS', 'InternalIP'] as const;

/** The address a Node gives its rooms: its first of ExternalDNS, ExternalIP, InternalDNS, InternalIP; undefined when it has none. */
function nodeAddressOf(node: V1Node | undefined): string | undefined {
  const addresses = node?.status?.addresses ?? [];
  for (const type of ADDRESS_TYPES) {
    const a = addresses.find((x) => x.type === type);
    if (a?.address) return a.address;
  }
  return undefined;
}

/**
 * The room's address: its pod's Node address, or the pod's hostIP while the Node is not known or
 * has none of those addresses.
 */
export function hostOf(pod: V1Pod, node: V1Node | undefined): string {
  return nodeAddressOf(node) ?? pod.status?.hostIP ?? '';
}

/**
 * Whether a Node event moves the address of the rooms on it: a Node added with an address, or
 * updated to another one (a cloud gives it its ExternalIP later, or replaces it under the same
 * name). Heartbeats and every other status change leave the address as it was: nothing. A deleted
 * Node moves nothing either: its pods go with it, and each pod's own event brings its room back.
 */
export function nodeAddressMoved(type: 'add' | 'update' | 'delete', node: V1Node, before: V1Node | undefined): boolean {
  return type !== 'delete' && nodeAddressOf(node) !== nodeAddressOf(before);
}
