/**
 * One route table drives both the Express router and the OpenAPI document, so they cannot
 * drift: each route is declared once (method, path, auth, schemas) and bound to a handler by id.
 */
import type { Request, RequestHandler, Response, Router } from 'express';
import { isDnsLabel, isDnsSubdomain } from '../../../common/src/kube/object-names';
import { InputError, NotFoundError, NotImplementedError } from '../errors';
import { clipped } from '../../../common/src/text/clipped';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type RouteAuth = 'none' | 'basic' | 'room-token';

/** A JSON Schema (OpenAPI 3.0 flavour) or a `$ref`. */
export type Schema = Record<string, unknown>;

export interface QueryParam {
  name: string;
  description: string;
  required?: boolean;
  schema?: Schema;
}

export interface RouteSpec<Id extends string = string> {
  id: Id;
  method: HttpMethod;
  /** Express syntax: `/schedulers/:schedulerName`. */
  path: string;
  summary: string;
  tag: string;
  auth: RouteAuth;
  query?: QueryParam[];
  /** The JSON request body, when the route takes one. */
  requestBody?: Schema;
  /** The 200 response body. */
  response: Schema;
  /** `text/plain` instead of JSON (metrics). */
  responseContentType?: string;
  /** Documented failure statuses besides 200. */
  errors: number[];
  /** Failure statuses whose body is not the `{code, message, details}` error (health answers): what it holds. */
  errorBodies?: Readonly<Record<number, { description: string; schema: Schema }>>;
  /** Failure statuses with the usual error body that mean more on this route: what, and whether a Retry-After header says when to retry. */
  errorWords?: Readonly<Record<number, { description: string; retryAfter?: boolean }>>;
}

/** Returns the JSON body of a 200 answer, or undefined when it wrote the response itself. */
export type RouteHandler = (req: Request, res: Response) => unknown;

export interface MountOptions {
  /** Middleware run before the body is read, per auth kind (authentication first). */
  auth: Record<RouteAuth, RequestHandler[]>;
  /** The JSON body parser (run after authentication). */
  json: RequestHandler;
}

/**
 * Registers every route, then a 501 for any other method on a known path (as grpc-gateway). A
 * path parameter that is not percent-encoded UTF-8 is answered first, naming it (`pathDecodingGuard`).
 */
export function mountRoutes<Id extends string>(router: Router, specs: readonly RouteSpec<Id>[], handlers: Record<Id, RouteHandler>, options: MountOptions): void {
  router.use(pathDecodingGuard(specs.map((s) => s.path)));
  for (const spec of specs) {
    const handler = handlers[spec.id];
    const run: RequestHandler = async (req, res) => {
      const body = await handler(req, res);
      // The operation a call enqueued, for its access log line (request-context.ts).
      const enqueued = (body as { operationId?: unknown } | undefined)?.operationId;
      if (typeof enqueued === 'string') res.locals.operationId = enqueued;
      if (body !== undefined && !res.headersSent) res.status(200).json(body);
    };
    const chain = [keepParams, ...options.auth[spec.auth], ...(spec.requestBody ? [options.json] : []), run];
    router[spec.method](spec.path, ...chain);
  }
  for (const path of new Set(specs.map((s) => s.path))) router.all(path, notAllowed(path, specs.filter((s) => s.path === path).map((s) => s.method)));
}

/**
 * The route's path parameters, kept for the access log line (request-context.ts): Express gives
 * `req.params` back to the router's, which has none, when a handler fails.
 */
const keepParams: RequestHandler = (req, res, next) => {
  res.locals.params = req.params;
  next();
};

/**
 * grpc-gateway's 501 `Method Not Allowed` for a known path, going on to name the methods the path
 * takes (also in `Allow`, where Express answers HEAD as GET), so the client learns what to send.
 */
function notAllowed(path: string, methods: readonly HttpMethod[]): RequestHandler {
  const names = methods.map((m) => m.toUpperCase());
  const message = `Method Not Allowed: ${openApiPath(path)} takes ${names.join(' or ')}`;
  const allow = (names.includes('GET') ? [...names, 'HEAD'] : names).join(', ');
  return (_req, res, next) => {
    res.setHeader('Allow', allow);
    next(new NotImplementedError(message));
  };
}

