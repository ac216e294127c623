import { PassThrough } from 'node:stream';
import { createLogger, silentLogger } from '../../../common/src/logger';
import type { GameRoom } from '../../../common/src/generated/resources';
import { InMemoryStore } from '../testing/in-memory-store';
import { decodePingDigest, PING_DIGEST_RETENTION_MS, pingDigestName, sanitizeReplicaId } from '../../../common/src/rooms/ping-digest';
import { MetricsRegistry } from '../../../common/src/metrics';
import { PING_REORDER_WINDOW_S, PingRecorder } from './ping-recorder';
import { allocationStep } from '../../../common/src/rooms/allocation';
import { waitFor } from '../../../test/support/wait';

function setup() {
  const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
  const store = new InMemoryStore(() => clock.now);
  const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'Gateway_7f9', logger: silentLogger() });
  return { clock, store, recorder };
}

const room = (store: InMemoryStore, id: string, status: GameRoom['status'] = { pingStatus: 'ready', runningMatches: 0, instanceStatus: 'ready', status: 'ready' }, scheduler = 's1') => store.seedRoom(scheduler, id, status);

describe('PingRecorder', () => {
  it('coalesces 100 unchanged pings into at most one write per flush', async () => {
    const { clock, store, recorder } = setup();
    const r = room(store, 'room-1');
    for (let i = 0; i < 100; i++) {
      clock.now += 1000;
      expect(await recorder.record(r, { status: 'ready', runningMatches: 0 })).toBe('recorded');
    }
    expect(store.writes).toEqual([]);
    expect(await recorder.flush()).toBe(1);
    expect(store.writes).toHaveLength(1);
    expect(await recorder.flush()).toBe(0);
    expect(store.writes).toHaveLength(1);
  });

  it('keeps the write budget for a fleet: 10,000 rooms x 10 pings -> one write per scheduler per flush', async () => {
    const { clock, store, recorder } = setup();
    const rooms = Array.from({ length: 10_000 }, (_, i) => room(store, `r-${i}`, undefined, `s${i % 4}`));
    for (let round = 0; round < 10; round++) {
      clock.now += 5000;
      for (const r of rooms) await recorder.record(r, { status: 'ready', runningMatches: 0 });
      if (round % 6 === 5) await recorder.flush();
    }
    await recorder.flush();
    // 100,000 pings, 2 flushes, 4 schedulers: 8 writes (budget is 1 per 100 pings).
    expect(store.writes.length).toBeLessThanOrEqual(8);
    expect(store.writes.length).toBeLessThanOrEqual(100_000 / 100);
  });

  it('writes a status change at once, and not again while unchanged', async () => {
    const { store, recorder } = setup();
    const r = room(store, 'room-1');
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', status: 'occupied', runningMatches: 1, lastPingAt: '2026-01-01T00:00:00.000Z' });
    // The cache now shows the write; an equal ping costs nothing.
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1 })).toBe('recorded');
    // A change of running matches alone is a change.
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 2 })).toBe('status-written');
    expect(store.writes.filter((w) => w.kind === 'gameroom-status')).toHaveLength(2);
  });

  it('does not write a ping sent before one it took from the room (an older timestamp, overtaken on the way): a ready sent before an occupied would make the room allocatable', async () => {
    const { store, recorder } = setup();
    const r = room(store, 'room-1');
    const at = 1_767_225_600; // Unix seconds
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1, sentAt: at + 10 })).toBe('status-written');
    // The ready of the match before, given up on by its client and delivered now.
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'ready', runningMatches: 0, sentAt: at + 7 })).toBe('overtaken');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', status: 'occupied' });
    expect(recorder.lastReported('s1', 'room-1')).toBe('occupied');
    // A ping of the same second, or without a timestamp, is taken in the order it arrives.
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'ready', runningMatches: 0, sentAt: at + 10 })).toBe('status-written');
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    // Still a sign of life: the overtaken ping counts in the digest.
    expect(await recorder.flush()).toBe(1);
  });

  it('takes a ping whose timestamp is far behind (the room\'s clock was set back) and judges the next ones from it; terminated is always taken', async () => {
    const { store, recorder } = setup();
    const r = room(store, 'room-1');
    const at = 1_767_225_600;
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1, sentAt: at })).toBe('status-written');
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'ready', runningMatches: 0, sentAt: at - PING_REORDER_WINDOW_S - 1 })).toBe('status-written');
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1, sentAt: at - PING_REORDER_WINDOW_S })).toBe('status-written');
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'terminated', runningMatches: 0, sentAt: at - PING_REORDER_WINDOW_S - 5 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status?.pingStatus).toBe('terminated');
  });

  it('does not write a ping another replica has news newer than: the GameRoom holds the timestamp of the report it shows', async () => {
    const { clock, store, recorder } = setup();
    const other = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gateway-b', logger: silentLogger(), random: () => 0 });
    const r = room(store, 'room-1', { pingStatus: 'occupied', runningMatches: 1, instanceStatus: 'ready', status: 'occupied' });
    const stale = structuredClone(r);
    const at = 1_767_225_600;
    // A match ends, and the next one starts (sent at +10 s).
    expect(await recorder.record(r, { status: 'ready', runningMatches: 0, sentAt: at + 2 })).toBe('status-written');
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1, sentAt: at + 10 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', pingTimestamp: at + 10 });
    // The ready sent before it reaches the other replica, which never heard from the room.
    expect(await other.record(store.findRoom('s1', 'room-1')!, { status: 'ready', runningMatches: 0, sentAt: at + 7 })).toBe('overtaken');
    // And on a cache two writes behind: the write names the version it saw, is refused, and its
    // retry finds the GameRoom holding a report sent later: dropped, not written.
    expect(await other.record(stale, { status: 'ready', runningMatches: 0, sentAt: at + 8 })).toBe('pending');
    clock.now += 1000;
    await other.retryDue();
    expect(other.pendingWrites).toBe(0);
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', status: 'occupied', pingTimestamp: at + 10 });
    // The room's next report, sent later, is taken by either.
    expect(await other.record(store.findRoom('s1', 'room-1')!, { status: 'ready', runningMatches: 0, sentAt: at + 20 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'ready', status: 'ready', pingTimestamp: at + 20 });
    // A report without a timestamp is dated by nothing: the last one goes with it.
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status?.pingTimestamp).toBeUndefined();
  });

  it('drops a pending write when another replica has written a ping that reached it later: a late retry does not reverse the arrival order of pings in one second', async () => {
    const { clock, store, recorder } = setup();
    const other = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gateway-b', logger: silentLogger(), random: () => 0 });
    const stale = structuredClone(room(store, 'room-1', { pingStatus: 'occupied', runningMatches: 1, instanceStatus: 'ready', status: 'occupied' }));
    const at = 1_767_225_600;
    expect(await recorder.record(stale, { status: 'occupied', runningMatches: 2, sentAt: at - 5 })).toBe('status-written');
    // The room's ready reaches the other replica, whose cache is behind: refused, kept pending.
    expect(await other.record(stale, { status: 'ready', runningMatches: 0, sentAt: at })).toBe('pending');
    // In the same second, the next match starts: occupied, to this replica, written.
    clock.now += 50;
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1, sentAt: at })).toBe('status-written');
    clock.now += 1000;
    await other.retryDue();
    expect(other.pendingWrites).toBe(0);
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', status: 'occupied', runningMatches: 1 });
  });

  it('writes the timestamp of a room whose clock was set back, though its report is unchanged, so that no replica takes its next reports for older news', async () => {
    const { clock, store, recorder } = setup();
    const other = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gateway-b', logger: silentLogger() });
    const at = 1_767_225_600;
    expect(await recorder.record(room(store, 'room-1'), { status: 'occupied', runningMatches: 1, sentAt: at })).toBe('status-written');
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1, sentAt: at - 300 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status?.pingTimestamp).toBe(at - 300);
    expect(await other.record(store.findRoom('s1', 'room-1')!, { status: 'ready', runningMatches: 0, sentAt: at - 290 })).toBe('status-written');
    // A timestamp the API server could not hold exactly (past 2^53) is not written.
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 1, sentAt: 2 ** 63 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied' });
    expect(store.findRoom('s1', 'room-1')?.status?.pingTimestamp).toBeUndefined();
  });

  it('writes again when a stale cache still shows the old status', async () => {
    const { clock, store, recorder } = setup();
    const stale = structuredClone(room(store, 'room-1'));
    expect(await recorder.record(stale, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    // The cache still says ready: a ready ping must be written (this replica wrote occupied). Its
    // write names the stale version, so it is refused and written on the version the cache shows next.
    expect(await recorder.record(stale, { status: 'ready', runningMatches: 0 })).toBe('pending');
    clock.now += 1000; // past the retry's backoff (at most 250 ms after a first refusal)
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    expect(store.findRoom('s1', 'room-1')?.status?.pingStatus).toBe('ready');
  });

  it('never writes ready over an allocation its stale cache has not seen: the write is refused and the room stays allocated', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const store = new InMemoryStore(() => clock.now);
    const metrics = new MetricsRegistry();
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: silentLogger(), metrics, random: () => 0 });
    // This replica's cache: the room as it was while it ran a match.
    const stale = structuredClone(room(store, 'room-1', { pingStatus: 'occupied', runningMatches: 1, instanceStatus: 'ready', status: 'occupied' }));
    // Meanwhile (other replicas): the room reported ready, and a matchmaker allocated it.
    const live = store.findRoom('s1', 'room-1')!;
    live.status = { ...live.status, pingStatus: 'ready', runningMatches: 0, status: 'ready' };
    live.metadata.resourceVersion = '900';
    await store.commitAllocation('s1', 'room-1', '900', {
      status: 'allocated',
      allocation: { id: 'match-1', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z', requestHash: 'h' },
      previousAllocations: [],
    });
    // The room's next ready ping reaches this replica, whose cache still says occupied.
    expect(await recorder.record(stale, { status: 'ready', runningMatches: 0 })).toBe('pending');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ status: 'allocated', allocation: { id: 'match-1' } });
    expect(await metrics.render()).toContain('roomkeeper_ping_status_write_conflicts_total 1');
    // The retry reads the cache as it is now: it shows the report already, so nothing is written.
    const writesBefore = store.writes.length;
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    expect(store.writes.length).toBe(writesBefore);
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ status: 'allocated', pingStatus: 'ready' });
    await recorder.stop();
  });

  it('writes a status that does not depend on the allocation (occupied, terminated) without a condition on the cached version', async () => {
    const { store, recorder } = setup();
    const stale = structuredClone(room(store, 'room-1'));
    store.findRoom('s1', 'room-1')!.metadata.resourceVersion = '900'; // moved on since the cache saw it
    expect(await recorder.record(stale, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    expect(await recorder.record(stale, { status: 'terminated', runningMatches: 0 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminated', status: 'terminated' });
  });

  it('composes the room status from the instance status', async () => {
    const { store, recorder } = setup();
    const r = room(store, 'room-1', { instanceStatus: 'pending' });
    await recorder.record(r, { status: 'ready', runningMatches: 0 });
    expect(store.findRoom('s1', 'room-1')?.status?.status).toBe('pending');
  });

  it('writes nothing for a room whose deletion has begun, unless it pings terminated (the operator writes terminating)', async () => {
    const { store, recorder } = setup();
    const r = room(store, 'room-1');
    r.metadata.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    for (const ping of [{ status: 'terminating', runningMatches: 0 }, { status: 'occupied', runningMatches: 1 }, { status: 'ready', runningMatches: 0 }] as const) {
      expect(await recorder.record(r, ping)).toBe('recorded');
    }
    expect(store.writes.filter((w) => w.kind === 'gameroom-status')).toEqual([]);
    expect(await recorder.record(r, { status: 'terminated', runningMatches: 0 })).toBe('status-written');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminated', status: 'terminated' });
    // Still heard: the digest has its ping.
    expect(await recorder.flush()).toBe(1);
  });

  it('throws when the status write fails (the room is gone)', async () => {
    const { store, recorder } = setup();
    const r = room(store, 'room-1');
    store.rooms.clear();
    await expect(recorder.record(r, { status: 'occupied', runningMatches: 1 })).rejects.toThrow(/not found/);
  });

  it('writes the digest format the operator reads', async () => {
    const { clock, store, recorder } = setup();
    await recorder.record(room(store, 'a'), { status: 'ready', runningMatches: 0 });
    clock.now += 2500;
    await recorder.record(room(store, 'b'), { status: 'ready', runningMatches: 0 });
    await recorder.record(room(store, 'c', undefined, 'other'), { status: 'ready', runningMatches: 0 });
    await recorder.flush();
    const name = pingDigestName('Gateway_7f9');
    expect(name).toBe('roomkeeper-pings-gateway-7f9');
    const digest = store.digests.get(`s1/${name}`);
    expect(digest?.labels).toEqual({ 'roomkeeper.io/ping-digest': 'true', 'roomkeeper.io/scheduler': 's1', 'roomkeeper.io/gateway-replica': 'gateway-7f9' });
    expect(digest?.spec).toEqual({ scheduler: 's1', replica: 'gateway-7f9' });
    expect(JSON.parse(digest?.status.lastPings ?? '')).toEqual({ a: Date.parse('2026-01-01T00:00:00.000Z'), b: Date.parse('2026-01-01T00:00:02.500Z') });
    expect(digest?.status.flushedAt).toBe(String(clock.now));
    expect(decodePingDigest(digest?.status)).toEqual(new Map([['a', 1767225600000], ['b', 1767225602500]]));
    expect(store.digests.has(`other/${name}`)).toBe(true);
  });

  it('merges over earlier content and drops rooms not heard for 10 minutes', async () => {
    const { clock, store, recorder } = setup();
    await recorder.record(room(store, 'old'), { status: 'ready', runningMatches: 0 });
    await recorder.flush();
    clock.now += PING_DIGEST_RETENTION_MS - 1000;
    await recorder.record(room(store, 'new'), { status: 'ready', runningMatches: 0 });
    await recorder.flush();
    expect(Object.keys(JSON.parse(store.digests.get(`s1/${pingDigestName('Gateway_7f9')}`)?.status.lastPings ?? '{}') as Record<string, unknown>)).toEqual(['old', 'new']);
    clock.now += 2000;
    await recorder.record(room(store, 'new'), { status: 'ready', runningMatches: 0 });
    await recorder.flush();
    expect(Object.keys(JSON.parse(store.digests.get(`s1/${pingDigestName('Gateway_7f9')}`)?.status.lastPings ?? '{}') as Record<string, unknown>)).toEqual(['new']);
  });

  it('retries a failed digest write at the next flush', async () => {
    const { store, recorder } = setup();
    let fail = true;
    const original = store.writeDigest.bind(store);
    store.writeDigest = (...args) => (fail ? Promise.reject(new Error('API down')) : original(...args));
    await recorder.record(room(store, 'a'), { status: 'ready', runningMatches: 0 });
    expect(await recorder.flush()).toBe(0);
    fail = false;
    expect(await recorder.flush()).toBe(1);
  });

  it('writes each room\'s last ping on its GameRoom while the API server refuses the scheduler\'s PingDigest (a quota), about every lastPingEveryMs, and stops once the digest is written again', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const store = new InMemoryStore(() => clock.now);
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)));
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw-1', logger: createLogger('test', { level: 'info', stream }), lastPingEveryMs: 60_000 });
    const quota = Object.assign(new Error('pingdigests.roomkeeper.io "gw-1" is forbidden: exceeded quota: pq, requested: count/pingdigests.roomkeeper.io=1, used: count/pingdigests.roomkeeper.io=0, limited: count/pingdigests.roomkeeper.io=0'), { code: 403 });
    let refuse = true;
    const original = store.writeDigest.bind(store);
    store.writeDigest = (...args) => (refuse ? Promise.reject(quota) : original(...args));
    const rooms = ['a', 'b', 'c'].map((id) => room(store, id));
    const pingAll = async () => {
      for (const r of rooms) await recorder.record(r, { status: 'ready', runningMatches: 0 });
    };
    const lastPings = () => rooms.map((r) => store.findRoom('s1', r.metadata.name as string)?.status?.lastPingAt);

    await pingAll();
    expect(await recorder.flush()).toBe(3);
    expect(lastPings()).toEqual(rooms.map(() => '2026-01-01T00:00:00.000Z'));
    // Pings 30 s later: nothing written yet (each room's last ping was written 30 s ago).
    clock.now += 30_000;
    await pingAll();
    expect(await recorder.flush()).toBe(0);
    // 60 s after the last write: each room once more.
    clock.now += 30_000;
    await pingAll();
    expect(await recorder.flush()).toBe(3);
    expect(lastPings()).toEqual(rooms.map(() => '2026-01-01T00:01:00.000Z'));
    const warnings = lines.filter((l) => l.level === 'warn');
    // Told at most once a minute, with the API server's words and what to do.
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ message: 'the API server refuses this scheduler\'s PingDigest: its rooms\' pings are written on each GameRoom instead', scheduler: 's1', roomsWritten: 3 });
    expect(JSON.stringify(warnings[0])).toContain('exceeded quota: pq');
    expect(String(warnings[0]?.whatToDo)).toMatch(/^let the gateway create PingDigests in namespace s1: a ResourceQuota on count\/pingdigests\.roomkeeper\.io there must allow one per gateway replica/);

    refuse = false;
    clock.now += 60_000;
    await pingAll();
    const before = store.writes.filter((w) => w.kind === 'gameroom-status').length;
    expect(await recorder.flush()).toBe(1);
    expect(store.writes.filter((w) => w.kind === 'gameroom-status')).toHaveLength(before);
    expect(lines.filter((l) => l.level === 'info').map((l) => l.message)).toEqual(['this scheduler\'s PingDigest is written again: its rooms\' pings are recorded in it again, not on each GameRoom']);
  });

  it('drops the digest of a scheduler whose namespace is gone instead of retrying it forever', async () => {
    const { store, recorder } = setup();
    await recorder.record(room(store, 'a'), { status: 'ready', runningMatches: 0 });
    await recorder.record(room(store, 'b', undefined, 's2'), { status: 'ready', runningMatches: 0 });
    store.goneNamespaces.add('s1');
    expect(await recorder.flush()).toBe(1);
    expect(recorder.pendingSchedulers).toBe(0);
    // Nothing is left to write for s1: later flushes do not try again.
    expect(await recorder.flush()).toBe(0);
    expect([...store.digests.keys()]).toEqual([`s2/${pingDigestName('Gateway_7f9')}`]);
  });

  it('writes the digest of a room that comes back from a silence within a moment, not at the next flush, once per scheduler for many such rooms', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const store = new InMemoryStore(() => clock.now);
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: silentLogger(), reviveAfterMs: 120_000, revivalFlushDelayMs: 0 });
    const rooms = ['a', 'b', 'c'].map((id) => room(store, id));
    for (const r of rooms) await recorder.record(r, { status: 'ready', runningMatches: 0 });
    expect(await recorder.flush()).toBe(1);
    const digestWrites = () => store.writes.filter((w) => w.kind === 'ping-digest').length;
    // Silent for 150 s of a 240 s timeout, then back: the digest is written without waiting for
    // the next flush, and the three rooms that came back at once cost that one write.
    clock.now += 150_000;
    const back = clock.now;
    for (const r of rooms) await recorder.record(r, { status: 'ready', runningMatches: 0 });
    await waitFor(() => digestWrites() === 2, { message: 'the early digest write' });
    expect(decodePingDigest(store.digests.get(`s1/${pingDigestName('gw')}`)?.status)).toEqual(new Map([['a', back], ['b', back], ['c', back]]));
    // Pinging on as usual: nothing more until the next flush.
    clock.now += 5_000;
    for (const r of rooms) await recorder.record(r, { status: 'ready', runningMatches: 0 });
    expect(await recorder.flush()).toBe(1);
    expect(digestWrites()).toBe(3);
    await recorder.stop();
  });

  it('writes the digest within a moment for a room the operator marked silent, though this replica heard it lately (it pinged another replica meanwhile)', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const store = new InMemoryStore(() => clock.now);
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: silentLogger(), reviveAfterMs: 120_000, revivalFlushDelayMs: 0 });
    const hung = room(store, 'a');
    await recorder.record(hung, { status: 'ready', runningMatches: 0 });
    expect(await recorder.flush()).toBe(1);
    const digestWrites = () => store.writes.filter((w) => w.kind === 'ping-digest').length;
    clock.now += 10_000;
    await recorder.record({ ...hung, status: { ...hung.status, silentSince: '2026-01-01T00:00:00.000Z' } }, { status: 'ready', runningMatches: 0 });
    await waitFor(() => digestWrites() === 2, { message: 'the early digest write' });
    expect(decodePingDigest(store.digests.get(`s1/${pingDigestName('gw')}`)?.status)).toEqual(new Map([['a', clock.now]]));
    await recorder.stop();
  });

  it('flushes what is pending on stop', async () => {
    const { store, recorder } = setup();
    recorder.start(60_000);
    await recorder.record(room(store, 'a'), { status: 'ready', runningMatches: 0 });
    await recorder.stop();
    expect(store.digests.size).toBe(1);
  });

  it('sanitises replica ids into names', () => {
    expect(sanitizeReplicaId('roomkeeper-gateway-5d9c7-abcde')).toBe('roomkeeper-gateway-5d9c7-abcde');
    expect(sanitizeReplicaId('My.Host.local')).toBe('my-host-local');
    expect(sanitizeReplicaId('___')).toBe('gateway');
    expect(sanitizeReplicaId('x'.repeat(100))).toHaveLength(63);
  });
});

