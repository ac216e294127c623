/**
 * What a simulated game server reports over time, chosen by the pod's env `ROOMKEEPER_SIM_ROOM`.
 *
 * Grammar: a comma-separated list of steps; times are seconds after the room started (fractions
 * allowed, e.g. `0.2`). Empty or absent means `ready`.
 *
 *   ready                 ping `ready` (the default)
 *   occupied              ping `occupied` from the start
 *   occupied-after:<s>    ping `occupied` from <s> seconds after the start
 *   free-after:<s>        back to `ready` <s> seconds after becoming occupied (needs occupied[-after])
 *   start-after:<s>       stay silent for the first <s> seconds, then ping
 *   stop-after:<s>        stop pinging <s> seconds after the start (a hung game server)
 *   never-ping            never ping at all
 *   random:<seed>[:<s>]   every <s> seconds (default: twice the ping interval) pick ready or
 *                         occupied at random, deterministically from the seed and the room id
 *
 * Examples: `occupied-after:1,free-after:2`, `start-after:0.5,stop-after:3`, `random:42:5`.
 * A room being deleted sends one `terminating` ping and stops, whatever its script.
 */
import { fnv1a32 } from '../../../common/src/text/fnv';

export const SIM_ROOM_ENV = 'ROOMKEEPER_SIM_ROOM';

export type ScriptedStatus = 'ready' | 'occupied';

export interface RoomScript {
  neverPing: boolean;
  startAfterMs: number;
  stopAfterMs?: number;
  occupiedAfterMs?: number;
  freeAfterMs?: number;
  random?: { seed: number; slotMs?: number };
}

export const DEFAULT_SCRIPT: RoomScript = Object.freeze({ neverPing: false, startAfterMs: 0 });

export class InvalidRoomScriptError extends Error {
  constructor(readonly value: string, reason: string) {
    super(`invalid ${SIM_ROOM_ENV} value ${JSON.stringify(value)}: ${reason}`);
    this.name = 'InvalidRoomScriptError';
  }
}

export function parseRoomScript(value: string | undefined): RoomScript {
  const script: RoomScript = { neverPing: false, startAfterMs: 0 };
  if (value === undefined || value.trim() === '') return script;
  const seconds = (text: string | undefined): number => {
    if (text === undefined || !/^\d+(\.\d+)?$/.test(text)) throw new InvalidRoomScriptError(value, `${JSON.stringify(text ?? '')} is not a number of seconds`);
    return Math.round(Number(text) * 1000);
  };
  for (const raw of value.split(',')) {
    const [name = '', ...args] = raw.trim().split(':');
    const arity = (n: number, max = n) => {
      if (args.length < n || args.length > max) throw new InvalidRoomScriptError(value, `${name} takes ${n === max ? n : `${n} to ${max}`} argument(s)`);
    };
    switch (name) {
      case 'ready': arity(0); break;
      case 'never-ping': arity(0); script.neverPing = true; break;
      case 'occupied': arity(0); script.occupiedAfterMs = 0; break;
      case 'occupied-after': arity(1); script.occupiedAfterMs = seconds(args[0]); break;
      case 'free-after': arity(1); script.freeAfterMs = seconds(args[0]); break;
      case 'start-after': arity(1); script.startAfterMs = seconds(args[0]); break;
      case 'stop-after': arity(1); script.stopAfterMs = seconds(args[0]); break;
      case 'random': {
        arity(1, 2);
        const seedText = args[0] ?? '';
        if (!/^-?\d+$/.test(seedText)) throw new InvalidRoomScriptError(value, `random seed ${JSON.stringify(seedText)} is not an integer`);
        script.random = { seed: Number(seedText), ...(args[1] !== undefined ? { slotMs: Math.max(1, seconds(args[1])) } : {}) };
        break;
      }
      default:
        throw new InvalidRoomScriptError(value, `unknown step ${JSON.stringify(name)}`);
    }
  }
  if (script.freeAfterMs !== undefined && script.occupiedAfterMs === undefined) throw new InvalidRoomScriptError(value, 'free-after needs occupied or occupied-after');
  if (script.random && script.occupiedAfterMs !== undefined) throw new InvalidRoomScriptError(value, 'random cannot be combined with occupied or occupied-after');
  return script;
}

/** 32-bit mix of a seed, a room id and a slot number, mapped to [0, 1). */
export function unitRandom(seed: number, roomId: string, slot: number): number {
  let h = fnv1a32(`${roomId}#${slot}`, 0x811c9dc5 ^ seed);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 0x100000000;
}

export interface ScriptState {
  /** What the game server reports now; `undefined` when it is silent. */
  status?: ScriptedStatus;
  /** Milliseconds after the start at which the answer changes next, if ever. */
  nextChangeAtMs?: number;
}

export interface ScriptContext {
  roomId: string;
  pingIntervalMs: number;
}

/** The scripted status `elapsedMs` after the room started: a pure function. */
export function scriptStateAt(script: RoomScript, elapsedMs: number, ctx: ScriptContext): ScriptState {
  if (script.neverPing) return {};
  const stopAt = script.stopAfterMs;
  if (stopAt !== undefined && elapsedMs >= stopAt) return {};
  const changes: number[] = [];
  if (stopAt !== undefined) changes.push(stopAt);
  const finish = (state: ScriptState): ScriptState => {
    const next = changes.filter((t) => t > elapsedMs);
    return next.length > 0 ? { ...state, nextChangeAtMs: Math.min(...next) } : state;
  };
  if (elapsedMs < script.startAfterMs) {
    changes.push(script.startAfterMs);
    return finish({});
  }
  if (script.random) {
    const slotMs = script.random.slotMs ?? Math.max(1, 2 * ctx.pingIntervalMs);
    const slot = Math.floor(elapsedMs / slotMs);
    changes.push((slot + 1) * slotMs);
    return finish({ status: unitRandom(script.random.seed, ctx.roomId, slot) < 0.5 ? 'ready' : 'occupied' });
  }
  const occupiedAt = script.occupiedAfterMs;
  if (occupiedAt === undefined) return finish({ status: 'ready' });
  if (elapsedMs < occupiedAt) {
    changes.push(occupiedAt);
    return finish({ status: 'ready' });
  }
  if (script.freeAfterMs === undefined) return finish({ status: 'occupied' });
  const freeAt = occupiedAt + script.freeAfterMs;
  if (elapsedMs < freeAt) {
    changes.push(freeAt);
    return finish({ status: 'occupied' });
  }
  return finish({ status: 'ready' });
}
