/**
 * Which pods are game rooms, and who they are: read from the plain `value` of the containers' env.
 * `ROOMKEEPER_SCHEDULER_NAME` and `ROOMKEEPER_ROOM_ID` (or Maestro's `MAESTRO_*` names) make a pod
 * a room; `ROOMKEEPER_ROOM_TOKEN` is sent as a bearer token; `ROOMKEEPER_ROOMS_API_URL` overrides
 * the simulator's rooms API URL; `ROOMKEEPER_SIM_ROOM` scripts its behaviour (room-script.ts).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { RoomEnv } from '../../../common/src/rooms/room-env';
import { podEnvValue } from '../kubelet/pod-fields';
import { SIM_ROOM_ENV } from './room-script';

export interface RoomIdentity {
  schedulerName: string;
  roomId: string;
  token?: string;
  roomsApiUrl?: string;
  script?: string;
}

export function roomIdentityOf(pod: V1Pod): RoomIdentity | undefined {
  const schedulerName = podEnvValue(pod, RoomEnv.SchedulerName) ?? podEnvValue(pod, RoomEnv.MaestroSchedulerName);
  const roomId = podEnvValue(pod, RoomEnv.RoomId) ?? podEnvValue(pod, RoomEnv.MaestroRoomId);
  if (!schedulerName || !roomId) return undefined;
  const identity: RoomIdentity = { schedulerName, roomId };
  const token = podEnvValue(pod, RoomEnv.RoomToken);
  if (token) identity.token = token;
  const url = podEnvValue(pod, RoomEnv.RoomsApiUrl);
  if (url) identity.roomsApiUrl = url;
  const script = podEnvValue(pod, SIM_ROOM_ENV);
  if (script !== undefined) identity.script = script;
  return identity;
}

/** `{base}/scheduler/{name}/rooms/{id}/ping`, keeping any path prefix of the base URL. */
export function pingUrl(roomsApiUrl: string, schedulerName: string, roomId: string): string {
  const base = roomsApiUrl.replace(/\/+$/, '');
  return `${base}/scheduler/${encodeURIComponent(schedulerName)}/rooms/${encodeURIComponent(roomId)}/ping`;
}
