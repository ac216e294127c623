/**
 * Rooms deleted outside Roomkeeper (`kubectl delete gameroom`, another client, the GameRoom CRD's
 * deletion): told apart from the operator's own deletions when the cache first shows a room's
 * deletion, and kept per scheduler until the health check decides what replaces them. The health
 * check names them in the add_rooms that replaces them and tells them in one Scheduler Event per
 * decision, so `kubectl delete gamerooms --all` of a thousand rooms is a few Events, not a
 * thousand.
 *
 * Not taken for deletions outside Roomkeeper: the deletions this replica asked for
 * (expectations.ts), validation rooms (their operation tells), lost rooms (recorded in
 * `status.lostRooms`: the room status controller deleted them), and rooms that go with their
 * namespace or their Scheduler. A deletion that began while another replica led, or in this
 * replica's first TAKEOVER_SETTLE_MS as leader (leader-election.ts), is not told, so a new leader
 * does not take its predecessor's deletions for someone else's.
 */
import type { GameRoom } from '../../../common/src/generated/resources';
import { isBusyRoom } from '../../../common/src/rooms/allocation';
import { nameList } from '../../../common/src/text/name-list';
import type { Caches } from '../deps';
import type { RoomExpectations } from './expectations';

/** The names a scheduler's record keeps; the rest are counted. */
const NAMES_KEPT = 20;

/** The rooms of a scheduler deleted outside Roomkeeper since the health check last told them. */
export interface OutsideDeletionsOf {
  /** The first NAMES_KEPT names, in the order the deletions were seen. */
  names: string[];
  /** How many, named or not. */
  count: number;
  /**
   * How many of them held players or a matchmaker's allocation when deleted (allocated, occupied
   * or active): the Event says so, as such a deletion ended matches.
   */
  busy?: number;
}

export interface OutsideDeletionsDeps {
  caches: Pick<Caches, 'schedulers' | 'namespaces'>;
  expectations?: Pick<RoomExpectations, 'takeOwnDeletion' | 'lossRecordPending'>;
}

export class OutsideDeletions {
  /** Rooms (uid) whose deletion the cache showed begun (a deletionTimestamp): judged then, once. */
  private readonly deleting = new Set<string>();
  private readonly pending = new Map<string, OutsideDeletionsOf>();

  constructor(private readonly deps: OutsideDeletionsDeps) {}

  /**
   * Informer hook, on every replica whether it leads or not (before the expectations see the
   * event). A deletion is judged when the cache first shows it: the update that brings its
   * deletionTimestamp (a foreground or orphan deletion), or the delete itself (kubectl's default
   * removes a GameRoom at once). Only a leader keeps what it judged outside Roomkeeper: `leading`
   * is false on a standby and in a leader's first TAKEOVER_SETTLE_MS.
   */
  observe(type: 'add' | 'update' | 'delete', room: GameRoom, leading: boolean): void {
    const scheduler = room.metadata.namespace ?? '';
    const name = room.metadata.name ?? '';
    const uid = room.metadata.uid ?? `${scheduler}/${name}`;
    if (type === 'delete') {
      if (this.deleting.delete(uid)) return;
    } else {
      if (!room.metadata.deletionTimestamp || this.deleting.has(uid)) return;
      this.deleting.add(uid);
      if (type === 'add') return; // first seen deleting (a list): its deletion began unseen
    }
    const ours = this.deps.expectations?.takeOwnDeletion(scheduler, name) ?? false;
    if (!leading || ours || room.spec.validation || this.goesWithItsScheduler(scheduler) || this.recordedLost(scheduler, name)) return;
    const record = this.pending.get(scheduler) ?? { names: [], count: 0 };
    if (record.names.length < NAMES_KEPT) record.names.push(name);
    record.count += 1;
    if (isBusyRoom(room)) record.busy = (record.busy ?? 0) + 1;
    this.pending.set(scheduler, record);
  }

  /** The rooms of `scheduler` deleted outside Roomkeeper and not told yet. */
  of(scheduler: string): OutsideDeletionsOf | undefined {
    return this.pending.get(scheduler);
  }

  /** Told (or no longer worth telling: the scheduler or its namespace goes): forgotten. */
  clear(scheduler: string): void {
    this.pending.delete(scheduler);
  }

  private goesWithItsScheduler(scheduler: string): boolean {
    const s = this.deps.caches.schedulers.get(scheduler);
    const ns = this.deps.caches.namespaces.get(scheduler);
    return !s || s.metadata.deletionTimestamp !== undefined || !ns || ns.metadata?.deletionTimestamp !== undefined;
  }

  private recordedLost(scheduler: string, room: string): boolean {
    if (this.deps.expectations?.lossRecordPending(scheduler, room)) return true;
    return this.deps.caches.schedulers.get(scheduler)?.status?.lostRooms?.some((e) => e.name === room) ?? false;
  }
}

/**
 * The Scheduler Event's note for rooms deleted outside Roomkeeper, with what the health check did
 * about them (`outcome`, a sentence). At most `shown` names; the rest are counted.
 */
export function outsideDeletionNote(deleted: OutsideDeletionsOf, outcome: string, shown = 10): string {
  const list = nameList(deleted.names, { max: shown, total: deleted.count });
  const one = deleted.count === 1 && deleted.names.length === 1;
  const subject = one
    ? `Room ${list} was deleted outside Roomkeeper (by kubectl or another client; no operation deleted it)`
    : `${deleted.count} rooms were deleted outside Roomkeeper (by kubectl or another client; no operation deleted them): ${list}`;
  const busy = deleted.busy ?? 0;
  const held = busy === 0 ? ''
    : one ? ' while it held players or a matchmaker\'s allocation (allocated, occupied or active)'
      : `; ${busy === deleted.count ? (busy === 2 ? 'both' : `all ${busy}`) : `${busy} of them`} held players or a matchmaker's allocation (allocated, occupied or active)`;
  return `${subject}${held}. ${outcome}`;
}
