/** The management API's route table (Maestro's paths plus add-rooms and remove-rooms) and its handlers. */
import type { Request, Response } from 'express';
import { MAX_OBJECT_NAME_LENGTH } from '../../../common/src/kube/object-names';
import { NotFoundError } from '../errors';
import type { OperationQueries } from '../use-cases/operation-queries';
import type { RoomAllocations } from '../use-cases/room-allocation';
import type { SchedulerCommands } from '../use-cases/scheduler-commands';
import type { SchedulerQueries } from '../use-cases/scheduler-queries';
import { objectNameParam, queryString, type RouteHandler, type RouteSpec, schedulerNameParam, stringParam } from './route-spec';
import { clipped } from '../../../common/src/text/clipped';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const operationIdResponse = ref('OperationIdResponse');

const SCHEDULER = '/schedulers/:schedulerName';
const OPERATION = `${SCHEDULER}/operations/:operationId`;

/** Where matchmakers allocate a room (Maestro's path). */
export const ALLOCATE_ROUTE = '/scheduler/:schedulerName/rooms/allocate';

export const MANAGEMENT_ROUTES = [
  { id: 'listSchedulers', method: 'get', path: '/schedulers', tag: 'schedulers', auth: 'basic', summary: 'List schedulers (without their room spec)',
    query: [
      { name: 'name', description: 'Only the scheduler with this name (empty: no filter, as every filter here)' },
      { name: 'game', description: 'Only schedulers of this game' },
      { name: 'version', description: 'Only schedulers whose active version is this one' },
    ],
    response: ref('ListSchedulersResponse'), errors: [400, 401] },
  { id: 'createScheduler', method: 'post', path: '/schedulers', tag: 'schedulers', auth: 'basic', summary: 'Create a scheduler (enqueues create_scheduler)',
    requestBody: ref('CreateSchedulerRequest'), response: ref('CreateSchedulerResponse'), errors: [400, 401, 409, 413] },
  { id: 'schedulersInfo', method: 'get', path: '/schedulers/info', tag: 'schedulers', auth: 'basic', summary: 'Room counts of the schedulers of a game',
    query: [{ name: 'game', description: 'The game (all schedulers when absent or empty)' }],
    response: ref('SchedulersInfoResponse'), errors: [400, 401] },
  { id: 'getScheduler', method: 'get', path: SCHEDULER, tag: 'schedulers', auth: 'basic', summary: 'The active definition of a scheduler, or one version of it',
    query: [{ name: 'version', description: 'A version such as v1.1.0 (default: the active one)' }],
    response: ref('GetSchedulerResponse'), errors: [400, 401, 404] },
  { id: 'newSchedulerVersion', method: 'post', path: SCHEDULER, tag: 'schedulers', auth: 'basic', summary: 'Create a new version from a whole definition (enqueues create_new_scheduler_version)',
    requestBody: ref('CreateSchedulerRequest'), response: operationIdResponse, errors: [400, 401, 404, 409, 413] },
  { id: 'patchScheduler', method: 'patch', path: SCHEDULER, tag: 'schedulers', auth: 'basic', summary: 'Change some fields; containers are patched by index (enqueues create_new_scheduler_version)',
    requestBody: ref('PatchSchedulerRequest'), response: operationIdResponse, errors: [400, 401, 404, 409, 413] },
  { id: 'switchActiveVersion', method: 'put', path: SCHEDULER, tag: 'schedulers', auth: 'basic', summary: 'Switch the active version (enqueues switch_active_version)',
    requestBody: ref('SwitchActiveVersionRequest'), response: operationIdResponse, errors: [400, 401, 404, 413] },
  { id: 'deleteScheduler', method: 'delete', path: SCHEDULER, tag: 'schedulers', auth: 'basic', summary: 'Delete a scheduler and its rooms (enqueues delete_scheduler)',
    response: operationIdResponse, errors: [401, 404] },
  { id: 'addRooms', method: 'post', path: `${SCHEDULER}/add-rooms`, tag: 'rooms', auth: 'basic', summary: 'Add rooms (enqueues add_rooms)',
    requestBody: ref('AddRoomsRequest'), response: operationIdResponse, errors: [400, 401, 404, 413] },
  { id: 'removeRooms', method: 'post', path: `${SCHEDULER}/remove-rooms`, tag: 'rooms', auth: 'basic', summary: 'Remove some rooms, or the rooms listed (enqueues remove_rooms)',
    requestBody: ref('RemoveRoomsRequest'), response: operationIdResponse, errors: [400, 401, 404, 413] },
  { id: 'listVersions', method: 'get', path: `${SCHEDULER}/versions`, tag: 'schedulers', auth: 'basic', summary: 'The versions of a scheduler, newest first',
    response: ref('ListVersionsResponse'), errors: [401, 404] },
  { id: 'listOperations', method: 'get', path: `${SCHEDULER}/operations`, tag: 'operations', auth: 'basic', summary: 'Operations of a scheduler in one stage',
    query: [
      { name: 'stage', description: 'pending, active or final', required: true, schema: { type: 'string', enum: ['pending', 'active', 'final'] } },
      { name: 'page', description: 'Page number, from 1 (final stage only)', schema: { type: 'integer', minimum: 1 } },
      { name: 'perPage', description: 'Page size, 1 to 100, default 15 (final stage only)', schema: { type: 'integer', minimum: 1, maximum: 100 } },
      { name: 'orderBy', description: '"createdAt asc" or "createdAt desc" (default)' },
    ],
    response: ref('ListOperationsResponse'), errors: [400, 401] },
  { id: 'getOperation', method: 'get', path: OPERATION, tag: 'operations', auth: 'basic', summary: 'One operation with its input and execution history',
    response: ref('GetOperationResponse'), errors: [401, 404] },
  { id: 'allocateRoom', method: 'post', path: ALLOCATE_ROUTE, tag: 'rooms', auth: 'basic',
    summary: 'Allocate one ready room to a matchmaker (Maestro path; the body is optional); idempotent by allocationId or the Idempotency-Key header',
    requestBody: ref('AllocateRoomRequest'), response: ref('AllocateRoomResponse'), errors: [400, 401, 404, 409, 410, 413, 429, 503],
    errorWords: {
      429: { description: 'No ready room to allocate now (code 8), or the namespace\'s ResourceQuota refused the gateway\'s write: retry after Retry-After (a try after this answer allocates afresh, whatever its allocationId), or add rooms', retryAfter: true },
      503: { description: 'Every candidate room was taken by concurrent allocations, another try of this allocationId is still being answered, or the Kubernetes API cannot be reached (code 14): retry after Retry-After with the same allocationId', retryAfter: true },
    } },
  { id: 'cancelOperation', method: 'post', path: `${OPERATION}/cancel`, tag: 'operations', auth: 'basic', summary: 'Ask for an operation to be canceled',
    requestBody: { type: 'object' }, response: { type: 'object' }, errors: [401, 404, 409] },
] as const satisfies readonly RouteSpec[];

