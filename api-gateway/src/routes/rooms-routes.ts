/** The rooms API's route table (Maestro's singular `/scheduler/` prefix) and its handlers. */
import type { RoomReports } from '../use-cases/room-reports';
import { type RouteHandler, type RouteSpec, stringParam } from './route-spec';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ROOM = '/scheduler/:schedulerName/rooms/:roomId';

export const ROOMS_ROUTES = [
  { id: 'ping', method: 'put', path: `${ROOM}/ping`, tag: 'rooms-api', auth: 'room-token', summary: 'A room reports its status (200 {success:false, message} when it is not recorded: an unknown room, or a status after terminating)',
    requestBody: ref('PingRequest'), response: ref('PingResponse'), errors: [400, 401, 413] },
  { id: 'roomEvent', method: 'post', path: `${ROOM}/roomevent`, tag: 'rooms-api', auth: 'room-token', summary: 'A room event, forwarded to the scheduler\'s forwarders',
    requestBody: ref('RoomEventRequest'), response: ref('EventResponse'), errors: [400, 401, 413] },
  { id: 'playerEvent', method: 'post', path: `${ROOM}/playerevent`, tag: 'rooms-api', auth: 'room-token', summary: 'A player joined or left, forwarded to the scheduler\'s forwarders',
    requestBody: ref('PlayerEventRequest'), response: ref('EventResponse'), errors: [400, 401, 413] },
  { id: 'roomStatus', method: 'put', path: `${ROOM}/status`, tag: 'rooms-api', auth: 'room-token', summary: 'Deprecated (Maestro v9): forwards a status; changes nothing',
    requestBody: ref('RoomStatusRequest'), response: ref('SuccessResponse'), errors: [400, 401, 413] },
  { id: 'roomAddress', method: 'get', path: `${ROOM}/address`, tag: 'rooms-api', auth: 'room-token', summary: 'Host and ports of a room',
    response: ref('RoomAddressResponse'), errors: [401, 404] },
] as const satisfies readonly RouteSpec[];

export type RoomsRouteId = (typeof ROOMS_ROUTES)[number]['id'];

export function roomsHandlers(reports: RoomReports): Record<RoomsRouteId, RouteHandler> {
  const ids = (req: Parameters<RouteHandler>[0]) => [stringParam(req, 'schedulerName'), stringParam(req, 'roomId')] as const;
  return {
    ping: (req) => reports.ping(...ids(req), req.body),
    roomEvent: (req) => reports.roomEvent(...ids(req), req.body),
    playerEvent: (req) => reports.playerEvent(...ids(req), req.body),
    roomStatus: (req) => reports.status(...ids(req), req.body),
    roomAddress: (req) => reports.address(...ids(req)),
  };
}
