/**
 * Runs the simulated room image's entry point (Dockerfile.simroom runs its compiled form,
 * dist/sandbox/src/rooms/standalone.js) as a real process from its TypeScript source, with only
 * the environment given (and PATH), collecting its output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The entry point's source, relative to the repository root. */
export const STANDALONE_ROOM_SOURCE = 'sandbox/src/rooms/standalone.ts';

export interface StandaloneRoomProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Its exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

export function runStandaloneRoom(env: Record<string, string>): StandaloneRoomProcess {
  // Node with tsx's loader, not the tsx command: that one runs the program as its child and kills
  // it outright when it does not acknowledge a signal within 60 ms (a busy event loop).
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, STANDALONE_ROOM_SOURCE)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}
