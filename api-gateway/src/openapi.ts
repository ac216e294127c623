/**
 * The OpenAPI 3 document of the whole HTTP surface (management and rooms APIs), built from the
 * same route tables the routers are mounted from.
 */
import { crdSchemas } from '../../common/src/generated/schemas';
import { MAX_ROOM_ID_LENGTH, MAX_ROOM_IDS_PER_REQUEST, MAX_ROOMS_PER_REQUEST } from '../../common/src/operations/operation-inputs';
import { PING_STATUSES } from '../../common/src/rooms/room-status';
import { ALLOCATION_ID_PATTERN } from '../../common/src/rooms/allocation';
import { MAX_RUNNING_MATCHES } from './use-cases/room-reports';
import { ALLOCATE_REQUEST_SCHEMA, ALLOCATE_SELECTOR_SCHEMA } from './use-cases/room-allocation';
import { HEALTH_ROUTES, OPENAPI_ROUTE } from './routes/health-routes';
import { MANAGEMENT_ROUTES } from './routes/management-routes';
import { ROOMS_ROUTES } from './routes/rooms-routes';
import { openApiPath, type RouteSpec, type Schema } from './routes/route-spec';

/** The rooms API reads more types as JSON than the management API (Maestro's game servers send any). */
const ROOMS_UNSUPPORTED_MEDIA_TYPE = 'Body sent with a Content-Type not read as JSON (JSON, none, text/plain and application/x-www-form-urlencoded are), or in a charset that is not a UTF one (utf-8, utf-16le, …: those are read) (code 3)';

/** A rooms-API timestamp: Unix seconds within int64, as a number or a numeric string. */
const TIMESTAMP: Schema = { description: 'Unix seconds, an integer within int64, as a number or a numeric string; checked only', oneOf: [{ type: 'integer', format: 'int64' }, { type: 'string', pattern: '^-?[0-9]{1,19}$' }] };

/** A ping's running matches: 0 to MAX_RUNNING_MATCHES, as a number or a string of digits (as Maestro accepts it); null is as absent. */
const RUNNING_MATCHES: Schema = {
  nullable: true,
  description: `Matches running in a multi-match room, 0 to ${MAX_RUNNING_MATCHES}; null is as absent. An occupied ping without it, or with 0, is stored as one match`,
  oneOf: [{ type: 'integer', minimum: 0, maximum: MAX_RUNNING_MATCHES }, { type: 'string', pattern: '^[0-9]{1,9}$', description: `A string of digits, of a number at most ${MAX_RUNNING_MATCHES}` }],
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid argument or failed precondition (code 3 or 9)',
  401: 'Missing or wrong credentials (code 16)',
  404: 'Not found (code 5)',
  409: 'Already exists, no change, or a final operation (code 6 or 10)',
  410: 'A replayed allocationId whose allocation has ended (code 9): expired, or the room was given to another match; use a new allocationId',
  429: 'No ready room to allocate (code 8); see Retry-After',
  413: 'Body larger than the limit (code 3)',
  415: 'Body sent with a Content-Type that is not JSON (application/json or application/<x>+json), or in a charset that is not a UTF one (utf-8, utf-16le, …: those are read) (code 3)',
  501: 'Method not allowed on this path (code 12)',
  503: 'Not ready',
};

/** Converts a CRD schema (with x-kubernetes-* keywords) into an OpenAPI 3.0 schema. */
function fromCrdSchema(schema: unknown): Schema {
  if (Array.isArray(schema)) return schema.map(fromCrdSchema) as unknown as Schema;
  if (typeof schema !== 'object' || schema === null) return schema as Schema;
  const out: Schema = {};
  const entries: [string, unknown][] = Object.entries(schema);
  for (const [k, v] of entries) {
    if (k === 'x-kubernetes-int-or-string' && v === true) {
      out.oneOf = [{ type: 'integer' }, { type: 'string' }];
    } else if (k.startsWith('x-kubernetes-')) {
      continue;
    } else if (k === 'properties' && typeof v === 'object' && v !== null) {
      out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, fromCrdSchema(s)]));
    } else {
      out[k] = typeof v === 'object' ? fromCrdSchema(v) : v;
    }
  }
  return out;
}

