/** Structural-schema rules the API server enforces on CRDs, checked on crds/ without a cluster. */
import { resolve } from 'node:path';
import { readCrdFiles, type CrdFile } from './crd-files';
import type { JsonSchemaProps } from '../src/resources/json-schema-props';
import { withoutValueChecks } from './sync-schedulerversion-crd';

const crds = readCrdFiles(resolve(__dirname, '../../crds'));
const byKind = (kind: string): CrdFile => {
  const crd = crds.find((c) => c.kind === kind);
  if (!crd) throw new Error(`no CRD for ${kind}`);
  return crd;
};

function walk(schema: JsonSchemaProps, path: string, visit: (s: JsonSchemaProps, path: string) => void): void {
  visit(schema, path);
  for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, `${path}.${k}`, visit);
  if (schema.items) walk(schema.items, `${path}[]`, visit);
  if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${path}{}`, visit);
}

function stripDescriptions(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === 'description' ? undefined : v)));
}

describe('CRDs in crds/', () => {
  it('has the six kinds in roomkeeper.io/v1', () => {
    expect(crds.map((c) => c.kind).sort()).toEqual(['AllocationClaim', 'GameRoom', 'Operation', 'PingDigest', 'Scheduler', 'SchedulerVersion']);
    for (const c of crds) {
      expect(c.group).toBe('roomkeeper.io');
      expect(c.version).toBe('v1');
      expect(c.file).toBe(`roomkeeper.io_${c.plural}.yaml`);
      expect((c.document.metadata as { name: string }).name).toBe(`${c.plural}.roomkeeper.io`);
      expect(c.categories).toEqual(['roomkeeper']);
    }
  });

  it.each(crds.map((c) => [c.kind, c] as const))('%s has a structural schema', (_kind, crd) => {
    const problems: string[] = [];
    walk(crd.schema, '', (s, path) => {
      const special = s['x-kubernetes-int-or-string'] === true;
      if (!special && !s.type) problems.push(`${path}: no type`);
      if (s.properties && s.additionalProperties !== undefined) problems.push(`${path}: properties and additionalProperties together`);
      if (s.type === 'array' && !s.items) problems.push(`${path}: array without items`);
      for (const r of s.required ?? []) if (!s.properties?.[r]) problems.push(`${path}: required ${r} is not a property`);
      if (s.type === 'object' && !s.properties && s.additionalProperties === undefined && !s['x-kubernetes-preserve-unknown-fields'] && path !== '.metadata') {
        problems.push(`${path}: object with no properties would be pruned empty`);
      }
      if (s.default !== undefined && path.startsWith('.metadata')) problems.push(`${path}: default in metadata`);
      for (const rule of s['x-kubernetes-validations'] ?? []) if (!rule.message) problems.push(`${path}: CEL rule without message`);
    });
    expect(problems).toEqual([]);
    expect(crd.schema.type).toBe('object');
    // An AllocationClaim is created and deleted, never changed: it has no status.
    const parts = crd.kind === 'AllocationClaim' ? ['apiVersion', 'kind', 'metadata', 'spec'] : ['apiVersion', 'kind', 'metadata', 'spec', 'status'];
    expect(Object.keys(crd.schema.properties ?? {}).sort()).toEqual(parts);
  });

  it.each(crds.map((c) => [c.kind, c] as const))('%s printer columns point at fields of the schema', (_kind, crd) => {
    const version = (crd.document.spec as { versions: Array<Record<string, unknown>> }).versions[0] as Record<string, unknown>;
    const columns = version.additionalPrinterColumns as Array<{ name: string; jsonPath: string }>;
    expect(columns.length).toBeGreaterThan(0);
    expect(columns[columns.length - 1]).toMatchObject({ name: 'Age', jsonPath: '.metadata.creationTimestamp' });
    const paths = new Set<string>();
    walk(crd.schema, '', (_s, path) => paths.add(path));
    for (const c of columns) {
      if (c.jsonPath.startsWith('.metadata')) continue;
      expect(paths).toContain(c.jsonPath.replace(/\[0\]/g, '[]'));
    }
    if (crd.kind === 'AllocationClaim') expect(version.subresources).toBeUndefined();
    else expect(version.subresources).toMatchObject({ status: {} });
  });

  it('bounds every list and string a CEL rule of the Scheduler spec can reach (CEL cost budget)', () => {
    const unbounded: string[] = [];
    walk(byKind('Scheduler').schema.properties?.spec as JsonSchemaProps, '.spec', (s, path) => {
      if (s.type === 'array' && s.maxItems === undefined) unbounded.push(path);
      if ((s.type === 'string' || s['x-kubernetes-int-or-string']) && s.maxLength === undefined && !s.enum) unbounded.push(path);
    });
    expect(unbounded).toEqual([]);
  });

  it('gives Scheduler its short names, columns and a scale subresource', () => {
    const s = byKind('Scheduler');
    expect(s.scope).toBe('Cluster');
    expect(s.shortNames).toEqual(['rks', 'sched']);
    const version = (s.document.spec as { versions: Array<Record<string, unknown>> }).versions[0] as Record<string, unknown>;
    expect((version.additionalPrinterColumns as Array<{ name: string }>).map((c) => c.name)).toEqual(['Game', 'State', 'Version', 'Desired', 'Ready', 'Allocated', 'Active', 'Occupied', 'Matches', 'Slots', 'Up-to-date', 'Age']);
    expect(version.subresources).toEqual({ status: {}, scale: { specReplicasPath: '.spec.roomsReplicas', statusReplicasPath: '.status.rooms.current' } });
  });

  it('keeps SchedulerVersion.spec.definition in the shape of Scheduler.spec, without its value checks', () => {
    const definition = byKind('SchedulerVersion').schema.properties?.spec?.properties?.definition;
    expect(stripDescriptions(definition)).toEqual(stripDescriptions(withoutValueChecks(byKind('Scheduler').schema.properties?.spec)));
  });

  it('has the scopes and short names of the design', () => {
    expect(byKind('SchedulerVersion')).toMatchObject({ scope: 'Cluster', shortNames: ['rksv'] });
    expect(byKind('Operation')).toMatchObject({ scope: 'Cluster', shortNames: ['rkop'] });
    expect(byKind('GameRoom')).toMatchObject({ scope: 'Namespaced', shortNames: ['rkgr'] });
    expect(byKind('PingDigest')).toMatchObject({ scope: 'Namespaced', shortNames: ['rkpd'] });
  });
});
