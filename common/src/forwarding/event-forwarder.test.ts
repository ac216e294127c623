import * as grpc from '@grpc/grpc-js';
import * as net from 'node:net';
import { waitFor } from '../../../test/support/wait';
import { silentLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder } from './event-forwarder';
import { NO_REPLY, startForwardReceiver, type ForwardReceiver } from './forward-receiver';
import { FORWARDER_RPCS, loadForwarderProtocol } from './forwarder-protocol';
import type { ForwardedRoom, ForwarderConfig } from './forwarder-types';


const room: ForwardedRoom = {
  game: 'tennis',
  schedulerName: 'tennis-eu',
  roomId: 'tennis-eu-abc12',
  host: '10.0.0.7',
  ports: [{ name: 'clientPort', protocol: 'UDP', port: 7000 }],
};
const PORTS_JSON = '[{"name":"clientPort","port":7000,"protocol":"UDP"}]';

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function forwarderTo(receiver: ForwardReceiver, overrides: Partial<ForwarderConfig> = {}): ForwarderConfig {
  return { name: 'matchmaker', enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 5000 }, ...overrides };
}

describe('EventForwarder metrics', () => {
  it('are listed, by their HELP and TYPE, before anything is forwarded (an absent() alert and a check of the README\'s list see them)', async () => {
    const metrics = new MetricsRegistry();
    const forwarder = new EventForwarder({ logger: silentLogger(), metrics });
    try {
      const text = await metrics.render();
      for (const [name, type] of [['roomkeeper_forwarded_events_total', 'counter'], ['roomkeeper_forward_duration_seconds', 'histogram']] as const) {
        expect(text).toMatch(new RegExp(`^# TYPE ${name} ${type}$`, 'm'));
      }
    } finally {
      forwarder.close();
    }
  });
});

