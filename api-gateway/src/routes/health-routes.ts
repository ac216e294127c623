/** Health, readiness, metrics and the OpenAPI document: the same on both listeners. */
import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from '../../../common/src/metrics';
import { healthzAnswer, readyzAnswer, type ReadinessCheck } from '../../../common/src/health-answers';
import type { Liveness } from '../../../common/src/runtime/liveness';
import type { RouteHandler, RouteSpec } from './route-spec';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const HEALTH_ROUTES = [
  {
    id: 'healthz', method: 'get', path: '/healthz', tag: 'health', auth: 'none',
    summary: 'Liveness, as JSON with one entry per liveness check (the gateway\'s: cache requests that must end), each with whether it passes, what it sees and its timeout: 200 {status: "ok", checks} while the process is not wedged; 503 {status: "unhealthy", failing, checks, whatToDo} when a check fails, naming it in failing with since when and what it means',
    response: ref('HealthzAnswer'), errors: [503],
    errorBodies: { 503: { description: 'A liveness check fails (a cache request that will never be answered): failing names it, since when and what it means; whatToDo says that the kubelet restarts the container and what to report if it happens again', schema: ref('HealthzAnswer') } },
  },
  {
    id: 'livez', method: 'get', path: '/livez', tag: 'health', auth: 'none',
    summary: 'The same as /healthz (the path Kubernetes components use for liveness): 200 {status: "ok", checks} while the process is not wedged; 503 {status: "unhealthy", failing, checks, whatToDo} when a liveness check fails',
    response: ref('HealthzAnswer'), errors: [503],
    errorBodies: { 503: { description: 'A liveness check fails, as on /healthz: failing names it, since when and what it means; whatToDo says what to do', schema: ref('HealthzAnswer') } },
  },
  {
    id: 'readyz', method: 'get', path: '/readyz', tag: 'health', auth: 'none',
    summary: 'Readiness, as JSON with one entry per check (shutdown, api access, caches, api server), each ready or not with why and what to do: 200 {status: "ready", checks} when caches are synced and the API server accepts our credentials and lets the caches list and watch (an API server that does not answer is shown as not ready with stillReadyBecause, and the gateway stays ready); 503 {status: "not ready", reason, checks} otherwise. Never depends on leadership',
    response: ref('ReadyzAnswer'), errors: [503],
    errorBodies: { 503: { description: 'Not ready: the checks that fail are marked ready: false in checks, each with its reason; reason joins those reasons', schema: ref('ReadyzAnswer') } },
  },
  { id: 'metrics', method: 'get', path: '/metrics', tag: 'health', auth: 'none', summary: 'Prometheus metrics', response: { type: 'string' }, responseContentType: PROMETHEUS_CONTENT_TYPE, errors: [] },
] as const satisfies readonly RouteSpec[];

export const OPENAPI_ROUTE = { id: 'openapi', method: 'get', path: '/openapi.json', tag: 'health', auth: 'basic', summary: 'This document', response: { type: 'object' }, errors: [401] } as const satisfies RouteSpec;

export type HealthRouteId = (typeof HEALTH_ROUTES)[number]['id'];

/** What `/readyz` checks (`health-answers.ts`, the same as the operator's). */
export type Readiness = readonly ReadinessCheck[];

export function healthHandlers(metrics: MetricsRegistry, readiness: Readiness, liveness?: Liveness): Record<HealthRouteId, RouteHandler> {
  const live: RouteHandler = (_req, res) => {
    const answer = healthzAnswer(liveness);
    if (answer.statusCode === 200) return answer.body;
    res.status(answer.statusCode).json(answer.body);
    return undefined;
  };
  return {
    healthz: live,
    livez: live,
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
