/**
 * How much CPU a process's main thread (a node process's event loop) got, and how long it waited
 * for one while runnable, read from /proc/<pid>/schedstat (Linux). The wait tells a starved
 * process (ready to run, the cores taken) from a busy one.
 */
import { promises as fs } from 'node:fs';

export interface MainThreadCpu {
  /** Time on a CPU, ms. */
  runMs: number;
  /** Time runnable but waiting for a CPU, ms. */
  waitMs: number;
}

export async function readMainThreadCpu(pid: number): Promise<MainThreadCpu | undefined> {
  try {
    const [run, wait] = (await fs.readFile(`/proc/${pid}/schedstat`, 'utf8')).trim().split(/\s+/).map(Number);
    return run === undefined || wait === undefined ? undefined : { runMs: run / 1e6, waitMs: wait / 1e6 };
  } catch {
    return undefined;
  }
}