export type ManagementRouteId = (typeof MANAGEMENT_ROUTES)[number]['id'];

export interface ManagementUseCases {
  commands: SchedulerCommands;
  allocations: RoomAllocations;
  schedulerQueries: SchedulerQueries;
  operationQueries: OperationQueries;
}

const opNotFound = (scheduler: string) => (id: string) => `operation ${id} not found in scheduler ${scheduler}`;

/**
 * The operation id of the path. One longer than any object name is told so (a 404, as Maestro
 * answers for any id it does not hold): named by its start and length, and what an id looks like.
 */
function operationIdParam(req: Request, scheduler: string): string {
  const id = stringParam(req, 'operationId');
  if (id.length > MAX_OBJECT_NAME_LENGTH) {
    throw new NotFoundError(`operation id ${clipped(id)} is too long to be an operation id, so scheduler ${scheduler} has no such operation: `
      + `an operation id is the name of its Operation object, at most ${MAX_OBJECT_NAME_LENGTH} characters of lowercase letters, digits, '-' and '.' (a DNS-1123 subdomain), `
      + `such as the UUID the management API answers when it enqueues one (e.g. 0190c2d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d) or the name given to one written with kubectl; GET /schedulers/${scheduler}/operations?stage=final lists them`);
  }
  return objectNameParam(req, 'operationId', opNotFound(scheduler));
}

