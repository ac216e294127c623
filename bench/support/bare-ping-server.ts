/**
 * The yardstick for the gateway's ping path: a bare `node:http` server answering the same route
 * (`PUT /scheduler/:s/rooms/:id/ping`, JSON body) with 200 `{"success":true}`, doing only what
 * any server must: match the route, read and parse the body.
 */
import * as http from 'node:http';
import { listenLocally, type LocalServer } from '../../test/support/local-server';

const ROUTE = /^\/scheduler\/([^/]+)\/rooms\/([^/]+)\/ping$/;

export type BareServer = LocalServer;

export async function startBarePingServer(): Promise<BareServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let ok = req.method === 'PUT' && ROUTE.test(req.url ?? '');
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status?: unknown };
        ok = ok && typeof body.status === 'string';
      } catch {
        ok = false;
      }
      const text = ok ? '{"success":true}' : '{"success":false}';
      res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 65_000;
  return listenLocally(server);
}
