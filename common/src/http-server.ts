/**
 * HTTP servers (the gateway's two APIs, every process's operations port) with explicit limits
 * instead of Node's defaults: how long a client
 * may take to send its headers and its whole request, how long an idle keep-alive connection
 * stays open, and how many connections a listener holds at once (more are closed as they
 * arrive). A client that sends slowly, or opens connections without end, ties up a bounded
 * amount of the process.
 */
import * as http from 'node:http';

export interface HttpServerLimits {
  /** Time to receive the request headers (slow-header clients are answered 408 and closed). */
  headersTimeoutMs: number;
  /** Time to receive the whole request, headers and body. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; 0 for no limit. */
  maxConnections: number;
}

/** Management API: bodies up to ROOMKEEPER_MAX_BODY_BYTES (1 MiB) may come over slow links. */
export const MANAGEMENT_TIMEOUTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000 } as const;
/** Rooms API: small bodies, sent every few seconds by each room over a connection it keeps open. */
export const ROOMS_TIMEOUTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 65_000 } as const;

/**
 * Operations port (health, readiness, metrics): bodiless requests from probes and scrapers. Its
 * connection cap only bounds sockets: set high, so that a flood of idle connections (each closed
 * within the header timeout) cannot shut out the kubelet's probes for long.
 */
export const OPS_LIMITS: HttpServerLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000 };

export function createHttpServer(listener: http.RequestListener, limits: HttpServerLimits): http.Server {
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // How often those two are checked (Node's default is 30 s, coarser than the limits).
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))),
  }, listener);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  return server;
}
