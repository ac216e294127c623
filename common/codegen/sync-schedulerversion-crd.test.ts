import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { main, syncedSchedulerVersionCrd, withoutValueChecks } from './sync-schedulerversion-crd';

const crds = resolve(__dirname, '../../crds');
const schedulers = readFileSync(resolve(crds, 'roomkeeper.io_schedulers.yaml'), 'utf8');
const versions = readFileSync(resolve(crds, 'roomkeeper.io_schedulerversions.yaml'), 'utf8');

describe('sync-schedulerversion-crd', () => {
  it('the committed SchedulerVersion CRD is in sync (what --check enforces)', () => {
    expect(syncedSchedulerVersionCrd(schedulers, versions)).toBe(versions);
    expect(main(['--check'])).toBe(0);
  });

  it('carries a change of the Scheduler spec schema into the definition, keeping comments', () => {
    const edited = schedulers.replace("maxLength: 1024\n                            pattern: '^[^", "maxLength: 2048\n                            pattern: '^[^");
    expect(edited).not.toBe(schedulers);
    const synced = syncedSchedulerVersionCrd(edited, versions);
    expect(synced).not.toBe(versions);
    expect(synced).toContain('maxLength: 2048');
    expect(synced.startsWith('---\n# Roomkeeper SchedulerVersion')).toBe(true);
  });

  it('leaves the value checks out of the definition, at every depth, and keeps its shape and size bounds', () => {
    const definition = (parse(versions) as { spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: { definition: object } } } } } }> } })
      .spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties.definition;
    const text = JSON.stringify(definition);
    for (const check of ['"pattern"', '"x-kubernetes-validations"', '"minimum"', '"maximum"', '"minLength"', '"minItems"']) expect(text).not.toContain(check);
    for (const kept of ['"maxLength"', '"maxItems"', '"required"', '"enum"', '"forwarders"', '"x-kubernetes-int-or-string"']) expect(text).toContain(kept);
  });

  it('keeps a field named like a check, and the values of defaults and enums', () => {
    expect(withoutValueChecks({
      type: 'object', pattern: 'x', 'x-kubernetes-validations': [{ rule: 'true' }],
      properties: { pattern: { type: 'string', pattern: '^a$', maxLength: 3 }, minimum: { type: 'integer', minimum: 1, default: 2 } },
      items: { type: 'string', minLength: 1 },
    })).toEqual({
      type: 'object',
      properties: { pattern: { type: 'string', maxLength: 3 }, minimum: { type: 'integer', default: 2 } },
      items: { type: 'string' },
    });
  });
});
