/**
 * The two Express applications, as pure factories over narrow interfaces: nothing here opens a
 * socket, reads config or talks to Kubernetes (`main.ts` wires those in).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isUtf8 } from 'node:buffer';
import express, { type Express, type RequestHandler } from 'express';
import { decode } from 'iconv-lite';
import { findDuplicateKeys } from '../../common/src/json/duplicate-keys';
import { notAJsonObject } from '../../common/src/json/json-type';
import type { Logger } from '../../common/src/logger';
import type { MetricsRegistry } from '../../common/src/metrics';
import { InputError, NotFoundError, UnsupportedMediaTypeError, ValidationError } from './errors';
import { basicAuth, refusalLogged, roomTokenAuth, type CredentialsProvider } from './auth';
import { RoomsRefusalLog, RoomsRefusalReason } from './http/rooms-refusal-log';
import { RoomTokenOwners } from './room-token-owners';
import { roomTokenKeyId } from '../../common/src/rooms/room-token';
import { hasRequestBody, isJsonContentType, isRoomsJsonContentType, JSON_CONTENT_TYPE_REQUIRED, withUtf8Spelling } from './http/content-type';
import { errorHandler, errorSaid, notFoundHandler } from './http/error-handler';
import { PING_PATH, pingFastPath, type FastPath } from './http/ping-fast-path';
import { allocateFastPath } from './http/allocate-fast-path';
import { requestContext } from './http/request-context';
import { tooDeepError, unreadableValueError } from './json-body-limits';
import { buildOpenApiDocument } from './openapi';
import type { PingRecorder } from './pings/ping-recorder';
import { HEALTH_ROUTES, healthHandlers, OPENAPI_ROUTE, type Readiness } from './routes/health-routes';
import { ALLOCATE_ROUTE, MANAGEMENT_ROUTES, managementHandlers } from './routes/management-routes';
import { ROOMS_ROUTES, roomsHandlers } from './routes/rooms-routes';
import { mountRoutes, openApiPath, pathDecodingGuard, type RouteAuth } from './routes/route-spec';
import type { SchedulerValidator } from './scheduler-validator';
import type { OperationStore, RoomAllocationStore, RoomStore, SchedulerStore } from './store-ports';
import { OperationQueries } from './use-cases/operation-queries';
import type { PingForwardQueue } from '../../common/src/forwarding/forwarding-worker';
import { RoomAllocations, type AllocationSettings } from './use-cases/room-allocation';
import { RoomReports, type RoomEventSink } from './use-cases/room-reports';
import { SchedulerCommands } from './use-cases/scheduler-commands';
import { SchedulerQueries } from './use-cases/scheduler-queries';
import type { Clock } from '../../common/src/runtime/clock';
import type { Liveness } from '../../common/src/runtime/liveness';
import { buildInfo } from '../../common/src/runtime/build-info';

export interface CommonAppDeps {
  logger: Logger;
  metrics: MetricsRegistry;
  readiness: Readiness;
  /** What `/healthz` checks (none: it answers 200 while the process answers HTTP). */
  liveness?: Liveness;
  /** Largest accepted body; larger ones get 413. */
  maxBodyBytes: number;
}

export interface ManagementAppDeps extends CommonAppDeps {
  schedulers: SchedulerStore;
  operations: OperationStore;
  rooms: Pick<RoomStore, 'listRooms' | 'findScheduler' | 'findVersion' | 'findRoom'>;
  allocationStore: RoomAllocationStore;
  allocationSettings?: Partial<AllocationSettings>;
  /** This replica's name, in the AllocationClaims of the allocationIds it answers. */
  replicaId?: string;
  validator: SchedulerValidator;
  credentials: CredentialsProvider;
  /** Milliseconds since the epoch. */
  now: Clock;
  /** Most rooms one scheduler may ask for (ROOMKEEPER_MAX_ROOMS_PER_SCHEDULER); the default when absent. */
  maxRoomsPerScheduler?: number;
}

