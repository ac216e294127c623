import { waitFor } from '../../../test/support/wait';
import { PingClient } from './ping-client';
import { parseRoomScript } from './room-script';
import { SimRoom } from './sim-room';
import { startPingRecorder, type PingRecorder } from './testing/ping-recorder';

describe('SimRoom', () => {
  let recorder: PingRecorder;
  let client: PingClient;
  const rooms: SimRoom[] = [];

  beforeEach(async () => {
    recorder = await startPingRecorder();
    client = new PingClient({ maxSockets: 4 });
  });

  afterEach(async () => {
    for (const r of rooms.splice(0)) r.stop();
    client.close();
    await recorder.close();
  });

  function room(script: string, roomId = 'room-1', token?: string): SimRoom {
    const r = new SimRoom({
      identity: { schedulerName: 'fleet', roomId, ...(token ? { token } : {}) },
      script: parseRoomScript(script),
      roomsApiUrl: recorder.url,
      pingIntervalMs: 50,
      firstPingDelayMs: 0,
      send: (p) => client.send(p),
      now: () => Date.now(),
    });
    rooms.push(r);
    return r;
  }

  it('pings ready periodically with the Maestro body and the bearer token', async () => {
    const r = room('ready', 'room-1', 'tok');
    r.start();
    await waitFor(() => recorder.pingsFor('fleet', 'room-1').length >= 3);
    const [first] = recorder.pingsFor('fleet', 'room-1');
    expect(first?.method).toBe('PUT');
    expect(first?.authorization).toBe('Bearer tok');
    expect(first?.body).toEqual({ status: 'ready', timestamp: expect.any(Number) as unknown });
    const ts = (first?.body as { timestamp: number }).timestamp;
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);
    expect(r.view()).toMatchObject({ state: 'running', status: 'ready', lastPingStatus: 'ready' });
  });

  it('follows occupied-after and free-after, pinging on each change', async () => {
    // Each phase lasts ten ping intervals, so a loaded machine that delays a ping still samples it.
    const r = room('occupied-after:0.5,free-after:0.5');
    r.start();
    const statuses = await waitFor(() => {
      const seen = recorder.pingsFor('fleet', 'room-1').map((p) => (p.body as { status: string }).status);
      const firstOccupied = seen.indexOf('occupied');
      if (firstOccupied < 0 || !seen.slice(firstOccupied).includes('ready')) throw new Error(`pings so far: ${seen.join(', ') || 'none'}`);
      return seen;
    }, { timeoutMs: 30_000 });
    expect(statuses[0]).toBe('ready');
  });

  it('terminate sends one terminating ping and then stays silent', async () => {
    const r = room('ready');
    r.start();
    await waitFor(() => recorder.pingsFor('fleet', 'room-1').length >= 1);
    r.terminate();
    await waitFor(() => recorder.pingsFor('fleet', 'room-1').some((p) => (p.body as { status: string }).status === 'terminating'));
    expect(r.view()).toMatchObject({ state: 'terminated', status: 'terminating' });
    const after = recorder.pingsFor('fleet', 'room-1').length;
    // Another room keeps pinging; once it has pinged several times, the terminated one is known silent.
    const other = room('ready', 'room-2');
    other.start();
    await waitFor(() => recorder.pingsFor('fleet', 'room-2').length >= 4);
    expect(recorder.pingsFor('fleet', 'room-1').length).toBe(after);
  });

  it('never-ping sends nothing, not even terminating', async () => {
    const silent = room('never-ping', 'quiet');
    silent.start();
    const other = room('ready', 'loud');
    other.start();
    await waitFor(() => recorder.pingsFor('fleet', 'loud').length >= 3);
    silent.terminate();
    other.terminate();
    await waitFor(() => recorder.pingsFor('fleet', 'loud').some((p) => (p.body as { status: string }).status === 'terminating'));
    expect(recorder.pingsFor('fleet', 'quiet')).toEqual([]);
    expect(silent.view().status).toBe('terminating');
  });

  it('counts failed pings', async () => {
    recorder.respondWith(404);
    const r = room('ready');
    r.start();
    await waitFor(() => r.view().pingFailures >= 2);
    expect(r.view().pingsSent).toBeGreaterThanOrEqual(2);
  });
});

describe('SimRoom, a ping slower than its interval', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('holds no timer while the ping is under way; the answer wakes the room, which pings again', async () => {
    const answers: ((r: { ok: boolean }) => void)[] = [];
    const r = new SimRoom({
      identity: { schedulerName: 'fleet', roomId: 'slow' },
      script: parseRoomScript('ready'),
      roomsApiUrl: 'http://127.0.0.1:9',
      pingIntervalMs: 50,
      firstPingDelayMs: 0,
      send: () => new Promise((resolve) => answers.push(resolve)),
      now: () => Date.now(),
    });
    r.start();
    expect(answers).toHaveLength(1);
    // Ten intervals pass with the first ping unanswered: nothing is armed, nothing else is sent.
    jest.advanceTimersByTime(500);
    expect(jest.getTimerCount()).toBe(0);
    expect(answers).toHaveLength(1);
    answers[0]?.({ ok: true });
    await jest.advanceTimersByTimeAsync(0);
    expect(answers).toHaveLength(2);
    expect(r.view()).toMatchObject({ pingsSent: 1, pingFailures: 0, lastOkAt: Date.now() });
    r.stop();
  });
});
