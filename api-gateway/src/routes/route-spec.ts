/**
 * One route table drives both the Express router and the OpenAPI document, so they cannot
 * drift: each route is declared once (method, path, auth, schemas) and bound to a handler by id.
 */
import type { Request, RequestHandler, Response, Router } from 'express';
import { isDnsLabel, isDnsSubdomain } from '../../../common/src/kube/object-names';
import { InputError, NotFoundError, NotImplementedError } from '../errors';

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
}

/** Returns the JSON body of a 200 answer, or undefined when it wrote the response itself. */
export type RouteHandler = (req: Request, res: Response) => unknown;

export interface MountOptions {
  /** Middleware run before the body is read, per auth kind (authentication first). */
  auth: Record<RouteAuth, RequestHandler[]>;
  /** The JSON body parser (run after authentication). */
  json: RequestHandler;
}

/** Registers every route, then a 501 for any other method on a known path (as grpc-gateway). */
export function mountRoutes<Id extends string>(router: Router, specs: readonly RouteSpec<Id>[], handlers: Record<Id, RouteHandler>, options: MountOptions): void {
  for (const spec of specs) {
    const handler = handlers[spec.id];
    const run: RequestHandler = async (req, res) => {
      const body = await handler(req, res);
      if (body !== undefined && !res.headersSent) res.status(200).json(body);
    };
    const chain = [...options.auth[spec.auth], ...(spec.requestBody ? [options.json] : []), run];
    router[spec.method](spec.path, ...chain);
  }
  const notAllowed: RequestHandler = (_req, _res, next) => next(new NotImplementedError('Method Not Allowed'));
  for (const path of new Set(specs.map((s) => s.path))) router.all(path, notAllowed);
}

/** `/schedulers/:schedulerName` -> `/schedulers/{schedulerName}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** A single-valued query parameter; repeated parameters are a client error. */
export function queryString(req: Request, name: string): string | undefined {
  const v: unknown = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new InputError(`query parameter ${name} must be given once`);
  return v;
}

/** A scheduler name from the path; a name Kubernetes cannot hold cannot exist (404). */
export function schedulerNameParam(req: Request, notFoundMessage?: (name: string) => string): string {
  const name = stringParam(req, 'schedulerName');
  if (!isDnsLabel(name)) throw new NotFoundError(notFoundMessage ? notFoundMessage(name.slice(0, 64)) : `scheduler ${name.slice(0, 64)} not found`);
  return name;
}

/** An object name (operation id) from the path; an impossible name cannot exist (404). */
export function objectNameParam(req: Request, param: string, notFoundMessage: (name: string) => string): string {
  const name = stringParam(req, param);
  if (!isDnsSubdomain(name)) throw new NotFoundError(notFoundMessage(name.slice(0, 64)));
  return name;
}

/** A named path parameter ('' when absent; our routes have no wildcard, so a present one is a string). */
export function stringParam(req: Request, param: string): string {
  const value: unknown = (req.params as Record<string, unknown>)[param];
  return typeof value === 'string' ? value : '';
}

