import { createHash } from 'node:crypto';
import type { GameRoom, GameRoomStatus } from '../../../common/src/generated/resources';
import { groupAllocatable, isBusyRoom } from '../../../common/src/rooms/allocation';
import { candidatesOfFleet } from '../testing/fixtures';
import { inShareOf } from './replica-shares';
import { chooseCandidates, isAllocatable, requestHash } from './room-allocation';

const READY: GameRoomStatus = { status: 'ready', pingStatus: 'ready', instanceStatus: 'ready' };
function room(name: string, host: string, status: GameRoomStatus = READY, version = 'v1.0.0', labels: Record<string, string> = {}): GameRoom {
  return { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name, namespace: 's', labels }, spec: { scheduler: 's', version }, status: { host, ...status } };
}
const fixed = () => 0.5;

describe('chooseCandidates', () => {
  const fleet = [
    room('a1', 'node-a'), room('a-busy', 'node-a', { ...READY, status: 'occupied', pingStatus: 'occupied' }),
    room('b1', 'node-b'), room('c1', 'node-c'),
    room('c-alloc', 'node-c', { ...READY, status: 'allocated', allocation: { id: 'x', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:05:00Z' } }),
    room('c-alloc-2', 'node-c', { ...READY, status: 'allocated', allocation: { id: 'y', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:05:00Z' } }),
  ];

  it('packed fills the hosts already in use first; distributed the emptiest first', () => {
    expect(candidatesOfFleet(fleet, { strategy: 'packed', random: fixed }).map((r) => r.metadata.name)).toEqual(['c1', 'a1', 'b1']);
    expect(candidatesOfFleet(fleet, { strategy: 'distributed', random: fixed }).map((r) => r.metadata.name)).toEqual(['b1', 'a1', 'c1']);
  });

  it('puts the active version first and takes the first selector that matches', () => {
    const rooms = [room('old', 'n', READY, 'v1.0.0', { tier: 'gold' }), room('new', 'n', READY, 'v2.0.0')];
    expect(candidatesOfFleet(rooms, { activeVersion: 'v2.0.0', strategy: 'packed', random: fixed }).map((r) => r.metadata.name)).toEqual(['new', 'old']);
    expect(candidatesOfFleet(rooms, { selectors: [{ labels: { tier: 'silver' } }, { labels: { tier: 'gold' } }], strategy: 'packed', random: fixed }).map((r) => r.metadata.name)).toEqual(['old']);
    expect(candidatesOfFleet(rooms, { selectors: [{ version: 'v9.0.0' }], strategy: 'packed', random: fixed })).toEqual([]);
  });

  it('reads a version as its major: rooms made before a minor change (add-rooms, a new roomsReplicas) run the same game server', () => {
    // Active v2.3.0 (three minor changes after v2.0.0); no room carries it.
    const rooms = [room('old', 'n', READY, 'v1.4.0'), room('current', 'n', READY, 'v2.0.0'), room('added', 'n', READY, 'v2.2.0')];
    const order = candidatesOfFleet(rooms, { activeVersion: 'v2.3.0', strategy: 'packed', random: fixed }).map((r) => r.metadata.name);
    expect(order.slice(0, 2).sort()).toEqual(['added', 'current']);
    expect(order[2]).toBe('old');
    expect(candidatesOfFleet(rooms, { selectors: [{ version: 'v2.3.0' }], strategy: 'packed', random: fixed }).map((r) => r.metadata.name).sort()).toEqual(['added', 'current']);
    expect(candidatesOfFleet(rooms, { selectors: [{ version: 'v1.0.0' }], strategy: 'packed', random: fixed }).map((r) => r.metadata.name)).toEqual(['old']);
  });

  it('never offers a room that is being deleted, a validation room, one held or ended-but-not-ready, not ready by pod and ping, or marked silent', () => {
    expect(isAllocatable(room('r', 'n'))).toBe(true);
    expect(isAllocatable({ ...room('r', 'n'), metadata: { name: 'r', deletionTimestamp: new Date() } })).toBe(false);
    expect(isAllocatable({ ...room('r', 'n'), spec: { scheduler: 's', version: 'v1.0.0', validation: true } })).toBe(false);
    expect(isAllocatable(room('r', 'n', { ...READY, instanceStatus: 'terminating' }))).toBe(false);
    // The operator marked it silent (its game server may hang): offered again once the mark goes.
    expect(isAllocatable(room('r', 'n', { ...READY, silentSince: '2026-01-01T00:00:00Z' }))).toBe(false);
    expect(isAllocatable(room('r', 'n', { ...READY, allocation: { id: 'x', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2000-01-01T00:00:00Z' } }))).toBe(false);
    expect(isAllocatable(room('r', 'n', { ...READY, allocation: { id: 'x', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2000-01-01T00:00:00Z', endedAt: '2000-01-01T00:00:00Z', endReason: 'expired' } }))).toBe(true);
  });
});

describe('chooseCandidates with a limit', () => {
  /** A fixed sequence of numbers in [0, 1): both orders see the same ties. */
  function seeded(seed: number): () => number {
    let x = seed;
    return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  }
  const statuses: GameRoomStatus[] = [READY, READY, { ...READY, status: 'occupied', pingStatus: 'occupied' }, { ...READY, status: 'active', pingStatus: 'occupied', runningMatches: 1 }, { ...READY, runningMatches: 0 }];
  const fleet = Array.from({ length: 300 }, (_, i) => room(`r${i}`, `node-${i % 7}`, statuses[i % statuses.length], i % 3 === 0 ? 'v1.0.0' : 'v2.0.0', { tier: i % 4 === 0 ? 'gold' : 'silver' }));

  it('keeps exactly the first rooms of the full order, for each strategy, selector and multi-match setting', () => {
    for (const strategy of ['packed', 'distributed'] as const) {
      for (const selectors of [undefined, [{ labels: { tier: 'bronze' } }, { labels: { tier: 'gold' } }, { labels: { tier: 'silver' } }]]) {
        for (const maxMatches of [1, 3]) {
          const options = { activeVersion: 'v2.0.0', strategy, selectors, maxMatches };
          const all = candidatesOfFleet(fleet, { ...options, random: seeded(7) }).map((r) => r.metadata.name);
          expect(all.length).toBeGreaterThan(20);
          for (const limit of [1, 3, 10, 1000]) {
            expect(candidatesOfFleet(fleet, { ...options, random: seeded(7), limit }).map((r) => r.metadata.name)).toEqual(all.slice(0, limit));
          }
        }
      }
    }
  });

  it('leaves out the rooms skip names, and takes the rooms of the first selector any free room matches', () => {
    const picked = candidatesOfFleet(fleet, { strategy: 'packed', random: seeded(1), limit: 10, skip: (r) => r.metadata.name === 'r0' || r.metadata.name === 'r4' });
    expect(picked.map((r) => r.metadata.name)).not.toContain('r0');
    const gold = candidatesOfFleet(fleet, { strategy: 'packed', random: seeded(1), selectors: [{ labels: { tier: 'bronze' } }, { labels: { tier: 'gold' } }, {}], limit: 5 });
    expect(gold).toHaveLength(5);
    expect(gold.every((r) => r.metadata.labels?.tier === 'gold')).toBe(true);
  });
});

describe('chooseCandidates with the shares of two gateway replicas', () => {
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const replicas = ['gateway-a', 'gateway-b'];
  const mineOf = (self: string) => (r: GameRoom) => inShareOf(r.metadata.name ?? '', replicas, self);
  // Two hosts, one busier (packed fills it first); a third of the rooms of the version being replaced.
  const fleet = Array.from({ length: 120 }, (_, i) => room(`s${i}`, i % 3 === 0 ? 'node-busy' : 'node-idle', i % 6 === 0 ? { ...READY, status: 'occupied', pingStatus: 'occupied' } : READY, i % 4 === 0 ? 'v1.0.0' : 'v2.0.0'));
  const free = fleet.filter((r) => isAllocatable(r)).map((r) => r.metadata.name);

  it('each replica offers its own share of a version class first, then the other\'s; every free room once; the active version still first', () => {
    for (const strategy of ['packed', 'distributed'] as const) {
      const orders = replicas.map((self) => candidatesOfFleet(fleet, { activeVersion: 'v2.0.0', strategy, random, mine: mineOf(self) }));
      for (const [i, order] of orders.entries()) {
        const names = order.map((r) => r.metadata.name);
        expect([...names].sort()).toEqual([...free].sort());
        const activeCount = order.filter((r) => r.spec.version === 'v2.0.0').length;
        // The active version's rooms first, whatever their share.
        expect(order.slice(0, activeCount).every((r) => r.spec.version === 'v2.0.0')).toBe(true);
        for (const part of [order.slice(0, activeCount), order.slice(activeCount)]) {
          const shares = part.map((r) => mineOf(replicas[i] as string)(r));
          const own = shares.filter(Boolean).length;
          expect(own).toBeGreaterThan(0);
          expect(shares).toEqual([...Array<boolean>(own).fill(true), ...Array<boolean>(part.length - own).fill(false)]);
        }
      }
      // Their first rooms (up to a share's size) never meet.
      const firsts = orders.map((order) => new Set(order.slice(0, 10).map((r) => r.metadata.name)));
      expect([...(firsts[0] as Set<string>)].filter((n) => firsts[1]?.has(n))).toEqual([]);
    }
  });

  it('keeps the strategy\'s order within a share: packed takes the busy host\'s rooms of its share first', () => {
    const order = candidatesOfFleet(fleet, { activeVersion: 'v2.0.0', strategy: 'packed', random, mine: mineOf('gateway-a') })
      .filter((r) => r.spec.version === 'v2.0.0' && mineOf('gateway-a')(r));
    const hosts = order.map((r) => r.status?.host);
    const busyCount = hosts.filter((h) => h === 'node-busy').length;
    expect(busyCount).toBeGreaterThan(0);
    expect(hosts).toEqual([...Array<string>(busyCount).fill('node-busy'), ...Array<string>(hosts.length - busyCount).fill('node-idle')]);
  });

  it('with a limit, keeps exactly the first rooms of the full order', () => {
    for (const strategy of ['packed', 'distributed'] as const) {
      let x = 5;
      const fixedSeq = () => () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
      x = 5;
      const all = candidatesOfFleet(fleet, { activeVersion: 'v2.0.0', strategy, random: fixedSeq(), mine: mineOf('gateway-b') }).map((r) => r.metadata.name);
      for (const limit of [1, 4, 40, 1000]) {
        x = 5;
        expect(candidatesOfFleet(fleet, { activeVersion: 'v2.0.0', strategy, random: fixedSeq(), mine: mineOf('gateway-b'), limit }).map((r) => r.metadata.name)).toEqual(all.slice(0, limit));
      }
    }
  });
});

describe('chooseCandidates over the groups of the cache\'s index', () => {
  const statuses: GameRoomStatus[] = [READY, { ...READY, status: 'occupied', pingStatus: 'occupied' }, { ...READY, status: 'active', pingStatus: 'occupied', runningMatches: 2 }, { ...READY, instanceStatus: 'pending' },
    { ...READY, status: 'allocated', allocation: { id: 'x', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:05:00Z' } }, { ...READY, runningMatches: 1, status: 'active', pingStatus: 'ready' },
    // A single-match room whose ready ping also reports a match: the status decides, so it is free.
    { ...READY, runningMatches: 1 }];
  const fleet = Array.from({ length: 240 }, (_, i) => room(`r${i}`, `node-${i % 5}`, statuses[i % statuses.length], i % 4 === 0 ? 'v1.0.0' : 'v2.0.0', { tier: i % 3 === 0 ? 'gold' : 'silver' }));
  const busyOnHost = (host: string) => fleet.filter((r) => isBusyRoom(r) && r.status?.host === host).length;
  let seed = 3;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

  it('offers every free room once, in the order of the rules: active version, then matches and busy hosts by strategy', () => {
    for (const strategy of ['packed', 'distributed'] as const) {
      for (const maxMatches of [1, 3]) {
        const order = chooseCandidates(groupAllocatable(fleet), { activeVersion: 'v2.0.0', strategy, maxMatches, random, busyOnHost });
        const free = fleet.filter((r) => isAllocatable(r, maxMatches)).map((r) => r.metadata.name).sort();
        expect(free).toContain('r6');
        expect(order.map((r) => r.metadata.name).sort()).toEqual(free);
        const sign = strategy === 'packed' ? -1 : 1;
        const key = (r: GameRoom) => [r.spec.version === 'v2.0.0' ? 0 : 1, sign * (r.status?.runningMatches ?? 0), sign * busyOnHost(r.status?.host ?? '')];
        for (let i = 1; i < order.length; i++) {
          const [a, b] = [key(order[i - 1] as GameRoom), key(order[i] as GameRoom)];
          const cmp = (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number) || (a[2] as number) - (b[2] as number);
          expect(cmp).toBeLessThanOrEqual(0);
        }
      }
    }
  });

  it('shuffles the rooms of equal groups together: each of them comes first now and then', () => {
    const ready = Array.from({ length: 6 }, (_, i) => room(`t${i}`, `node-${i % 2}`));
    const firsts = new Set<string>();
    for (let i = 0; i < 200; i++) firsts.add(chooseCandidates(groupAllocatable(ready), { strategy: 'packed', random, busyOnHost: () => 0, limit: 1 })[0]?.metadata.name ?? '');
    expect([...firsts].sort()).toEqual(ready.map((r) => r.metadata.name));
  });

  it('asks for the busy rooms of each host once, and looks at the rooms of no group past the limit', () => {
    const many = Array.from({ length: 50 }, (_, i) => room(`m${i}`, `node-${i % 5}`, READY, i < 10 ? 'v2.0.0' : 'v1.0.0'));
    const groups = groupAllocatable(many).map((g) => ({ ...g, rooms: jest.fn(() => g.rooms()) }));
    const busy = jest.fn(() => 1);
    const picked = chooseCandidates(groups, { activeVersion: 'v2.0.0', strategy: 'packed', random, busyOnHost: busy, limit: 3 });
    expect(picked.every((r) => r.spec.version === 'v2.0.0')).toBe(true);
    expect(busy).toHaveBeenCalledTimes(5);
    for (const g of groups) expect(g.rooms).toHaveBeenCalledTimes(g.version === 'v2.0.0' ? 1 : 0);
  });
});

describe('requestHash', () => {
  it('ignores the allocationId and key order, and changes with the body', () => {
    expect(requestHash({ allocationId: 'a', metadata: { x: 1, y: 2 } })).toBe(requestHash({ metadata: { y: 2, x: 1 } }));
    expect(requestHash({ metadata: { x: 1 } })).not.toBe(requestHash({ metadata: { x: 2 } }));
  });

  it('of an empty request is the SHA-256 of {}, as stored by earlier releases, whatever its allocationId', () => {
    const empty = createHash('sha256').update('{}').digest('hex');
    expect(requestHash({})).toBe(empty);
    expect(requestHash({ allocationId: 'a', selectors: undefined })).toBe(empty);
    expect(requestHash({ metadata: {} })).not.toBe(empty);
  });
});
