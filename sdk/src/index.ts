/** @roomkeeper/sdk: a game server's client for Roomkeeper's (and Maestro's) rooms API. */
export { RoomClient } from './room-client.js';
export type { EventAnswer, RoomClientOptions, RoomClientEvents, PingFailure, ShutdownResult, SignalHandlerOptions, SignalSource } from './room-client.js';
export { readRoomConfig, roomUrl, DEFAULT_PING_INTERVAL_MS } from './config.js';
export type { RoomConfig, Env } from './config.js';
export { ClosedError, ConfigError, IllegalTransitionError, RoomGoneError, RoomkeeperSdkError, RoomsApiError, SupersededError } from './errors.js';
export { isLegalTransition, MAX_RUNNING_MATCHES } from './lifecycle.js';
export type { ReportedStatus, RoomStatus } from './lifecycle.js';
export { parsePingAnswer } from './ping-answer.js';
export type { Allocation, PingAnswer } from './ping-answer.js';
export { backoffDelay, drainShare, jitteredInterval, DEFAULT_BACKOFF, DEFAULT_SHUTDOWN_BUDGET_MS } from './timing.js';
export type { BackoffPolicy } from './timing.js';
export type { FetchLike } from './transport.js';
