/**
 * Keeps SchedulerVersion `spec.definition` (crds/roomkeeper.io_schedulerversions.yaml) identical to
 * Scheduler `spec` (crds/roomkeeper.io_schedulers.yaml), the one place the definition schema is edited.
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
const DEFINITION_DESCRIPTION = 'The full Scheduler spec of this version (the same schema as Scheduler.spec).';

function getIn(value: unknown, path: ReadonlyArray<string | number>): unknown {
  let node = value;
  for (const step of path) node = typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[step] : undefined;
  return node;
}

/** The SchedulerVersion file text with its definition replaced by the Scheduler spec schema. */
export function syncedSchedulerVersionCrd(schedulersYaml: string, schedulerVersionsYaml: string): string {
  const spec = getIn(parse(schedulersYaml), SPEC_PATH);
  if (typeof spec !== 'object' || spec === null) throw new Error('Scheduler CRD has no spec schema');
  const doc = parseDocument(schedulerVersionsYaml);
  doc.setIn(DEFINITION_PATH, doc.createNode({ ...spec, description: DEFINITION_DESCRIPTION }));
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
