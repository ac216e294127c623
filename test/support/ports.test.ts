import * as fs from 'node:fs';
import * as net from 'node:net';
import { freePorts } from './ports';

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => { resolve(srv); });
  });
}

describe('freePorts', () => {
  it('gives different loopback ports outside the kernel ephemeral range that servers can then bind', async () => {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await freePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) {
      expect(port < (low ?? 0) || port > (high ?? 65535)).toBe(true);
    }
    const servers = await Promise.all(ports.map(listen));
    await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  });
});