/**
 * Says in a `Warning: 299` header (RFC 7234, as kube-apiserver warns kubectl of unknown fields)
 * which fields of the body are not a scheduler's: read as not sent, as Maestro reads them, so a
 * misspelt field (`roomReplicas`) does not pass unseen. The body stays Maestro's.
 */
function ignoredWarning(res: Response): (fields: readonly string[]) => void {
  return (fields) => {
    if (res.headersSent) return;
    const words = (f: string) => (/^\(\d+ more\)$/.test(f) ? `${f.slice(1, -6)} more fields ignored` : `field "${clipped(f, 100)}" ignored, as Maestro ignores it: this request sets no such field (GET /openapi.json lists those it sets)`);
    res.setHeader('Warning', fields.map((f) => `299 - "${headerText(words(f))}"`).join(', '));
  };
}

/** A warn-text as a quoted-string holds it: printable ASCII, with `"` and `\` escaped, the rest as \u escapes. */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]|["\\]/g, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

export function managementHandlers(u: ManagementUseCases): Record<ManagementRouteId, RouteHandler> {
  return {
    listSchedulers: (req) => u.schedulerQueries.list({ name: queryString(req, 'name'), game: queryString(req, 'game'), version: queryString(req, 'version') }),
    createScheduler: (req, res) => u.commands.create(req.body, ignoredWarning(res)),
    schedulersInfo: (req) => u.schedulerQueries.info(queryString(req, 'game')),
    getScheduler: (req) => {
      const version = queryString(req, 'version');
      return u.schedulerQueries.get(schedulerNameParam(req), version === '' ? undefined : version);
    },
    newSchedulerVersion: (req, res) => u.commands.newVersion(schedulerNameParam(req), req.body, ignoredWarning(res)),
    patchScheduler: (req, res) => u.commands.patch(schedulerNameParam(req), req.body, ignoredWarning(res)),
    switchActiveVersion: (req) => u.commands.switchActiveVersion(schedulerNameParam(req), req.body),
    deleteScheduler: (req) => u.commands.delete(schedulerNameParam(req, (n) => `no scheduler found, can not delete nonexistent scheduler: ${n}`)),
    addRooms: (req) => u.commands.addRooms(schedulerNameParam(req), req.body),
    removeRooms: (req) => u.commands.removeRooms(schedulerNameParam(req), req.body),
    listVersions: (req) => u.schedulerQueries.versions(schedulerNameParam(req)),
    listOperations: async (req) => {
      const query = {
        stage: queryString(req, 'stage'),
        page: queryString(req, 'page'),
        perPage: queryString(req, 'perPage') ?? queryString(req, 'per_page'),
        orderBy: queryString(req, 'orderBy') ?? queryString(req, 'order_by'),
      };
      // Listing an unknown (or impossible) scheduler gives an empty list, as Maestro.
      const name = stringParam(req, 'schedulerName');
      return u.operationQueries.list(name, query);
    },
    getOperation: (req) => {
      const scheduler = schedulerNameParam(req);
      return u.operationQueries.get(scheduler, operationIdParam(req, scheduler));
    },
    allocateRoom: (req) => u.allocations.allocate(schedulerNameParam(req), req.body, req.get('idempotency-key')),
    cancelOperation: (req) => {
      const scheduler = schedulerNameParam(req);
      return u.operationQueries.cancel(scheduler, operationIdParam(req, scheduler));
    },
  };
}
