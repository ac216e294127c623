/**
 * ForwardPump against real gRPC receivers: a dead receiver fills only its own bounded queue (the
 * oldest forwards are dropped and counted), the live receiver gets every ping, and each ping's
 * result says what became of it.
 */
import { waitFor } from '../../../test/support/wait';
import { silentLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder } from './event-forwarder';
import { ForwardPump, type PingForward, type PingForwardResult } from './forward-pump';
import { NO_REPLY, startForwardReceiver, type ForwardReceiver } from './forward-receiver';
import type { ForwardedRoom, ForwarderConfig, PingStatus } from './forwarder-types';

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
  function pump(options: { maxQueued: number; maxInFlight: number }) {
    const results: PingForwardResult[] = [];
    const drops: string[] = [];
    const p = new ForwardPump({
      maxQueuedPerReceiver: options.maxQueued, maxInFlightPerReceiver: options.maxInFlight,
      send: (f, ping) => forwarder.forwardPing([f], ping.room, ping.status as PingStatus, ping.metadata),
      onPingDone: (r) => results.push(r),
      onDropped: (name, scheduler) => drops.push(`${name}/${scheduler}`),
    });
    return { p, results, drops };
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
    expect(live.requestsOf('SendRoomResync').map((r) => r.room?.roomId)).toEqual(Array.from({ length: 100 }, (_, i) => `tennis-eu-${i}`));
    // A dropped ping is done once its live forward's answer is back too.
    await waitFor(() => results.length === 75, { timeoutMs: 10_000, message: '75 pings done' });
    expect(results.every((r) => r === 'dropped')).toBe(true);
    // The newest forwards are the ones kept for the dead receiver.
    expect(dead.requestsOf('SendRoomResync').map((r) => r.room?.roomId)).toEqual(['tennis-eu-0', 'tennis-eu-1', 'tennis-eu-2', 'tennis-eu-3', 'tennis-eu-4']);
    // Only the dead receiver's 5 calls stay open once the live answers are all back.
    await waitFor(() => p.inFlight === 5, { timeoutMs: 10_000, message: '5 calls open' });
  });

  test('each ping\'s result: ok when every forwarder took it, failed when one failed; no enabled forwarder is ok at once', async () => {
    const live = await receiver();
    const refusing = await startForwardReceiver({ reply: () => ({ grpcError: { code: 14, details: 'down' } }) });
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
});
