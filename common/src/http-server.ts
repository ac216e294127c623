/**
 * HTTP servers (the gateway's two APIs, every process's operations port) with explicit limits
 * instead of Node's defaults: how long a client
 * may take to send its headers and its whole request, how long an idle keep-alive connection
 * stays open, and how many connections a listener holds at once (more are closed as they
 * arrive). A client that sends slowly, or opens connections without end, ties up a bounded
 * amount of the process.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { Duplex } from 'node:stream';

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

/** The soft limit on open files (file descriptors) of this process, from Linux's /proc/self/limits; undefined where it cannot be read or is unlimited. */
export function openFilesLimit(read: () => string = () => fs.readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(read())?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/**
 * The connections each of `listeners` listeners of this process may hold: `requested`, lowered
 * where the open-files limit is known so that together they leave a quarter of it (at least 1,024)
 * for what else the process opens (its connections to the Kubernetes API server, its watches,
 * files, and under `npm start` the operator's too). Past the limit, every new socket fails with
 * EMFILE, the API server's among them. `requested` 0 (no limit) stays 0: asked for, not defaulted.
 * `limit`: openFilesLimit(), as a rule.
 */
export function listenerConnections(requested: number, listeners: number, limit: number | undefined): { perListener: number; lowered?: { limit: number } } {
  if (requested === 0 || limit === undefined) return { perListener: requested };
  const budget = Math.max(0, limit - Math.max(1_024, Math.ceil(limit / 4)));
  const fits = Math.max(1, Math.floor(budget / listeners));
  return fits >= requested ? { perListener: requested } : { perListener: fits, lowered: { limit } };
}

/**
 * What a request Node's HTTP parser refused (or that did not arrive in time) is answered: the
 * status Node would send, with a JSON body in the APIs' error shape (grpc-gateway's `{code,
 * message, details}`, plus `extraBody`: the rooms API's `success: false`) that says what was
 * wrong, instead of Node's bare status line. The connection is closed, as Node does.
 */
function clientErrorAnswer(err: NodeJS.ErrnoException, limits: HttpServerLimits, extraBody: Record<string, unknown>): string {
  const [status, code, message] = err.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 3, `the request headers are larger than the limit (${http.maxHeaderSize} bytes in all); send fewer or shorter headers`]
    : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
      ? [413, 3, 'the chunk extensions of the request body are larger than the limit; send the body without chunk extensions']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 4, `the request did not arrive in time (its headers within ${limits.headersTimeoutMs / 1000} s, the whole request within ${limits.requestTimeoutMs / 1000} s); send it again`]
        : [400, 3, `malformed HTTP request (${err.code ?? 'parse error'}): the request line, a header or the body's framing (Content-Length, Transfer-Encoding) could not be read; the connection is closed`];
  const body = JSON.stringify({ ...extraBody, code, message, details: [] });
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

export interface HttpServerOptions {
  /** Merged into the JSON body of a refused request (the rooms API's `success: false`). */
  errorBody?: Record<string, unknown>;
}

export function createHttpServer(listener: http.RequestListener, limits: HttpServerLimits, options: HttpServerOptions = {}): http.Server {
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // How often those two are checked (Node's default is 30 s, coarser than the limits).
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))),
  }, listener);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's own answer: only when no answer of a request on this connection has begun.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) socket.write(clientErrorAnswer(err, limits, options.errorBody ?? {}));
    socket.destroy(err);
  });
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  return server;
}
