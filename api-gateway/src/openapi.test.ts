import Ajv from 'ajv';
import type { Express } from 'express';
import request from 'supertest';
import { healthzAnswer, readyzAnswer } from '../../common/src/health-answers';
import { silentLogger } from '../../common/src/logger';
import { Liveness } from '../../common/src/runtime/liveness';
import { buildOpenApiDocument } from './openapi';
import { openApiPath } from './routes/route-spec';
import { AUTH, buildTestApps } from './testing/fixtures';

interface RouterLike { stack?: LayerLike[] }
interface LayerLike { route?: { path: string; methods: Record<string, boolean> }; handle?: RouterLike }

/** Every (METHOD path) Express has registered, walking nested routers; `all` (the 501 fallback) excluded. */
function registeredRoutes(app: Express): Set<string> {
  const out = new Set<string>();
  const walk = (router: RouterLike | undefined) => {
    for (const layer of router?.stack ?? []) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') out.add(`${method.toUpperCase()} ${openApiPath(layer.route.path)}`);
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle);
      }
    }
  };
  walk((app as unknown as { router: RouterLike }).router);
  return out;
}

function documentedRoutes(doc: Record<string, unknown>): Set<string> {
  const out = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(ops)) out.add(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

type Schema = Record<string, unknown>;

/** A documented schema with its $refs resolved and every object closed: a key it does not name fails. */
function closed(schema: Schema, components: Record<string, Schema>): Schema {
  const ref = schema.$ref;
  if (typeof ref === 'string') return closed(components[ref.replace('#/components/schemas/', '')] ?? {}, components);
  const out: Schema = { ...schema };
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, Schema>).map(([k, v]) => [k, closed(v, components)]));
    out.additionalProperties = false;
  }
  if (schema.items) out.items = closed(schema.items as Schema, components);
  return out;
}

describe('OpenAPI document', () => {
  const t = buildTestApps();
  const doc = buildOpenApiDocument();

  it('lists exactly the routes both apps register', () => {
    const registered = new Set([...registeredRoutes(t.management), ...registeredRoutes(t.rooms)]);
    expect(registered.size).toBeGreaterThan(20);
    expect([...registered].sort()).toEqual([...documentedRoutes(doc)].sort());
  });

  it('documents the whole surface, including the routes the spec names', () => {
    const documented = documentedRoutes(doc);
    for (const route of ['POST /schedulers', 'POST /schedulers/{schedulerName}', 'PUT /schedulers/{schedulerName}', 'POST /schedulers/{schedulerName}/add-rooms', 'POST /schedulers/{schedulerName}/remove-rooms', 'GET /schedulers/info', 'PUT /scheduler/{schedulerName}/rooms/{roomId}/ping']) {
      expect(documented).toContain(route);
    }
  });

  it('is a well-formed OpenAPI 3 document whose references resolve', () => {
    expect(doc.openapi).toBe('3.0.3');
    const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(schemas).toHaveProperty(ref.slice(22, -1));
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes the JSON /healthz and /readyz answer, per check, with 200 and with 503, and says so in their summaries', () => {
    const components = (doc.components as { schemas: Record<string, Schema> }).schemas;
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
    const documented = (path: string, status: number) => {
      const responses = (doc.paths as Record<string, { get: { responses: Record<number, { content: Record<string, { schema: Schema }> }> } }>)[path]?.get.responses;
      return ajv.compile(closed(responses?.[status]?.content['application/json']?.schema ?? {}, components));
    };
    const failing = { name: 'cache requests', timeoutMs: 1000, meaning: 'a cache request never ends', idle: 'none waits', oldest: () => ({ since: 0, what: 'a list of schedulers since 1970' }) };
    const liveness = (ok: boolean) => new Liveness(ok ? [] : [failing], { logger: silentLogger(), now: () => 10_000 });
    const answers = [
      ['/healthz', healthzAnswer(liveness(true))], ['/healthz', healthzAnswer(liveness(false))],
      ['/readyz', readyzAnswer([{ name: 'caches', notReadyReason: () => undefined }])],
      ['/readyz', readyzAnswer([{ name: 'api server', notReadyReason: () => 'no answer', gates: false, whyStillReady: 'caches serve' }])],
      ['/readyz', readyzAnswer([{ name: 'caches', notReadyReason: () => 'not synced yet' }])],
    ] as const;
    expect(answers.map(([, a]) => a.statusCode)).toEqual([200, 503, 200, 200, 503]);
    for (const [path, answer] of answers) {
      const validate = documented(path, answer.statusCode);
      expect([path, answer.statusCode, validate(answer.body), validate.errors ?? []]).toEqual([path, answer.statusCode, true, []]);
    }
    const summaries = (doc.paths as Record<string, { get: { summary: string } }>);
    expect(summaries['/healthz']?.get.summary).toMatch(/JSON with one entry per liveness check.*503 \{status: "unhealthy".*naming it in failing/);
    expect(summaries['/readyz']?.get.summary).toMatch(/JSON with one entry per check.*503 \{status: "not ready", reason, checks\}/);
  });

  it('is what /openapi.json serves', async () => {
    const res = await request(t.management).get('/openapi.json').set('Authorization', AUTH);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});
