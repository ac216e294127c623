import type { GameRoom, Operation } from '../../../common/src/generated/resources';
import { allocationNotice, allocationRecord, supersededAllocations } from '../../../common/src/rooms/allocation';
import { operationItemView } from '../maestro-views';
import { compareQueueOrder } from '../../../common/src/operations/queue-order';
import { isAllocatable } from '../use-cases/room-allocation';
import { candidatesOfFleet } from '../testing/fixtures';
import { countRooms } from '../use-cases/scheduler-queries';
import { slimGameRoom, slimOperation } from './cache-shapes';

const NOW = Date.parse('2026-01-01T00:01:00Z');

/** A GameRoom as the API server returns it after the operator, a ping and an allocation wrote it. */
function fullRoom(name: string, host: string, over: Partial<NonNullable<GameRoom['status']>> = {}, meta: Partial<GameRoom['metadata']> = {}): GameRoom {
  return {
    apiVersion: 'roomkeeper.io/v1',
    kind: 'GameRoom',
    metadata: {
      name, namespace: 's', uid: `uid-${name}`, resourceVersion: `rv-${name}`, generation: 1, creationTimestamp: new Date('2026-01-01T00:00:00Z'),
      labels: { 'app.kubernetes.io/managed-by': 'roomkeeper', 'roomkeeper.io/scheduler': 's', 'roomkeeper.io/version': 'v1.0.0', tier: name.endsWith('g') ? 'gold' : 'silver' },
      annotations: { 'roomkeeper.io/create-request': `req-${name}` },
      ...meta,
    },
    spec: { scheduler: 's', version: name.startsWith('new') ? 'v2.0.0' : 'v1.0.0', validation: false },
    status: {
      status: 'ready', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, lastPingAt: '2026-01-01T00:00:30Z', createdAt: '2026-01-01T00:00:00Z',
      reason: 'started', metadata: { map: 'de_dust' }, host, ports: [{ name: 'game', protocol: 'UDP', port: 20001, containerPort: 7777 }],
      ...over,
    },
  };
}

const ALLOCATION = { id: 'alloc-1', requestHash: 'h', allocatedAt: '2026-01-01T00:00:50Z', expiresAt: '2026-01-01T00:05:50Z', runningMatches: 0, metadata: { party: 'p1' } };
const PREVIOUS = [{ id: 'alloc-0', requestHash: 'h0', allocatedAt: '2026-01-01T00:00:10Z', expiresAt: '2026-01-01T00:00:20Z', endedAt: '2026-01-01T00:00:20Z', endReason: 'expired' as const, supersededAt: '2026-01-01T00:00:50Z' }];

const FLEET: GameRoom[] = [
  fullRoom('a1', 'node-a'), fullRoom('a2g', 'node-a', { status: 'occupied', pingStatus: 'occupied', runningMatches: 1 }),
  fullRoom('b1g', 'node-b'), fullRoom('new-c1', 'node-c'),
  fullRoom('c-alloc', 'node-c', { status: 'allocated', allocation: ALLOCATION, previousAllocations: PREVIOUS }),
  fullRoom('c-multi', 'node-c', { status: 'active', pingStatus: 'occupied', runningMatches: 2 }),
  fullRoom('gone', 'node-b', {}, { deletionTimestamp: new Date('2026-01-01T00:00:59Z'), finalizers: ['foregroundDeletion'] }),
  fullRoom('validation', 'node-b'),
  fullRoom('pending', '', { status: 'pending', pingStatus: 'unknown', instanceStatus: 'pending' }),
  fullRoom('hung', 'node-a', { silentSince: '2026-01-01T00:00:30Z' }),
];
FLEET[7]!.spec.validation = true;

