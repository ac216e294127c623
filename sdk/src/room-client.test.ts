/**
 * The SDK's room client on fake timers against an in-memory rooms API: jitter bounds, backoff cap,
 * unhealthy/healthy, acknowledgements, illegal transitions, allocation dedup and expiry, SIGTERM
 * order, a shutdown bounded by its budget, terminated retried until recorded, a room that is gone,
 * status changes sent while a ping is in flight, idempotent start and close(), and which handles
 * keep the process alive.
 */
import { EventEmitter } from 'node:events';
import { ClosedError, IllegalTransitionError, RoomGoneError, SupersededError } from './errors';
import type { RoomConfig } from './config';
import { RoomClient, type PingFailure, type RoomClientOptions, type ShutdownResult } from './room-client';
import { FakeRoomsApi } from './testing/fake-rooms-api';

const CONFIG: RoomConfig = { schedulerName: 'arena', roomId: 'arena-abc12', roomsApiUrl: 'http://rooms.test/base/', token: 't0k', pingIntervalMs: 1000 };

function room(api: FakeRoomsApi, options: Partial<RoomClientOptions> = {}): RoomClient {
  return new RoomClient({ config: CONFIG, fetch: api.fetch, ...options });
}

beforeEach(() => {
  jest.useFakeTimers({ now: 1_700_000_000_000 });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('status changes', () => {
  test('ready() sends one ping at once, with the room token, and resolves only when it is acknowledged', async () => {
    const api = new FakeRoomsApi();
    api.answer = () => 'hang';
    const r = room(api);
    let resolved = false;
    const acked = r.ready().then(() => { resolved = true; });
    await jest.advanceTimersByTimeAsync(0);
    expect(api.pings()).toHaveLength(1);
    const first = api.pings()[0]!;
    expect(first.method).toBe('PUT');
    expect(first.url).toBe('http://rooms.test/base/scheduler/arena/rooms/arena-abc12/ping');
    expect(first.headers.authorization).toBe('Bearer t0k');
    expect(first.body).toEqual({ status: 'ready', timestamp: 1_700_000_000 });
    expect(resolved).toBe(false);
    // The hung request times out, the retry is acknowledged, and only then ready() resolves.
    api.answer = () => ({ status: 200, body: { success: true } });
    await jest.advanceTimersByTimeAsync(5000 + 30_000);
    await acked;
    expect(resolved).toBe(true);
    expect(api.pings()[0]!.aborted).toBe(true);
    r.close();
  });

  test('{"success":false} and HTTP errors are not acknowledgements', async () => {
    const api = new FakeRoomsApi();
    const answers = [
      { status: 200, body: { success: false } },
      { status: 200, body: { success: false, message: 'room arena-abc12 not found in scheduler arena, so the ping was not recorded' } },
      { status: 401, body: { message: 'invalid room token' } }, { status: 200, body: 'not json' }, { status: 200, body: { success: true } },
    ];
    api.answer = () => answers.shift() ?? { status: 200, body: { success: true } };
    const failures: PingFailure[] = [];
    const r = room(api, { random: () => 0.5 });
    r.on('pingFailed', (f) => failures.push(f));
    const acked = r.ready();
    await jest.advanceTimersByTimeAsync(10_000);
    await acked;
    // A bare {"success":false} (Maestro's) gets the SDK's own account; Roomkeeper's message is passed on.
    expect(failures.map((f) => f.reason)).toEqual([
      'the rooms API answered {"success":false}: it does not know this room (yet), or the room already reported terminating or terminated',
      'the rooms API answered {"success":false}: room arena-abc12 not found in scheduler arena, so the ping was not recorded',
      expect.stringContaining('HTTP 401'),
      expect.stringContaining('not {"success": boolean}'),
    ]);
    expect(api.pings().slice(0, 5).map((p) => p.body.status)).toEqual(['ready', 'ready', 'ready', 'ready', 'ready']);
    r.close();
  });

  test('illegal transitions are rejected locally and send nothing', async () => {
    const api = new FakeRoomsApi();
    const r = room(api);
    await r.terminating();
    const before = api.requests.length;
    await expect(r.ready()).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(r.occupied()).rejects.toThrow('a room cannot go from terminating to occupied');
    await expect(r.setRunningMatches(2)).rejects.toBeInstanceOf(IllegalTransitionError);
    expect(api.requests).toHaveLength(before);
    await r.terminated();
    await expect(r.terminating()).rejects.toBeInstanceOf(IllegalTransitionError);
    r.close();
  });

  test('a terminating room reports its matches ending (a lower count, with the terminating ping), never a new one', async () => {
    const api = new FakeRoomsApi();
    const r = room(api);
    await r.ready();
    await r.setRunningMatches(2);
    await r.terminating();
    await r.setRunningMatches(1);
    expect(api.pings().at(-1)?.body).toMatchObject({ status: 'terminating', runningMatches: 1 });
    const before = api.requests.length;
    await expect(r.setRunningMatches(2)).rejects.toThrow('a room cannot go from terminating to a running-matches report: a terminating room runs no new matches: it may report its matches ending (setRunningMatches with a count no higher than the last), then terminated()');
    expect(api.requests).toHaveLength(before);
    await r.setRunningMatches(0);
    await r.terminated();
    r.close();
  });

  test('setRunningMatches(n) before the first status is refused, sending nothing, and says to call ready() or occupied() first', async () => {
    const api = new FakeRoomsApi();
    const r = room(api);
    const early = r.setRunningMatches(2);
    await expect(early).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(early).rejects.toThrow('a room cannot go from starting to a running-matches report: running matches go with a status: call ready() (or occupied()) first, then setRunningMatches(n)');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(api.requests).toHaveLength(0);
    // Then as documented: the count goes with the status it follows, and is acknowledged.
    await r.ready();
    await r.setRunningMatches(2);
    expect(api.pings().map((p) => ({ ...p.body, timestamp: undefined }))).toEqual([{ status: 'ready', timestamp: undefined }, { status: 'ready', timestamp: undefined, runningMatches: 2 }]);
    r.close();
  });

  test('terminated() straight after ready() or occupied() is refused, sending nothing, and says to call terminating() first (Maestro\'s rooms API takes terminated only after terminating)', async () => {
    const api = new FakeRoomsApi();
    const r = room(api);
    await expect(r.terminated()).rejects.toThrow('a room cannot go from starting to terminated: call terminating() first and wait for it, then terminated()');
    await r.ready();
    await expect(r.terminated()).rejects.toThrow('a room cannot go from ready to terminated: call terminating() first and wait for it, then terminated()');
    await r.occupied();
    const before = api.requests.length;
    await expect(r.terminated()).rejects.toBeInstanceOf(IllegalTransitionError);
    expect(api.requests).toHaveLength(before);
    await r.terminating();
    await expect(r.ready()).rejects.toThrow('a room cannot go from terminating to ready: a terminating room takes no new players and runs no new matches: only terminated() may follow');
    await r.terminated();
    await expect(r.occupied()).rejects.toThrow('a room cannot go from terminated to occupied: the room already reported terminated, its last ping: send nothing more and exit');
    r.close();
  });

  test('a change made before the previous one was acknowledged supersedes it', async () => {
    const api = new FakeRoomsApi();
    api.answer = () => 'hang';
    const r = room(api, { requestTimeoutMs: 100 });
    const ready = r.ready().catch((err: unknown) => err);
    const occupied = r.occupied();
    api.answer = () => ({ status: 200, body: { success: true } });
    await jest.advanceTimersByTimeAsync(100);
    expect(await ready).toBeInstanceOf(SupersededError);
    await expect(occupied).resolves.toBeUndefined();
    expect(api.statuses().at(-1)).toBe('occupied');
    r.close();
  });

  test('setRunningMatches(n) is sent with the current status and with every later ping; bad values are rejected', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    await r.occupied();
    await r.setRunningMatches(3);
    expect(api.pings().at(-1)!.body).toMatchObject({ status: 'occupied', runningMatches: 3 });
    await jest.advanceTimersByTimeAsync(1000);
    expect(api.pings().at(-1)!.body).toMatchObject({ status: 'occupied', runningMatches: 3 });
    await expect(r.setRunningMatches(-1)).rejects.toBeInstanceOf(RangeError);
    await expect(r.setRunningMatches(1.5)).rejects.toBeInstanceOf(RangeError);
    r.close();
  });
});

describe('ping loop', () => {
  test.each([0, 0.25, 0.999999])('after an acknowledged ping the next comes within ±10 %% of the interval (random %p)', async (rnd) => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => rnd });
    await r.ready();
    const expectedGap = Math.round(1000 * (0.9 + 0.2 * rnd));
    expect(expectedGap).toBeGreaterThanOrEqual(900);
    expect(expectedGap).toBeLessThanOrEqual(1100);
    await jest.advanceTimersByTimeAsync(expectedGap - 1);
    expect(api.pings()).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(api.pings()).toHaveLength(2);
    expect(api.pings()[1]!.at - api.pings()[0]!.at).toBe(expectedGap);
    r.close();
  });

  test('nothing is sent before the first status; start() twice starts one loop', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    r.start();
    r.start();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(api.requests).toHaveLength(0);
    await r.ready();
    r.start();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(api.pings()).toHaveLength(11);
    r.close();
  });

  test('after one quick retry, failures back off from the ping interval to the cap, never give up, and unhealthy fires once after k failures', async () => {
    const api = new FakeRoomsApi();
    api.answer = () => 'network-error';
    const unhealthy: PingFailure[] = [];
    let healthy = 0;
    const r = room(api, { random: () => 0.999999, backoff: { baseMs: 100, capMs: 1600 }, unhealthyAfter: 3 });
    r.on('unhealthy', (f) => unhealthy.push(f));
    r.on('healthy', () => healthy++);
    const ready = r.ready();
    await jest.advanceTimersByTimeAsync(20_000);
    const gaps = api.pings().slice(1).map((p, i) => p.at - api.pings()[i]!.at);
    // The interval is 1000 ms and the jitter at its top (+10 %): 100, then 1100 until the doubling
    // delay passes the interval (1600 at the fifth failure), then the cap.
    expect(gaps.slice(0, 6)).toEqual([100, 1100, 1100, 1100, 1760, 1760]);
    expect(Math.max(...gaps)).toBe(1760);
    expect(api.pings().length).toBeGreaterThan(10);
    expect(unhealthy).toHaveLength(1);
    expect(unhealthy[0]!.consecutiveFailures).toBe(3);
    expect(unhealthy[0]!.reason).toBe('fetch failed');
    api.answer = () => ({ status: 200, body: { success: true } });
    await jest.advanceTimersByTimeAsync(1760);
    await ready;
    expect(healthy).toBe(1);
    expect(r.consecutiveFailures).toBe(0);
    r.close();
  });

  test('after a gateway restart of any length, a room on the default backoff and interval pings again within about two intervals of its return, and hears of its allocation in that answer', async () => {
    const api = new FakeRoomsApi();
    // The default ping interval (5 s) and the top of the jitter: the longest waits.
    const r = room(api, { random: () => 0.999999, pingIntervalMs: 5000 });
    await r.ready();
    const allocated: string[] = [];
    r.on('allocated', (a) => allocated.push(a.id));
    api.answer = () => 'network-error';
    await jest.advanceTimersByTimeAsync(180_000);
    const back = Date.now();
    api.answer = () => ({ status: 200, body: { success: true, allocation: { id: 'after-restart', metadata: {}, expiresAt: '2026-11-26T05:00:00Z' } } });
    await jest.advanceTimersByTimeAsync(11_000);
    expect(allocated).toEqual(['after-restart']);
    expect(api.pings().find((p) => p.at >= back)!.at - back).toBeLessThanOrEqual(11_000);
    // Well inside the rooms' ping timeout (240 s by default) whatever the outage: silence past its
    // end is at most one cap and its jitter.
    expect(Math.max(...api.pings().slice(1).map((p, i) => p.at - api.pings()[i]!.at))).toBeLessThanOrEqual(11_000);
    r.close();
  });

  test('the first retry is random in [0, base]; the later ones come no sooner than the ping interval allows', async () => {
    const api = new FakeRoomsApi();
    api.answer = () => 'network-error';
    const delays: number[] = [];
    const r = room(api, { random: () => 0, backoff: { baseMs: 100, capMs: 1600 } });
    r.on('pingFailed', (f) => delays.push(f.retryInMs));
    void r.ready().catch(() => undefined);
    await jest.advanceTimersByTimeAsync(5000);
    expect(delays.length).toBeGreaterThan(3);
    expect(delays[0]).toBe(0);
    expect(delays.slice(1).every((d) => d >= 900)).toBe(true);
    r.close();
  });

  test('a failing room sends no more pings than a healthy one, but for its one quick retry', async () => {
    const healthyApi = new FakeRoomsApi();
    const healthyRoom = room(healthyApi, { random: () => 0.5 });
    await healthyRoom.ready();
    const failingApi = new FakeRoomsApi();
    failingApi.answer = () => ({ status: 500, body: { message: 'boom' } });
    const failingRoom = room(failingApi, { random: () => 0.5 });
    void failingRoom.ready().catch(() => undefined);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(healthyApi.pings().length).toBeGreaterThan(50);
    expect(failingApi.pings().length).toBeLessThanOrEqual(healthyApi.pings().length + 1);
    healthyRoom.close();
    failingRoom.close();
  });

  test('a 429 or 503 with Retry-After is retried no sooner than it asks, up to the backoff cap', async () => {
    const api = new FakeRoomsApi();
    const answers = [
      { status: 503, body: { message: 'overloaded' }, headers: { 'retry-after': '7' } },
      { status: 429, body: { message: 'slow down' }, headers: { 'retry-after': '120' } },
      { status: 500, body: { message: 'boom' }, headers: { 'retry-after': '60' } },
    ];
    api.answer = () => answers.shift() ?? { status: 200, body: { success: true } };
    const delays: number[] = [];
    const r = room(api, { random: () => 0.5 });
    r.on('pingFailed', (f) => delays.push(f.retryInMs));
    const acked = r.ready();
    await jest.advanceTimersByTimeAsync(40_000);
    await acked;
    // 7 s as asked; 120 s asked but 10 s, the cap (a room silent longer hears late of its
    // allocation); a 500's Retry-After is not read (the backoff's own: 500·2² ms at the third failure).
    expect(delays).toEqual([7000, 10_000, 2000]);
    r.close();
  });
});

