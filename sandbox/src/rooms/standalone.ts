/**
 * A tiny game server for real clusters (the `Dockerfile.simroom` image): it pings the rooms API
 * from the environment Roomkeeper gives every room, following the same script grammar as the
 * simulated rooms (`ROOMKEEPER_SIM_ROOM`), sends one `terminating` ping on SIGTERM, and exits.
 *
 * Environment: ROOMKEEPER_SCHEDULER_NAME, ROOMKEEPER_ROOM_ID (or the MAESTRO_* names),
 * ROOMKEEPER_ROOMS_API_URL, ROOMKEEPER_ROOM_TOKEN (optional), ROOMKEEPER_SIM_ROOM (optional),
 * ROOMKEEPER_PING_INTERVAL (ms, default 5000).
 */
import { PingClient } from './ping-client';
import { parseRoomScript } from './room-script';
import { SimRoom } from './sim-room';

function required(...names: string[]): string {
  for (const n of names) {
    const v = process.env[n];
    if (v) return v;
  }
  console.error(JSON.stringify({ level: 'error', message: `missing environment variable ${names.join(' or ')}` }));
  process.exit(2);
}

function main(): void {
  const schedulerName = required('ROOMKEEPER_SCHEDULER_NAME', 'MAESTRO_SCHEDULER_NAME');
  const roomId = required('ROOMKEEPER_ROOM_ID', 'MAESTRO_ROOM_ID');
  const roomsApiUrl = required('ROOMKEEPER_ROOMS_API_URL');
  const token = process.env.ROOMKEEPER_ROOM_TOKEN;
  const client = new PingClient({ maxSockets: 1 });
  const room = new SimRoom({
    identity: { schedulerName, roomId, ...(token ? { token } : {}) },
    script: parseRoomScript(process.env.ROOMKEEPER_SIM_ROOM),
    roomsApiUrl,
    pingIntervalMs: Number(process.env.ROOMKEEPER_PING_INTERVAL ?? 5000) || 5000,
    firstPingDelayMs: 0,
    send: (ping) => client.send(ping),
    now: () => Date.now(),
    onPing: (status, result) => {
      if (!result.ok) console.error(JSON.stringify({ level: 'warn', message: 'ping failed', status, error: result.error, code: result.statusCode }));
    },
  });
  room.start();
  console.log(JSON.stringify({ level: 'info', message: 'game room started', schedulerName, roomId, roomsApiUrl }));
  const stop = (): void => {
    room.terminate();
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main();
