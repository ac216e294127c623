/**
 * Plays a room script (`ROOMKEEPER_SIM_ROOM`, room-script.ts) on a room client of
 * @roomkeeper/sdk, for the standalone simulated room (`Dockerfile.simroom`). The in-process
 * simulation (`SimRoom`, `SimRooms`) is a different thing: thousands of rooms in one process on
 * shared keep-alive sockets and deterministic jitter, for tests and benchmarks on the sandbox.
 *
 * The decision is pure (`scriptAction`); `ScriptPlayer` only applies it and arms one timer.
 */
import { scriptStateAt, type RoomScript, type ScriptState } from './room-script';

/** What the player needs of `RoomClient`. */
export interface ScriptedRoom {
  readonly status: string;
  ready(): Promise<void>;
  occupied(): Promise<void>;
  /** The game server hangs: no more pings. */
  close(): void;
}

export type ScriptAction = { kind: 'report'; status: 'ready' | 'occupied' } | { kind: 'hang' } | { kind: 'none' };

/** What to do to a room now reporting `current` (SDK status) when its script says `state`. */
export function scriptAction(current: string, state: ScriptState): ScriptAction {
  if (current === 'terminating' || current === 'terminated') return { kind: 'none' };
  if (state.status === undefined) return current === 'starting' ? { kind: 'none' } : { kind: 'hang' };
  return state.status === current ? { kind: 'none' } : { kind: 'report', status: state.status };
}

export interface ScriptPlayerOptions {
  room: ScriptedRoom;
  script: RoomScript;
  roomId: string;
  pingIntervalMs: number;
  now: () => number;
  /** A status change that failed (e.g. the client was closed); the loop keeps retrying pings itself. */
  onError: (err: unknown) => void;
}

export class ScriptPlayer {
  private startedAtMs = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly options: ScriptPlayerOptions) {}

  start(): void {
    this.startedAtMs = this.options.now();
    this.step();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private step(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const { room, script, roomId, pingIntervalMs, now } = this.options;
    const elapsed = now() - this.startedAtMs;
    const state = scriptStateAt(script, elapsed, { roomId, pingIntervalMs });
    const action = scriptAction(room.status, state);
    if (action.kind === 'hang') {
      room.close();
      this.stop();
      return;
    }
    if (action.kind === 'report') room[action.status]().catch(this.options.onError);
    // A ref'd timer: the game server's own schedule keeps its process alive.
    if (state.nextChangeAtMs !== undefined) this.timer = setTimeout(() => this.step(), Math.max(0, state.nextChangeAtMs - elapsed));
  }
}
