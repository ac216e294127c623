import { compileSchema } from './compiled-schema';
import { evaluateJsonPath } from './json-path';
import { validateCrdSchema } from './crd-validation';

/** Small deterministic PRNG (mulberry32) so the fuzz cases are the same on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomJson(r: () => number, depth: number): unknown {
  const pick = Math.floor(r() * (depth > 3 ? 6 : 8));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return Math.floor(r() * 200) - 100;
    case 3:
      return r() * 10;
    case 4:
      return ['', 'a', 'room-1', '25%', '2024-01-02T03:04:05Z', 'x'.repeat(Math.floor(r() * 40))][Math.floor(r() * 6)];
    case 5:
      return ['spec', 'replicas', 'name', 'items'][Math.floor(r() * 4)];
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomJson(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < Math.floor(r() * 4); i++) o[['spec', 'replicas', 'name', 'items', 'metadata', 'type', 'x'][Math.floor(r() * 7)] ?? 'k'] = randomJson(r, depth + 1);
      return o;
    }
  }
}

const RULES = ['self.replicas > 0', 'has(self.name) && self.name.startsWith("r")', 'self.items.all(i, i > 0)', 'self == oldSelf', 'size(self) < 3', 'self.x.y[0]', '(('];

function randomSchema(r: () => number, depth: number): Record<string, unknown> {
  const types = ['object', 'array', 'string', 'integer', 'number', 'boolean'];
  const type = depth > 3 ? types[2 + Math.floor(r() * 4)] : types[Math.floor(r() * types.length)];
  const s: Record<string, unknown> = { type };
  if (r() < 0.2) s.nullable = true;
  if (r() < 0.2) s.default = randomJson(r, 3);
  if (r() < 0.3) s['x-kubernetes-validations'] = [{ rule: RULES[Math.floor(r() * RULES.length)], messageExpression: r() < 0.5 ? 'self.name' : undefined }];
  if (type === 'object') {
    if (r() < 0.3) s.additionalProperties = randomSchema(r, depth + 1);
    else s.properties = { spec: randomSchema(r, depth + 1), replicas: randomSchema(r, depth + 1), name: randomSchema(r, depth + 1), items: randomSchema(r, depth + 1) };
    if (r() < 0.3) s.required = ['name'];
    if (r() < 0.2) s['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (type === 'array') {
    s.items = randomSchema(r, depth + 1);
    if (r() < 0.3) s['x-kubernetes-list-type'] = r() < 0.5 ? 'set' : 'map';
    if (r() < 0.3) s['x-kubernetes-list-map-keys'] = ['name'];
    if (r() < 0.3) s.maxItems = 2;
  } else if (type === 'string') {
    if (r() < 0.3) s.pattern = ['^[a-z]+$', '(', '\\d'][Math.floor(r() * 3)];
    if (r() < 0.3) s.format = ['date-time', 'byte', 'int32', 'uuid'][Math.floor(r() * 4)];
    if (r() < 0.3) s.enum = ['a', 'b'];
  } else if (r() < 0.3) {
    s.minimum = 0;
    s.maximum = 10;
  }
  return s;
}

describe('robustness against garbage', () => {
  it('compile/prune/default/validate never throw on random schemas and random objects', () => {
    const r = rng(42);
    for (let i = 0; i < 400; i++) {
      const schemaJson = r() < 0.1 ? randomJson(r, 0) : randomSchema(r, 0);
      const schema = compileSchema(schemaJson);
      for (let j = 0; j < 5; j++) {
        const obj = randomJson(r, 0) as Record<string, unknown>;
        const old = randomJson(r, 0) as Record<string, unknown>;
        expect(() => {
          schema.prune(obj);
          schema.applyDefaults(obj);
          const causes = schema.validate(obj, r() < 0.5 ? old : undefined);
          for (const c of causes) {
            if (typeof c.reason !== 'string' || typeof c.field !== 'string' || typeof c.message !== 'string') throw new Error('bad cause');
          }
          evaluateJsonPath(obj, '.spec.items[0].name');
          validateCrdSchema(obj);
        }).not.toThrow();
      }
    }
  });

  it('survives cyclic objects', () => {
    const schema = compileSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [{ rule: 'true' }] });
    const obj: Record<string, unknown> = { spec: {} };
    (obj.spec as Record<string, unknown>).self = obj;
    expect(() => schema.validate(obj)).not.toThrow();
    expect(() => schema.prune(obj)).not.toThrow();
    expect(() => schema.applyDefaults(obj)).not.toThrow();
  });

  it('reports rule errors instead of throwing for runaway comprehensions', () => {
    const schema = compileSchema({
      type: 'object',
      properties: { spec: { type: 'object', properties: { items: { type: 'array', items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.items.all(a, self.items.all(b, a != b || a == b))' }] } },
    });
    expect(schema.validate({ spec: { items: Array.from({ length: 300 }, (_, i) => i) } })).toEqual([]);
  });
});
