/**
 * Reading a Kubernetes REST request: the resource path, the verb, the wanted output format, the
 * patch type and the query parameters the server honours.
 */
import { ApiError, badRequest, invalid, unsupportedMediaType, type StatusCause } from './api-error';
import { parseLabelSelector } from './label-selector';
import { jsonDepthExceeds } from '../../../common/src/json/json-depth';
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

/**
 * A boolean query parameter read as kube-apiserver reads one (runtime.Convert_Slice_string_To_bool):
 * absent, `0` or `false` (any case) is false; anything else, even `abc` or an empty value, is true.
 */
export function boolParam(v: string | null): boolean {
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * An integer query parameter (`limit`, `timeoutSeconds`, `gracePeriodSeconds`) read as
 * kube-apiserver reads it, with Go's strconv.ParseInt: a present value that is not a decimal
 * int64 (`1.5`, `abc`, an empty `limit=`) is a 400 with Go's message; an absent one is undefined.
 */
export function integerParam(v: string | null): number | undefined {
  if (v === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n > INT64_MAX || n < -INT64_MAX - 1n) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

/**
 * Why a `resourceVersion` query parameter is not one kube-apiserver can read (it parses it with
 * strconv.ParseUint: a decimal unsigned 64-bit number), worded as it words it; undefined when it is.
 */
function resourceVersionProblem(v: string): string | undefined {
  const decimal = /^[0-9]+$/.test(v);
  if (decimal && BigInt(v) <= UINT64_MAX) return undefined;
  return `resourceVersion: Invalid value: ${JSON.stringify(v)}: strconv.ParseUint: parsing ${JSON.stringify(v)}: ${decimal ? 'value out of range' : 'invalid syntax'}`;
}

/**
 * Whether kube-apiserver v1.28 reads this list from etcd rather than from its watch cache
 * (cacher.shouldDelegateList): a limit (unless resourceVersion is 0), a continue token, a
 * resourceVersionMatch other than NotOlderThan, or no resourceVersion at all.
 */
export function listReadsStorage(q: URLSearchParams): boolean {
  const rv = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  return rv === '' || Boolean(q.get('continue')) || ((integerParam(q.get('limit')) ?? 0) > 0 && rv !== '0') || (match !== '' && match !== 'NotOlderThan');
}

/**
 * Refuses a list or watch whose options kube-apiserver v1.28 refuses before reading anything: an
 * integer (limit, timeoutSeconds, for a list too) it cannot decode, 400; then what
 * metainternalversion validation.ValidateListOptions refuses (WatchList feature gate off), with
 * its 422 `ListOptions.meta.k8s.io "" is invalid` (a malformed label selector is a 400 before it).
 */
export function validateListOptions(q: URLSearchParams, watch: boolean): void {
  integerParam(q.get('limit'));
  integerParam(q.get('timeoutSeconds'));
  const match = q.get('resourceVersionMatch') ?? '';
  const sendInitialEvents = q.has('sendInitialEvents');
  if (match === '' && !sendInitialEvents) return;
  parseLabelSelector(q.get('labelSelector') ?? undefined);
  const causes: StatusCause[] = [];
  const forbidden = (field: string, why: string) => causes.push({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${why}` });
  const notSupported = (supported: string[]) => causes.push({
    reason: 'FieldValueNotSupported', field: 'resourceVersionMatch',
    message: `Unsupported value: ${JSON.stringify(match)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}`,
  });
  const resumed = Boolean(q.get('continue'));
  if (watch) {
    if (sendInitialEvents) {
      if (match !== 'NotOlderThan') forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
      forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
    }
    if (match !== '') {
      if (!sendInitialEvents) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
      if (match !== 'NotOlderThan') notSupported(['NotOlderThan']);
      if (resumed) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
    }
  } else {
    if (match !== '') {
      const rv = q.get('resourceVersion') ?? '';
      if (rv === '') forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided');
      if (resumed) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
      if (match !== 'Exact' && match !== 'NotOlderThan') notSupported(['Exact', 'NotOlderThan', '']);
      if (match === 'Exact' && rv === '0') forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    }
    if (sendInitialEvents) forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list');
  }
  if (causes.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', causes);
}

/**
 * Refuses a read (get, list or watch) whose `resourceVersion` kube-apiserver v1.28 cannot parse,
 * as it refuses it: a list it sends on to etcd (one with a limit or a continue token, or
 * `resourceVersionMatch=Exact`) answers 400 BadRequest `invalid resource version: ...`; a read
 * served from its watch cache (any other list, a get, a watch) answers 500 with no reason.
 */
export function checkReadResourceVersion(q: URLSearchParams, list: boolean): void {
  const rv = q.get('resourceVersion');
  if (rv === null || rv === '') return;
  const problem = resourceVersionProblem(rv);
  if (problem === undefined) return;
  if (list && listReadsStorage(q)) throw badRequest(`invalid resource version: ${problem}`);
  throw new ApiError(500, '', problem);
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

/**
 * The deepest nesting the sandbox keeps. kube-apiserver keeps up to 10,000 levels, but the sandbox
 * writes objects out with JSON.stringify, whose recursion overflows Node's stack at about 5,000: an
 * object it stored and could then neither serve, delete nor snapshot. No Kubernetes object nests a
 * thousand levels.
 */
const MAX_OBJECT_DEPTH = 1000;

/** Refuses a body, or the object a patch makes, that nests deeper than the sandbox keeps; nothing is written. */
export function refuseTooDeep(value: unknown, what: string): void {
  if (jsonDepthExceeds(value, MAX_OBJECT_DEPTH)) {
    throw badRequest(`${what} nests deeper than ${MAX_OBJECT_DEPTH} levels, the most the sandbox keeps (kube-apiserver keeps up to 10000); nothing was written`);
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
