/**
 * What the operator gives every room pod (operator/src/rooms/domain/pod-template.ts):
 * `ROOMKEEPER_SCHEDULER_NAME` and `ROOMKEEPER_ROOM_ID` (also as Maestro's `MAESTRO_SCHEDULER_NAME`
 * and `MAESTRO_ROOM_ID`), `ROOMKEEPER_ROOMS_API_URL`, and `ROOMKEEPER_ROOM_TOKEN` when the
 * operator has a room-token secret. Read once, validated, frozen.
 */
import { ConfigError } from './errors.js';

export interface RoomConfig {
  readonly schedulerName: string;
  readonly roomId: string;
  /** Base URL of the rooms API, without the `/scheduler/...` part. */
  readonly roomsApiUrl: string;
  /** Sent as `Authorization: Bearer <token>`; absent when the operator gives rooms no token. */
  readonly token?: string;
  /** Interval between pings; `ROOMKEEPER_PING_INTERVAL` in milliseconds, default 5000. */
  readonly pingIntervalMs: number;
}

export type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_PING_INTERVAL_MS = 5000;

function first(env: Env, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/** Reads the room's configuration; throws one `ConfigError` naming every missing or bad variable. */
export function readRoomConfig(env: Env = process.env): RoomConfig {
  const missing: string[] = [];
  const bad: string[] = [];
  const schedulerName = first(env, ['ROOMKEEPER_SCHEDULER_NAME', 'MAESTRO_SCHEDULER_NAME']);
  if (!schedulerName) missing.push('ROOMKEEPER_SCHEDULER_NAME (or MAESTRO_SCHEDULER_NAME)');
  const roomId = first(env, ['ROOMKEEPER_ROOM_ID', 'MAESTRO_ROOM_ID']);
  if (!roomId) missing.push('ROOMKEEPER_ROOM_ID (or MAESTRO_ROOM_ID)');
  const roomsApiUrl = first(env, ['ROOMKEEPER_ROOMS_API_URL']);
  if (!roomsApiUrl) missing.push('ROOMKEEPER_ROOMS_API_URL');
  else if (!isHttpUrl(roomsApiUrl)) bad.push(`ROOMKEEPER_ROOMS_API_URL must be an http(s) URL, got ${JSON.stringify(roomsApiUrl)}`);
  const intervalText = first(env, ['ROOMKEEPER_PING_INTERVAL']);
  const pingIntervalMs = intervalText === undefined ? DEFAULT_PING_INTERVAL_MS : Number(intervalText);
  if (!Number.isInteger(pingIntervalMs) || pingIntervalMs < 10) bad.push(`ROOMKEEPER_PING_INTERVAL must be an integer number of milliseconds of at least 10, got ${JSON.stringify(intervalText)}`);
  if (missing.length > 0 || bad.length > 0 || !schedulerName || !roomId || !roomsApiUrl) {
    const parts = [...(missing.length > 0 ? [`missing environment variables: ${missing.join(', ')}`] : []), ...bad];
    throw new ConfigError(`${parts.join('; ')} (the Roomkeeper operator sets them on every room pod)`, [...missing, ...bad.map((b) => b.split(' ')[0] ?? b)]);
  }
  const token = first(env, ['ROOMKEEPER_ROOM_TOKEN']);
  return Object.freeze({ schedulerName, roomId, roomsApiUrl, pingIntervalMs, ...(token ? { token } : {}) });
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `{base}/scheduler/{name}/rooms/{id}/{action}`, keeping any path prefix of the base URL. */
export function roomUrl(config: Pick<RoomConfig, 'roomsApiUrl' | 'schedulerName' | 'roomId'>, action: 'ping' | 'roomevent' | 'playerevent'): string {
  const base = config.roomsApiUrl.replace(/\/+$/, '');
  return `${base}/scheduler/${encodeURIComponent(config.schedulerName)}/rooms/${encodeURIComponent(config.roomId)}/${action}`;
}
