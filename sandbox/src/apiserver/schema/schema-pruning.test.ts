import { compileSchema } from './compiled-schema';

const schema = compileSchema({
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        labels: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } },
        anything: { type: 'object', additionalProperties: true },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } },
        },
        raw: { 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
});

describe('structural pruning', () => {
  it('removes unknown fields and reports their paths', () => {
    const obj: Record<string, unknown> = {
      apiVersion: 'g/v1',
      kind: 'K',
      metadata: { name: 'a', labels: { x: 'y' }, bogus: 1 },
      spec: { replicas: 1, extra: true, items: [{ name: 'i', junk: 1 }, { name: 'j' }] },
      status: { something: 1 },
      topLevel: 'x',
    };
    const pruned = schema.prune(obj);
    expect(pruned.sort()).toEqual(['.metadata.bogus', '.spec.extra', '.spec.items[0].junk', '.status', '.topLevel']);
    expect(obj).toEqual({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', labels: { x: 'y' } }, spec: { replicas: 1, items: [{ name: 'i' }, { name: 'j' }] } });
  });

  it('keeps apiVersion/kind/metadata at the root even when the schema omits them', () => {
    const bare = compileSchema({ type: 'object', properties: { spec: { type: 'object' } } });
    const obj: Record<string, unknown> = { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', uid: 'u', managedFields: [] }, spec: {} };
    expect(bare.prune(obj)).toEqual([]);
    expect(obj).toEqual({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', uid: 'u', managedFields: [] }, spec: {} });
  });

  it('prunes inside additionalProperties schemas and keeps additionalProperties: true', () => {
    const obj: Record<string, unknown> = { spec: { labels: { a: { v: 'x', w: 'y' } }, anything: { q: { r: 1 } } } };
    expect(schema.prune(obj)).toEqual(['.spec.labels.a.w']);
    expect(obj).toEqual({ spec: { labels: { a: { v: 'x' } }, anything: { q: { r: 1 } } } });
  });

  it('preserve-unknown-fields keeps unknown fields but still prunes known properties', () => {
    const obj: Record<string, unknown> = { spec: { free: { whatever: { deep: 1 }, known: { a: 'x', b: 'pruned' } }, raw: { x: [1, { y: 2 }] } } };
    expect(schema.prune(obj)).toEqual(['.spec.free.known.b']);
    expect(obj).toEqual({ spec: { free: { whatever: { deep: 1 }, known: { a: 'x' } }, raw: { x: [1, { y: 2 }] } } });
  });

  it('embedded resources keep apiVersion/kind/metadata and prune metadata to ObjectMeta', () => {
    const obj: Record<string, unknown> = {
      spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' }, nope: 1 }, spec: { image: 'i', other: 2 }, status: {} } },
    };
    expect(schema.prune(obj).sort()).toEqual(['.spec.template.metadata.nope', '.spec.template.spec.other', '.spec.template.status']);
    expect(obj).toEqual({ spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' } }, spec: { image: 'i' } } } });
  });

  it('leaves values of the wrong type for validation to report', () => {
    const obj: Record<string, unknown> = { spec: { items: 'nope', replicas: { a: 1 } } };
    expect(schema.prune(obj)).toEqual(['.spec.replicas.a']);
  });
});
