/**
 * Per-request context: a request id, a child logger `{requestId}`, an access log line and the
 * HTTP metrics (by route pattern, never by raw path, so label cardinality stays bounded).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { Logger } from '../../../common/src/logger';
import type { MetricsRegistry } from '../../../common/src/metrics';

export interface RequestContextOptions {
  logger: Logger;
  metrics: MetricsRegistry;
  /** Which API this is, in metric labels (`management`, `rooms`). */
  api: string;
  /** Level of the access log line; the rooms API logs at debug to keep the ping path quiet. */
  accessLogLevel: 'info' | 'debug';
  /**
   * Routes machines poll (kubelet probes, Prometheus scrapes): their answers log at debug, so two
   * replicas do not write a line every few seconds each at info; a failure of ours still warns.
   */
  polledRoutes?: ReadonlySet<string>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The client's `X-Request-Id` when it is one we can echo and log, else a new one. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The request's child logger `{requestId}` (made on first use: the ping path rarely logs). */
export function requestLogger(res: Response, fallback: Logger): Logger {
  const make = res.locals.logger as (() => Logger) | undefined;
  return make ? make() : fallback;
}

/** One answered request, as the metrics and the access log see it. */
export interface AnsweredRequest {
  route: string;
  method: string;
  status: number;
  seconds: number;
  /** The request's child logger `{requestId}`. */
  logger: () => Logger;
  /** What the request was about, for its log line: `scheduler`, `room`, `operation` (the one named, or the one it enqueued). */
  about?: Record<string, string>;
}

/** Path parameters named in a request's log line, under the names the operator's lines use. */
const ABOUT: Readonly<Record<string, string>> = { schedulerName: 'scheduler', roomId: 'room', operationId: 'operation' };
/** A parameter longer than any name can be (a fuzzed path) is cut in the log line. */
const ABOUT_MAX = 253;

/** What an answered request was about: its path parameters, and the operation it enqueued. */
function aboutOf(params: unknown, enqueued: unknown): Record<string, string> {
  const about: Record<string, string> = {};
  if (typeof params === 'object' && params !== null) {
    for (const [param, field] of Object.entries(ABOUT)) {
      const value = (params as Record<string, unknown>)[param];
      if (typeof value === 'string') about[field] = value.slice(0, ABOUT_MAX);
    }
  }
  if (typeof enqueued === 'string') about.operation = enqueued;
  return about;
}

/** Counts an answered request in the HTTP metrics and writes its access log line. */
export function requestRecorder(options: RequestContextOptions): (answered: AnsweredRequest) => void {
  const requests = options.metrics.counter('roomkeeper_http_requests_total', 'HTTP requests answered, by api, route, method and status.');
  const duration = options.metrics.histogram('roomkeeper_http_request_duration_seconds', 'HTTP request duration by api and route.');
  return ({ route, method, status, seconds, logger, about }) => {
    requests.inc({ api: options.api, route, method, status });
    duration.observe(seconds, { api: options.api, route });
    // A failure of ours is a warning; a 501 is the client's (a method the path does not take).
    const level = status >= 500 && status !== 501 ? 'warn' : options.polledRoutes?.has(route) ? 'debug' : options.accessLogLevel;
    // The route pattern, status and the names in the path: never headers (Authorization) or bodies.
    if (options.logger.isLevelEnabled(level)) {
      logger().log(level, 'request', { method, route, status, durationMs: Math.round(seconds * 1000), ...about });
    }
  };
}

export function requestContext(options: RequestContextOptions): RequestHandler {
  const record = requestRecorder(options);
  return (req, res, next) => {
    const requestId = requestIdOf(req.headers);
    res.setHeader('X-Request-Id', requestId);
    let child: Logger | undefined;
    const logger = () => (child ??= options.logger.child({ requestId }));
    res.locals.logger = logger;
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      record({
        route: typeof route === 'string' ? route : 'unmatched', method: req.method, status: res.statusCode, seconds: Number(process.hrtime.bigint() - start) / 1e9, logger,
        about: aboutOf(res.locals.params ?? req.params, res.locals.operationId),
      });
    });
    next();
  };
}
