import * as fs from 'node:fs';
import * as net from 'node:net';
import { freePort } from './ports';

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => { resolve(srv); });
  });
}

describe('freePort', () => {
  it('gives a loopback port outside the kernel ephemeral range that a server can then bind', async () => {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port < (low ?? 0) || port > (high ?? 65535)).toBe(true);
    }
    const servers = await Promise.all([...new Set(ports)].map(listen));
    await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  });
});