export interface RoomsAppDeps extends CommonAppDeps {
  rooms: RoomStore;
  recorder: PingRecorder;
  forwarder?: RoomEventSink;
  /** Given: pings are forwarded through it (off the event loop) instead of by `forwarder`. */
  pingQueue?: PingForwardQueue;
  /** Secrets whose room tokens are accepted (current, then previous during a rotation); undefined: ping auth is off. */
  roomTokenSecrets: readonly string[] | undefined;
  /** A ping that changes nothing is forwarded at most this often per room (0: every ping). */
  forwardResyncIntervalMs?: number;
  /** Whether ping answers carry the room's allocation (default true; ROOMKEEPER_PING_ANSWER_ALLOCATION). */
  pingAnswerAllocation?: boolean;
  now?: Clock;
  /** Where refused calls are logged; default one that logs to `logger` at most a line per reason a minute. */
  refusals?: RoomsRefusalLog;
}

/** Health, readiness and metrics: polled every few seconds by probes and Prometheus. */
const POLLED_ROUTES: ReadonlySet<string> = new Set(HEALTH_ROUTES.map((r) => r.path));

function baseApp(deps: CommonAppDeps, api: string, accessLogLevel: 'info' | 'debug', fastPath?: FastPath): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Maestro's routes are case-sensitive: /SCHEDULERS is no route (404), as there.
  app.set('case sensitive routing', true);
  if (fastPath) {
    app.use((req, res, next) => {
      if (!fastPath(req, res)) next();
    });
  }
  app.use(requestContext({ logger: deps.logger, metrics: deps.metrics, api, accessLogLevel, polledRoutes: POLLED_ROUTES }));
  return app;
}

/**
 * `readsAsJson`: which Content-Types are read as JSON (others get 415); the rooms API takes more than
 * the management API. `protojsonStrict`: a body that sends a key twice in one object, or a number
 * beyond a double, gets 400 naming it, as Maestro's protojson answers, instead of JSON.parse keeping
 * the last value unseen or reading Infinity; so does text that is not Unicode (bytes that are not
 * UTF-8, a lone surrogate), which the body parser and the API server turn into U+FFFD. The rooms
 * API takes them all (docs/maestro-compatibility.md: a game server's ping taken before is not
 * refused now, which would leave its room to expire).
 */
function jsonBody(maxBodyBytes: number, readsAsJson: (contentType: string | undefined) => boolean, protojsonStrict: boolean): RequestHandler {
  // The body parser's verify hook is the one place that sees the bytes it parses: kept for the
  // check, which reads them once the parser has taken them as JSON (so malformed JSON is said first).
  const raw = new WeakMap<IncomingMessage, { bytes: Buffer; charset: string | null }>();
  const verify = protojsonStrict ? (req: IncomingMessage, _res: ServerResponse, bytes: Buffer, charset: string | null) => { raw.set(req, { bytes, charset }); } : undefined;
  const parse = express.json({ limit: maxBodyBytes, type: () => true, strict: true, verify });
  return (req, res, next) => {
    if (!hasRequestBody(req.headers)) {
      // Nothing to read (Maestro's allocate sends no body): the body parser's stream set-up is skipped.
      req.body = {};
      next();
      return;
    }
    if (!readsAsJson(req.headers['content-type'])) {
      next(new UnsupportedMediaTypeError(JSON_CONTENT_TYPE_REQUIRED));
      return;
    }
    // A body declared over the limit is refused at once, not after the client sent a megabyte
    // (the body parser waited for it): the same error as the parser's, so one answer says it.
    if (Number(req.headers['content-length']) > maxBodyBytes) {
      next(Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413 }));
      return;
    }
    const type = req.headers['content-type'];
    if (type !== undefined) req.headers['content-type'] = withUtf8Spelling(type);
    parse(req, res, (err?: unknown) => {
      if (err) {
        next(err);
        return;
      }
      if (req.body === undefined) req.body = {};
      const tooDeep = tooDeepError(req.body);
      if (tooDeep) {
        next(tooDeep);
        return;
      }
      // The body parser takes arrays; no route does.
      const notAnObject = notAJsonObject(req.body);
      if (notAnObject !== undefined) {
        next(new InputError(notAnObject));
        return;
      }
      const beyondDouble = protojsonStrict ? unreadableValueError(req.body) : undefined;
      if (beyondDouble !== undefined) {
        next(beyondDouble);
        return;
      }
      const read = raw.get(req);
      raw.delete(req);
      if (read === undefined) {
        next();
        return;
      }
      // Bytes that are not UTF-8 were read as U+FFFD: the API server would store text not sent.
      if (/^utf-?8$/i.test(read.charset ?? 'utf-8') && !isUtf8(read.bytes)) {
        next(new ValidationError([{ field: '(body)', message: 'is not UTF-8 text: it holds bytes that no UTF-8 character is made of; send the body as UTF-8, or name its charset in Content-Type' }]));
        return;
      }
      // Decoded as the body parser decoded it (charset, BOM), so keys compare as it read them.
      next(duplicateKeysError(decode(read.bytes, read.charset ?? 'utf-8')));
    });
  };
}

