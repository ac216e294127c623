/**
 * ForwardPump against real gRPC receivers: a dead receiver fills only its own bounded queue (the
 * oldest forwards are dropped and counted), the live receiver gets every ping, a room's newer
 * ping takes the place of its older one while a receiver is behind (coalesced), a receiver that
 * keeps failing gets no calls for a while (circuit), and each ping's result says what became of it.
 */
import * as grpc from '@grpc/grpc-js';
import { waitFor } from '../../../test/support/wait';
import { silentLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder } from './event-forwarder';
import { ForwardPump, type ForwardPumpOptions, type PingForward, type PingForwardResult } from './forward-pump';
import { NO_REPLY, startForwardReceiver, type ForwardReceiver, type ReceiverReply } from './forward-receiver';
import type { ForwardedRoom, ForwarderConfig } from './forwarder-types';
import type { LivePingStatus } from '../rooms/room-status';

const room = (i: number): ForwardedRoom => ({ game: 'tennis', schedulerName: 'tennis-eu', roomId: `tennis-eu-${i}`, host: '10.0.0.7', ports: [] });
const to = (name: string, r: ForwardReceiver, timeout = 5000): ForwarderConfig => ({ name, enable: true, type: 'gRPC', address: r.address, options: { timeout } });

describe('ForwardPump', () => {
  const receivers: ForwardReceiver[] = [];
  let forwarder: EventForwarder;
  beforeEach(() => { forwarder = new EventForwarder({ logger: silentLogger(), metrics: new MetricsRegistry() }); });
  afterEach(async () => {
    forwarder.close();
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
  });
  async function receiver(silent = false): Promise<ForwardReceiver> {
    const r = await startForwardReceiver(silent ? { reply: () => NO_REPLY } : {});
    receivers.push(r);
    return r;
  }
  function pump(options: { maxQueued: number; maxInFlight: number } & Partial<ForwardPumpOptions>) {
    const results: PingForwardResult[] = [];
    const drops: string[] = [];
    const lost: string[] = [];
    const circuit: string[] = [];
    const p = new ForwardPump({
      maxQueuedPerReceiver: options.maxQueued, maxInFlightPerReceiver: options.maxInFlight,
      send: (f, ping) => forwarder.forwardPing([f], ping.room, ping.status, ping.metadata),
      onPingDone: (r) => results.push(r),
      onLost: (reason, name, scheduler) => {
        lost.push(`${reason} ${name}/${scheduler}`);
        if (reason === 'dropped') drops.push(`${name}/${scheduler}`);
      },
      onCircuit: (c) => circuit.push(`${c.forwarder} ${c.state} ${c.openMs}`),
      ...options,
    });
    return { p, results, drops, lost, circuit };
  }

  test('a dead receiver only fills its own bounded queue: the live one gets every ping, the oldest forwards to the dead one are dropped and counted', async () => {
    const live = await receiver();
    const dead = await receiver(true);
    const { p, results, drops } = pump({ maxQueued: 20, maxInFlight: 5 });
    const forwarders = [to('live', live), to('dead', dead, 60_000)];
    // One ping at a time, as pings arrive: the live receiver keeps up, the dead one never answers.
    for (let i = 0; i < 100; i++) {
      p.offer({ kind: 'resync', forwarders, room: room(i), status: 'ready' });
      await waitFor(() => live.requestsOf('SendRoomResync').length === i + 1, { timeoutMs: 10_000, message: `the live receiver got ping ${i}` });
    }
    // 5 calls open to the dead receiver, 20 waiting; the other 75 of its forwards were dropped.
    expect(drops).toHaveLength(75);
    expect(new Set(drops)).toEqual(new Set(['dead/tennis-eu']));
    expect(p.queued).toBe(20);
    expect(live.requestsOf('SendRoomResync').map((r) => r.room.roomId)).toEqual(Array.from({ length: 100 }, (_, i) => `tennis-eu-${i}`));
    // A dropped ping is done once its live forward's answer is back too.
    await waitFor(() => results.length === 75, { timeoutMs: 10_000, message: '75 pings done' });
    expect(results.every((r) => r === 'dropped')).toBe(true);
    // The newest forwards are the ones kept for the dead receiver.
    expect(dead.requestsOf('SendRoomResync').map((r) => r.room.roomId)).toEqual(['tennis-eu-0', 'tennis-eu-1', 'tennis-eu-2', 'tennis-eu-3', 'tennis-eu-4']);
    // Only the dead receiver's 5 calls stay open once the live answers are all back.
    await waitFor(() => p.inFlight === 5, { timeoutMs: 10_000, message: '5 calls open' });
  });

  test('each ping\'s result: ok when every forwarder took it, failed when one failed; no enabled forwarder is ok at once', async () => {
    const live = await receiver();
    const refusing = await startForwardReceiver({ reply: () => ({ grpcError: { code: grpc.status.UNAVAILABLE, details: 'down' } }) });
    receivers.push(refusing);
    const { p, results } = pump({ maxQueued: 100, maxInFlight: 10 });
    const ping = (forwarders: ForwarderConfig[]): PingForward => ({ kind: 'resync', forwarders, room: room(1), status: 'occupied' });
    p.offer(ping([to('live', live)]));
    await waitFor(() => results.length === 1);
    p.offer(ping([to('live', live), to('refusing', refusing)]));
    await waitFor(() => results.length === 2);
    p.offer(ping([{ ...to('off', live), enable: false }]));
    expect(results).toEqual(['ok', 'failed', 'ok']);
    expect(p.forgetIdleLanes()).toBe(2);
  });

  test('while a receiver is behind, a room\'s newer ping takes its waiting forward\'s place and turn: the receiver gets each room\'s newest state, the older pings are coalesced', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const slow = await startForwardReceiver({ reply: async (): Promise<ReceiverReply> => { await gate; return { code: 200, message: 'ok' }; } });
    receivers.push(slow);
    const { p, results, lost } = pump({ maxQueued: 100, maxInFlight: 1 });
    const forwarders = [to('slow', slow)];
    const ping = (i: number, status: LivePingStatus): PingForward => ({ kind: 'resync', forwarders, room: room(i), status });
    p.offer(ping(1, 'ready'));
    await waitFor(() => slow.received.length === 1, { timeoutMs: 10_000, message: 'the first call is open' });
    p.offer(ping(2, 'ready'));
    p.offer(ping(1, 'occupied'));
    p.offer(ping(2, 'occupied'));
    p.offer(ping(1, 'terminating'));
    // Room 2 waits first (its ready ping came first), with its newest state.
    expect(p.queued).toBe(2);
    expect(lost).toEqual(['coalesced slow/tennis-eu', 'coalesced slow/tennis-eu']);
    expect(results).toEqual(['coalesced', 'coalesced']);
    release();
    await waitFor(() => results.length === 5, { timeoutMs: 10_000, message: 'every ping done' });
    expect(slow.requestsOf('SendRoomResync').map((r) => `${r.room.roomId} ${r.statusType}`)).toEqual(['tennis-eu-1 ready', 'tennis-eu-2 occupied', 'tennis-eu-1 terminating']);
    expect(results).toEqual(['coalesced', 'coalesced', 'ok', 'ok', 'ok']);
  });

  test('a receiver that fails again and again gets no calls while its circuit is open (skipped at once, pings failed); one call is tried after the pause, which doubles until it answers', async () => {
    let failing = true;
    const flaky = await startForwardReceiver({ reply: (): ReceiverReply => (failing ? { grpcError: { code: grpc.status.UNAVAILABLE, details: 'down' } } : { code: 200, message: 'ok' }) });
    receivers.push(flaky);
    let now = 0;
    const { p, results, lost, circuit } = pump({ maxQueued: 100, maxInFlight: 1, circuitFailures: 3, circuitOpenMs: 1000, circuitMaxOpenMs: 1500, now: () => now });
    const ping = (i: number): PingForward => ({ kind: 'resync', forwarders: [to('flaky', flaky)], room: room(i), status: 'ready' });
    for (let i = 0; i < 3; i++) {
      p.offer(ping(i));
      await waitFor(() => results.length === i + 1, { timeoutMs: 10_000, message: `ping ${i} done` });
    }
    expect(circuit).toEqual(['flaky open 1000']);
    // Open: no call, the ping fails at once.
    for (let i = 3; i < 13; i++) p.offer(ping(i));
    expect(results).toHaveLength(13);
    expect(results.every((r) => r === 'failed')).toBe(true);
    expect(lost).toEqual(Array.from({ length: 10 }, () => 'skipped flaky/tennis-eu'));
    expect(flaky.received).toHaveLength(3);
    // After the pause one call is tried; it fails, so the next pause is longer (capped at 1500).
    now = 1000;
    p.offer(ping(13));
    p.offer(ping(14));
    await waitFor(() => results.length === 15, { timeoutMs: 10_000, message: 'the probe failed' });
    expect(flaky.received).toHaveLength(4);
    expect(circuit).toEqual(['flaky open 1000', 'flaky open 1500']);
    now = 2499;
    p.offer(ping(15));
    expect(flaky.received).toHaveLength(4);
    // The receiver is back: the probe closes the circuit and calls flow again.
    failing = false;
    now = 2500;
    p.offer(ping(16));
    await waitFor(() => results.length === 17, { timeoutMs: 10_000, message: 'the probe answered' });
    expect(circuit).toEqual(['flaky open 1000', 'flaky open 1500', 'flaky closed 0']);
    p.offer(ping(17));
    p.offer(ping(18));
    await waitFor(() => results.length === 19, { timeoutMs: 10_000, message: 'calls flow again' });
    expect(results.slice(-3)).toEqual(['ok', 'ok', 'ok']);
    expect(flaky.received).toHaveLength(7);
  });
});
