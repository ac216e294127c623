import { RoomTombstones } from './room-tombstones';

describe('RoomTombstones', () => {
  let now = 1_000;
  const clock = () => now;

  it('tells when a room was seen deleted, for an hour, and forgets it when a room of that name is made again', () => {
    const t = new RoomTombstones(clock);
    t.observe('update', 's1', 'a');
    expect(t.deletedAt('s1', 'a')).toBeUndefined();
    t.observe('delete', 's1', 'a');
    expect(t.deletedAt('s1', 'a')).toBe(1_000);
    expect(t.deletedAt('s2', 'a')).toBeUndefined();
    now += 60 * 60_000;
    expect(t.deletedAt('s1', 'a')).toBe(1_000);
    now += 1;
    expect(t.deletedAt('s1', 'a')).toBeUndefined();
    t.observe('delete', 's1', 'b');
    t.observe('add', 's1', 'b');
    expect(t.deletedAt('s1', 'b')).toBeUndefined();
  });

  it('keeps the latest deletions only, the oldest going first', () => {
    const t = new RoomTombstones(clock, 2);
    t.observe('delete', 's', 'a');
    t.observe('delete', 's', 'b');
    t.observe('delete', 's', 'a'); // seen again: now the latest
    t.observe('delete', 's', 'c');
    expect([t.deletedAt('s', 'a'), t.deletedAt('s', 'b'), t.deletedAt('s', 'c')].map((x) => x !== undefined)).toEqual([true, false, true]);
  });
});
