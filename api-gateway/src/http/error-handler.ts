/**
 * The one mapping from errors to HTTP: typed `ApiError`s keep their status and body; the body
 * parser's errors (malformed JSON, too large, bad encoding) become 4xx; the API server refusing
 * the gateway's own request (401, 403) names the request and the API server's reason, and is a 429
 * (a ResourceQuota), a 403 (an admission webhook or policy) or a 500 (the gateway's credentials or
 * rights) that says what to restore; anything else is a 500 whose cause is logged, never sent.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../../../common/src/logger';
import {
  ApiError,
  InputError,
  InternalError,
  NotFoundError,
  PayloadTooLargeError,
  StoreAlreadyExistsError,
  StoreConflictError,
  StoreInvalidError,
  StoreUnavailableError,
  AbortedError,
  ConflictError,
  UnavailableError,
  ValidationError,
  GatewayAccessError,
  KubeAdmissionDeniedError,
  KubeQuotaExceededError,
  type ErrorBody,
} from '../errors';
import { gatewayAccessError, kubeRefusalOf, NOT_CARRIED_OUT } from '../adapters/kube-refusal';
import { apiErrorFields, describeApiError, isApiUnavailable } from '../../../common/src/kube/clients';
import { notAJsonObject } from '../../../common/src/json/json-type';
import { requestLogger } from './request-context';
import * as zlib from 'node:zlib';

/**
 * The Content-Encodings the body parser inflates: gzip, deflate and br, and zstd where the Node.js
 * runtime has it (22.15 and later, as the gateway's image).
 */
const ACCEPTED_CONTENT_ENCODINGS: string = 'createZstdDecompress' in zlib ? 'gzip, deflate, br or zstd' : 'gzip, deflate or br';

interface HttpishError { status?: unknown; statusCode?: unknown; type?: unknown; limit?: unknown; message?: unknown; body?: unknown; code?: unknown; encoding?: unknown }

function asHttpish(err: unknown): HttpishError {
  return typeof err === 'object' && err !== null ? err : {};
}

/**
 * The message for a body that is valid JSON but not an object or array (`null`, `5`, `"x"`), which
 * body-parser's strict mode refuses as if it were not JSON; undefined for a body that is not JSON.
 */
function notAnObject(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    return notAJsonObject(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** An error of zlib, brotli or zstd while the body parser inflated a compressed body (`Z_DATA_ERROR`, `ERR_BROTLI_...`, `ZSTD_error_...`). */
function isDecompressionError(e: HttpishError): boolean {
  return typeof e.code === 'string' && (/^Z_[A-Z_]+$/.test(e.code) || e.code.startsWith('ERR_BROTLI') || e.code.startsWith('ERR_ZLIB') || e.code.startsWith('ZSTD_error'));
}

/** Turns any thrown value into an ApiError. */
function toApiError(err: unknown, maxBodyBytes: number): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreAlreadyExistsError) return new ConflictError(err.message);
  if (err instanceof StoreConflictError) return new AbortedError(`${err.message}; retry the request`);
  if (err instanceof StoreInvalidError) return err.violations.length > 0 ? new ValidationError(err.violations) : new InputError(`Validation Error:\n${err.message}`);
  if (err instanceof StoreUnavailableError) return new UnavailableError(err.message);
  const e = asHttpish(err);
  if (isDecompressionError(e)) {
    return new InputError(`the request body could not be decompressed as its Content-Encoding says; send it uncompressed, or compressed whole with ${ACCEPTED_CONTENT_ENCODINGS}`);
  }
  if (e.type === 'encoding.unsupported') {
    const encoding = typeof e.encoding === 'string' ? e.encoding.slice(0, 100) : 'unknown';
    return Object.assign(new InputError(`unsupported Content-Encoding "${encoding}": send the body uncompressed, or compressed whole with ${ACCEPTED_CONTENT_ENCODINGS}`), { httpStatusOverride: 415 });
  }
  switch (e.type) {
    case 'entity.too.large':
      return new PayloadTooLargeError(`request body is larger than the limit of ${maxBodyBytes} bytes; send a smaller body (in a ping or an event, less metadata), or raise the limit: ROOMKEEPER_MAX_BODY_BYTES on the management API, ROOMKEEPER_ROOMS_MAX_BODY_BYTES on the rooms API`);
    case 'charset.unsupported':
      return Object.assign(new InputError(`${typeof e.message === 'string' ? e.message.slice(0, 100) : 'unsupported charset'}: send the body in UTF-8 (Content-Type: application/json, or with charset=utf-8)`), { httpStatusOverride: 415 });
    case 'entity.parse.failed':
      return new InputError(notAnObject(e.body) ?? `invalid JSON body: ${typeof e.message === 'string' ? e.message.slice(0, 200) : 'parse error'}`);
    default:
      break;
  }
  if (isApiUnavailable(err)) {
    return new UnavailableError(`the Kubernetes API server cannot be reached or is overloaded (${describeApiError(err).slice(0, 200)}); rooms keep running and pings are still accepted; retry this request in a few seconds`);
  }
  // The API server refused the gateway itself (its RBAC, its credentials, a quota, admission): said as that, on every endpoint.
  const refusal = kubeRefusalOf(err);
  if (refusal) return gatewayAccessError(refusal, NOT_CARRIED_OUT);
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    const error = new InputError(typeof e.message === 'string' ? e.message.slice(0, 200) : 'bad request');
    return status === 400 ? error : Object.assign(error, { httpStatusOverride: status });
  }
  return new InternalError('internal error');
}

