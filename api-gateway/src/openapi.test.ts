import type { Express } from 'express';
import request from 'supertest';
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

  it('is what /openapi.json serves', async () => {
    const res = await request(t.management).get('/openapi.json').set('Authorization', AUTH);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});
