/**
 * An HTTP server of a test or a benchmark on a free loopback port: its URL, and a close that also
 * ends its kept-alive connections (a plain `server.close()` waits for them).
 */
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer { url: string; close(): Promise<void> }

export async function listenLocally(server: http.Server): Promise<LocalServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => { resolve(); }));
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => { resolve(); });
      server.closeAllConnections();
    }),
  };
}
