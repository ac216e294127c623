import { InvalidRoomScriptError, parseRoomScript, scriptStateAt, unitRandom } from './room-script';

const ctx = { roomId: 'room-1', pingIntervalMs: 100 };

describe('parseRoomScript', () => {
  it.each([
    [undefined, { neverPing: false, startAfterMs: 0 }],
    ['', { neverPing: false, startAfterMs: 0 }],
    ['ready', { neverPing: false, startAfterMs: 0 }],
    ['never-ping', { neverPing: true, startAfterMs: 0 }],
    ['occupied', { neverPing: false, startAfterMs: 0, occupiedAfterMs: 0 }],
    ['occupied-after:1,free-after:0.5', { neverPing: false, startAfterMs: 0, occupiedAfterMs: 1000, freeAfterMs: 500 }],
    [' start-after:0.2 , stop-after:3 ', { neverPing: false, startAfterMs: 200, stopAfterMs: 3000 }],
    ['random:42', { neverPing: false, startAfterMs: 0, random: { seed: 42 } }],
    ['random:-7:2', { neverPing: false, startAfterMs: 0, random: { seed: -7, slotMs: 2000 } }],
  ])('%j', (value, expected) => {
    expect(parseRoomScript(value)).toEqual(expected);
  });

  it.each(['dance', 'occupied-after', 'occupied-after:x', 'free-after:1', 'random:x', 'random:1,occupied', 'ready:1', 'stop-after:1:2'])('rejects %j', (value) => {
    expect(() => parseRoomScript(value)).toThrow(InvalidRoomScriptError);
  });
});

describe('scriptStateAt', () => {
  it('is ready forever by default', () => {
    expect(scriptStateAt(parseRoomScript(undefined), 0, ctx)).toEqual({ status: 'ready' });
    expect(scriptStateAt(parseRoomScript('ready'), 1e9, ctx)).toEqual({ status: 'ready' });
  });

  it('never-ping is silent', () => {
    expect(scriptStateAt(parseRoomScript('never-ping'), 0, ctx)).toEqual({});
  });

  it('occupied-after and free-after form a timeline', () => {
    const s = parseRoomScript('occupied-after:1,free-after:2');
    expect(scriptStateAt(s, 0, ctx)).toEqual({ status: 'ready', nextChangeAtMs: 1000 });
    expect(scriptStateAt(s, 1000, ctx)).toEqual({ status: 'occupied', nextChangeAtMs: 3000 });
    expect(scriptStateAt(s, 2999, ctx)).toEqual({ status: 'occupied', nextChangeAtMs: 3000 });
    expect(scriptStateAt(s, 3000, ctx)).toEqual({ status: 'ready' });
  });

  it('start-after and stop-after bound the pinging window', () => {
    const s = parseRoomScript('start-after:0.5,stop-after:2,occupied-after:1');
    expect(scriptStateAt(s, 0, ctx)).toEqual({ nextChangeAtMs: 500 });
    expect(scriptStateAt(s, 500, ctx)).toEqual({ status: 'ready', nextChangeAtMs: 1000 });
    expect(scriptStateAt(s, 1500, ctx)).toEqual({ status: 'occupied', nextChangeAtMs: 2000 });
    expect(scriptStateAt(s, 2000, ctx)).toEqual({});
  });

  it('random is deterministic per seed, room and slot, and changes across slots', () => {
    const s = parseRoomScript('random:7:1');
    const seq = (roomId: string) => Array.from({ length: 32 }, (_, i) => scriptStateAt(s, i * 1000 + 10, { ...ctx, roomId }).status);
    expect(seq('a')).toEqual(seq('a'));
    expect(seq('a')).not.toEqual(seq('b'));
    expect(new Set(seq('a'))).toEqual(new Set(['ready', 'occupied']));
    expect(scriptStateAt(s, 10, ctx).nextChangeAtMs).toBe(1000);
    expect(scriptStateAt(parseRoomScript('random:7'), 10, ctx).nextChangeAtMs).toBe(200);
  });

  it('unitRandom stays in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const v = unitRandom(i, `r${i}`, i);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(1);
    }
  });
});
