/** Health, readiness, metrics and the OpenAPI document: the same on both listeners. */
import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from '../../../common/src/metrics';
import { healthzAnswer, readyzAnswer, type ReadinessCheck } from '../../../common/src/health-answers';
import type { Liveness } from '../../../common/src/runtime/liveness';
import type { RouteHandler, RouteSpec } from './route-spec';

export const HEALTH_ROUTES = [
  { id: 'healthz', method: 'get', path: '/healthz', tag: 'health', auth: 'none', summary: 'The process is not wedged: 503 names the liveness check that fails (a cache request that will never be answered), since when, and what it means', response: { type: 'object' }, errors: [503] },
  { id: 'readyz', method: 'get', path: '/readyz', tag: 'health', auth: 'none', summary: 'Caches are synced and the API server accepts our credentials and lets the caches list and watch (never depends on leadership)', response: { type: 'object' }, errors: [503] },
  { id: 'metrics', method: 'get', path: '/metrics', tag: 'health', auth: 'none', summary: 'Prometheus metrics', response: { type: 'string' }, responseContentType: PROMETHEUS_CONTENT_TYPE, errors: [] },
] as const satisfies readonly RouteSpec[];

export const OPENAPI_ROUTE = { id: 'openapi', method: 'get', path: '/openapi.json', tag: 'health', auth: 'basic', summary: 'This document', response: { type: 'object' }, errors: [401] } as const satisfies RouteSpec;

export type HealthRouteId = (typeof HEALTH_ROUTES)[number]['id'];

/** What `/readyz` checks (`health-answers.ts`, the same as the operator's). */
export type Readiness = readonly ReadinessCheck[];

export function healthHandlers(metrics: MetricsRegistry, readiness: Readiness, liveness?: Liveness): Record<HealthRouteId, RouteHandler> {
  return {
    healthz: (_req, res) => {
      const answer = healthzAnswer(liveness);
      if (answer.statusCode === 200) return answer.body;
      res.status(answer.statusCode).json(answer.body);
      return undefined;
    },
    readyz: (_req, res) => {
      const answer = readyzAnswer(readiness);
      if (answer.statusCode === 200) return answer.body;
      res.status(answer.statusCode).json(answer.body);
      return undefined;
    },
    metrics: async (_req, res) => {
      const text = await metrics.render();
      res.setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
      res.status(200).send(text);
      return undefined;
    },
  };
}
