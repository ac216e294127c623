/**
 * Child process: the load generator (autocannon), so it never shares an event loop with the
 * server it measures. Call `run(LoadRun)` -> LoadResult. Each request pings the next room of
 * `targets` (round robin over all connections), with that room's bearer token.
 */
import autocannon from 'autocannon';
import { serveParent } from '../support/child-rpc';

export interface PingTarget { scheduler: string; roomId: string; token?: string }

export interface LoadRun {
  url: string;
  targets: PingTarget[];
  connections: number;
  pipelining: number;
  durationSec: number;
}

export interface LoadResult {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  total: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses whose body was not {"success":true}. */
  mismatches: number;
}

function run(arg: unknown): Promise<LoadResult> {
  const load = arg as LoadRun;
  const prepared = load.targets.map((t) => ({
    path: `/scheduler/${encodeURIComponent(t.scheduler)}/rooms/${encodeURIComponent(t.roomId)}/ping`,
    headers: { 'content-type': 'application/json', ...(t.token ? { authorization: `Bearer ${t.token}` } : {}) },
  }));
  let next = 0;
  let mismatches = 0;
  const body = JSON.stringify({ status: 'ready', timestamp: Math.floor(Date.now() / 1000) });
  return new Promise<LoadResult>((resolve, reject) => {
    autocannon({
      url: load.url,
      connections: load.connections,
      pipelining: load.pipelining,
      duration: load.durationSec,
      requests: [{
        method: 'PUT',
        setupRequest: (req) => {
          const t = prepared[next++ % prepared.length]!;
          return { ...req, method: 'PUT', path: t.path, headers: t.headers, body };
        },
        onResponse: (_status, responseBody) => {
          if (responseBody !== '{"success":true}') mismatches++;
        },
      }],
    }, (err, result) => {
      if (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      resolve({
        requestsPerSec: result.requests.average,
        latencyP50Ms: result.latency.p50,
        latencyP99Ms: result.latency.p99,
        total: result.requests.total,
        ok2xx: result['2xx'],
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        mismatches,
      });
    });
  });
}

serveParent<null>(() => Promise.resolve({ payload: null, handlers: { run }, stop: () => Promise.resolve() }));