/**
 * The error for a body that sends a key twice in one object, if it does: the first duplicates
 * named by their paths, and those past them counted, so the sender knows the list is not all.
 */
function duplicateKeysError(text: string): ValidationError | undefined {
  const { paths, total } = findDuplicateKeys(text, DUPLICATE_KEYS_NAMED);
  if (paths.length === 0) return undefined;
  const named = paths.map((field) => ({ field, message: DUPLICATE_KEY }));
  const more = total - paths.length;
  if (more === 0) return new ValidationError(named);
  return new ValidationError([...named, {
    field: '(body)',
    message: `and ${more} more duplicate ${more === 1 ? 'key' : 'keys'}, not named here (only the first ${paths.length} are); send each key once`,
  }]);
}

/** How many duplicate keys a refusal names by their paths. */
const DUPLICATE_KEYS_NAMED = 10;

const DUPLICATE_KEY = 'duplicate key: sent more than once in the same object, and JSON keeps only one of the values; send each key once (the request was refused and nothing changed)';

function finish(app: Express, deps: CommonAppDeps, extraErrorBody?: Record<string, unknown>): Express {
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger, deps.maxBodyBytes, extraErrorBody));
  return app;
}

export function createManagementApp(deps: ManagementAppDeps): Express {
  const allocations = new RoomAllocations({
    rooms: deps.rooms, schedulers: deps.schedulers, store: deps.allocationStore, logger: deps.logger, metrics: deps.metrics, now: deps.now, settings: deps.allocationSettings, replicaId: deps.replicaId,
  });
  const fast = allocateFastPath({ allocations, credentials: deps.credentials, logger: deps.logger, metrics: deps.metrics, maxBodyBytes: deps.maxBodyBytes });
  const app = baseApp(deps, 'management', 'info', fast);
  app.set(FAST_PATH_SETTING, fast);
  const auth: Record<RouteAuth, RequestHandler[]> = { none: [], basic: [basicAuth(deps.credentials)], 'room-token': [] };
  const options = { auth, json: jsonBody(deps.maxBodyBytes, isJsonContentType, true) };
  const router = express.Router({ caseSensitive: true, strict: false });
  mountRoutes(router, HEALTH_ROUTES, healthHandlers(deps.metrics, deps.readiness, deps.liveness), options);
  const document = buildOpenApiDocument(buildInfo().version);
  mountRoutes(router, [OPENAPI_ROUTE], { openapi: () => document }, options);
  const useCases = {
    commands: new SchedulerCommands({ schedulers: deps.schedulers, operations: deps.operations, rooms: deps.rooms, validator: deps.validator, now: deps.now, logger: deps.logger, maxRoomsPerScheduler: deps.maxRoomsPerScheduler }),
    schedulerQueries: new SchedulerQueries({ schedulers: deps.schedulers, rooms: deps.rooms }),
    operationQueries: new OperationQueries({ operations: deps.operations, schedulers: deps.schedulers, rooms: deps.rooms }),
    allocations,
  };
  mountRoutes(router, MANAGEMENT_ROUTES, managementHandlers(useCases), options);
  // A game server given this port's URL for the rooms API is told where its calls go, with or
  // without credentials: it tells nothing of any scheduler or room.
  router.use(pathDecodingGuard(ROOMS_ROUTES.map((r) => r.path)));
  for (const route of ROOMS_ROUTES) {
    router[route.method](route.path, (_req, _res, next) => next(new NotFoundError(roomsCallOnManagementPort(route.method, route.path))));
  }
  app.use(router);
  return finish(app, deps);
}

function roomsCallOnManagementPort(method: string, path: string): string {
  return `the rooms API is not served on the management API port: a game server sends ${method.toUpperCase()} ${openApiPath(path)} to the rooms API port (the URL in the room's ROOMKEEPER_ROOMS_API_URL; 8090 by default), with Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN`;
}

const FAST_PATH_SETTING = 'roomkeeper.fastPath';
const ALLOCATE_ON_MANAGEMENT_PORT = 'allocation is not served on the rooms API port: send POST /scheduler/{name}/rooms/allocate to the management API port, with HTTP Basic auth';