/** The HTTP status and message an error is answered with (nothing logged). */
export function errorSaid(err: unknown, maxBodyBytes: number): { status: number; message: string } {
  const apiError = toApiError(err, maxBodyBytes);
  return { status: apiError.httpStatus, message: apiError.message };
}

/** What an error is answered: status, headers and body. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/**
 * The answer to an error, on every path that answers (the Express routes and the fast paths). The
 * cause of a 500 is logged, never sent; a client refused for a while is told when to come back.
 */
export function errorAnswer(err: unknown, maxBodyBytes: number, logger: Logger): ErrorAnswer {
  const apiError = toApiError(err, maxBodyBytes);
  const headers: Record<string, string> = {};
  if (apiError instanceof InternalError) {
    logger.error('request failed', { ...apiErrorFields(err), stack: err instanceof Error ? err.stack : undefined });
  } else if (apiError instanceof KubeQuotaExceededError || apiError instanceof KubeAdmissionDeniedError) {
    // The cluster's policy, not the gateway, refused: the answer says which; logged for the cluster's administrator.
    logger.warn("request refused: the cluster's quota or admission control refused the gateway's own request", { error: apiError.serverSaid, answer: apiError.message });
  } else if (apiError instanceof GatewayAccessError) {
    // The API server's whole message names the gateway's ServiceAccount: logged; the answer masks it.
    logger.error("request failed: the Kubernetes API server refused the gateway's own request", { error: apiError.serverSaid, answer: apiError.message });
  }
  if (apiError.retryAfterSeconds !== undefined) {
    headers['Retry-After'] = String(apiError.retryAfterSeconds);
  } else if (apiError instanceof UnavailableError) {
    // The client is told when to come back (RFC 9110 Retry-After, in seconds).
    headers['Retry-After'] = '5';
    logger.warn('request refused: Kubernetes API unavailable', apiErrorFields(err));
  }
  return { status: apiError.httpStatus, headers, body: apiError.toBody() };
}

/** `extraBody` is merged into every error body (the rooms API adds `success: false`). */
export function errorHandler(logger: Logger, maxBodyBytes: number, extraBody: Record<string, unknown> = {}): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const answer = errorAnswer(err, maxBodyBytes, requestLogger(res, logger));
    // A body left unread (too large, bad encoding) makes the connection unusable for another request.
    if (!req.complete) res.setHeader('Connection', 'close');
    res.set(answer.headers).status(answer.status).json({ ...extraBody, ...answer.body });
  };
}

/** Unknown paths: 404 `Not Found` as grpc-gateway, going on to name the request and where the routes are listed. */
export const notFoundHandler: RequestHandler = (req, _res, next) => next(new NotFoundError(
  `Not Found: no route ${req.method} ${req.path.slice(0, 200)}; the routes of both APIs are listed in GET /openapi.json on the management API`,
));
