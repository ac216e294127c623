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
  /** Answers the next pings of `status` (one each, in order) with these bodies and 200, then as usual. */
  answerNext(status: string, ...bodies: unknown[]): void;
  close(): Promise<void>;
}

export async function startPingRecorder(): Promise<PingRecorder> {
  const pings: RecordedPing[] = [];
  let statusCode = 200;
  const nextBodies = new Map<string, unknown[]>();
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
      const status = typeof body === 'object' && body !== null ? (body as { status?: unknown }).status : undefined;
      const next = typeof status === 'string' ? nextBodies.get(status)?.shift() : undefined;
      res.writeHead(next === undefined ? statusCode : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(next ?? { success: statusCode < 300 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pings,
    pingsFor: (s, r) => pings.filter((p) => p.path === `/scheduler/${encodeURIComponent(s)}/rooms/${encodeURIComponent(r)}/ping`),
    respondWith: (code) => { statusCode = code; },
    answerNext: (status, ...bodies) => { nextBodies.set(status, [...(nextBodies.get(status) ?? []), ...bodies]); },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
