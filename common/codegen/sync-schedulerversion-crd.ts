/**
 * Keeps SchedulerVersion `spec.definition` (crds/roomkeeper.io_schedulerversions.yaml) in the shape
 * of Scheduler `spec` (crds/roomkeeper.io_schedulers.yaml), the one place the definition schema is
 * edited: the same fields, types, required fields, enums and size bounds, without the value checks
 * (patterns, CEL rules, minimums and maximums). A version is an immutable snapshot the operator makes
 * of a spec the Scheduler's CRD admitted, and kube-apiserver validates the whole object on every
 * write: a check made stricter in a later release (unique forwarder names, a port range) refused
 * every write of a version made before it, its finalizer's removal included, so that it could never
 * be deleted and its scheduler's name never used again (trial S, upgrading from 2026-12-02's build).
 * The size bounds stay: the CEL cost of the immutability rule (`self == oldSelf`) is estimated from them.
 *
 *   npx tsx common/codegen/sync-schedulerversion-crd.ts          # rewrite the definition
 *   npx tsx common/codegen/sync-schedulerversion-crd.ts --check  # exit 1 when it differs
 *
 * Comments and the rest of the SchedulerVersion file are kept.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseDocument } from 'yaml';

const DEFINITION_PATH = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'properties', 'definition'];
const SPEC_PATH = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec'];
const DEFINITION_DESCRIPTION = 'The full Scheduler spec of this version: the shape of Scheduler.spec, whose checks it passed when the version was made (it is not checked again, so that a stricter check of a later release never refuses the writes of an older version).';

/** The value checks of a schema node that a version's definition leaves out (see the top of this file). */
const VALUE_CHECKS: ReadonlySet<string> = new Set([
  'pattern', 'x-kubernetes-validations', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'minItems', 'minProperties', 'multipleOf',
]);

/** The schema without its value checks, at every depth (a field named like a check, under `properties`, stays). */
export function withoutValueChecks(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (VALUE_CHECKS.has(key)) continue;
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      out[key] = Object.fromEntries(Object.entries(value).map(([field, s]) => [field, withoutValueChecks(s)]));
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = withoutValueChecks(value);
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      out[key] = Array.isArray(value) ? value.map(withoutValueChecks) : value;
    } else {
      out[key] = value;
    }
  }
  return out;
}

function getIn(value: unknown, path: ReadonlyArray<string | number>): unknown {
  let node = value;
  for (const step of path) node = typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[step] : undefined;
  return node;
}

/** The SchedulerVersion file text with its definition replaced by the Scheduler spec schema, without its value checks. */
export function syncedSchedulerVersionCrd(schedulersYaml: string, schedulerVersionsYaml: string): string {
  const spec = getIn(parse(schedulersYaml), SPEC_PATH);
  if (typeof spec !== 'object' || spec === null) throw new Error('Scheduler CRD has no spec schema');
  const doc = parseDocument(schedulerVersionsYaml);
  doc.setIn(DEFINITION_PATH, doc.createNode({ ...(withoutValueChecks(spec) as object), description: DEFINITION_DESCRIPTION }));
  return doc.toString({ lineWidth: 0 });
}

export function main(argv: readonly string[]): number {
  const crds = join(resolve(__dirname, '../..'), 'crds');
  const target = join(crds, 'roomkeeper.io_schedulerversions.yaml');
  const current = readFileSync(target, 'utf8');
  const synced = syncedSchedulerVersionCrd(readFileSync(join(crds, 'roomkeeper.io_schedulers.yaml'), 'utf8'), current);
  if (argv.includes('--check')) {
    if (synced === current) return 0;
    console.error(`out of date: ${target} (run npx tsx common/codegen/sync-schedulerversion-crd.ts)`);
    return 1;
  }
  writeFileSync(target, synced);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
