import type { GameRoom, GameRoomStatusAllocation } from '../../../common/src/generated/resources';
import { inShareOf, PEER_WINDOW_MS, ReplicaShares } from './replica-shares';

function roomHeldBy(replica: string | undefined, ended = false): GameRoom {
  const allocation: GameRoomStatusAllocation = {
    id: 'm1', requestHash: 'h', allocatedAt: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:05:00Z',
    ...(replica !== undefined ? { replica } : {}), ...(ended ? { endedAt: '2026-01-01T00:01:00Z', endReason: 'occupied' as const } : {}),
  };
  return { apiVersion: 'roomkeeper.io/v1', kind: 'GameRoom', metadata: { name: 'r1', namespace: 's' }, spec: { scheduler: 's', version: 'v1.0.0' }, status: { status: 'allocated', allocation } };
}

describe('ReplicaShares', () => {
  it('knows of no other replica until one takes a room this one was allocating, and forgets it a window later', () => {
    let now = 1_000_000;
    const shares = new ReplicaShares('gateway-b', () => now);
    expect(shares.mine()).toBeUndefined();
    shares.noteLoss(roomHeldBy('gateway-b'));
    shares.noteLoss(roomHeldBy(undefined));
    shares.noteLoss(roomHeldBy('gateway-a', true));
    expect(shares.replicas()).toEqual(['gateway-b']);
    shares.noteLoss(roomHeldBy('gateway-a'));
    expect(shares.replicas()).toEqual(['gateway-a', 'gateway-b']);
    const mine = shares.mine();
    const names = Array.from({ length: 200 }, (_, i) => `room-${i}`);
    const own = names.filter((n) => mine?.({ ...roomHeldBy(undefined), metadata: { name: n } }));
    // About half, and exactly the rooms gateway-a does not count as its own.
    expect(own.length).toBeGreaterThan(60);
    expect(own.length).toBeLessThan(140);
    expect(own).toEqual(names.filter((n) => !inShareOf(n, ['gateway-a', 'gateway-b'], 'gateway-a')));
    now += PEER_WINDOW_MS + 1;
    expect(shares.replicas()).toEqual(['gateway-b']);
    expect(shares.mine()).toBeUndefined();
  });

  it('remembers a bounded number of other replicas, the most recent', () => {
    const shares = new ReplicaShares('self', () => 0);
    for (let i = 0; i < 100; i++) shares.noteLoss(roomHeldBy(`peer-${String(i).padStart(3, '0')}`));
    const known = shares.replicas();
    expect(known).toHaveLength(33);
    expect(known).toContain('peer-099');
    expect(known).not.toContain('peer-000');
  });
});