/** The app's fast path, if it has one. */
export function fastPathOf(app: Express): FastPath | undefined {
  return app.get(FAST_PATH_SETTING) as FastPath | undefined;
}

/**
 * A server's request listener: the app's fast path (pings on the rooms API, bodiless allocations on
 * the management API) straight on node:http, then the Express app for everything else (the app
 * also tries the fast path first, so both entries behave alike).
 */
export function requestListener(app: Express): (req: IncomingMessage, res: ServerResponse) => void {
  const fast = fastPathOf(app);
  return (req, res) => {
    if (!fast?.(req, res)) app(req, res);
  };
}

/** The scheduler and room of a rooms API path, as sent (percent-decoded when it can be). */
function roomOfPath(path: string): { schedulerName: string; roomId: string } | undefined {
  const m = /^\/scheduler\/([^/]+)\/rooms\/([^/]+)\//.exec(path);
  if (!m) return undefined;
  const decoded = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  return { schedulerName: decoded(m[1] as string).slice(0, 63), roomId: decoded(m[2] as string).slice(0, 253) };
}

export function createRoomsApp(deps: RoomsAppDeps): Express {
  const now = deps.now ?? Date.now;
  // Refused calls are logged, a line per reason a minute at most (a ping storm makes no flood).
  const refusals = deps.refusals ?? new RoomsRefusalLog({ logger: deps.logger, now, heldKeyIds: deps.roomTokenSecrets?.map((s) => roomTokenKeyId(s)) });
  const reports = new RoomReports({
    rooms: deps.rooms, recorder: deps.recorder, forwarder: deps.forwarder, pingQueue: deps.pingQueue, logger: deps.logger, metrics: deps.metrics,
    now: deps.now, forwardResyncIntervalMs: deps.forwardResyncIntervalMs, answerAllocation: deps.pingAnswerAllocation, refusals,
  });
  const fast = pingFastPath({ reports, roomTokenSecrets: deps.roomTokenSecrets, maxBodyBytes: deps.maxBodyBytes, metrics: deps.metrics, logger: deps.logger, refusals });
  const app = baseApp(deps, 'rooms', 'debug', fast);
  app.set(FAST_PATH_SETTING, fast);
  const secrets = deps.roomTokenSecrets;
  const roomAuth = secrets === undefined ? [] : [roomTokenAuth(secrets, { owners: new RoomTokenOwners({ secrets, rooms: deps.rooms, now }), refusals })];
  // Duplicate keys are not looked for here: a rooms body is a game server's own output, not a
  // person's edit, and a ping refused that was taken before would leave its room to expire.
  const options = { auth: { none: [], basic: [], 'room-token': roomAuth }, json: jsonBody(deps.maxBodyBytes, isRoomsJsonContentType, false) };
  const router = express.Router({ caseSensitive: true, strict: false });
  mountRoutes(router, HEALTH_ROUTES, healthHandlers(deps.metrics, deps.readiness, deps.liveness), options);
  mountRoutes(router, ROOMS_ROUTES, roomsHandlers(reports), options);
  // A ping refused before it was judged (its token, its body) is counted as the fast path counts it.
  router.use((err: unknown, req: express.Request, _res: express.Response, next: express.NextFunction) => {
    const said = errorSaid(err, deps.maxBodyBytes);
    const refused = said.status >= 400 && said.status < 500;
    if (refused && req.method === 'PUT' && PING_PATH.test(req.path)) reports.rejectedPing(req.body);
    // Refused tokens were logged where they were refused; a refused body is logged here.
    const room = refused && !refusalLogged(err) ? roomOfPath(req.path) : undefined;
    if (room) refusals.record({ reason: RoomsRefusalReason.BadRequest, ...room, answer: said.message });
    next(err);
  });
  // Maestro's reference lists allocate beside the rooms routes; here it is a management call. Said
  // to whoever asks, with or without a token: it tells nothing of any scheduler or room.
  const allocateGuard = pathDecodingGuard([ALLOCATE_ROUTE]);
  router.use((req, res, next) => (req.method === 'POST' ? allocateGuard(req, res, next) : next()));
  router.post(ALLOCATE_ROUTE, (_req, _res, next) => next(new NotFoundError(ALLOCATE_ON_MANAGEMENT_PORT)));
  app.use(router);
  return finish(app, deps, { success: false });
}
