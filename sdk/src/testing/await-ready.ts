/**
 * A game server that waits for its room's `ready()` acknowledgement and has nothing else keeping it
 * alive (no game socket): run in a child process by room-client.process.test.ts, which checks that
 * the pending acknowledgement alone keeps the process alive while the rooms API is down, and that
 * the process ends by itself once it was acknowledged. ROOMS_API_URL names the rooms API.
 */
import { RoomClient } from '../room-client.js';

const room = new RoomClient({
  config: { schedulerName: 'arena', roomId: 'arena-1', roomsApiUrl: process.env.ROOMS_API_URL ?? '', pingIntervalMs: 50 },
  backoff: { baseMs: 20, capMs: 50 },
});
room.on('pingFailed', (f) => console.log(`pingFailed ${f.consecutiveFailures}`));
room.ready().then(() => console.log('ready acknowledged'), (err: unknown) => console.log(`ready failed: ${String(err)}`));