describe('PingRecorder: an answered status change is never lost', () => {
  /** A recorder whose status writes are held until `held` releases them, then (after `release()`) pass at once; both counted. */
  function heldWrites() {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const store = new InMemoryStore(() => clock.now);
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: silentLogger(), inlineWriteMs: 20, random: () => 0 });
    const working = store.patchRoomStatus.bind(store);
    const held: (() => void)[] = [];
    const writes = { held: 0, after: 0 };
    store.patchRoomStatus = (sc, r, v, p) => {
      writes.held++;
      return new Promise<void>((resolve, reject) => held.push(() => working(sc, r, v, p).then(resolve, reject)));
    };
    const release = (): void => {
      store.patchRoomStatus = (sc, r, v, p) => {
        writes.after++;
        return working(sc, r, v, p);
      };
    };
    return { clock, store, recorder, held, writes, release };
  }

  function failing() {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const store = new InMemoryStore(() => clock.now);
    const metrics = new MetricsRegistry();
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: silentLogger(), metrics, random: () => 0.5, retryBaseMs: 1000, retryCapMs: 4000 });
    const working = store.patchRoomStatus.bind(store);
    const outage = { on: true, attempts: 0 };
    store.patchRoomStatus = (s, r, v, p) => {
      if (!outage.on) return working(s, r, v, p);
      outage.attempts++;
      return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }));
    };
    return { clock, store, recorder, outage, metrics };
  }

  /** Room `room-1`, ready and allocated to match-1 (its allocation made at 0 running matches). */
  async function allocatedRoom(store: InMemoryStore): Promise<GameRoom> {
    room(store, 'room-1');
    await store.commitAllocation('s1', 'room-1', store.findRoom('s1', 'room-1')!.metadata.resourceVersion as string, {
      status: 'allocated',
      allocation: { id: 'match-1', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z', requestHash: 'h', runningMatches: 0 },
      previousAllocations: [],
    });
    return structuredClone(store.findRoom('s1', 'room-1')!);
  }

  /** Room `room-1` running 2 matches, allocated to t-3 at that count. */
  async function roomAllocatedAtTwo(store: InMemoryStore, pingStatus: 'ready' | 'occupied' = 'occupied'): Promise<GameRoom> {
    room(store, 'room-1', { pingStatus, runningMatches: 2, instanceStatus: 'ready', status: 'active' });
    await store.commitAllocation('s1', 'room-1', store.findRoom('s1', 'room-1')!.metadata.resourceVersion as string, {
      status: 'allocated',
      allocation: { id: 't-3', allocatedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:05:00.000Z', requestHash: 'h', runningMatches: 2 },
      previousAllocations: [],
    });
    return structuredClone(store.findRoom('s1', 'room-1')!);
  }

  it('marks the open allocation taken with the occupied ping that reports its match, on the version it saw the allocation in', async () => {
    const { store, recorder } = setup();
    const allocated = await allocatedRoom(store);
    expect(await recorder.record(allocated, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    const written = store.findRoom('s1', 'room-1')!;
    expect(written.status?.allocation).toMatchObject({ id: 'match-1', takenAt: '2026-01-01T00:00:00.000Z' });
    expect(written.status?.allocation?.endedAt).toBeUndefined(); // the operator ends it
    expect(allocationStep(written, Date.parse('2026-01-01T00:00:01.000Z'))).toEqual({ kind: 'end', reason: 'occupied' });
  });

  it('marks the allocation taken by a ping that names it, whatever its running matches say (a match that ended as the allocated one started left the count unchanged)', async () => {
    const { store, recorder } = setup();
    const allocated = await roomAllocatedAtTwo(store, 'ready');
    // Still 2 running matches: nothing would be written, and the allocation would expire.
    expect(await recorder.record(allocated, { status: 'ready', runningMatches: 2 })).toBe('recorded');
    expect(await recorder.record(allocated, { status: 'ready', runningMatches: 2, takes: 'another-one' })).toBe('recorded');
    expect(await recorder.record(allocated, { status: 'ready', runningMatches: 2, takes: 't-3' })).toBe('status-written');
    const written = store.findRoom('s1', 'room-1')!;
    expect(written.status?.allocation).toMatchObject({ id: 't-3', takenAt: '2026-01-01T00:00:00.000Z' });
    expect(allocationStep(written, Date.parse('2026-01-01T00:00:01.000Z'))).toEqual({ kind: 'end', reason: 'occupied' });
    // Named again once marked: nothing more to write.
    expect(await recorder.record(structuredClone(written), { status: 'ready', runningMatches: 2, takes: 't-3' })).toBe('recorded');
  });

  it('marks the allocation taken when the occupied ping that took it was coalesced into a later ready during an outage (the allocation stayed open until its TTL, ended as expired)', async () => {
    const { clock, store, recorder, outage } = failing();
    const allocated = await allocatedRoom(store);
    expect(await recorder.record(allocated, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    clock.now += 1000;
    // The match was short: ready again, still in the outage. The cache still shows the room allocated and ready.
    expect(await recorder.record(allocated, { status: 'ready', runningMatches: 0 })).toBe('pending');
    outage.on = false;
    clock.now += 10_000;
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    const written = store.findRoom('s1', 'room-1')!;
    expect(written.status).toMatchObject({ pingStatus: 'ready', allocation: { id: 'match-1' } });
    expect(written.status?.allocation?.takenAt).toBeDefined();
    expect(allocationStep(written, clock.now)).toEqual({ kind: 'end', reason: 'occupied' });
  });

  it('a match that ends before the allocated one starts lowers the count the allocation is judged from, in the same write; the start, one more, then takes it', async () => {
    const { store, recorder } = setup();
    const allocated = await roomAllocatedAtTwo(store);
    expect(await recorder.record(allocated, { status: 'occupied', runningMatches: 1 })).toBe('status-written');
    const lowered = structuredClone(store.findRoom('s1', 'room-1')!);
    expect(lowered.status).toMatchObject({ runningMatches: 1, allocation: { id: 't-3', runningMatches: 1 } });
    expect(lowered.status?.allocation?.takenAt).toBeUndefined();
    expect(allocationStep(lowered, Date.parse('2026-01-01T00:00:01.000Z'))).toMatchObject({ kind: 'wait' });
    expect(await recorder.record(lowered, { status: 'occupied', runningMatches: 2 })).toBe('status-written');
    const taken = store.findRoom('s1', 'room-1')!;
    expect(taken.status?.allocation?.takenAt).toBeDefined();
    expect(allocationStep(taken, Date.parse('2026-01-01T00:00:01.000Z'))).toEqual({ kind: 'end', reason: 'occupied' });
  });

  it('the same when the lower count was coalesced away during an outage: the write of the count back up takes the allocation', async () => {
    const { clock, store, recorder, outage } = failing();
    const allocated = await roomAllocatedAtTwo(store);
    expect(await recorder.record(allocated, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    clock.now += 1000;
    expect(await recorder.record(allocated, { status: 'occupied', runningMatches: 2 })).toBe('pending');
    outage.on = false;
    clock.now += 10_000;
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    const written = store.findRoom('s1', 'room-1')!;
    expect(written.status).toMatchObject({ runningMatches: 2, allocation: { id: 't-3' } });
    expect(written.status?.allocation?.takenAt).toBeDefined();
    expect(allocationStep(written, clock.now)).toEqual({ kind: 'end', reason: 'occupied' });
  });

  it('keeps a failed status write pending, coalesces later reports, and writes the latest once the API server is back', async () => {
    const { clock, store, recorder, outage, metrics } = failing();
    const r = room(store, 'room-1');
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    expect(recorder.pendingWrites).toBe(1);
    // Later pings during the outage cost no request each; the latest report wins.
    clock.now += 5000;
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 2 })).toBe('pending');
    expect(outage.attempts).toBe(1);
    // A retry during the outage fails and backs off (still pending).
    await recorder.retryDue();
    expect(outage.attempts).toBe(2);
    expect(recorder.pendingWrites).toBe(1);
    expect(await metrics.render()).toContain('roomkeeper_ping_status_writes_pending 1');
    // What waits, since when, and why: the report answered first, the latest one kept.
    expect(recorder.pendingWriteList()).toEqual([{ scheduler: 's1', roomId: 'room-1', status: 'occupied', attempts: 2, inFlight: false, pendingForMs: 5000, lastError: 'connect ECONNREFUSED 127.0.0.1:6443' }]);
    expect(await metrics.render()).toContain('roomkeeper_ping_status_write_oldest_pending_seconds 5');
    // Back: the next due retry writes the latest report, with the latest ping time.
    outage.on = false;
    clock.now += 60_000;
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    expect(await metrics.render()).toContain('roomkeeper_ping_status_write_oldest_pending_seconds 0');
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'occupied', runningMatches: 2, status: 'occupied', lastPingAt: '2026-01-01T00:00:05.000Z' });
    expect(await recorder.record(store.findRoom('s1', 'room-1')!, { status: 'occupied', runningMatches: 2 })).toBe('recorded');
    await recorder.stop();
  });

  it('tells a round of retries that failed in one line, with how many and why, however many rooms wait', async () => {
    const { clock, store, outage } = failing();
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)));
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: createLogger('gateway', { level: 'info', stream }), random: () => 0.5, retryBaseMs: 1000, retryCapMs: 4000 });
    for (let i = 0; i < 50; i++) await recorder.record(room(store, `room-${i}`), { status: 'occupied', runningMatches: 1 });
    await new Promise((r) => setImmediate(r));
    // The first failures: one line, naming the first room; the other 49 wait for the next line.
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', message: 'room status writes failed; each is kept pending and retried until written', failed: 1, roomId: 'room-0' })]);
    lines.length = 0;
    clock.now += 10_000;
    await recorder.retryDue();
    await new Promise((r) => setImmediate(r));
    expect(outage.attempts).toBe(100);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', message: 'pending room status writes failed again; each is retried with backoff until written', failed: 50, pending: 50 })]);
    expect(JSON.stringify(lines[0])).toContain('ECONNREFUSED');
    // A first failure after the interval is told with the 49 not told yet.
    lines.length = 0;
    await recorder.record(room(store, 'room-50'), { status: 'occupied', runningMatches: 1 });
    await new Promise((r) => setImmediate(r));
    expect(lines).toEqual([expect.objectContaining({ message: 'room status writes failed; each is kept pending and retried until written', failed: 50, roomId: 'room-50' })]);
    outage.on = false;
    lines.length = 0;
    clock.now += 10_000;
    await recorder.retryDue();
    await new Promise((r) => setImmediate(r));
    expect(recorder.pendingWrites).toBe(0);
    // Written: one line for the round, naming the room that waited longest, not one per room.
    expect(lines).toEqual([expect.objectContaining({ level: 'info', message: 'pending room status writes written', written: 51, pending: 0, longestWaitSeconds: 20, roomId: 'room-0', tries: 3 })]);
    await recorder.stop();
  });

  it('backs off exponentially with jitter, capped', async () => {
    const { clock, store, recorder, outage } = failing();
    await recorder.record(room(store, 'room-1'), { status: 'occupied', runningMatches: 1 });
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = outage.attempts;
      // Advance in small steps until the next attempt happens; record how long it took.
      let waited = 0;
      while (outage.attempts === before) {
        clock.now += 100;
        waited += 100;
        await recorder.retryDue();
      }
      seen.push(waited);
    }
    // random 0.5: half of min(4000, 1000 * 2^(n-1)) -> 500, 1000, 2000, 2000, ...
    expect(seen).toEqual([500, 1000, 2000, 2000, 2000, 2000]);
    await recorder.stop();
  });

  it('drops a pending change of a room whose deletion began meanwhile (the operator writes terminating), and writes a pending terminated', async () => {
    const { clock, store, recorder, outage } = failing();
    const r = room(store, 'room-1');
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    // The room is being deleted; its game server still says occupied.
    r.metadata.deletionTimestamp = new Date('2026-01-01T00:00:01Z');
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    outage.on = false;
    clock.now += 60_000;
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'ready', status: 'ready' });
    // Its game server ends: terminated is written, as the cache shows the room (being deleted).
    outage.on = true;
    expect(await recorder.record(r, { status: 'terminated', runningMatches: 0 })).toBe('pending');
    outage.on = false;
    clock.now += 60_000;
    await recorder.retryDue();
    expect(store.findRoom('s1', 'room-1')?.status).toMatchObject({ pingStatus: 'terminated', status: 'terminated' });
    await recorder.stop();
  });

  it('drops a pending write of a room gone from the cache (deleted) without a request', async () => {
    const { clock, store, recorder, outage } = failing();
    await recorder.record(room(store, 'room-1'), { status: 'occupied', runningMatches: 1 });
    store.rooms.clear();
    clock.now += 60_000;
    await recorder.retryDue();
    expect({ pending: recorder.pendingWrites, attempts: outage.attempts }).toEqual({ pending: 0, attempts: 1 });
    await recorder.stop();
  });

  it('drops a pending write when the room is deleted (404)', async () => {
    const { clock, store, recorder } = failing();
    const r = room(store, 'room-1');
    await recorder.record(r, { status: 'occupied', runningMatches: 1 });
    store.patchRoomStatus = () => Promise.reject(Object.assign(new Error('gamerooms "room-1" not found'), { code: 404 }));
    clock.now += 60_000;
    await recorder.retryDue();
    expect(recorder.pendingWrites).toBe(0);
    await recorder.stop();
  });

  it('answers a ping whose write is throttled (the client waiting out Retry-After) as pending, without a second write while the first is under way', async () => {
    const { store, recorder, held, writes, release } = heldWrites();
    const r = room(store, 'room-1');
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    expect(recorder.pendingWrites).toBe(1);
    // A newer report while the first write is under way: coalesced, and not written yet.
    expect(await recorder.record(r, { status: 'ready', runningMatches: 0 })).toBe('pending');
    await recorder.retryDue();
    expect(writes.held).toBe(1);
    // The slow write lands (occupied); the newer report (ready) is written after it, never before.
    release();
    held.shift()?.();
    for (let i = 0; i < 500 && recorder.pendingWrites > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect({ pending: recorder.pendingWrites, status: store.findRoom('s1', 'room-1')?.status?.pingStatus, writes: writes.held }).toEqual({ pending: 0, status: 'ready', writes: 1 });
    await recorder.stop();
  });

  it('ends a slow write\'s entry when it lands, however many pings repeat its report meanwhile: no second write of the same report', async () => {
    const { clock, store, recorder, held, writes, release } = heldWrites();
    const r = room(store, 'room-1');
    // This replica's cache lags: it shows the room as before the write for the whole test.
    const stale = structuredClone(r);
    const fresh = store.findRoom.bind(store);
    store.findRoom = () => stale;
    expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    // The game server pings every second while the write is under way, always the same report.
    for (let i = 0; i < 5; i++) {
      clock.now += 1000;
      expect(await recorder.record(r, { status: 'occupied', runningMatches: 1 })).toBe('pending');
    }
    expect(recorder.pendingWriteList()).toEqual([{ scheduler: 's1', roomId: 'room-1', status: 'occupied', attempts: 1, inFlight: true, pendingForMs: 5000 }]);
    release();
    held.shift()?.();
    for (let i = 0; i < 500 && recorder.pendingWrites > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect({ pending: recorder.pendingWrites, status: fresh('s1', 'room-1')?.status?.pingStatus, writes: writes.held + writes.after }).toEqual({ pending: 0, status: 'occupied', writes: 1 });
    await recorder.stop();
  });

  it('bounds pending writes, dropping the oldest and counting it', async () => {
    const clock = { now: 0 };
    const store = new InMemoryStore(() => clock.now);
    store.patchRoomStatus = () => Promise.reject(new Error('503 the server is currently unable to handle the request'));
    const metrics = new MetricsRegistry();
    const recorder = new PingRecorder({ now: () => clock.now, rooms: store, digests: store, replicaId: 'gw', logger: silentLogger(), metrics, maxPending: 2 });
    for (const id of ['a', 'b', 'c']) await recorder.record(room(store, id), { status: 'occupied', runningMatches: 1 });
    expect(recorder.pendingWrites).toBe(2);
    expect(await metrics.render()).toContain('roomkeeper_ping_status_writes_dropped_total 1');
    await recorder.stop();
  });
});