function components(): Record<string, Schema> {
  const spec = fromCrdSchema(crdSchemas.Scheduler.properties?.spec ?? { type: 'object' });
  const specProps = (spec.properties ?? {}) as Record<string, Schema>;
  const required = Array.isArray(spec.required) ? (spec.required as string[]) : [];
  const statusFields: Schema = {
    status: { type: 'string', enum: [...PING_STATUSES] },
    timestamp: TIMESTAMP,
    runningMatches: RUNNING_MATCHES,
    running_matches: { ...RUNNING_MATCHES, description: 'runningMatches as Maestro\'s protojson also spells it; a body with both answers 400' },
    metadata: { type: 'object' },
  };
  const operationItem: Schema = {
    type: 'object',
    properties: {
      id: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'in_progress', 'finished', 'error', 'canceled', 'evicted'] },
      definitionName: { type: 'string' },
      lease: { type: 'object', properties: { ttl: { type: 'string', format: 'date-time' } } },
      schedulerName: { type: 'string' },
      createdAt: { type: 'string', format: 'date-time' },
    },
  };
  const schedulerView: Schema = {
    type: 'object',
    description: 'Maestro\'s Scheduler message (maxSurge as a string, forwarder timeout as a string).',
    properties: {
      name: { type: 'string' }, game: { type: 'string' }, state: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' },
      maxSurge: { type: 'string' }, roomsReplicas: { type: 'integer' }, portRange: specProps.portRange ?? { type: 'object' },
      spec: { type: 'object', properties: { version: { type: 'string' }, terminationGracePeriod: { type: 'string' }, containers: { type: 'array', items: { type: 'object' } }, toleration: { type: 'string' }, affinity: { type: 'string' }, nodeSelector: { type: 'object', additionalProperties: { type: 'string' } }, priorityClassName: { type: 'string' }, imagePullSecrets: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } }, restartPolicy: { type: 'string', enum: ['Never'] } } },
      autoscaling: { type: 'object' }, forwarders: { type: 'array', items: { type: 'object' } },
      annotations: { type: 'object', additionalProperties: { type: 'string' } }, labels: { type: 'object', additionalProperties: { type: 'string' } },
    },
  };
  return {
    Error: {
      type: 'object', required: ['code', 'message', 'details'],
      properties: {
        success: { type: 'boolean', enum: [false], description: 'On the rooms API only (its answers all carry success, as Maestro\'s)' },
        code: { type: 'integer', description: 'gRPC status code' }, message: { type: 'string' }, details: { type: 'array', items: { type: 'object' } },
      },
    },
    CreateSchedulerRequest: { type: 'object', required: ['name', ...required], properties: { name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }, ...specProps } },
    PatchSchedulerRequest: { type: 'object', description: 'Every field optional; spec.containers are patched by index.', properties: Object.fromEntries(Object.entries(specProps).filter(([k]) => k !== 'game')) },
    SwitchActiveVersionRequest: {
      type: 'object',
      description: 'The version to make active, as version (Maestro) or newActiveVersion (the operation input); one of them',
      properties: { version: { type: 'string', example: 'v1.1.0' }, newActiveVersion: { type: 'string', example: 'v1.1.0' } },
    },
    AddRoomsRequest: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer', minimum: 1, maximum: MAX_ROOMS_PER_REQUEST } } },
    RemoveRoomsRequest: { type: 'object', description: 'amount or roomsIds', properties: { amount: { type: 'integer', minimum: 1, maximum: MAX_ROOMS_PER_REQUEST }, roomsIds: { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX_ROOM_ID_LENGTH }, minItems: 1, maxItems: MAX_ROOM_IDS_PER_REQUEST } } },
    OperationIdResponse: { type: 'object', properties: { operationId: { type: 'string' } } },
    Scheduler: schedulerView,
    CreateSchedulerResponse: { type: 'object', properties: { scheduler: { $ref: '#/components/schemas/Scheduler' }, operationId: { type: 'string' } } },
    GetSchedulerResponse: { type: 'object', properties: { scheduler: { $ref: '#/components/schemas/Scheduler' } } },
    ListSchedulersResponse: {
      type: 'object',
      properties: { schedulers: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, game: { type: 'string' }, state: { type: 'string' }, version: { type: 'string' }, portRange: { type: 'object' }, createdAt: { type: 'string' }, maxSurge: { type: 'string' }, roomsReplicas: { type: 'integer' }, matchAllocation: { type: 'object', properties: { maxMatches: { type: 'integer' } } } } } } },
    },
    SchedulersInfoResponse: {
      type: 'object',
      properties: { schedulers: { type: 'array', items: { type: 'object', properties: {
        name: { type: 'string' }, game: { type: 'string' }, state: { type: 'string' }, roomsReplicas: { type: 'integer' }, roomsReady: { type: 'integer' },
        roomsOccupied: { type: 'integer', description: 'Occupied rooms, and allocated rooms (taken by a matchmaker, their match not reported yet)' }, roomsPending: { type: 'integer' }, roomsTerminating: { type: 'integer' }, autoscaling: { type: 'object' },
        roomsActive: { type: 'integer', description: 'Multi-match rooms running at least one match and fewer than maxMatches, with no open allocation (the allocate API may offer them a slot); one holding an open allocation counts in roomsOccupied' },
        matchAllocation: { type: 'object', properties: { maxMatches: { type: 'integer' } } },
        runningMatches: { type: 'integer', description: 'Matches running in the serving rooms plus open allocations (each counts as one)' },
        matchSlots: { type: 'integer', description: 'Match capacity: serving rooms (ready, allocated, active, occupied) times maxMatches' },
        roomsSilent: { type: 'integer', description: 'Rooms marked silent (no ping seen for ROOMKEEPER_ROOM_SILENCE_TIMEOUT), counted in their status too: not allocated until they ping again' },
      } } } },
    },
    ListVersionsResponse: { type: 'object', properties: { versions: { type: 'array', items: { type: 'object', properties: { version: { type: 'string' }, isActive: { type: 'boolean' }, createdAt: { type: 'string' } } } } } },
    ListOperationsResponse: { type: 'object', properties: { page: { type: 'integer' }, pageSize: { type: 'integer' }, total: { type: 'integer' }, operations: { type: 'array', items: operationItem } } },
    GetOperationResponse: {
      type: 'object',
      properties: { operation: { allOf: [operationItem, { type: 'object', properties: { input: { type: 'object' }, executionHistory: { type: 'array', items: { type: 'object', properties: { createdAt: { type: 'string' }, event: { type: 'string' } } } } } }] } },
    },
    // The deprecated status endpoint takes a ping's body but changes nothing: no allocation to name.
    RoomStatusRequest: { type: 'object', required: ['status'], properties: statusFields },
    PingRequest: {
      type: 'object', required: ['status'],
      properties: {
        ...statusFields,
        allocationId: { type: 'string', minLength: 1, maxLength: 128, pattern: ALLOCATION_ID_PATTERN, description: 'Not in Maestro. The allocation (its id, from a ping answer) whose match the game server started: marks it taken, whatever runningMatches says' },
      },
    },
    RoomEventRequest: { type: 'object', required: ['event'], properties: { event: { type: 'string', minLength: 1, maxLength: 256 }, timestamp: TIMESTAMP, metadata: { type: 'object' } } },
    PlayerEventRequest: {
      type: 'object', required: ['event', 'metadata'],
      properties: { event: { type: 'string', enum: ['playerJoin', 'playerLeft'] }, timestamp: TIMESTAMP, metadata: { type: 'object', required: ['playerId'], properties: { playerId: { type: 'string', minLength: 1 } } } },
    },
    AllocateRoomRequest: {
      type: 'object',
      properties: {
        allocationId: { ...ALLOCATE_REQUEST_SCHEMA.properties?.allocationId, description: 'Idempotency key (or the Idempotency-Key header): a replay answers the same room' },
        selectors: { type: 'array', maxItems: 16, description: 'Tried in order; the first that matches a ready room wins', items: { type: 'object', additionalProperties: false, properties: { version: { ...ALLOCATE_SELECTOR_SCHEMA.properties?.version }, labels: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string' } } } } },
        strategy: { type: 'string', enum: ['packed', 'distributed'], default: 'packed' },
        ttlSeconds: { ...ALLOCATE_REQUEST_SCHEMA.properties?.ttlSeconds, description: "How long the room is held if it does not report occupied (capped by the scheduler's allocation.maxTtlSeconds, default 300, and ROOMKEEPER_ALLOCATION_MAX_TTL). An integer, or a string of its digits (\"5\"), as every integer field of the management API; ttl_seconds is read as ttlSeconds" },
        metadata: { type: 'object', description: 'Passed to the room in its ping answer (at most 4096 bytes as JSON; no "__proto__" key at any depth)' },
      },
    },
    AllocateRoomResponse: {
      type: 'object',
      properties: {
        success: { type: 'boolean' }, roomId: { type: 'string' }, host: { type: 'string' },
        ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string' }, port: { type: 'integer' } } } },
        version: { type: 'string' }, allocationId: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' }, message: { type: 'string' },
      },
    },
    SuccessResponse: { type: 'object', properties: { success: { type: 'boolean' } } },
    PingResponse: {
      type: 'object',
      properties: {
        success: { type: 'boolean' },
        allocation: { type: 'object', description: 'A matchmaker allocated the room (not sent with ROOMKEEPER_PING_ANSWER_ALLOCATION=false)', properties: { id: { type: 'string' }, metadata: { type: 'object' }, expiresAt: { type: 'string', format: 'date-time' } } },
        message: { type: 'string', description: 'With success false only: why the ping was not recorded, and what the room should do (a terminated ping is answered true only once written: until then, send it again)' },
        roomGone: { type: 'boolean', enum: [true], description: 'With success false only, when the room will never be recorded again (its GameRoom or its scheduler is gone or being deleted): stop pinging and exit. Not in Maestro' },
      },
    },
    HealthzAnswer: {
      type: 'object', required: ['status', 'checks'], description: 'What /healthz answers (common/src/health-answers.ts); failing and whatToDo with 503 only',
      properties: {
        status: { type: 'string', enum: ['ok', 'unhealthy'] },
        checks: { type: 'array', items: { type: 'object', required: ['check', 'ok', 'sees', 'timeoutSeconds'], properties: {
          check: { type: 'string', description: 'The check\'s name' }, ok: { type: 'boolean' },
          sees: { type: 'string', description: 'The oldest work the check watches and since when, or that none waits' },
          timeoutSeconds: { type: 'number', description: 'How long that work may wait before the check fails' },
        } } },
        failing: { type: 'array', items: { type: 'object', required: ['check', 'failingSince', 'what', 'meaning'], properties: {
          check: { type: 'string' }, failingSince: { type: 'string', format: 'date-time' }, what: { type: 'string', description: 'The work that has waited too long' }, meaning: { type: 'string', description: 'What the failure means' },
        } } },
        whatToDo: { type: 'string' },
      },
    },
    ReadyzAnswer: {
      type: 'object', required: ['status', 'checks'], description: 'What /readyz answers (common/src/health-answers.ts); reason with 503 only',
      properties: {
        status: { type: 'string', enum: ['ready', 'not ready'] },
        reason: { type: 'string', description: 'The reasons of the checks that make the process not ready, joined by "; "' },
        checks: { type: 'array', items: { type: 'object', required: ['check', 'ready'], properties: {
          check: { type: 'string', description: 'The check\'s name' }, ready: { type: 'boolean' },
          reason: { type: 'string', description: 'Why not ready and what to do (when not ready)' },
          stillReadyBecause: { type: 'string', description: 'A check that fails but does not gate readiness: why the process is ready all the same' },
        } } },
      },
    },
    EventResponse: { type: 'object', properties: { success: { type: 'boolean' }, message: { type: 'string' }, roomGone: { type: 'boolean', enum: [true], description: 'As in PingResponse: the room is gone for good' } } },
    RoomAddressResponse: { type: 'object', properties: { ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string' }, port: { type: 'integer' } } } }, host: { type: 'string' }, ipv6Label: { type: 'string' } } },
  };
}

function operation(route: RouteSpec, server: 'management' | 'rooms'): Schema {
  const params: Schema[] = [...openApiPath(route.path).matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  for (const q of route.query ?? []) params.push({ name: q.name, in: 'query', required: q.required ?? false, description: q.description, schema: q.schema ?? { type: 'string' } });
  const responses: Schema = {
    200: {
      description: 'OK',
      content: { [route.responseContentType ?? 'application/json']: { schema: route.response } },
    },
  };
  // Every route that reads a body refuses one that is not JSON, and every path answers 501 to a method it does not have.
  for (const status of [...route.errors, ...(route.requestBody ? [415] : []), 501]) {
    const own = route.errorBodies?.[status];
    const words = route.errorWords?.[status];
    const text = words?.description ?? (status === 415 && server === 'rooms' ? ROOMS_UNSUPPORTED_MEDIA_TYPE : STATUS_TEXT[status]);
    const headers = words?.retryAfter ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } } } } : {};
    responses[status] = own
      ? { description: own.description, content: { 'application/json': { schema: own.schema } } }
      : { description: text ?? 'Error', ...headers, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return {
    operationId: `${route.id}${server === 'rooms' && route.tag === 'health' ? 'Rooms' : ''}`,
    summary: route.summary,
    tags: [route.tag],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(route.requestBody ? { requestBody: { required: true, content: { 'application/json': { schema: route.requestBody } } } } : {}),
    responses,
    security: route.auth === 'basic' ? [{ basicAuth: [] }] : route.auth === 'room-token' ? [{ roomToken: [] }] : [],
    servers: [{ url: server === 'management' ? '{managementUrl}' : '{roomsUrl}', variables: server === 'management' ? { managementUrl: { default: 'http://localhost:8080' } } : { roomsUrl: { default: 'http://localhost:8090' } } }],
  };
}

/** Every route of each listener, as mounted. */
export const MANAGEMENT_LISTENER_ROUTES: readonly RouteSpec[] = [...HEALTH_ROUTES, OPENAPI_ROUTE, ...MANAGEMENT_ROUTES];
export const ROOMS_LISTENER_ROUTES: readonly RouteSpec[] = [...HEALTH_ROUTES, ...ROOMS_ROUTES];

/**
 * The document. Health routes exist on both listeners (same path), so they are documented once,
 * for the management listener; the rooms listener serves the same ones.
 */
export function buildOpenApiDocument(version = '0.1.0'): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  const add = (route: RouteSpec, server: 'management' | 'rooms') => {
    const p = openApiPath(route.path);
    const entry = (paths[p] ??= {});
    if (!entry[route.method]) entry[route.method] = operation(route, server);
  };
  for (const r of MANAGEMENT_LISTENER_ROUTES) add(r, 'management');
  for (const r of ROOMS_LISTENER_ROUTES) add(r, 'rooms');
  return {
    openapi: '3.0.3',
    info: {
      title: 'Roomkeeper',
      version,
      description: 'Management API (HTTP Basic auth) and rooms API (per-room bearer token) of Roomkeeper. Errors are {code, message, details} with gRPC codes, as Maestro. Health routes (/healthz, /livez, /readyz, /metrics) are served on both listeners.',
    },
    tags: [{ name: 'schedulers' }, { name: 'rooms' }, { name: 'operations' }, { name: 'rooms-api' }, { name: 'health' }],
    paths,
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic' },
        roomToken: { type: 'http', scheme: 'bearer', description: 'ROOMKEEPER_ROOM_TOKEN of the room (when ping authentication is on)' },
      },
      schemas: components(),
    },
  };
}
