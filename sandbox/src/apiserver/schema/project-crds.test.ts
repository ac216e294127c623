import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { compileSchema } from './compiled-schema';
import { validateCrdSchema } from './crd-validation';

const CRD_DIR = join(__dirname, '..', '..', '..', '..', 'crds');
const files = readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'));

/** The engine must accept every CRD the project ships, and compile every CEL rule in it. */
describe('the project CRDs in crds/', () => {
  it('exist', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s passes CRD validation and its schemas compile', (file) => {
    const crd = parse(readFileSync(join(CRD_DIR, file), 'utf8')) as { spec: { group: string; names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: unknown } }[] } };
    expect(validateCrdSchema(crd)).toEqual([]);
    for (const v of crd.spec.versions) {
      const schema = compileSchema(v.schema.openAPIV3Schema);
      const obj: Record<string, unknown> = { apiVersion: `${crd.spec.group}/${v.name}`, kind: crd.spec.names.kind, metadata: { name: 'x', namespace: 'default' }, spec: {} };
      schema.prune(obj);
      schema.applyDefaults(obj);
      const causes = schema.validate(obj);
      expect(causes.filter((c) => /internal error|rule compile error/.test(c.message))).toEqual([]);
    }
  });
});
