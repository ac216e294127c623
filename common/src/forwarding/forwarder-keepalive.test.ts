/**
 * A receiver whose connection goes silent (no RST, no FIN: a dead host, a dropped NAT entry) is
 * noticed through keepalive, so calls fail with UNAVAILABLE instead of waiting out long deadlines.
 * A TCP proxy between forwarder and receiver simulates the silent network.
 */
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { silentLogger } from '../logger';
import { MetricsRegistry } from '../metrics';
import { EventForwarder } from './event-forwarder';
import { startForwardReceiver, type ForwardReceiver } from './forward-receiver';
import type { ForwardedRoom } from './forwarder-types';

interface SilencingProxy {
  address: string;
  /** Drops every byte in both directions from now on, keeping the sockets open. */
  silence(): void;
  close(): Promise<void>;
}

async function startSilencingProxy(target: { host: string; port: number }): Promise<SilencingProxy> {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.on('data', (chunk) => { if (!silent) upstream.write(chunk); });
    upstream.on('data', (chunk) => { if (!silent) client.write(chunk); });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    silence: () => { silent = true; },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

const room: ForwardedRoom = { game: 'g', schedulerName: 's', roomId: 'r', host: 'h', ports: [] };

describe('EventForwarder keepalive', () => {
  let receiver: ForwardReceiver;
  let proxy: SilencingProxy;
  let forwarder: EventForwarder;

  beforeEach(async () => {
    receiver = await startForwardReceiver();
    proxy = await startSilencingProxy({ host: '127.0.0.1', port: receiver.port });
    forwarder = new EventForwarder({ logger: silentLogger(), metrics: new MetricsRegistry(), keepaliveTimeMs: 1000, keepaliveTimeoutMs: 1000 });
  });

  afterEach(async () => {
    forwarder.close();
    await proxy.close();
    await receiver.stop();
  });

  it('drops a silent connection and fails the call with UNAVAILABLE long before its deadline', async () => {
    const config = { name: 'behind-proxy', enable: true, address: proxy.address, options: { timeout: 60_000 } };
    expect((await forwarder.forwardPing([config], room, 'ready')).ok).toBe(true);

    proxy.silence();
    const outcome = await forwarder.forwardPing([config], room, 'occupied');

    // Without keepalive this call would hang for its whole 60 s deadline and end DEADLINE_EXCEEDED
    // (and this test's 30 s timeout would fail it first).
    expect(outcome.ok).toBe(false);
    expect(outcome.results[0]).toMatchObject({ forwarder: 'behind-proxy', ok: false, code: grpc.status.UNAVAILABLE });
    expect(receiver.requestsOf('SendRoomResync').map((m) => m.statusType)).toEqual(['ready']);
  }, 30_000);
});
