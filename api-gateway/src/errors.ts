/**
 * Typed errors of the gateway and the one mapping from them to HTTP. Handlers and use cases
 * throw these; `http/error-handler.ts` turns them into Maestro's error body
 * `{code, message, details}` (a gRPC status, as grpc-gateway renders it) with the HTTP status
 * grpc-gateway uses for that gRPC code.
 */

/** gRPC status codes used by the API (google.golang.org/grpc/codes). */
export const GrpcCode = {
  Unknown: 2,
  InvalidArgument: 3,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  Unauthenticated: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

/** grpc-gateway's mapping (runtime.HTTPStatusFromCode) for the codes above. */
export function httpStatusFromGrpcCode(code: GrpcCode): number {
  switch (code) {
    case GrpcCode.InvalidArgument: return 400;
    case GrpcCode.FailedPrecondition: return 400;
    case GrpcCode.NotFound: return 404;
    case GrpcCode.AlreadyExists: return 409;
    case GrpcCode.PermissionDenied: return 403;
    case GrpcCode.ResourceExhausted: return 429;
    case GrpcCode.Aborted: return 409;
    case GrpcCode.Unimplemented: return 501;
    case GrpcCode.Unavailable: return 503;
    case GrpcCode.Unauthenticated: return 401;
    default: return 500;
  }
}

/** One field-level problem, listed in `details` of a validation error. */
export interface FieldViolation {
  field: string;
  message: string;
}

/** The error body every failed request gets. */
export interface ErrorBody {
  code: number;
  message: string;
  details: unknown[];
}

export abstract class ApiError extends Error {
  abstract readonly grpcCode: GrpcCode;
  /** Overrides the HTTP status derived from the gRPC code (413 for a too-large body). */
  readonly httpStatusOverride?: number;
  /** Seconds the client should wait before it retries (sent as Retry-After), when it should. */
  readonly retryAfterSeconds?: number;
  constructor(message: string, readonly details: unknown[] = []) {
    super(message);
    this.name = new.target.name;
  }
  get httpStatus(): number {
    return this.httpStatusOverride ?? httpStatusFromGrpcCode(this.grpcCode);
  }
  toBody(): ErrorBody {
    return { code: this.grpcCode, message: this.message, details: this.details };
  }
}

/** The request is malformed or fails validation (400, code 3). */
export class InputError extends ApiError {
  readonly grpcCode = GrpcCode.InvalidArgument;
}

/** Maestro's validation error: every violation on its own line, and listed in details. */
export class ValidationError extends InputError {
  constructor(readonly violations: FieldViolation[]) {
    super(`Validation Error:\n${violations.map((v) => `${v.field}: ${v.message}`).join('\n')}`, violations);
  }
}

/** The body is larger than the configured limit (413, code 3). */
export class PayloadTooLargeError extends InputError {
  override readonly httpStatusOverride = 413;
}

/** The body is not of a media type the route reads (415, code 3): only JSON is. */
export class UnsupportedMediaTypeError extends InputError {
  override readonly httpStatusOverride = 415;
}

/** The thing named in the path does not exist (404, code 5). */
export class NotFoundError extends ApiError {
  readonly grpcCode = GrpcCode.NotFound;
}

/** The thing to create exists already, or a change changes nothing (409, code 6). */
export class ConflictError extends ApiError {
  readonly grpcCode = GrpcCode.AlreadyExists;
}

/** The system is not in a state that allows the request (400, code 9, as Maestro). */
export class FailedPreconditionError extends ApiError {
  readonly grpcCode = GrpcCode.FailedPrecondition;
}

/** The request lost a race or targets a final state (409, code 10). */
export class AbortedError extends ApiError {
  readonly grpcCode = GrpcCode.Aborted;
}

/** Missing or wrong credentials (401, code 16). */
export class UnauthenticatedError extends ApiError {
  readonly grpcCode = GrpcCode.Unauthenticated;
}

/** A method the path does not support (501, code 12, as grpc-gateway). */
export class NotImplementedError extends ApiError {
  readonly grpcCode = GrpcCode.Unimplemented;
}

/** A dependency (the Kubernetes API) is not reachable or not ready (503, code 14). */
export class UnavailableError extends ApiError {
  readonly grpcCode = GrpcCode.Unavailable;
}

/**
 * No room can be allocated now (429, code 8, Retry-After). `maestroStatus` restores Maestro's
 * answer (500, code 2) for clients that expect it.
 */
export class NoRoomAvailableError extends ApiError {
  readonly grpcCode: GrpcCode;
  override readonly httpStatusOverride?: number;
  override readonly retryAfterSeconds?: number;
  constructor(message: string, options: { retryAfterSeconds: number; maestroStatus: boolean }) {
    super(message, [{ reason: 'NO_ROOM_AVAILABLE' }]);
    this.grpcCode = options.maestroStatus ? GrpcCode.Unknown : GrpcCode.ResourceExhausted;
    this.httpStatusOverride = options.maestroStatus ? 500 : undefined;
    this.retryAfterSeconds = options.maestroStatus ? undefined : options.retryAfterSeconds;
  }
}

/** Every candidate room was taken by concurrent allocations within the retry budget (503, code 14, Retry-After). */
export class AllocationContentionError extends ApiError {
  readonly grpcCode = GrpcCode.Unavailable;
  override readonly retryAfterSeconds = 1;
  constructor(message: string) {
    super(message, [{ reason: 'ALLOCATION_CONTENTION' }]);
  }
}

/**
 * A replayed allocationId whose allocation is over (410, code 9): it expired, the room has since
 * been given to another match, or the room is terminating or in error (no `endedAt` when its
 * allocation was still open). Never answered with a second room; details say when and why.
 */
export class AllocationEndedError extends ApiError {
  readonly grpcCode = GrpcCode.FailedPrecondition;
  override readonly httpStatusOverride = 410;
  constructor(message: string, ended: { roomId: string; endedAt?: string; endReason: string; supersededAt?: string }) {
    super(message, [{ reason: 'ALLOCATION_ENDED', ...ended }]);
  }
}

/** Anything unexpected (500, code 13); the real cause is logged, never sent. */
export class InternalError extends ApiError {
  readonly grpcCode = GrpcCode.Internal;
}

/**
 * The Kubernetes API server refused a request of the gateway's own (401: its credentials; 403: its
 * RBAC, or a reason it does not recognize) (500, code 13): no fault of the client's. Unlike
 * InternalError, the message is sent: it names the refused request, what the client's request did,
 * and what to restore. The subclasses are the 403s whose cause is the cluster's policy, not the
 * gateway's rights.
 */
export class GatewayAccessError extends ApiError {
  readonly grpcCode: GrpcCode = GrpcCode.Internal;
  /** `serverSaid`: the API server's whole message, for the log (an RBAC refusal names the gateway's ServiceAccount). */
  constructor(message: string, details: unknown[], readonly serverSaid: string) {
    super(message, details);
  }
}

/**
 * The namespace's ResourceQuota refused a write of the gateway's (429, code 8, Retry-After): the
 * quota has no room for one more object now; raising it, or objects it counts going, lets the same
 * request through. gRPC's code for an exhausted quota, as for no room available.
 */
export class KubeQuotaExceededError extends GatewayAccessError {
  override readonly grpcCode = GrpcCode.ResourceExhausted;
  override readonly retryAfterSeconds?: number;
  constructor(message: string, details: unknown[], serverSaid: string, retryAfterSeconds: number | undefined) {
    super(message, details, serverSaid);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * An admission webhook or ValidatingAdmissionPolicy denied a write of the gateway's (403, code 7):
 * the cluster's admission control does not permit it; sent again unchanged, it is denied again.
 */
export class KubeAdmissionDeniedError extends GatewayAccessError {
  override readonly grpcCode = GrpcCode.PermissionDenied;
}

/**
 * Errors raised by store adapters, independent of HTTP: use cases translate them into the
 * Maestro messages of the operation at hand.
 */
export class StoreAlreadyExistsError extends Error {
  constructor(readonly kind: string, readonly objectName: string) {
    super(`${kind} ${objectName} already exists`);
    this.name = 'StoreAlreadyExistsError';
  }
}

/** An update lost a race (resourceVersion precondition failed). */
export class StoreConflictError extends Error {
  constructor(readonly kind: string, readonly objectName: string) {
    super(`${kind} ${objectName} was modified concurrently`);
    this.name = 'StoreConflictError';
  }
}

/** The object to write is gone. */
export class StoreNotFoundError extends Error {
  constructor(readonly kind: string, readonly objectName: string) {
    super(`${kind} ${objectName} not found`);
    this.name = 'StoreNotFoundError';
  }
}

/** The store rejected an object as invalid (the CRD schema is stricter than our checks). */
export class StoreInvalidError extends Error {
  /** The API server's causes (field paths of the request body), when it gave any. */
  constructor(message: string, readonly violations: FieldViolation[] = []) {
    super(message);
    this.name = 'StoreInvalidError';
  }
}

/** The store cannot answer yet (caches not synced, API unreachable). */
export class StoreUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}
