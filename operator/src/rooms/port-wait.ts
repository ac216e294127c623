/**
 * Rooms whose pods cannot be placed because no node has their host ports free (`isPortConflict`),
 * read from the caches. While some node that can take rooms has the ports a new room needs free,
 * the health check replaces such a room by one that draws other ports. When none has (the port
 * range holds fewer rooms than the nodes could run), a replacement would wait the same way: the
 * health check keeps them, their pods placed as soon as ports free up, and the scheduler
 * controller's HealingHeld condition says so, with what to do. Replacing them anyway made an
 * add_rooms and a remove_rooms every few seconds for as long as the fleet asked for more rooms.
 */
import type { Scheduler } from '../../../common/src/generated/resources';
import { toMillis } from '../../../common/src/kube/timestamps';
import { activeDefinition } from '../../../common/src/resources/scheduler-version';
import { counted } from '../../../common/src/text/counted';
import { nameList } from '../../../common/src/text/name-list';
import { cachedVersions, type OperatorDeps } from '../deps';
import { hostPortsByNode, isPortConflict, portsNeeded, roomFitsOnANode } from './domain/host-ports';
import { canTakeRooms } from './domain/node-availability';

/** How long a new room's pod may wait for its ports before it counts as waiting (a node may be freeing them). */
const PORT_CONFLICT_GRACE_MS = 5_000;

export interface PortWait {
  /** The fleet rooms whose pods wait for host ports, by name. */
  rooms: string[];
  /** When rooms whose pods wait are still within their first seconds: how soon the first of them is not. */
  settlingMs?: number;
  /**
   * Set when no node that can take rooms has the ports a new room needs free, so the rooms are kept:
   * what the HealingHeld condition and the Event say. Unset, they are replaced.
   */
  heldWords?: string;
}

/** The scheduler's rooms waiting for host ports, or undefined when none is. */
export function roomsWaitingForPorts(deps: Pick<OperatorDeps, 'caches'>, s: Scheduler, now: number): PortWait | undefined {
  const name = s.metadata.name as string;
  const rooms: string[] = [];
  let settlingMs: number | undefined;
  for (const r of deps.caches.rooms.list(name)) {
    if (r.spec.validation || r.metadata.deletionTimestamp) continue;
    const pod = deps.caches.pods.get(r.metadata.name as string, name);
    if (pod === undefined || !isPortConflict(pod)) continue;
    const age = now - (toMillis(r.metadata.creationTimestamp) ?? now);
    if (age > PORT_CONFLICT_GRACE_MS) rooms.push(r.metadata.name as string);
    else settlingMs = Math.min(settlingMs ?? Infinity, PORT_CONFLICT_GRACE_MS - age + 1);
  }
  const settling = settlingMs !== undefined ? { settlingMs } : {};
  if (rooms.length === 0) return settlingMs === undefined ? undefined : { rooms, ...settling };
  const def = activeDefinition(s, cachedVersions(deps.caches));
  const affinity = def.spec.affinity;
  const nodes = deps.caches.nodes.list().filter((n) => canTakeRooms(n) && (!affinity || n.metadata?.labels?.[affinity] === 'true'));
  const taken = hostPortsByNode(deps.caches.pods.list());
  if (roomFitsOnANode(def, nodes.map((n) => taken.get(n.metadata?.name ?? '') ?? new Set<number>()))) return { rooms, ...settling };
  const needs = [...portsNeeded(def).values()].map(({ range, count }) => `${counted(count, 'free port')} in ${range.start}-${range.end}`).join(' and ');
  const heldWords = `${counted(rooms.length, 'room')} (${nameList(rooms, { max: 5 })}) ${rooms.length === 1 ? 'waits' : 'wait'} for host ports: no node that can take rooms `
    + `(${counted(nodes.length, 'node')}${affinity ? ` labelled ${affinity}=true` : ''}) has ${needs}, as the rooms on them hold the rest. `
    + 'They are kept, not replaced (a new room would wait the same way), and placed as soon as ports free up. '
    + `To run more rooms, widen portRange or the ports' hostPortRange (a new version of scheduler ${name}), add nodes, or lower roomsReplicas`;
  return { rooms, ...settling, heldWords };
}