describe('allocation events', () => {
  const allocation = (id: string) => ({ status: 200, body: { success: true, allocation: { id, metadata: { matchId: `m-${id}` }, expiresAt: '2026-11-26T05:00:00Z' } } });

  test('allocated is emitted once per allocation id, however many answers carry it', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    const seen: unknown[] = [];
    r.on('allocated', (a) => seen.push(a));
    await r.ready();
    api.answer = () => allocation('a1');
    await jest.advanceTimersByTimeAsync(3000);
    expect(api.pings().length).toBeGreaterThanOrEqual(4);
    expect(seen).toEqual([{ id: 'a1', metadata: { matchId: 'm-a1' }, expiresAt: '2026-11-26T05:00:00Z' }]);
    api.answer = () => allocation('a2');
    await jest.advanceTimersByTimeAsync(1000);
    expect(seen.map((a) => (a as { id: string }).id)).toEqual(['a1', 'a2']);
    r.close();
  });

  /** A ready room whose first answer carried allocation a1 and later answers none. */
  async function allocatedThenDropped(): Promise<{ r: RoomClient; expired: string[] }> {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    const expired: string[] = [];
    r.on('allocationExpired', (a) => expired.push(a.id));
    api.answer = () => allocation('a1');
    await r.ready();
    api.answer = () => ({ status: 200, body: { success: true } });
    return { r, expired };
  }

  test('allocationExpired when the allocation leaves the answers and the room never reported occupied', async () => {
    const { r, expired } = await allocatedThenDropped();
    await jest.advanceTimersByTimeAsync(1000);
    expect(expired).toEqual(['a1']);
    await jest.advanceTimersByTimeAsync(3000);
    expect(expired).toEqual(['a1']);
    r.close();
  });

  test('no allocationExpired when the room took the allocation up (reported occupied)', async () => {
    const { r, expired } = await allocatedThenDropped();
    await r.occupied();
    await jest.advanceTimersByTimeAsync(3000);
    expect(expired).toEqual([]);
    r.close();
  });

  test('no allocationExpired when a multi-match room took the allocation up by reporting a match (setRunningMatches)', async () => {
    const { r, expired } = await allocatedThenDropped();
    await r.setRunningMatches(1);
    await jest.advanceTimersByTimeAsync(3000);
    expect(expired).toEqual([]);
    r.close();
  });

  /**
   * A ready room running 2 matches whose answers then carry allocation a1; heard of in the answer
   * to a ping of its own (a timer's), unless `heard` is false: then its next report hears of it.
   */
  async function allocatedAtTwoMatches(heard = true): Promise<{ api: FakeRoomsApi; r: RoomClient; expired: string[] }> {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    const expired: string[] = [];
    r.on('allocationExpired', (a) => expired.push(a.id));
    await r.ready();
    await r.setRunningMatches(2);
    api.answer = () => allocation('a1');
    if (heard) await jest.advanceTimersByTimeAsync(1000);
    return { api, r, expired };
  }

  test('a running-matches report that is no more than when allocated does not take the allocation up', async () => {
    const { api, r, expired } = await allocatedAtTwoMatches();
    // One match ended and another began between two pings: still 2, as when allocated (the rooms API counts so too).
    await r.setRunningMatches(2);
    api.answer = () => ({ status: 200, body: { success: true } });
    await jest.advanceTimersByTimeAsync(1000);
    expect(expired).toEqual(['a1']);
    r.close();
  });

  test.each([true, false])('a match that ends before the allocated one starts lowers the count: the start, back to 2, takes the allocation up and names it (heard of before the match ended: %s)', async (heard) => {
    const { api, r, expired } = await allocatedAtTwoMatches(heard);
    await r.setRunningMatches(1);
    await r.setRunningMatches(2);
    expect(api.pings().at(-1)?.body).toMatchObject({ runningMatches: 2, allocationId: 'a1' });
    api.answer = () => ({ status: 200, body: { success: true } });
    await jest.advanceTimersByTimeAsync(1000);
    expect(expired).toEqual([]);
    r.close();
  });

  test('takeAllocation: a multi-match room whose count did not rise names the allocation in its pings, so it is taken up, not reported expired', async () => {
    const { api, r, expired } = await allocatedAtTwoMatches();
    await expect(r.takeAllocation('another')).rejects.toThrow('allocation another is not the one this room holds');
    await r.takeAllocation('a1');
    expect(api.pings().at(-1)?.body).toMatchObject({ status: 'ready', runningMatches: 2, allocationId: 'a1' });
    api.answer = () => ({ status: 200, body: { success: true } });
    await jest.advanceTimersByTimeAsync(1000);
    expect(expired).toEqual([]);
    // Ended: later pings name it no more.
    await jest.advanceTimersByTimeAsync(1000);
    expect(api.pings().at(-1)?.body).not.toHaveProperty('allocationId');
    r.close();
  });

  test('an allocation first heard of in the answer to the ping that took it up (occupied, or one match more) is not reported expired', async () => {
    for (const takeUp of [(r: RoomClient) => r.occupied(), (r: RoomClient) => r.setRunningMatches(1)]) {
      const api = new FakeRoomsApi();
      const r = room(api, { random: () => 0.5 });
      const seen: string[] = [];
      r.on('allocated', (a) => seen.push(`allocated ${a.id}`));
      r.on('allocationExpired', (a) => seen.push(`expired ${a.id}`));
      await r.ready();
      // The players came before the room's next ping: the answer to the ping reporting them carries
      // the allocation they took up, and the answers after it no longer do.
      api.answer = (req) => (req.body.status === 'occupied' || req.body.runningMatches === 1 ? allocation('a1') : { status: 200, body: { success: true } });
      await takeUp(r);
      api.answer = () => ({ status: 200, body: { success: true } });
      await jest.advanceTimersByTimeAsync(3000);
      expect(seen).toEqual(['allocated a1']);
      r.close();
    }
  });
});

