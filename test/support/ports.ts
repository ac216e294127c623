/**
 * A loopback port for a program a test starts, which binds it itself a moment later.
 *
 * The port comes from outside the kernel's ephemeral range (`ip_local_port_range`). A port there,
 * once freed, can be taken by any outgoing connection of any process (a test's pings, a client's
 * watch) before the program binds it; kube-apiserver then exits with "address already in use".
 * That happened in CI. Outside the range only another listener can take it, and each candidate is
 * bound once here to check that none holds it now.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';

const FALLBACK_EPHEMERAL: readonly [number, number] = [32768, 60999];
/** Below this, ports belong to well-known services. */
const LOWEST = 10_000;

function ephemeralRange(): readonly [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && Number.isInteger(low) && Number.isInteger(high) && low <= high) return [low, high];
  } catch {
    // Not Linux: assume the Linux default.
  }
  return FALLBACK_EPHEMERAL;
}

let cachedSpans: ReadonlyArray<readonly [number, number]> | undefined;

/** The ports outside the ephemeral range, as [first, last] spans (the range read once per process). */
function candidateSpans(): ReadonlyArray<readonly [number, number]> {
  if (cachedSpans) return cachedSpans;
  const [low, high] = ephemeralRange();
  const found: Array<readonly [number, number]> = [];
  if (low - 1 >= LOWEST) found.push([LOWEST, low - 1]);
  if (high + 1 <= 65535) found.push([high + 1, 65535]);
  cachedSpans = found;
  return found;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => { resolve(false); });
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      srv.close(() => { resolve(true); });
    });
  });
}

function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => { resolve(port); });
    });
  });
}

/** A loopback port no one listens on, outside the ephemeral range where the machine has one. */
export function freePort(): Promise<number> {
  return onePort(new Set());
}

/**
 * `count` different loopback ports no one listens on, outside the ephemeral range where the
 * machine has one, for programs started together.
 */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await onePort(ports));
  return [...ports];
}

async function onePort(taken: ReadonlySet<number>): Promise<number> {
  const spans = candidateSpans();
  const size = spans.reduce((n, [a, b]) => n + b - a + 1, 0);
  for (let tries = 0; size > 0 && tries < 50; tries += 1) {
    let pick = Math.floor(Math.random() * size);
    for (const [a, b] of spans) {
      if (pick <= b - a) {
        if (!taken.has(a + pick) && await isFree(a + pick)) return a + pick;
        break;
      }
      pick -= b - a + 1;
    }
  }
  // The whole port space is ephemeral here; a port the kernel just gave out is the best left.
  return ephemeralPort();
}
