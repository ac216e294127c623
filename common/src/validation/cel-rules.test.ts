/** Every CEL rule in crds/ has a TypeScript twin with the same location, text, message and fieldPath, and vice versa. */
import { resolve } from 'node:path';
import { readCrdFiles } from '../../codegen/crd-files';
import type { JsonSchemaProps } from '../resources/json-schema-props';
import { celEquals, celTwins, type CelScope } from './cel-rules';

interface Found {
  scope: CelScope;
  at: string;
  rule: string;
  message: string;
  fieldPath: string;
}

/** Where a schema path belongs: the SchedulerSpec scope for Scheduler `spec` and SchedulerVersion `spec.definition`. */
function scopeOf(kind: string, path: string): { scope: CelScope; at: string } {
  const specRoot = kind === 'Scheduler' ? 'spec' : kind === 'SchedulerVersion' ? 'spec.definition' : undefined;
  if (specRoot && (path === specRoot || path.startsWith(`${specRoot}.`))) return { scope: 'SchedulerSpec', at: path.slice(specRoot.length + 1) };
  return { scope: kind as CelScope, at: path };
}

function collect(kind: string, schema: JsonSchemaProps, path: string, out: Found[]): void {
  for (const r of schema['x-kubernetes-validations'] ?? []) {
    out.push({ ...scopeOf(kind, path), rule: r.rule, message: r.message ?? '', fieldPath: r.fieldPath ?? '' });
  }
  const join = (p: string, k: string): string => (p === '' ? k : `${p}.${k}`);
  for (const [k, v] of Object.entries(schema.properties ?? {})) collect(kind, v, join(path, k), out);
  if (schema.items) collect(kind, schema.items, `${path}[]`, out);
  if (typeof schema.additionalProperties === 'object') collect(kind, schema.additionalProperties, `${path}{}`, out);
}

const key = (f: Found): string => JSON.stringify([f.scope, f.at, f.rule, f.message, f.fieldPath]);

const inYaml = new Set<string>();
for (const crd of readCrdFiles(resolve(__dirname, '../../../crds'))) {
  const found: Found[] = [];
  collect(crd.kind, crd.schema, '', found);
  for (const f of found) inYaml.add(key(f));
}
const inTs = new Set<string>(
  celTwins.flatMap((t) => t.at.map((at) => key({ scope: t.scope, at, rule: t.rule, message: t.message, fieldPath: t.fieldPath ?? '' }))),
);

describe('CEL twins', () => {
  it('finds the rules of the YAML', () => {
    expect(inYaml.size).toBeGreaterThanOrEqual(15);
  });

  it.each([...inYaml].map((k) => [JSON.parse(k)[3] as string, k]))('YAML rule "%s" has a TypeScript twin', (_message, k) => {
    expect(inTs).toContain(k);
  });

  it.each([...inTs].map((k) => [JSON.parse(k)[3] as string, k]))('twin "%s" has its rule in the YAML', (_message, k) => {
    expect(inYaml).toContain(k);
  });

  it('marks exactly the rules that read oldSelf as transition rules', () => {
    for (const t of celTwins) expect(Boolean(t.transition)).toBe(t.rule.includes('oldSelf'));
  });

  it('compares like CEL ==', () => {
    expect(celEquals({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBe(true);
    expect(celEquals({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(celEquals([1, 2], [2, 1])).toBe(false);
    expect(celEquals(null, {})).toBe(false);
  });
});