describe('slimGameRoom', () => {
  const slim = FLEET.map(slimGameRoom);

  it('answers every reader of the gateway\'s room cache as the whole room does', () => {
    const random = () => 0.5;
    for (const maxMatches of [1, 3]) {
      expect(countRooms(slim, maxMatches)).toEqual(countRooms(FLEET, maxMatches));
      expect(slim.map((r) => isAllocatable(r, maxMatches))).toEqual(FLEET.map((r) => isAllocatable(r, maxMatches)));
      for (const strategy of ['packed', 'distributed'] as const) {
        for (const selectors of [undefined, [{ labels: { tier: 'gold' } }], [{ version: 'v2.0.0' }]]) {
          const options = { activeVersion: 'v2.0.0', strategy, random, maxMatches, selectors };
          expect(candidatesOfFleet(slim, options).map((r) => r.metadata.name)).toEqual(candidatesOfFleet(FLEET, options).map((r) => r.metadata.name));
        }
      }
    }
    expect(slim.map((r) => allocationNotice(r.status, NOW))).toEqual(FLEET.map((r) => allocationNotice(r.status, NOW)));
    for (const id of ['alloc-0', 'alloc-1']) expect(slim.map((r) => allocationRecord(r.status, id))).toEqual(FLEET.map((r) => allocationRecord(r.status, id)));
    expect(slim.map((r) => supersededAllocations(r.status, NOW, 8))).toEqual(FLEET.map((r) => supersededAllocations(r.status, NOW, 8)));
  });

  it('keeps what pings, forwarding, the address and a replayed allocation answer with', () => {
    const room = slimGameRoom(FLEET[4]!);
    expect(room).toEqual({
      apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom',
      metadata: { name: 'c-alloc', namespace: 's', resourceVersion: 'rv-c-alloc', labels: FLEET[4]!.metadata.labels },
      spec: { scheduler: 's', version: 'v1.0.0', validation: false },
      status: { status: 'allocated', pingStatus: 'ready', instanceStatus: 'ready', runningMatches: 0, lastPingAt: '2026-01-01T00:00:30Z', host: 'node-c', ports: [{ name: 'game', protocol: 'UDP', port: 20001 }], allocation: ALLOCATION, previousAllocations: PREVIOUS },
    });
    expect(slimGameRoom(FLEET[6]!).metadata.deletionTimestamp).toEqual(new Date('2026-01-01T00:00:59Z'));
  });

  it('drops what no reader of the cache reads', () => {
    const text = JSON.stringify(slimGameRoom(FLEET[0]!));
    for (const dropped of ['uid-a1', 'req-a1', 'creationTimestamp', 'generation', 'createdAt', 'de_dust', 'containerPort', 'started']) expect(text).not.toContain(dropped);
  });

  it('keeps a room without a status without one', () => {
    const { status: _none, ...bare } = FLEET[0]!;
    expect(slimGameRoom(bare).status).toBeUndefined();
  });
});

describe('slimOperation', () => {
  const op = (name: string, over: Partial<Operation['spec']>, status?: Operation['status']): Operation => ({
    apiVersion: 'roomkeeper.io/v1', kind: 'Operation',
    metadata: { name, uid: `uid-${name}`, resourceVersion: `rv-${name}`, creationTimestamp: new Date('2026-01-01T00:00:00Z'), labels: { 'roomkeeper.io/scheduler': 's' } },
    spec: { schedulerName: 's', definitionName: 'remove_rooms', enqueuedAt: `2026-01-01T00:00:0${name.length % 10}.000Z`, input: { roomsIds: Array.from({ length: 100 }, (_, i) => `room-${i}`), reason: 'expired_room' }, source: 'operator', ...over },
    ...(status ? { status } : {}),
  });
  const ops = [
    op('op-a', { priority: true }, { status: 'in_progress', lease: { holder: 'operator-0', ttl: '2026-01-01T00:01:00Z', renewedAt: '2026-01-01T00:00:30Z' }, executionHistory: [{ createdAt: '2026-01-01T00:00:00Z', event: 'started' }] }),
    op('op-bb', { definitionName: 'switch_active_version', input: { newActiveVersion: 'v2.0.0' } }, { status: 'pending' }),
    op('op-ccc', { cancelRequested: true }),
    op('op-dddd', {}, { status: 'finished', finishedAt: '2026-01-01T00:02:00Z', executionHistory: [{ createdAt: '2026-01-01T00:02:00Z', event: 'removed 100 rooms' }] }),
  ];
  const slim = ops.map(slimOperation);

  it('answers the operations list, its queue order and the version-operation check as the whole operation does', () => {
    expect(slim.map(operationItemView)).toEqual(ops.map(operationItemView));
    expect([...slim].sort(compareQueueOrder).map((o) => o.metadata.name)).toEqual([...ops].sort(compareQueueOrder).map((o) => o.metadata.name));
    expect(slim.map((o) => o.spec.input?.newActiveVersion)).toEqual(ops.map((o) => o.spec.input?.newActiveVersion));
    expect(slim.map((o) => [o.spec.cancelRequested, o.spec.priority, o.status?.status])).toEqual(ops.map((o) => [o.spec.cancelRequested, o.spec.priority, o.status?.status]));
  });

  it('drops the execution history and a removal\'s room ids (GET /operations/{id} reads the whole operation)', () => {
    const text = JSON.stringify(slim);
    for (const dropped of ['executionHistory', 'roomsIds', 'room-99', 'holder', 'uid-op-a']) expect(text).not.toContain(dropped);
  });
});
