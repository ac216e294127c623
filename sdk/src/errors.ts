/** Typed errors of the SDK: every failure a caller may want to tell apart has its own class. */

export class RoomkeeperSdkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The environment lacks what the operator gives every room, or holds something unusable. */
export class ConfigError extends RoomkeeperSdkError {
  constructor(message: string, readonly variables: readonly string[]) {
    super(message);
  }
}

/**
 * A status change the room's life does not allow (e.g. `ready()` after `terminating()`), or a
 * running-matches report before the first status; nothing was sent. The message says what to call.
 */
export class IllegalTransitionError extends RoomkeeperSdkError {
  constructor(readonly from: string, readonly to: string, advice?: string) {
    super(`a room cannot go from ${from} to ${to}${advice ? `: ${advice}` : ''}`);
  }
}

/** A later status change was made before this one was acknowledged; it was never reported alone. */
export class SupersededError extends RoomkeeperSdkError {
  constructor(readonly requested: string, readonly reported: string) {
    super(`${requested} was replaced by ${reported} before the rooms API acknowledged it`);
  }
}

/** `close()` was called: the room sends nothing more. */
export class ClosedError extends RoomkeeperSdkError {
  constructor() {
    super('the room client is closed');
  }
}

/** The rooms API answered an event with an error status or a body that is not JSON. */
export class RoomsApiError extends RoomkeeperSdkError {
  constructor(message: string, readonly statusCode: number | undefined) {
    super(message);
  }
}

/**
 * The rooms API said the room is gone (`"roomGone": true`): no ping of it will be recorded again.
 * `ready()`, `occupied()` and `setRunningMatches()` reject with it; the game server should finish or
 * hand over its matches and exit. `reason` is the rooms API's own message (the `gone` event's).
 */
export class RoomGoneError extends RoomkeeperSdkError {
  constructor(readonly reason: string) {
    super(`the room is gone, so it takes no players (only terminating() and terminated() still resolve): ${reason}`);
  }
}