describe('installSignalHandlers', () => {
  test('SIGTERM: terminating ping, then the drain hook, then terminated; shutdown event; never process.exit', async () => {
    const api = new FakeRoomsApi();
    const order: string[] = [];
    api.answer = (req) => {
      order.push(`ping ${String(req.body.status)}`);
      return { status: 200, body: { success: true } };
    };
    const source = new EventEmitter();
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const r = room(api, { random: () => 0.5 });
    await r.ready();
    const results: ShutdownResult[] = [];
    r.on('shutdown', (res) => results.push(res));
    r.installSignalHandlers({
      source,
      drainBudgetMs: 10_000,
      drain: async () => {
        order.push('drain start');
        await new Promise((resolve) => setTimeout(resolve, 2000)); // the user's drain work, on jest's fake clock (advanced below)
        order.push('drain end');
      },
    });
    source.emit('SIGTERM');
    source.emit('SIGTERM');
    await jest.advanceTimersByTimeAsync(2000);
    expect(results).toEqual([{ signal: 'SIGTERM', drain: 'completed', terminatedAcknowledged: true }]);
    const interesting = order.filter((o) => o !== 'ping ready');
    expect(interesting.slice(0, 2)).toEqual(['ping terminating', 'drain start']);
    expect(interesting.indexOf('drain end')).toBeLessThan(interesting.indexOf('ping terminated'));
    expect(interesting.at(-1)).toBe('ping terminated');
    // After the acknowledged terminated ping the loop stops.
    const sent = api.pings().length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(api.pings()).toHaveLength(sent);
    expect(exit).not.toHaveBeenCalled();
    exit.mockRestore();
    r.close();
    expect(source.listenerCount('SIGTERM')).toBe(0);
  });

  test('a drain hook that outlives its share of the budget is told to stop and terminated is sent anyway, within the budget', async () => {
    const api = new FakeRoomsApi();
    const source = new EventEmitter();
    const r = room(api, { random: () => 0.5 });
    await r.occupied();
    let abortedAt: number | undefined;
    const started = Date.now();
    const results: ShutdownResult[] = [];
    r.on('shutdown', (res) => results.push(res));
    r.installSignalHandlers({
      source, drainBudgetMs: 3000,
      drain: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => { abortedAt = Date.now(); resolve(); })),
    });
    source.emit('SIGTERM');
    await jest.advanceTimersByTimeAsync(3000);
    expect(results).toEqual([{ signal: 'SIGTERM', drain: 'timedOut', terminatedAcknowledged: true }]);
    // The drain's share: the budget less a fifth of it (less than one request deadline) kept for terminated.
    expect(abortedAt! - started).toBe(2400);
    expect(api.statuses().slice(-1)).toEqual(['terminated']);
    r.close();
  });
});