describe('EventForwarder against real gRPC receivers', () => {
  const receivers: ForwardReceiver[] = [];
  let forwarder: EventForwarder;
  let metrics: MetricsRegistry;

  async function receiver(options: Parameters<typeof startForwardReceiver>[0] = {}): Promise<ForwardReceiver> {
    const r = await startForwardReceiver(options);
    receivers.push(r);
    return r;
  }

  beforeEach(() => {
    metrics = new MetricsRegistry();
    forwarder = new EventForwarder({ logger: silentLogger(), metrics, reconnectBackoffMs: 200 });
  });

  afterEach(async () => {
    forwarder.close();
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
  });

  it('forwards a ping as SendRoomResync with the merged metadata', async () => {
    const r = await receiver();
    const config = forwarderTo(r, { options: { timeout: '5000', metadata: { roomType: 'green', region: 'eu', shared: 'fwd' } } });

    const outcome = await forwarder.forwardPing([config], room, 'ready', { shared: 'ping', players: 0 });

    expect(outcome).toEqual({ ok: true, results: [{ forwarder: 'matchmaker', ok: true, code: 200 }] });
    expect(r.received.map((c) => c.rpc)).toEqual(['SendRoomResync']);
    expect(r.requestsOf('SendRoomResync')).toEqual([
      {
        room: {
          game: 'tennis',
          roomId: 'tennis-eu-abc12',
          host: '10.0.0.7',
          port: 7000,
          roomType: 'green',
          metadata: { roomType: 'green', region: 'eu', shared: 'ping', players: '0', eventType: 'resync', pingType: 'ready', ports: PORTS_JSON },
        },
        statusType: 'ready',
      },
    ]);
    expect(metrics.counter('roomkeeper_forwarded_events_total', '').get({ forwarder: 'matchmaker', type: 'resync', result: 'ok' })).toBe(1);
    expect(await metrics.render()).toMatch(/roomkeeper_forward_duration_seconds_count\{forwarder="matchmaker",type="resync"\} 1/);
  });

  it('forwards a terminated room as SendRoomStatus', async () => {
    const r = await receiver();

    const outcome = await forwarder.forwardStatus([forwarderTo(r)], { ...room, host: '', ports: [] }, 'terminated');

    expect(outcome.ok).toBe(true);
    expect(r.received.map((c) => c.rpc)).toEqual(['SendRoomStatus']);
    expect(r.requestsOf('SendRoomStatus')).toEqual([
      {
        room: {
          game: 'tennis', roomId: 'tennis-eu-abc12', host: '', port: 0, roomType: '',
          metadata: { eventType: 'status', pingType: 'terminated', roomEvent: 'terminated' },
        },
        statusType: 'terminated',
      },
    ]);
  });

  it('forwards a room event with the forwarder metadata winning', async () => {
    const r = await receiver();
    const config = forwarderTo(r, { options: { metadata: { shared: 'fwd', nested: { a: 1 } } } });

    const outcome = await forwarder.forwardRoomEvent([config], room, 'matchStarted', { shared: 'room', map: 'dust' });

    expect(outcome.ok).toBe(true);
    expect(r.requestsOf('SendRoomEvent')).toEqual([
      {
        room: {
          game: 'tennis', roomId: 'tennis-eu-abc12', host: '10.0.0.7', port: 7000, roomType: '',
          metadata: { shared: 'fwd', map: 'dust', nested: '{"a":1}', eventType: 'roomEvent', roomEvent: 'matchStarted', ports: PORTS_JSON },
        },
        eventType: 'matchStarted',
        metadata: {},
      },
    ]);
  });

  it('forwards player events as SendPlayerEvent, with all of the forwarder metadata', async () => {
    const r = await receiver();
    const config = forwarderTo(r, { options: { metadata: { roomType: 'green', region: 'eu' } } });

    await forwarder.forwardPlayerEvent([config], room, 'playerJoin', 'p-1', { team: 'red' });
    await forwarder.forwardPlayerEvent([config], room, 'playerLeft', 'p-1');

    expect(r.requestsOf('SendPlayerEvent')).toEqual([
      {
        playerId: 'p-1',
        room: { game: 'tennis', roomId: 'tennis-eu-abc12', host: '', port: 0, metadata: {}, roomType: '' },
        eventType: 'PLAYER_JOINED',
        metadata: { team: 'red', playerId: 'p-1', eventType: 'playerJoin', roomType: 'green', region: 'eu' },
      },
      {
        playerId: 'p-1',
        room: { game: 'tennis', roomId: 'tennis-eu-abc12', host: '', port: 0, metadata: {}, roomType: '' },
        eventType: 'PLAYER_LEFT',
        metadata: { playerId: 'p-1', eventType: 'playerLeft', roomType: 'green', region: 'eu' },
      },
    ]);
  });

  it('sends nothing to a disabled forwarder, nor to one without enable (Maestro and CRD default)', async () => {
    const disabled = await receiver();
    const unset = await receiver();
    const enabled = await receiver();

    const outcome = await forwarder.forwardPing(
      [forwarderTo(disabled, { name: 'off', enable: false }), forwarderTo(unset, { name: 'unset', enable: undefined }), forwarderTo(enabled, { name: 'on' })],
      room,
      'occupied',
    );

    expect(outcome).toEqual({ ok: true, results: [{ forwarder: 'on', ok: true, code: 200 }] });
    expect(enabled.received).toHaveLength(1);
    expect(disabled.received).toHaveLength(0);
    expect(unset.received).toHaveLength(0);
  });

  it('never forwards a validation room', async () => {
    const r = await receiver();
    const validation = { ...room, validation: true };
    const forwarders = [forwarderTo(r)];

    const outcomes = await Promise.all([
      forwarder.forwardPing(forwarders, validation, 'ready'),
      forwarder.forwardStatus(forwarders, validation, 'terminated'),
      forwarder.forwardRoomEvent(forwarders, validation, 'x'),
      forwarder.forwardPlayerEvent(forwarders, validation, 'playerJoin', 'p'),
    ]);

    for (const outcome of outcomes) expect(outcome).toEqual({ ok: true, results: [] });
    // A later real event arrives alone, so nothing from the validation room was in flight.
    await forwarder.forwardRoomEvent(forwarders, room, 'after');
    expect(r.received.map((c) => c.rpc)).toEqual(['SendRoomEvent']);
  });

  it('does not forward pings of a room whose pod is terminating', async () => {
    const r = await receiver();

    const outcome = await forwarder.forwardPing([forwarderTo(r)], { ...room, terminating: true }, 'ready');

    expect(outcome).toEqual({ ok: true, results: [] });
    await forwarder.forwardStatus([forwarderTo(r)], { ...room, terminating: true }, 'terminated');
    expect(r.received.map((c) => c.rpc)).toEqual(['SendRoomStatus']);
  });

  it('bounds a call by the forwarder timeout without holding up a healthy forwarder', async () => {
    const silent = await receiver({ reply: () => NO_REPLY });
    let silentCallPendingWhenHealthyReceived: boolean | undefined;
    const healthy = await receiver({
      reply: async (call) => {
        if (call.rpc !== 'SendRoomEvent' || call.request.room.metadata.roomEvent !== 'matchStarted') return { code: 200 };
        // Answer only once the silent receiver has the event too, noting whether its call is still
        // open: a forwarder that waited for the silent one would only get here after its deadline.
        await waitFor(() => silent.received.length > 0, { timeoutMs: 5000 });
        silentCallPendingWhenHealthyReceived = !silent.received[0]!.cancelled;
        return { code: 200 };
      },
    });
    // The silent receiver first in the list: the healthy one must not wait for it.
    const forwarders = [
      forwarderTo(silent, { name: 'silent', options: { timeout: '1500' } }),
      forwarderTo(healthy, { name: 'healthy', options: { timeout: 10_000 } }),
    ];
    await waitFor(async () => (await forwarder.forwardRoomEvent([forwarders[1]!], room, 'warm-up')).ok);
    healthy.received.length = 0;

    const outcome = await forwarder.forwardRoomEvent(forwarders, room, 'matchStarted');

    expect(outcome.ok).toBe(false);
    expect(outcome.results).toEqual([
      {
        forwarder: 'silent', ok: false, code: grpc.status.DEADLINE_EXCEEDED, error: expect.stringMatching(/^DEADLINE_EXCEEDED/) as unknown,
        reason: expect.stringMatching(/^the receiver did not answer within \d+ ms \(DEADLINE_EXCEEDED\); make it answer sooner or raise the forwarder's options\.timeout$/) as unknown,
      },
      { forwarder: 'healthy', ok: true, code: 200 },
    ]);
    expect(silent.received).toHaveLength(1);
    expect(healthy.received).toHaveLength(1);
    expect(silentCallPendingWhenHealthyReceived).toBe(true);
    await waitFor(() => silent.received[0]!.cancelled);
    expect(metrics.counter('roomkeeper_forwarded_events_total', '').get({ forwarder: 'silent', type: 'roomEvent', result: 'error' })).toBe(1);
  });

  it('reports the failing forwarder by name and still delivers to the other', async () => {
    const good = await receiver();
    const broken = await receiver({ reply: () => ({ grpcError: { code: grpc.status.INTERNAL, details: 'boom' } }) });

    const outcome = await forwarder.forwardPlayerEvent(
      [forwarderTo(broken, { name: 'broken' }), forwarderTo(good, { name: 'good' })],
      room,
      'playerJoin',
      'p-9',
    );

    expect(outcome).toEqual({
      ok: false,
      results: [
        { forwarder: 'broken', ok: false, code: grpc.status.INTERNAL, error: 'INTERNAL: boom', reason: 'the receiver answered INTERNAL: boom; see the receiver\'s log' },
        { forwarder: 'good', ok: true, code: 200 },
      ],
    });
    expect(good.requestsOf('SendPlayerEvent').map((e) => e.playerId)).toEqual(['p-9']);
  });

  it('tells a receiver that answered UNAVAILABLE itself from one that could not be reached', async () => {
    const down = await receiver({ reply: () => ({ grpcError: { code: grpc.status.UNAVAILABLE, details: 'receiver down for maintenance' } }) });
    const closed = await closedPort();

    const outcome = await forwarder.forwardRoomEvent([forwarderTo(down, { name: 'mm' }), { name: 'gone', enable: true, type: 'gRPC', address: `127.0.0.1:${closed}`, options: { timeout: 5000 } }], room, 'matchStarted');

    expect(outcome.results).toEqual([
      { forwarder: 'mm', ok: false, code: grpc.status.UNAVAILABLE, error: 'UNAVAILABLE: receiver down for maintenance', reason: 'the receiver answered UNAVAILABLE: receiver down for maintenance; see the receiver\'s log' },
      {
        forwarder: 'gone', ok: false, code: grpc.status.UNAVAILABLE, error: expect.stringMatching(/^UNAVAILABLE: No connection established/) as unknown,
        reason: 'the receiver could not be reached (UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED the receiver.); check that it runs and listens at the forwarder\'s address',
      },
    ]);
    expect(down.received).toHaveLength(1);
  });

  it('tells a receiver that sent its response headers, then UNAVAILABLE, as answering it', async () => {
    const protocol = loadForwarderProtocol();
    const server = new grpc.Server();
    const handler: grpc.handleUnaryCall<unknown, unknown> = (call, callback) => {
      call.sendMetadata(new grpc.Metadata());
      callback({ code: grpc.status.UNAVAILABLE, details: 'draining' });
    };
    server.addService(protocol.serviceDefinition, Object.fromEntries(Object.keys(FORWARDER_RPCS).map((rpc) => [rpc, handler])));
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
    });
    try {
      const outcome = await forwarder.forwardPing([{ name: 'mm', enable: true, type: 'gRPC', address: `127.0.0.1:${port}`, options: { timeout: 5000 } }], room, 'ready');

      expect(outcome.results).toEqual([{ forwarder: 'mm', ok: false, code: grpc.status.UNAVAILABLE, error: 'UNAVAILABLE: draining', reason: 'the receiver answered UNAVAILABLE: draining; see the receiver\'s log' }]);
    } finally {
      server.forceShutdown();
    }
  });

  it('counts a non-200 Response.code as delivered', async () => {
    const r = await receiver({ reply: () => ({ code: 404, message: 'room unknown' }) });

    const outcome = await forwarder.forwardPing([forwarderTo(r)], room, 'ready');

    expect(outcome).toEqual({ ok: true, results: [{ forwarder: 'matchmaker', ok: true, code: 404 }] });
    expect(metrics.counter('roomkeeper_forwarded_events_total', '').get({ forwarder: 'matchmaker', type: 'resync', result: 'not_found' })).toBe(1);
  });

  it('fails fast with UNAVAILABLE when the receiver is down and uses it again once it is back', async () => {
    const first = await receiver();
    const port = first.port;
    const config = forwarderTo(first, { options: { timeout: 20_000 } });
    expect((await forwarder.forwardPing([config], room, 'ready')).ok).toBe(true);

    await first.stop();
    const down = await forwarder.forwardPing([config], room, 'ready');
    expect(down.ok).toBe(false);
    // UNAVAILABLE rather than DEADLINE_EXCEEDED: the call did not wait out its 20 s deadline.
    expect(down.results[0]).toMatchObject({ forwarder: 'matchmaker', ok: false, code: grpc.status.UNAVAILABLE });
    // What a room is told: grpc-js's words without the address, and without its empty "Resolution note:".
    expect(down.results[0]?.reason).toMatch(/^the receiver could not be reached \(UNAVAILABLE: [^)]*\bthe receiver\.?\); check that it runs and listens at the forwarder's address$/);

    const again = await receiver({ port });
    await waitFor(async () => (await forwarder.forwardPing([config], room, 'occupied')).ok, { timeoutMs: 15_000 });
    expect(again.requestsOf('SendRoomResync').at(-1)?.statusType).toBe('occupied');
    expect(forwarder.openConnections).toBe(1);
  });

  it('reuses one connection per address and takes the forwarder list from each call', async () => {
    const a = await receiver();
    const b = await receiver();

    await forwarder.forwardPing([forwarderTo(a, { name: 'a' })], room, 'ready');
    await forwarder.forwardPing([forwarderTo(a, { name: 'a' })], room, 'ready');
    expect(forwarder.openConnections).toBe(1);
    const outcome = await forwarder.forwardPing([forwarderTo(a, { name: 'a' }), forwarderTo(b, { name: 'b' })], room, 'occupied');

    expect(outcome.results.map((r) => r.forwarder)).toEqual(['a', 'b']);
    expect(forwarder.openConnections).toBe(2);
    expect(a.received).toHaveLength(3);
    expect(b.received).toHaveLength(1);
  });

  it('returns failures instead of throwing for unusable configuration', async () => {
    const outcome = await forwarder.forwardPing(
      [
        { name: 'no-address', enable: true, address: '' },
        { name: 'http', enable: true, type: 'http', address: '127.0.0.1:1' },
      ],
      room,
      'ready',
    );

    expect(outcome).toEqual({
      ok: false,
      results: [
        { forwarder: 'no-address', ok: false, error: 'forwarder has no address', reason: 'the forwarder has no address; set it to the receiver\'s host:port' },
        { forwarder: 'http', ok: false, error: 'unsupported forwarder type "http"', reason: 'unsupported forwarder type "http"; set its type to gRPC' },
      ],
    });
    expect(await forwarder.forwardPing([], room, 'ready')).toEqual({ ok: true, results: [] });
    expect(await forwarder.forwardPing(null as unknown as ForwarderConfig[], room, 'ready')).toEqual({ ok: true, results: [] });
    expect(await forwarder.forwardRoomEvent([], null as unknown as ForwardedRoom, 'x')).toEqual({ ok: false, results: [] });
  });

  it('fails every call after close() instead of throwing', async () => {
    const r = await receiver();
    forwarder.close();

    const outcome = await forwarder.forwardPing([forwarderTo(r)], room, 'ready');

    expect(outcome).toEqual({ ok: false, results: [{ forwarder: 'matchmaker', ok: false, error: 'forwarder client pool is closed', reason: 'the call could not be made (forwarder client pool is closed); see the gateway log' }] });
    expect(r.received).toHaveLength(0);
  });

  it('sends no gRPC headers of its own', async () => {
    const r = await receiver();

    await forwarder.forwardRoomEvent([forwarderTo(r)], room, 'x');

    const custom = Object.keys(r.received[0]!.headers).filter((k) => !k.startsWith('grpc-') && k !== 'user-agent' && k !== 'content-type' && k !== 'te');
    expect(custom).toEqual([]);
  });
});

