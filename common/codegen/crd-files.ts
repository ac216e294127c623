/**
 * Reading the CRD YAML files of crds/: the resource model's single source of truth.
 * Only the code generators and tests read YAML; runtime code imports common/src/generated/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { JsonSchemaProps } from '../src/resources/json-schema-props';

export interface CrdFile {
  /** File name inside crds/, e.g. `roomkeeper.io_schedulers.yaml`. */
  file: string;
  kind: string;
  listKind: string;
  group: string;
  version: string;
  plural: string;
  singular: string;
  scope: 'Cluster' | 'Namespaced';
  shortNames: string[];
  categories: string[];
  schema: JsonSchemaProps;
  /** The whole parsed document. */
  document: Record<string, unknown>;
}

export class CrdFileError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'CrdFileError';
  }
}

function asRecord(value: unknown, file: string, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CrdFileError(file, `${what} is not an object`);
  return value as Record<string, unknown>;
}

function asString(value: unknown, file: string, what: string): string {
  if (typeof value !== 'string') throw new CrdFileError(file, `${what} is not a string`);
  return value;
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Parses one CRD document (the single served version). */
export function parseCrd(file: string, text: string): CrdFile {
  const document = asRecord(parse(text), file, 'document');
  const spec = asRecord(document.spec, file, 'spec');
  const names = asRecord(spec.names, file, 'spec.names');
  const versions = spec.versions;
  if (!Array.isArray(versions) || versions.length !== 1) throw new CrdFileError(file, 'expected exactly one version');
  const version = asRecord(versions[0], file, 'spec.versions[0]');
  const schema = asRecord(asRecord(version.schema, file, 'schema').openAPIV3Schema, file, 'openAPIV3Schema');
  const scope = asString(spec.scope, file, 'spec.scope');
  if (scope !== 'Cluster' && scope !== 'Namespaced') throw new CrdFileError(file, `unknown scope ${scope}`);
  return {
    file,
    kind: asString(names.kind, file, 'names.kind'),
    listKind: asString(names.listKind, file, 'names.listKind'),
    group: asString(spec.group, file, 'spec.group'),
    version: asString(version.name, file, 'version name'),
    plural: asString(names.plural, file, 'names.plural'),
    singular: asString(names.singular, file, 'names.singular'),
    scope,
    shortNames: asStrings(names.shortNames),
    categories: asStrings(names.categories),
    schema,
    document,
  };
}

/** Reads every `*.yaml` of a crds directory, sorted by file name so output is deterministic. */
export function readCrdFiles(dir: string): CrdFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parseCrd(f, readFileSync(join(dir, f), 'utf8')));
}
