/**
 * A tiny game server for real clusters (the `Dockerfile.simroom` image), built on
 * @roomkeeper/sdk: the SDK reads the environment Roomkeeper gives every room and runs the ping
 * loop; this file plays the room script (`ROOMKEEPER_SIM_ROOM`, same grammar as the in-process
 * simulated rooms) and, on SIGTERM, lets the SDK report `terminating` then `terminated` before it
 * exits.
 *
 * Environment: ROOMKEEPER_SCHEDULER_NAME, ROOMKEEPER_ROOM_ID (or the MAESTRO_* names),
 * ROOMKEEPER_ROOMS_API_URL, ROOMKEEPER_ROOM_TOKEN (optional), ROOMKEEPER_SIM_ROOM (optional),
 * ROOMKEEPER_PING_INTERVAL (ms, default 5000), ROOMKEEPER_SIM_DRAIN_MS (ms the simulated drain
 * takes on SIGTERM, default 0).
 */
import { counted } from '../../../common/src/text/counted';
import { ConfigError, readRoomConfig, RoomClient } from '../../../sdk/src/index';
import { DEFAULT_SCRIPT, parseRoomScript, type RoomScript } from './room-script';
import { ScriptPlayer } from './script-player';

function log(level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, message, ...fields, timestamp: new Date().toISOString() });
  if (level === 'info') console.log(line);
  else console.error(line);
}

function scriptFromEnv(): RoomScript {
  try {
    return parseRoomScript(process.env.ROOMKEEPER_SIM_ROOM);
  } catch (err) {
    log('warn', `${(err as Error).message}; playing the default script (ready)`);
    return DEFAULT_SCRIPT;
  }
}

function main(): void {
  let config;
  try {
    config = readRoomConfig(process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log('error', err.message);
    process.exitCode = 2;
    return;
  }
  const { schedulerName, roomId, roomsApiUrl } = config;
  const room = new RoomClient({ config });
  room.on('pingFailed', (f) => log('warn', 'ping failed', { schedulerName, roomId, reason: f.reason, consecutiveFailures: f.consecutiveFailures, retryInMs: f.retryInMs }));
  room.on('unhealthy', (f) => log('error', `rooms API unreachable after ${counted(f.consecutiveFailures, 'try', 'tries')}; still trying`, { schedulerName, roomId, reason: f.reason }));
  room.on('healthy', () => log('info', 'rooms API reachable again', { schedulerName, roomId }));
  room.on('allocated', (a) => log('info', 'room allocated', { schedulerName, roomId, allocationId: a.id, expiresAt: a.expiresAt }));
  room.on('allocationExpired', (a) => log('info', 'allocation expired before the room reported occupied', { schedulerName, roomId, allocationId: a.id }));

  const player = new ScriptPlayer({
    room, script: scriptFromEnv(), roomId, pingIntervalMs: config.pingIntervalMs, now: Date.now,
    onError: (err) => log('warn', `status change not reported: ${(err as Error).message}`, { schedulerName, roomId }),
  });
  // The SDK keeps a process alive only while a status change it was asked for is unacknowledged;
  // a game server's own work does the rest. This one has none besides its script, so it holds the
  // process open until it is told to stop, or told its room is gone.
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  const drainMs = Number(process.env.ROOMKEEPER_SIM_DRAIN_MS ?? 0) || 0;
  room.installSignalHandlers({
    signals: ['SIGTERM', 'SIGINT'],
    drain: () => new Promise<void>((resolve) => setTimeout(resolve, drainMs)),
  });
  const stop = (): void => {
    player.stop();
    room.close();
    clearInterval(keepAlive);
  };
  room.on('gone', (message) => {
    log('info', 'game room gone: the rooms API will record nothing of it again; exiting', { schedulerName, roomId, message });
    stop();
  });
  room.on('shutdown', (result) => {
    log('info', 'game room stopped', { schedulerName, roomId, signal: result.signal, drain: result.drain, terminatedAcknowledged: result.terminatedAcknowledged });
    stop();
  });
  player.start();
  log('info', 'game room started', { schedulerName, roomId, roomsApiUrl });
}

main();
