/**
 * The operations endpoints every process serves: `/healthz` (the process is not wedged: its
 * liveness checks pass), `/readyz` (it can do its job; never tied to leadership), both answered as
 * `health-answers.ts` says, the same as the gateway's, and `/metrics` (Prometheus).
 * Plus graceful shutdown on SIGTERM/SIGINT for whatever a process registers.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { healthzAnswer, readyzAnswer, type HealthAnswer, type ReadinessCheck } from './health-answers';
import { createHttpServer, OPS_LIMITS, type HttpServerLimits } from './http-server';
import type { Logger } from './logger';
import { MetricsRegistry, PROMETHEUS_CONTENT_TYPE } from './metrics';
import type { Liveness } from './runtime/liveness';

export interface OpsServerOptions {
  port: number;
  host?: string;
  metrics: MetricsRegistry;
  readiness: readonly ReadinessCheck[];
  /** What `/healthz` checks (none: it answers 200 while the process answers HTTP). */
  liveness?: Liveness;
  /** Slow or idle clients' limits (default OPS_LIMITS). */
  limits?: HttpServerLimits;
}

export interface OpsServer { readonly url: string; close(): Promise<void> }

/** Answers a health/readiness/metrics request; returns false when the path is not one of them. */
function handleOpsRequest(req: http.IncomingMessage, res: http.ServerResponse, opts: Omit<OpsServerOptions, 'port' | 'host' | 'limits'>): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz' || path === '/livez') {
    answerJson(res, healthzAnswer(opts.liveness));
    return true;
  }
  if (path === '/readyz') {
    answerJson(res, readyzAnswer(opts.readiness));
    return true;
  }
  if (path === '/metrics') {
    opts.metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics could not be collected: ${String(err)}`),
    );
    return true;
  }
  return false;
}

function answerJson(res: http.ServerResponse, answer: HealthAnswer<unknown>): void {
  res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  const server = createHttpServer((req, res) => {
    // Probes and scrapers only read: any other method is refused without reading its body.
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD', connection: 'close' })
        .end(`method ${String(req.method).slice(0, 32)} is not allowed: the operations port answers GET of /healthz, /livez, /readyz and /metrics`);
      return;
    }
    if (!handleOpsRequest(req, res, opts)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }, opts.limits ?? OPS_LIMITS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** What a process says of a listen refused for a port in use: the port's role, and the setting that moves it. */
export function portInUseMessage(role: string, port: number | string, variable: string): string {
  return `${role} port ${port} is in use; set ${variable} to another port`;
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, bounded by `timeoutMs`, then exits.
 * A second signal exits at once. `doing`: what the stop is doing now, logged if it times out.
 */
export function onShutdownSignal(logger: Logger, timeoutMs: number, stop: (signal: NodeJS.Signals) => Promise<void>, doing?: () => Record<string, unknown>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn('second signal, exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('shutting down', { signal, timeoutMs });
    const timer = setTimeout(() => {
      // What the stop was still doing, so the line says what was cut off.
      logger.error('graceful shutdown timed out', { timeoutMs, ...doing?.() });
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    stop(signal).then(
      () => {
        logger.info('stopped cleanly');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error('error during shutdown', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