describe('installSignalHandlers after the room ended', () => {
  test('a SIGTERM after terminated was acknowledged reports it acknowledged and sends nothing more', async () => {
    const api = new FakeRoomsApi();
    const source = new EventEmitter();
    const r = room(api, { random: () => 0.5 });
    await r.ready();
    await r.terminating();
    await r.terminated();
    const sent = api.pings().length;
    const results: ShutdownResult[] = [];
    r.on('shutdown', (res) => results.push(res));
    r.installSignalHandlers({ source });
    source.emit('SIGTERM');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(results).toEqual([{ signal: 'SIGTERM', drain: 'none', terminatedAcknowledged: true }]);
    expect(api.pings()).toHaveLength(sent);
    r.close();
  });
});

describe('close()', () => {
  test('clears every timer, aborts the request in flight and rejects pending changes', async () => {
    const api = new FakeRoomsApi();
    api.answer = () => 'hang';
    const r = room(api);
    const ready = r.ready().catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(0);
    expect(jest.getTimerCount()).toBeGreaterThan(0);
    r.close();
    r.close();
    expect(await ready).toBeInstanceOf(ClosedError);
    expect(api.requests[0]!.aborted).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
    await expect(r.occupied()).rejects.toBeInstanceOf(ClosedError);
    await expect(r.roomEvent('x')).rejects.toBeInstanceOf(ClosedError);
  });

  test('the loop\'s timers are unref\'d; only while a change awaits its acknowledgement does one ref\'d handle keep the process alive', async () => {
    jest.useRealTimers();
    // The client's own handles, not the process's: other timers of the test runner come and go.
    const timeouts = jest.spyOn(global, 'setTimeout');
    const intervals = jest.spyOn(global, 'setInterval');
    type Handle = NodeJS.Timeout & { _destroyed?: boolean };
    const live = (spy: typeof timeouts | typeof intervals): Handle[] => spy.mock.results.map((res) => res.value as Handle).filter((t) => t._destroyed !== true);
    const refd = (): number => [...live(timeouts), ...live(intervals)].filter((t) => t.hasRef()).length;
    const api = new FakeRoomsApi();
    let down = true;
    api.answer = () => (down ? 'network-error' : { status: 200, body: { success: true } });
    const r = room(api, { pingIntervalMs: 20, backoff: { baseMs: 10, capMs: 20 } });
    const failedTwice = new Promise<void>((resolve) => r.on('pingFailed', (f) => { if (f.consecutiveFailures === 2) resolve(); }));
    const acked = r.ready();
    expect(refd()).toBe(1);
    await failedTwice;
    expect(refd()).toBe(1);
    down = false;
    await acked;
    expect(refd()).toBe(0);
    const timers = timeouts.mock.results.map((res) => res.value as NodeJS.Timeout);
    timeouts.mockRestore();
    intervals.mockRestore();
    expect(timers.length).toBeGreaterThan(0);
    expect(timers.every((t) => !t.hasRef())).toBe(true);
    r.close();
  });
});

