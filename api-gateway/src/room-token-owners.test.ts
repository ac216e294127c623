import { roomToken } from '../../common/src/rooms/room-token';
import { InMemoryStore } from './testing/in-memory-store';
import { RoomTokenOwners } from './room-token-owners';

const CURRENT = 'current-secret';
const PREVIOUS = 'previous-secret';

describe('RoomTokenOwners.kindOf', () => {
  const clock = { now: 0 };
  const store = new InMemoryStore(() => clock.now);
  store.seedRoom('s1', 'room-1', { pingStatus: 'ready' });
  store.seedRoom('s1', 'room-2', { pingStatus: 'ready' });
  const owners = new RoomTokenOwners({ secrets: [CURRENT, PREVIOUS], rooms: store, now: () => clock.now });

  it.each([
    { name: "another room's token under the current secret", scheduler: 's1', room: 'room-1', token: roomToken(CURRENT, 's1', 'room-2'), kind: 'other-room' },
    { name: "another room's token under the previous secret", scheduler: 's1', room: 'room-1', token: roomToken(PREVIOUS, 's1', 'room-2'), kind: 'other-room' },
    { name: "the room's own token under a secret not held", scheduler: 's1', room: 'room-1', token: roomToken('retired', 's1', 'room-1'), kind: 'unheld-secret' },
    { name: 'a token for a room the gateway does not know', scheduler: 's1', room: 'ghost', token: roomToken('retired', 's1', 'ghost'), kind: 'unknown' },
    { name: "something of no room token's form", scheduler: 's1', room: 'room-1', token: 'not-a-token', kind: 'unknown' },
  ])('$name: $kind', ({ scheduler, room, token, kind }) => {
    expect(owners.kindOf(scheduler, room, token)).toBe(kind);
  });

  it("sees a room added since its index was made once the index is older than maxAgeMs", () => {
    const fresh = new RoomTokenOwners({ secrets: [CURRENT], rooms: store, now: () => clock.now, maxAgeMs: 10_000 });
    expect(fresh.kindOf('s1', 'room-1', roomToken(CURRENT, 's1', 'room-3'))).toBe('unheld-secret');
    store.seedRoom('s1', 'room-3', { pingStatus: 'ready' });
    // The index is kept for maxAgeMs: refusals in a storm do not make it again each time.
    expect(fresh.kindOf('s1', 'room-1', roomToken(CURRENT, 's1', 'room-3'))).toBe('unheld-secret');
    clock.now += 10_000;
    expect(fresh.kindOf('s1', 'room-1', roomToken(CURRENT, 's1', 'room-3'))).toBe('other-room');
  });

  it('makes no more than tokensPerAge tokens per maxAgeMs over every scheduler: past it, a refused token is unknown', () => {
    const spread = new InMemoryStore(() => clock.now);
    for (const s of ['a', 'b', 'c']) for (let i = 0; i < 5; i++) spread.seedRoom(s, `r${i}`, { pingStatus: 'ready' });
    const bounded = new RoomTokenOwners({ secrets: [CURRENT, PREVIOUS], rooms: spread, now: () => clock.now, maxAgeMs: 10_000, tokensPerAge: 20 });
    const retired = (s: string) => roomToken('retired', s, 'r0');
    expect(bounded.kindOf('a', 'r0', retired('a'))).toBe('unheld-secret');
    expect(bounded.kindOf('b', 'r0', retired('b'))).toBe('unheld-secret');
    expect(bounded.kindOf('c', 'r0', retired('c'))).toBe('unknown');
    // The indexes made are used without cost; the budget comes back after maxAgeMs.
    expect(bounded.kindOf('a', 'r1', retired('a'))).toBe('unheld-secret');
    clock.now += 10_000;
    expect(bounded.kindOf('c', 'r0', retired('c'))).toBe('unheld-secret');
  });
});
