/**
 * Child process: an unauthenticated ping flood, so the sender's own memory is never counted as
 * the gateway's. Call `flood(FloodRun)` -> FloodResult. Each request is
 * `PUT /scheduler/<random>/rooms/<random>/ping` with fresh random names of `nameChars` characters
 * each, and no token or a wrong one (alternately), over `connections` keep-alive connections.
 */
import * as http from 'node:http';
import { randomBytes } from 'node:crypto';
import { serveParent } from '../support/child-rpc';

export interface FloodRun {
  url: string;
  requests: number;
  connections: number;
  /** Length of each random scheduler and room name. */
  nameChars: number;
}

export interface FloodResult {
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  errors: number;
  durationMs: number;
}

function randomName(chars: number): string {
  return randomBytes(Math.ceil(chars / 2)).toString('hex').slice(0, chars);
}

async function flood(arg: unknown): Promise<FloodResult> {
  const run = arg as FloodRun;
  const agent = new http.Agent({ keepAlive: true, maxSockets: run.connections });
  const statuses: Record<string, number> = {};
  let errors = 0;
  let next = 0;
  const body = JSON.stringify({ status: 'terminated', timestamp: 1 });
  const one = (i: number) => new Promise<void>((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    if (i % 2 === 1) headers.authorization = `Bearer ${randomName(43)}`;
    const path = `/scheduler/${randomName(run.nameChars)}/rooms/${randomName(run.nameChars)}/ping`;
    const req = http.request(`${run.url}${path}`, { method: 'PUT', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        const key = String(res.statusCode ?? 0);
        statuses[key] = (statuses[key] ?? 0) + 1;
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(body);
  });
  const began = Date.now();
  await Promise.all(Array.from({ length: run.connections }, async () => {
    while (next < run.requests) await one(next++);
  }));
  agent.destroy();
  return { statuses, errors, durationMs: Date.now() - began };
}

serveParent<null>(() => Promise.resolve({ payload: null, handlers: { flood }, stop: () => Promise.resolve() }));
