/**
 * Typed errors of the sandbox API server and the `Status` bodies the real server sends for them.
 *
 * Handlers throw an `ApiError`; the HTTP layer turns it into a `Status` once, in one place.
 */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  /** A cause that names no field leaves `field` out, as Go does. */
  causes?: (Omit<StatusCause, 'field'> & { field?: string })[];
  retryAfterSeconds?: number;
}

/** What a resource is called in error messages: its plural and group (`pods`, `schedulers.roomkeeper.io`). */
export interface ResourceName {
  group: string;
  plural: string;
}

export type StatusBody = Record<string, unknown> & { code: number };

/** The list metadata a `Status` may carry: an expired continue token's replacement. */
export interface StatusListMeta {
  continue?: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly listMeta?: StatusListMeta,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): StatusBody {
    return statusBody(this.code, this.reason, this.message, this.details, this.listMeta);
  }
}

/** A `Status` body; an empty `reason` is left out, as kube-apiserver leaves out StatusReasonUnknown. */
export function statusBody(code: number, reason: string, message: string, details?: StatusDetails, listMeta: StatusListMeta = {}): StatusBody {
  const body: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: listMeta, status: 'Failure', message };
  if (reason) body.reason = reason;
  if (details) body.details = details;
  // `code` last, as the real server sends it
  return { ...body, code };
}

function qualifiedResource(r: ResourceName): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

function resourceDetails(r: ResourceName, name: string): StatusDetails {
  return r.group ? { name, group: r.group, kind: r.plural } : { name, kind: r.plural };
}

export function notFound(r: ResourceName, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(r)} "${name}" not found`, resourceDetails(r, name));
}

export function alreadyExists(r: ResourceName, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(r)} "${name}" already exists`, resourceDetails(r, name));
}

export function conflict(r: ResourceName, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${why}`, resourceDetails(r, name));
}

export function forbidden(r: ResourceName, name: string, why: string): ApiError {
  return new ApiError(403, 'Forbidden', `${qualifiedResource(r)} "${name}" is forbidden: ${why}`, resourceDetails(r, name));
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml', 'application/strategic-merge-patch+json'];

/** 415: a body format the server does not read (protobuf/CBOR bodies, unknown patch types, SMP on custom resources). */
export function unsupportedMediaType(contentType: string, accepted: string[] = PATCH_TYPES): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

export function gone(message: string, listMeta?: StatusListMeta): ApiError {
  return new ApiError(410, 'Expired', message, undefined, listMeta);
}

/**
 * 504 Timeout: a read asked for a resourceVersion the server has not reached, worded as
 * kube-apiserver v1.28 words it (storage.NewTooLargeResourceVersionError); a positive
 * `retryAfterSeconds` goes in the details and in a Retry-After header.
 */
export function tooLargeResourceVersion(wanted: bigint | number, current: number, retryAfterSeconds: number): ApiError {
  const details: StatusDetails = { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] };
  if (retryAfterSeconds > 0) details.retryAfterSeconds = retryAfterSeconds;
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${wanted}, current: ${current}`, details);
}

/**
 * 422 Invalid, worded like the real server: `Kind.group "name" is invalid: [a: x, b: y]`
 * (no brackets for one cause).
 */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const list = parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`;
  // Go's StatusDetails leaves out an empty name, group or kind (ListOptions has no name).
  const details: StatusDetails = { ...(name ? { name } : {}), ...(group ? { group } : {}), ...(kind ? { kind } : {}), causes };
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${list}`, details);
}
