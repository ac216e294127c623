/**
 * The environment a room pod is given (the operator's pod template writes it; a game server, the SDK
 * and the sandbox's simulated rooms read it). The names are the contract; `sdk/src/config.ts` spells
 * them again because the SDK is published on its own and imports nothing from this repository.
 */
export const RoomEnv = {
  SchedulerName: 'ROOMKEEPER_SCHEDULER_NAME',
  RoomId: 'ROOMKEEPER_ROOM_ID',
  /** Maestro's names for the same two values, for game servers written for Maestro. */
  MaestroSchedulerName: 'MAESTRO_SCHEDULER_NAME',
  MaestroRoomId: 'MAESTRO_ROOM_ID',
  /** Where the room pings; absent when the operator was given no rooms API URL. */
  RoomsApiUrl: 'ROOMKEEPER_ROOMS_API_URL',
  /** The room's bearer token for the rooms API; absent without a room-token secret. */
  RoomToken: 'ROOMKEEPER_ROOM_TOKEN',
} as const;
