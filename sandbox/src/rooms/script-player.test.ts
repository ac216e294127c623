import { parseRoomScript } from './room-script';
import { scriptAction, ScriptPlayer, type ScriptedRoom } from './script-player';

describe('scriptAction', () => {
  test.each([
    ['starting', {}, { kind: 'none' }],
    ['starting', { status: 'ready' }, { kind: 'report', status: 'ready' }],
    ['ready', { status: 'ready' }, { kind: 'none' }],
    ['ready', { status: 'occupied' }, { kind: 'report', status: 'occupied' }],
    ['occupied', { status: 'ready' }, { kind: 'report', status: 'ready' }],
    ['occupied', {}, { kind: 'hang' }],
    ['terminating', { status: 'ready' }, { kind: 'none' }],
    ['terminated', {}, { kind: 'none' }],
  ] as const)('room %s, script %j -> %j', (current, state, expected) => {
    expect(scriptAction(current, state)).toEqual(expected);
  });
});

describe('ScriptPlayer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function fakeRoom(): ScriptedRoom & { calls: string[] } {
    const room = {
      status: 'starting',
      calls: [] as string[],
      ready: () => { room.status = 'ready'; room.calls.push('ready'); return Promise.resolve(); },
      occupied: () => { room.status = 'occupied'; room.calls.push('occupied'); return Promise.resolve(); },
      close: () => { room.calls.push('close'); },
    };
    return room;
  }

  test('start-after, occupied-after, free-after, stop-after: silent, ready, occupied, ready, then the server hangs', async () => {
    const room = fakeRoom();
    const player = new ScriptPlayer({ room, script: parseRoomScript('start-after:1,occupied-after:2,free-after:1,stop-after:5'), roomId: 'r', pingIntervalMs: 1000, now: Date.now, onError: () => undefined });
    player.start();
    expect(room.calls).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(room.calls).toEqual(['ready']);
    await jest.advanceTimersByTimeAsync(1000);
    expect(room.calls).toEqual(['ready', 'occupied']);
    await jest.advanceTimersByTimeAsync(1000);
    expect(room.calls).toEqual(['ready', 'occupied', 'ready']);
    await jest.advanceTimersByTimeAsync(2000);
    expect(room.calls).toEqual(['ready', 'occupied', 'ready', 'close']);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('never-ping reports nothing and arms no timer; stop() clears the timer', () => {
    const room = fakeRoom();
    new ScriptPlayer({ room, script: parseRoomScript('never-ping'), roomId: 'r', pingIntervalMs: 1000, now: Date.now, onError: () => undefined }).start();
    expect(room.calls).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
    const other = new ScriptPlayer({ room: fakeRoom(), script: parseRoomScript('random:7:1'), roomId: 'r', pingIntervalMs: 1000, now: Date.now, onError: () => undefined });
    other.start();
    expect(jest.getTimerCount()).toBe(1);
    other.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
