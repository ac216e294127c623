/**
 * Gateway replicas that allocate from one scheduler race for the same rooms: each chooses from its
 * own cache, and a room another replica has just taken still looks free until the watch event
 * comes. With rooms scarce (matchmakers busy, few rooms free), two replicas chase the same last
 * rooms and one of them loses its compare-and-swap, again and again (a 409, a fresh read, another
 * write: two more requests on the API server each time).
 *
 * Each allocation names the replica that made it (`status.allocation.replica`). A replica that
 * loses a room to another's allocation remembers that replica for PEER_WINDOW_MS; while it knows
 * of others, it splits every set of equally good rooms into shares, one per replica it knows
 * (itself included, ordered by name, a room's share by a hash of its name), and tries its own
 * share first, then the others'. Replicas that know of each other try disjoint rooms first and
 * meet only once a share runs out. Nothing is coordinated and nothing is written for it: a replica
 * that stops allocating is forgotten after the window, and a replica that knows of no other
 * chooses among all rooms, as before. The order between rooms that are not equally good (the
 * strategy, the active version, the selectors) never changes.
 */
import type { GameRoom } from '../../../common/src/generated/resources';
import { openAllocation } from '../../../common/src/rooms/allocation';
import type { Clock } from '../../../common/src/runtime/clock';
import { fnv1a32 } from '../../../common/src/text/fnv';

/** How long a replica is counted after this one last lost a room to its allocation. */
export const PEER_WINDOW_MS = 60_000;
/** Most other replicas remembered (the names come from rooms' status, which anyone with write access to it can set). */
const MAX_PEERS = 32;

/** Pure: whether room `roomName` is in the share of replica `self` among `replicas` (sorted, `self` among them). */
export function inShareOf(roomName: string, replicas: readonly string[], self: string): boolean {
  return fnv1a32(roomName) % replicas.length === replicas.indexOf(self);
}

export class ReplicaShares {
  private readonly peers = new Map<string, number>();

  constructor(private readonly self: string, private readonly now: Clock) {}

  /** After a lost compare-and-swap: the replica whose open allocation holds the room, if another. */
  noteLoss(room: GameRoom): void {
    const replica = openAllocation(room.status)?.replica;
    if (!replica || replica === this.self) return;
    this.peers.delete(replica);
    this.peers.set(replica, this.now());
    if (this.peers.size > MAX_PEERS) this.peers.delete(this.peers.keys().next().value as string);
  }

  /** The replicas this one knows of now, itself included, sorted. */
  replicas(): string[] {
    const since = this.now() - PEER_WINDOW_MS;
    for (const [replica, at] of this.peers) if (at < since) this.peers.delete(replica);
    return [this.self, ...this.peers.keys()].sort();
  }

  /** Whether a room is this replica's to try first; undefined while it knows of no other replica. */
  mine(): ((room: GameRoom) => boolean) | undefined {
    const replicas = this.replicas();
    if (replicas.length < 2) return undefined;
    return (room) => inShareOf(room.metadata.name ?? '', replicas, this.self);
  }
}
