/**
 * ForwardingWorker: a real worker thread forwarding to real gRPC receivers. Pings offered on the
 * main thread reach the receivers, their results and the forward metrics come back to the main
 * thread's registry under the usual names, every stage stays bounded (coalesced and dropped
 * forwards counted), a failing receiver is skipped, and the worker thread runs at a lower CPU
 * priority than the main thread.
 */
import * as grpc from '@grpc/grpc-js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { waitFor } from '../../../test/support/wait';
import { silentLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder } from './event-forwarder';
import { NO_REPLY, startForwardReceiver, type ForwardReceiver } from './forward-receiver';
import type { PingForwardResult } from './forward-pump';
import type { ForwardedRoom, ForwarderConfig } from './forwarder-types';
import { ForwardingWorker, HANDOFF_LABEL, type ForwardingWorkerOptions } from './forwarding-worker';

const room = (i: number): ForwardedRoom => ({ game: 'tennis', schedulerName: 'tennis-eu', roomId: `tennis-eu-${i}`, host: '10.0.0.7', ports: [] });
const to = (name: string, r: ForwardReceiver, timeout = 5000): ForwarderConfig => ({ name, enable: true, type: 'gRPC', address: r.address, options: { timeout } });

describe('ForwardingWorker', () => {
  const receivers: ForwardReceiver[] = [];
  const workers: ForwardingWorker[] = [];
  let metrics: MetricsRegistry;
  let events: EventForwarder;
  let results: Record<PingForwardResult, number>;
  beforeEach(() => {
    metrics = new MetricsRegistry();
    events = new EventForwarder({ logger: silentLogger(), metrics });
    results = { ok: 0, coalesced: 0, failed: 0, dropped: 0 };
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()));
    events.close();
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
  });
  async function receiver(silent = false): Promise<ForwardReceiver> {
    const r = await startForwardReceiver(silent ? { reply: () => NO_REPLY } : {});
    receivers.push(r);
    return r;
  }
  function worker(options: Partial<ForwardingWorkerOptions> = {}): ForwardingWorker {
    const w = new ForwardingWorker({ logger: silentLogger(), metrics, logLevel: 'error', record: (f) => events.recordRelayed(f), reportIntervalMs: 20, ...options });
    w.onPingResults((result, n) => { results[result] += n; });
    workers.push(w);
    return w;
  }

  test('forwards pings and terminated statuses from the worker thread; results and forward metrics reach this thread', async () => {
    const live = await receiver();
    const w = worker();
    for (let i = 0; i < 50; i++) w.offer({ kind: 'resync', forwarders: [to('matchmaker', live)], room: room(i), status: 'occupied', metadata: { n: i } });
    w.offer({ kind: 'status', forwarders: [to('matchmaker', live)], room: room(99), status: 'terminated' });
    await waitFor(() => results.ok === 51, { timeoutMs: 20_000, message: '51 pings forwarded' });
    expect(live.requestsOf('SendRoomResync')).toHaveLength(50);
    expect(live.requestsOf('SendRoomResync')[0]).toMatchObject({ room: { roomId: 'tennis-eu-0' }, statusType: 'occupied' });
    expect(live.requestsOf('SendRoomStatus')).toEqual([expect.objectContaining({ room: expect.objectContaining({ roomId: 'tennis-eu-99' }) as unknown, statusType: 'terminated' }) as unknown]);
    const forwarded = metrics.counter('roomkeeper_forwarded_events_total', '');
    expect(forwarded.get({ forwarder: 'matchmaker', type: 'resync', result: 'ok' })).toBe(50);
    expect(forwarded.get({ forwarder: 'matchmaker', type: 'status', result: 'ok' })).toBe(1);
    expect(await metrics.render()).toMatch(/roomkeeper_forward_duration_seconds_count\{forwarder="matchmaker",type="resync"\} 50/);
    expect(results).toEqual({ ok: 51, coalesced: 0, failed: 0, dropped: 0 });
  });

  test('a receiver that never answers: its forwards are dropped oldest first and counted, the live receiver still gets every ping', async () => {
    const live = await receiver();
    const dead = await receiver(true);
    const w = worker({ maxQueuedPerReceiver: 30, maxInFlightPerReceiver: 10 });
    const forwarders = [to('live', live), to('dead', dead, 60_000)];
    for (let i = 0; i < 200; i++) {
      w.offer({ kind: 'resync', forwarders, room: room(i), status: 'ready' });
      if (i % 20 === 19) await waitFor(() => live.requestsOf('SendRoomResync').length === i + 1, { timeoutMs: 10_000, message: `the live receiver got ping ${i}` });
    }
    // 10 calls open to the dead receiver and 30 waiting: the other 160 were dropped.
    await waitFor(() => results.dropped === 160, { timeoutMs: 10_000, message: '160 pings reported dropped' });
    expect(metrics.counter('roomkeeper_forward_dropped_total', '').get({ forwarder: 'dead' })).toBe(160);
    expect(metrics.counter('roomkeeper_forward_dropped_total', '').get({ forwarder: 'live' })).toBe(0);
    await waitFor(async () => /roomkeeper_forward_queue_length 30\b/.test(await metrics.render()), { timeoutMs: 10_000, message: 'the queue length gauge shows the 30 waiting' });
    expect(dead.requestsOf('SendRoomResync')).toHaveLength(10);
  });

  test('the hand-off to the worker is bounded too: beyond maxPending the oldest pings are dropped before they reach it', async () => {
    const live = await receiver();
    const w = worker({ maxPending: 100, maxInTransit: 100 });
    // 1,000 pings within one turn of the event loop: 100 wait for the hand-off, 900 are dropped.
    for (let i = 0; i < 1000; i++) w.offer({ kind: 'resync', forwarders: [to('matchmaker', live)], room: room(i), status: 'ready' });
    expect(metrics.counter('roomkeeper_forward_dropped_total', '').get({ forwarder: HANDOFF_LABEL })).toBe(900);
    expect(results.dropped).toBe(900);
    await waitFor(() => results.ok === 100, { timeoutMs: 20_000, message: 'the 100 newest pings forwarded' });
    expect(live.requestsOf('SendRoomResync').map((r) => r.room.roomId)).toEqual(Array.from({ length: 100 }, (_, i) => `tennis-eu-${900 + i}`));
  });

  test('pings of a room that wait for the hand-off coalesce: only its newest goes to the worker, the others are counted as coalesced, not dropped', async () => {
    const live = await receiver();
    const w = worker({ maxPending: 100, maxInTransit: 100 });
    // 1,000 pings of 10 rooms within one turn of the event loop: 10 wait for the hand-off.
    const statuses = ['ready', 'occupied'] as const;
    for (let i = 0; i < 1000; i++) w.offer({ kind: 'resync', forwarders: [to('matchmaker', live)], room: room(i % 10), status: statuses[Math.floor(i / 10) % 2] ?? 'ready', metadata: { n: i } });
    expect(metrics.counter('roomkeeper_forward_coalesced_total', '').get({ forwarder: HANDOFF_LABEL })).toBe(990);
    expect(metrics.counter('roomkeeper_forward_dropped_total', '').get({ forwarder: HANDOFF_LABEL })).toBe(0);
    expect(results.coalesced).toBe(990);
    await waitFor(() => results.ok === 10, { timeoutMs: 20_000, message: 'the 10 newest pings forwarded' });
    // Each room's newest ping (i = 990..999, occupied) went, in the order the rooms first came.
    expect(live.requestsOf('SendRoomResync').map((r) => `${r.room.roomId} ${r.statusType}`)).toEqual(Array.from({ length: 10 }, (_, i) => `tennis-eu-${i} occupied`));
  });

  test('a receiver that keeps failing has its circuit opened: its later forwards are skipped and counted without calls, and pings to it alone are not even handed to the worker', async () => {
    const refusing = await startForwardReceiver({ reply: () => ({ grpcError: { code: grpc.status.UNAVAILABLE, details: 'down' } }) });
    receivers.push(refusing);
    const live = await receiver();
    const w = worker();
    const forwarders = [to('refusing', refusing)];
    for (let i = 0; i < 20; i++) w.offer({ kind: 'resync', forwarders, room: room(i), status: 'ready' });
    await waitFor(() => results.failed === 20 && w.openCircuits === 1, { timeoutMs: 20_000, message: '20 pings failed and the circuit reported open' });
    // Only receivers with open circuits: skipped on this thread, at once.
    for (let i = 20; i < 30; i++) w.offer({ kind: 'resync', forwarders, room: room(i), status: 'ready' });
    expect(results.failed).toBe(30);
    expect(metrics.counter('roomkeeper_forward_skipped_total', '').get({ forwarder: 'refusing' })).toBe(10);
    // With a live receiver too, the ping goes to the worker, which skips only the open one.
    w.offer({ kind: 'resync', forwarders: [...forwarders, to('live', live)], room: room(30), status: 'ready' });
    await waitFor(() => results.failed === 31, { timeoutMs: 20_000, message: 'the mixed ping done' });
    expect(live.requestsOf('SendRoomResync').map((r) => r.room.roomId)).toEqual(['tennis-eu-30']);
    await waitFor(() => metrics.counter('roomkeeper_forward_skipped_total', '').get({ forwarder: 'refusing' }) === 11, { timeoutMs: 20_000, message: 'the worker\'s skip counted' });
    expect(refusing.received).toHaveLength(20);
  });

  test('the worker thread lowers its own CPU priority (nice), not the main thread\'s', async () => {
    const mainNice = os.getPriority();
    const w = worker({ workerNice: 7 });
    const started = await waitFor(() => w.started, { timeoutMs: 20_000, message: 'the worker started' });
    if ('error' in started) throw new Error(`the worker could not lower its priority: ${started.error}`);
    // The kernel's own view of that thread: field 19 of /proc/<pid>/task/<tid>/stat is its nice value.
    const stat = fs.readFileSync(`/proc/${process.pid}/task/${started.threadId}/stat`, 'utf8');
    const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    expect(nice).toBe(Math.max(7, mainNice));
    expect(started.nice).toBe(nice);
    expect(os.getPriority()).toBe(mainNice);
  });

  test('a worker that dies is replaced, and forwarding goes on', async () => {
    const live = await receiver();
    const w = worker();
    w.offer({ kind: 'resync', forwarders: [to('matchmaker', live)], room: room(1), status: 'ready' });
    await waitFor(() => results.ok === 1, { timeoutMs: 20_000 });
    // A message the worker cannot handle makes it throw and exit (the public API cannot send one).
    (w as unknown as { worker: Worker }).worker.postMessage({ type: 'pings', pings: 5 });
    await waitFor(() => w.restarts === 1, { timeoutMs: 20_000, message: 'the worker was replaced' });
    w.offer({ kind: 'resync', forwarders: [to('matchmaker', live)], room: room(2), status: 'ready' });
    await waitFor(() => results.ok === 2, { timeoutMs: 20_000, message: 'forwarding goes on' });
    expect(live.requestsOf('SendRoomResync').map((r) => r.room.roomId)).toEqual(['tennis-eu-1', 'tennis-eu-2']);
  });

  test('close() stops the worker; later offers are ignored', async () => {
    const live = await receiver();
    const w = worker();
    await w.close();
    await w.close();
    w.offer({ kind: 'resync', forwarders: [to('matchmaker', live)], room: room(1), status: 'ready' });
    expect(results).toEqual({ ok: 0, coalesced: 0, failed: 0, dropped: 0 });
  });
});