describe('a room that is gone (roomGone: true)', () => {
  const gone = { status: 200, body: { success: false, roomGone: true, message: 'no scheduler arena exists (it was deleted), so the ping was not recorded: ping terminated and exit' } };

  test('a ping answered roomGone stops the loop, emits gone once, resolves terminating() and terminated() and rejects ready() and occupied(), sending nothing more', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    await r.ready();
    const messages: string[] = [];
    r.on('gone', (m) => messages.push(m));
    api.answer = (req) => (req.body.status === 'terminating' ? gone : { status: 200, body: { success: true } });
    // The trial: the scheduler was deleted, and terminating() had no acknowledgement to wait for.
    await r.terminating();
    expect(messages).toEqual([gone.body.message]);
    const sent = api.requests.length;
    await r.terminated();
    await expect(r.ready()).rejects.toBeInstanceOf(RoomGoneError);
    await expect(r.occupied()).rejects.toThrow(`the room is gone, so it takes no players (only terminating() and terminated() still resolve): ${gone.body.message}`);
    await expect(r.setRunningMatches(1)).rejects.toBeInstanceOf(RoomGoneError);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(api.requests).toHaveLength(sent);
    expect(messages).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
    r.close();
  });

  test('a pending ready() rejects with RoomGoneError; a bare {"success":false} (Maestro\'s) is retried as before', async () => {
    const api = new FakeRoomsApi();
    const answers = [{ status: 200, body: { success: false } }, gone];
    api.answer = () => answers.shift() ?? { status: 200, body: { success: true } };
    const r = room(api, { random: () => 0.5 });
    const ready = r.ready().catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(1000);
    const err = await ready;
    expect(err).toBeInstanceOf(RoomGoneError);
    expect((err as RoomGoneError).reason).toBe(gone.body.message);
    expect(api.pings()).toHaveLength(2);
    r.close();
  });

  test('a room event answered roomGone ends the room as a ping would, and says so in its answer', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    await r.occupied();
    const messages: string[] = [];
    r.on('gone', (m) => messages.push(m));
    api.answer = (req) => (req.url.endsWith('/roomevent') ? { status: 200, body: { success: false, roomGone: true, message: 'room arena-abc12 was deleted' } } : { status: 200, body: { success: true } });
    await expect(r.roomEvent('matchEnded')).resolves.toEqual({ success: false, roomGone: true, message: 'room arena-abc12 was deleted' });
    expect(messages).toEqual(['room arena-abc12 was deleted']);
    const pings = api.pings().length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(api.pings()).toHaveLength(pings);
    r.close();
  });

  test('SIGTERM on a room that is gone: the drain still runs, nothing is sent, and the shutdown result says the room is gone', async () => {
    const api = new FakeRoomsApi();
    const source = new EventEmitter();
    const r = room(api, { random: () => 0.5 });
    await r.ready();
    api.answer = () => gone;
    await jest.advanceTimersByTimeAsync(1000);
    const sent = api.requests.length;
    const results: ShutdownResult[] = [];
    r.on('shutdown', (res) => results.push(res));
    let drained = false;
    r.installSignalHandlers({ source, drain: () => { drained = true; } });
    source.emit('SIGTERM');
    await jest.advanceTimersByTimeAsync(0);
    expect(results).toEqual([{ signal: 'SIGTERM', drain: 'completed', terminatedAcknowledged: false, roomGone: true }]);
    expect(drained).toBe(true);
    expect(api.requests).toHaveLength(sent);
    r.close();
  });
});

