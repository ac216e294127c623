/**
 * Reading a Kubernetes REST request: the resource path, the verb, the wanted output format, the
 * patch type and the query parameters the server honours.
 */
import { badRequest, unsupportedMediaType } from './api-error';
import type { FieldValidation, PatchType, WriteOptions } from './resource-operations';

export interface ResourcePath {
  group: string;
  version: string;
  namespace: string;
  plural: string;
  name?: string;
  subresource?: string;
  watchPath: boolean;
}

export type OutputFormat = 'json' | 'table' | 'metadata';

export function outputFormat(accept: string | undefined): OutputFormat {
  if (!accept) return 'json';
  const first = accept.split(',')[0] ?? '';
  if (first.includes('as=Table')) return 'table';
  if (first.includes('as=PartialObjectMetadata')) return 'metadata';
  return 'json';
}

export function patchTypeOf(contentType: string | undefined): PatchType {
  const [mediaType = ''] = (contentType ?? '').split(';');
  const ct = mediaType.trim();
  switch (ct) {
    case 'application/merge-patch+json': return 'merge';
    case 'application/json-patch+json': return 'json';
    case 'application/strategic-merge-patch+json': return 'strategic';
    case 'application/apply-patch+yaml': return 'apply';
    default: throw unsupportedMediaType(ct);
  }
}

export function splitPath(pathname: string): string[] {
  try {
    return pathname.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  } catch {
    throw badRequest(`malformed path: ${pathname}`);
  }
}

export function parseResourcePath(segments: string[]): ResourcePath | 'discovery' | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api') {
    group = '';
    version = segments[1] ?? '';
    rest = segments.slice(2);
  } else if (segments[0] === 'apis') {
    group = segments[1] ?? '';
    version = segments[2] ?? '';
    rest = segments.slice(3);
  } else return undefined;
  if (rest.length === 0) return 'discovery';
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  const [head, ns, after] = rest;
  if (head === 'namespaces' && ns !== undefined && after !== undefined && after !== 'status' && after !== 'finalize') {
    namespace = ns;
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  if (!plural || rest.length > 3) return undefined;
  return { group, version, namespace, plural, name, subresource, watchPath };
}

export function boolParam(v: string | null): boolean {
  return v === 'true' || v === '1';
}

export function numberParam(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw badRequest(`invalid number: ${v}`);
  return n;
}

function fieldValidationOf(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v !== 'Strict' && v !== 'Warn' && v !== 'Ignore') {
    throw badRequest(`fieldValidation parameter unsupported: ${v}, must be one of Strict, Warn, Ignore`);
  }
  return v;
}

export function writeOptions(q: URLSearchParams): WriteOptions {
  const dryRun = q.getAll('dryRun');
  for (const d of dryRun) if (d !== 'All') throw badRequest(`Invalid dryRun value: ${d}`);
  return { dryRun: dryRun.length > 0, fieldValidation: fieldValidationOf(q), fieldManager: q.get('fieldManager') ?? undefined };
}

export function parseJsonBody(raw: string): unknown {
  if (raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export function verbOf(method: string, p: ResourcePath, watch: boolean): string {
  switch (method) {
    case 'GET': return p.name ? 'get' : watch ? 'watch' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return p.name ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}
