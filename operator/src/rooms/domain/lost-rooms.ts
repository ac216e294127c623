/**
 * Lost rooms as the Scheduler's status records them (`status.lostRooms`), so that what the room
 * status controller saw outlives the leader that saw it. The room status controller is the only
 * writer: it appends a room before it deletes the lost GameRoom. The health check only reads: it
 * names the rooms lost since its last add_rooms in the next add_rooms reason. Pure rules, no I/O.
 */
import type { Operation, Scheduler, SchedulerStatusLostRoomsItem } from '../../../../common/src/generated/resources';
import { OperationDefinition, OperationSourceName } from '../../../../common/src/resources/operation-names';

export type LostRoom = SchedulerStatusLostRoomsItem;

/** How many lost rooms the status keeps (the CRD's `maxItems`): the oldest go first. */
export const MAX_LOST_ROOMS = 20;

/**
 * The JSON Patch (RFC 6902) of the Scheduler's status that records `entry`, given the Scheduler as
 * the cache shows it; undefined when the room is already recorded (a leader that died between this
 * write and the room's deletion left it there). An append needs no resourceVersion, so rooms lost at
 * once never conflict with each other nor with the room counts written meanwhile; the list stays
 * bounded because every append to a full list removes as many of the oldest (the API server
 * refuses a list longer than `maxItems`, when this cache was behind, and the retry decides again).
 * Only the first record, which creates the list, is conditional on the resourceVersion.
 */
export function lostRoomPatch(s: Scheduler, entry: LostRoom, max = MAX_LOST_ROOMS): object[] | undefined {
  const current = s.status?.lostRooms;
  if (current?.some((e) => e.name === entry.name)) return undefined;
  if (!current) {
    const guard = { op: 'test', path: '/metadata/resourceVersion', value: s.metadata.resourceVersion };
    return s.status
      ? [guard, { op: 'add', path: '/status/lostRooms', value: [entry] }]
      : [guard, { op: 'add', path: '/status', value: { lostRooms: [entry] } }];
  }
  const drop = Math.max(0, current.length + 1 - max);
  return [{ op: 'add', path: '/status/lostRooms/-', value: entry }, ...Array.from({ length: drop }, () => ({ op: 'remove', path: '/status/lostRooms/0' }))];
}

/**
 * The lost rooms the next add_rooms reason names, as `name (why)`: those lost after the last
 * add_rooms the health check enqueued (any of its add_rooms, a rollout's included, as before), so
 * each is named once, whichever replica enqueues it. Without such an operation in the history
 * (none yet, or pruned), every recorded room is named.
 */
export function lostSinceLastAdd(lost: readonly LostRoom[] | undefined, ops: readonly Operation[]): string[] {
  const since = ops
    .filter((op) => op.spec.definitionName === OperationDefinition.AddRooms && op.spec.source === OperationSourceName.Operator)
    .reduce((latest, op) => Math.max(latest, Date.parse(op.spec.enqueuedAt) || 0), Number.NEGATIVE_INFINITY);
  return (lost ?? []).filter((e) => (Date.parse(e.lostAt) || 0) > since).map((e) => `${e.name} (${e.reason})`);
}
