/**
 * A test HTTP server that records room pings (method, path, body, authorization) and answers
 * `{"success":true}`, or a chosen status code.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedPing {
  method: string;
  path: string;
  authorization?: string;
  body: unknown;
  atMs: number;
}

export interface PingRecorder {
  url: string;
  pings: RecordedPing[];
  /** Pings to one room's path, oldest first. */
  pingsFor(schedulerName: string, roomId: string): RecordedPing[];
  respondWith(statusCode: number): void;
  close(): Promise<void>;
}

export async function startPingRecorder(): Promise<PingRecorder> {
  const pings: RecordedPing[] = [];
  let statusCode = 200;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      pings.push({
        method: req.method ?? '', path: req.url ?? '', body, atMs: Date.now(),
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      });
      res.writeHead(statusCode, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: statusCode < 300 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pings,
    pingsFor: (s, r) => pings.filter((p) => p.path === `/scheduler/${encodeURIComponent(s)}/rooms/${encodeURIComponent(r)}/ping`),
    respondWith: (code) => { statusCode = code; },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