describe('shutdown within its budget', () => {
  test.each([
    ['refuses connections', 'network-error' as const, 25_000, 20_000, undefined],
    ['does not answer', 'hang' as const, 25_000, 20_000, undefined],
    ['refuses connections (a 20 s budget)', 'network-error' as const, 20_000, 16_000, 20_000],
  ])('with a rooms API that %s, the shutdown event comes when the budget runs out, not later', async (_what, answer, expectedMs, drainMs, drainBudgetMs) => {
    const api = new FakeRoomsApi();
    const source = new EventEmitter();
    const r = room(api, { random: () => 0.999999, pingIntervalMs: 5000 });
    await r.occupied();
    api.answer = () => answer;
    let abortedAt: number | undefined;
    const results: [number, ShutdownResult][] = [];
    r.on('shutdown', (res) => results.push([Date.now(), res]));
    r.installSignalHandlers({
      source, ...(drainBudgetMs !== undefined ? { drainBudgetMs } : {}),
      drain: (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => { abortedAt = Date.now(); resolve(); })),
    });
    const start = Date.now();
    source.emit('SIGTERM');
    await jest.advanceTimersByTimeAsync(expectedMs - 1);
    expect(results).toEqual([]);
    // The drain got its share (drainShare): the rest is kept for the terminated ping.
    expect(abortedAt! - start).toBe(drainMs);
    await jest.advanceTimersByTimeAsync(1);
    expect(results).toEqual([[start + expectedMs, { signal: 'SIGTERM', drain: 'timedOut', terminatedAcknowledged: false }]]);
    r.close();
  });

  test('terminated answered {"success":false} (not recorded yet) is retried until acknowledged, within the budget', async () => {
    const api = new FakeRoomsApi();
    const source = new EventEmitter();
    const r = room(api, { random: () => 0.5 });
    await r.ready();
    let refusals = 2;
    api.answer = (req) => (req.body.status === 'terminated' && refusals-- > 0
      ? { status: 200, body: { success: false, message: 'room arena-abc12 reported terminated, but it was not recorded yet (the Kubernetes API did not answer): ping terminated again' } }
      : { status: 200, body: { success: true } });
    const failures: string[] = [];
    r.on('pingFailed', (f) => failures.push(f.reason));
    const results: ShutdownResult[] = [];
    r.on('shutdown', (res) => results.push(res));
    r.installSignalHandlers({ source, drainBudgetMs: 10_000 });
    source.emit('SIGTERM');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(results).toEqual([{ signal: 'SIGTERM', drain: 'none', terminatedAcknowledged: true }]);
    expect(api.statuses().slice(-4)).toEqual(['terminating', 'terminated', 'terminated', 'terminated']);
    expect(failures).toEqual([expect.stringContaining('not recorded yet'), expect.stringContaining('not recorded yet')]);
    // Acknowledged at last: the loop stops.
    const sent = api.pings().length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(api.pings()).toHaveLength(sent);
    r.close();
  });
});