describe('EventForwarder metric series of gone schedulers', () => {
  let receiver: ForwardReceiver;
  let forwarder: EventForwarder;
  let metrics: MetricsRegistry;
  const live = new Set<string>();
  const roomOf = (schedulerName: string): ForwardedRoom => ({ ...room, schedulerName, roomId: `${schedulerName}-r1` });
  const seriesOf = async (name: string) => (await metrics.render()).split('\n').filter((l) => !l.startsWith('#') && l.includes(`forwarder="${name}"`));

  beforeEach(async () => {
    receiver = await startForwardReceiver();
    metrics = new MetricsRegistry();
    live.clear();
    forwarder = new EventForwarder({ logger: silentLogger(), metrics, schedulerExists: (name) => live.has(name), metricsSweepIntervalMs: 0 });
  });
  afterEach(async () => {
    forwarder.close();
    await receiver.stop();
  });

  it('removes the series of a forwarder name once no scheduler that used it exists', async () => {
    live.add('a').add('b');
    const to = (name: string): ForwarderConfig => ({ name, enable: true, type: 'gRPC', address: receiver.address, options: { timeout: 5000 } });
    await forwarder.forwardPing([to('only-a'), to('shared')], roomOf('a'), 'ready');
    await forwarder.forwardRoomEvent([to('shared')], roomOf('b'), 'resync');
    expect((await seriesOf('only-a')).length).toBeGreaterThan(0);
    expect(forwarder.forgetGoneSchedulers()).toBe(0);

    live.delete('a');
    expect(forwarder.forgetGoneSchedulers()).toBe(1);
    expect(await seriesOf('only-a')).toEqual([]);
    expect((await seriesOf('shared')).length).toBeGreaterThan(0);

    live.delete('b');
    expect(forwarder.forgetGoneSchedulers()).toBe(1);
    expect(await seriesOf('shared')).toEqual([]);
    // A scheduler of the same name made again counts from zero.
    live.add('a');
    await forwarder.forwardPing([to('only-a')], roomOf('a'), 'ready');
    expect(await seriesOf('only-a')).toContain('roomkeeper_forwarded_events_total{forwarder="only-a",result="ok",type="resync"} 1');
  });
});
