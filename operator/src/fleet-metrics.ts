/**
 * Gauges of the fleet, read from the caches when `/metrics` is scraped: rooms by scheduler and
 * status, desired vs current rooms, rooms marked silent, and operations queued per scheduler. Each scrape sets them
 * afresh, so a deleted scheduler's series go with it (its name is the only label from user
 * input, and schedulers are bounded by the cluster's objects).
 */
import type { GameRoom, Operation, RoomCounts, Scheduler } from '../../common/src/generated/resources';
import type { Gauge, Labels, MetricsRegistry } from '../../common/src/metrics';
import type { Caches } from './deps';
import { isMarkedSilent } from '../../common/src/rooms/room-status';

const ROOM_STATUSES = ['pending', 'unready', 'ready', 'allocated', 'active', 'occupied', 'terminating', 'error'] as const satisfies readonly (keyof RoomCounts)[];

export interface FleetSample { name: 'rooms' | 'desired' | 'current' | 'silent' | 'queued' | 'running'; labels: Labels; value: number }

/** What the gauges show for these schedulers, their rooms and operations (the schedulers' status counts) at `now`. */
function fleetSamples(schedulers: readonly Scheduler[], roomsOf: (scheduler: string) => readonly GameRoom[], operations: readonly Operation[], now: number): FleetSample[] {
  const samples: FleetSample[] = [];
  const queued = new Map<string, number>();
  const runningSince = new Map<string, number>();
  for (const op of operations) {
    const status = op.status?.status ?? 'pending';
    const scheduler = op.spec.schedulerName;
    if (status === 'pending') queued.set(scheduler, (queued.get(scheduler) ?? 0) + 1);
    const started = Date.parse(op.status?.startedAt ?? '');
    if (status === 'in_progress' && Number.isFinite(started)) runningSince.set(scheduler, Math.min(runningSince.get(scheduler) ?? started, started));
  }
  for (const s of schedulers) {
    const scheduler = s.metadata.name as string;
    const rooms = s.status?.rooms ?? {};
    for (const status of ROOM_STATUSES) samples.push({ name: 'rooms', labels: { scheduler, status }, value: rooms[status] ?? 0 });
    samples.push({ name: 'desired', labels: { scheduler }, value: rooms.desired ?? s.status?.autoscaling?.desired ?? 0 });
    samples.push({ name: 'current', labels: { scheduler }, value: rooms.current ?? 0 });
    // Marked by the health check (rooms/domain/silence-marks.ts): game servers that may hang.
    samples.push({ name: 'silent', labels: { scheduler }, value: roomsOf(scheduler).filter(isMarkedSilent).length });
    samples.push({ name: 'queued', labels: { scheduler }, value: queued.get(scheduler) ?? 0 });
    const since = runningSince.get(scheduler);
    samples.push({ name: 'running', labels: { scheduler }, value: since === undefined ? 0 : Math.max(0, (now - since) / 1000) });
  }
  return samples;
}

export function registerFleetMetrics(metrics: MetricsRegistry, caches: Pick<Caches, 'schedulers' | 'operations' | 'rooms'>, queues: readonly { name: string; length: number }[] = [], now: () => number = Date.now): void {
  const depth = metrics.gauge('roomkeeper_workqueue_depth', 'Keys waiting in a controller\'s work queue (the control loop falls behind when this grows).', () => {
    for (const q of queues) depth.set(q.length, { controller: q.name });
  }, { labelNames: ['controller'] });
  const gauges: Record<FleetSample['name'], Gauge> = {} as Record<FleetSample['name'], Gauge>;
  const collect = (): void => {
    for (const g of Object.values(gauges)) g.reset();
    for (const s of fleetSamples(caches.schedulers.list(), (scheduler) => caches.rooms.list(scheduler), caches.operations.list(), now())) gauges[s.name].set(s.value, s.labels);
  };
  // Collected once per scrape, by the first gauge; the others are set by it.
  gauges.rooms = metrics.gauge('roomkeeper_scheduler_rooms', 'Rooms of a scheduler by status (pending, unready, ready, allocated, active, occupied, terminating, error), from its status.', collect, { labelNames: ['scheduler', 'status'] });
  gauges.desired = metrics.gauge('roomkeeper_scheduler_rooms_desired', 'Rooms a scheduler should have (the autoscaling target, or its fixed count).', undefined, { labelNames: ['scheduler'] });
  gauges.current = metrics.gauge('roomkeeper_scheduler_rooms_current', 'Rooms a scheduler has (not terminating).', undefined, { labelNames: ['scheduler'] });
  gauges.silent = metrics.gauge('roomkeeper_scheduler_rooms_silent', 'Rooms of a scheduler marked silent (status.silentSince): not heard from for ROOMKEEPER_ROOM_SILENCE_TIMEOUT, so not allocated until they ping again; counted in their status too (ready, occupied, ...).', undefined, { labelNames: ['scheduler'] });
  gauges.queued = metrics.gauge('roomkeeper_scheduler_operations_queued', 'Operations of a scheduler waiting to run.', undefined, { labelNames: ['scheduler'] });
  gauges.running = metrics.gauge('roomkeeper_scheduler_operation_running_seconds', 'How long the operation a scheduler runs now has been running (0: none runs).', undefined, { labelNames: ['scheduler'] });
}