describe('a status change while a ping is in flight', () => {
  test('is sent at once: the ping in flight is abandoned, and that is no failure', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5 });
    await r.ready();
    api.answer = () => 'hang';
    await jest.advanceTimersByTimeAsync(1000);
    expect(api.pings()).toHaveLength(2);
    const failures: PingFailure[] = [];
    r.on('pingFailed', (f) => failures.push(f));
    api.answer = () => ({ status: 200, body: { success: true } });
    const calledAt = Date.now();
    await r.occupied();
    expect(api.pings()).toHaveLength(3);
    expect(api.pings()[1]!.aborted).toBe(true);
    expect(api.pings()[2]!).toMatchObject({ at: calledAt, body: { status: 'occupied' } });
    expect(failures).toEqual([]);
    r.close();
  });

  test('a change in flight is let finish (within its request deadline) and the next change follows it at once', async () => {
    const api = new FakeRoomsApi();
    const r = room(api, { random: () => 0.5, requestTimeoutMs: 300 });
    await r.ready();
    api.answer = (req) => (req.body.status === 'occupied' ? 'hang' : { status: 200, body: { success: true } });
    const occupied = r.occupied().catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(100);
    const readyAgain = r.ready();
    await jest.advanceTimersByTimeAsync(0);
    expect(api.pings()).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(200);
    await readyAgain;
    expect(await occupied).toBeInstanceOf(SupersededError);
    expect(api.pings().map((p) => [p.body.status, p.aborted])).toEqual([['ready', false], ['occupied', true], ['ready', false]]);
    expect(api.pings()[2]!.at - api.pings()[1]!.at).toBe(300);
    r.close();
  });
});