/** What a path parameter holds, for the answer to one that cannot be decoded. */
const PATH_PARAM_SHAPES: Record<string, { what: string; shape: string }> = {
  schedulerName: { what: 'scheduler name', shape: "a scheduler name is an RFC 1123 label: at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit" },
  roomId: { what: 'room id', shape: "a room id is its pod's name (ROOMKEEPER_ROOM_ID, or MAESTRO_ROOM_ID, in the room's environment): at most 253 lower-case letters, digits, '-' or '.', starting and ending with a letter or digit" },
  operationId: { what: 'operation id', shape: 'an operation id is the operationId a management call answered (a UUID such as 0190f7a2-8c1e-7b3d-9f00-1a2b3c4d5e6f)' },
};

function decodable(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** The answer to a path parameter that is not percent-encoded UTF-8 (Express's own says only "Failed to decode param"). */
function undecodablePathParamMessage(param: string, raw: string): string {
  const known = PATH_PARAM_SHAPES[param];
  const what = known?.what ?? `path parameter ${param}`;
  return `the ${what} in the path, '${clipped(raw)}', is not percent-encoded UTF-8 and cannot be decoded: send each character that is not a letter, digit, '-', '.', '_' or '~' as the %XX escapes of its UTF-8 bytes (RFC 3986)${known ? `; ${known.shape}, which needs no escaping` : ''}`;
}

/**
 * Answers 400 for a request whose path matches one of `paths` (Express syntax, any method) but
 * holds a parameter that is not percent-encoded UTF-8, naming that part of the path and what to
 * send; Express's router would refuse it while matching, with no next step. Mounted before the
 * routes it guards; a path matching none of them goes on (to a 404).
 */
export function pathDecodingGuard(paths: readonly string[]): RequestHandler {
  const patterns = [...new Set(paths)].filter((p) => p.includes('/:')).map((p) => p.split('/'));
  return (req, _res, next) => {
    if (!req.path.includes('%')) {
      next();
      return;
    }
    // Express matches case-insensitively and takes one trailing slash.
    const segments = req.path.replace(/(.)\/$/, '$1').split('/');
    for (const pattern of patterns) {
      if (pattern.length !== segments.length) continue;
      const matches = pattern.every((part, i) => part.startsWith(':') || part.toLowerCase() === segments[i]?.toLowerCase());
      if (!matches) continue;
      const bad = pattern.flatMap((part, i) => (part.startsWith(':') && !decodable(segments[i] ?? '') ? [undecodablePathParamMessage(part.slice(1), segments[i] ?? '')] : []));
      if (bad.length > 0) {
        next(new InputError(bad.join('; and ')));
        return;
      }
    }
    next();
  };
}

/** `/schedulers/:schedulerName` -> `/schedulers/{schedulerName}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * A single-valued query parameter; repeated parameters are a client error, and so is the bracket
 * syntax some clients use for lists and objects (`stage[]=final`, `version[x]=1`): the query
 * parser is `simple`, so such a key is not the parameter, and the filter it meant was ignored.
 */
export function queryString(req: Request, name: string): string | undefined {
  const query = req.query as Record<string, unknown>;
  const v: unknown = query[name];
  const bracketed = Object.keys(query).find((key) => key.startsWith(`${name}[`));
  if (bracketed !== undefined) {
    throw new InputError(`query parameter ${name} must be given once as ${name}=<value>; ${clipped(JSON.stringify(bracketed))} (a list or object in brackets) is not read`);
  }
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new InputError(`query parameter ${name} must be given once`);
  return v;
}

/** A scheduler name from the path; a name Kubernetes cannot hold cannot exist (404). */
export function schedulerNameParam(req: Request, notFoundMessage?: (name: string) => string): string {
  const name = stringParam(req, 'schedulerName');
  if (!isDnsLabel(name)) throw new NotFoundError(notFoundMessage ? notFoundMessage(clipped(name)) : `scheduler ${clipped(name)} not found`);
  return name;
}

/** An object name (operation id) from the path; an impossible name cannot exist (404). */
export function objectNameParam(req: Request, param: string, notFoundMessage: (name: string) => string): string {
  const name = stringParam(req, param);
  if (!isDnsSubdomain(name)) throw new NotFoundError(notFoundMessage(clipped(name)));
  return name;
}

/** A named path parameter ('' when absent; our routes have no wildcard, so a present one is a string). */
export function stringParam(req: Request, param: string): string {
  const value: unknown = (req.params as Record<string, unknown>)[param];
  return typeof value === 'string' ? value : '';
}

