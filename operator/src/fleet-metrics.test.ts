import type { GameRoom, Operation, Scheduler } from '../../common/src/generated/resources';
import { MetricsRegistry } from '../../common/src/metrics';
import { registerFleetMetrics } from './fleet-metrics';

const scheduler = (name: string, rooms: Record<string, number>): Scheduler => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'Scheduler', metadata: { name }, spec: {} as Scheduler['spec'], status: { rooms },
});
const operation = (name: string, schedulerName: string, status?: 'pending' | 'finished' | 'in_progress', startedAt?: string): Operation => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'Operation', metadata: { name },
  spec: { schedulerName, definitionName: 'add_rooms' } as Operation['spec'], ...(status ? { status: { status, ...(startedAt ? { startedAt } : {}) } } : {}),
});

const room = (name: string, silentSince?: string, deleting = false): GameRoom => ({
  apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 'alpha', ...(deleting ? { deletionTimestamp: new Date('2026-01-01T00:12:00.000Z') } : {}) },
  spec: { scheduler: 'alpha', version: 'v1.0.0' }, status: { status: 'ready', ...(silentSince ? { silentSince } : {}) },
});

describe('fleet gauges', () => {
  it('show rooms by status, desired vs current, rooms marked silent, queued operations and how long the running one has run per scheduler, and forget a deleted scheduler', async () => {
    let schedulers = [scheduler('alpha', { desired: 5, current: 3, ready: 2, pending: 1 }), scheduler('beta', { desired: 3, current: 3, occupied: 1, allocated: 1, active: 1 })];
    const operations = [operation('op1', 'alpha'), operation('op2', 'alpha', 'pending'), operation('op3', 'alpha', 'finished'), operation('op4', 'beta', 'in_progress', '2026-01-01T00:00:00.000Z')];
    const metrics = new MetricsRegistry();
    const rooms = (ns?: string) => (ns === 'alpha' ? [room('a1', '2026-01-01T00:10:00.000Z'), room('a2'), room('a3', '2026-01-01T00:10:00.000Z', true)] : []);
    registerFleetMetrics(metrics, { schedulers: { list: () => schedulers, get: () => undefined }, operations: { list: () => operations, get: () => undefined }, rooms: { list: rooms, get: () => undefined } }, [], () => Date.parse('2026-01-01T00:12:30.000Z'));
    const text = await metrics.render();
    const lines = text.split('\n');
    for (const expected of [
      'roomkeeper_scheduler_rooms{scheduler="alpha",status="ready"} 2',
      'roomkeeper_scheduler_rooms{scheduler="alpha",status="pending"} 1',
      'roomkeeper_scheduler_rooms{scheduler="beta",status="occupied"} 1',
      'roomkeeper_scheduler_rooms{scheduler="beta",status="allocated"} 1',
      'roomkeeper_scheduler_rooms{scheduler="beta",status="active"} 1',
      'roomkeeper_scheduler_rooms{scheduler="alpha",status="allocated"} 0',
      'roomkeeper_scheduler_rooms{scheduler="alpha",status="active"} 0',
      'roomkeeper_scheduler_rooms_desired{scheduler="alpha"} 5',
      'roomkeeper_scheduler_rooms_current{scheduler="alpha"} 3',
      // One marked silent, one not, one marked but being deleted.
      'roomkeeper_scheduler_rooms_silent{scheduler="alpha"} 1',
      'roomkeeper_scheduler_rooms_silent{scheduler="beta"} 0',
      'roomkeeper_scheduler_operations_queued{scheduler="alpha"} 2',
      'roomkeeper_scheduler_operations_queued{scheduler="beta"} 0',
      'roomkeeper_scheduler_operation_running_seconds{scheduler="beta"} 750',
      'roomkeeper_scheduler_operation_running_seconds{scheduler="alpha"} 0',
    ]) expect(lines).toContain(expected);

    schedulers = [schedulers[0] as Scheduler];
    const after = await metrics.render();
    expect(after).not.toContain('scheduler="beta"');
    expect(after).toContain('roomkeeper_scheduler_rooms_desired{scheduler="alpha"} 5');
  });
});
