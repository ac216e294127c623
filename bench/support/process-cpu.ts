/**
 * How much CPU a process's main thread (a node process's event loop) got, and how long it waited
 * for one while runnable, read from /proc/<pid>/schedstat (Linux). The wait tells a starved
 * process (ready to run, the cores taken) from a busy one. And what whole processes spent, to say
 * which of them a phase's rooms cost the CPU of.
 */
import { execFileSync } from 'node:child_process';
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

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ), asked once. */
let ticksPerSecond: number | undefined;
function userHz(): number {
  if (ticksPerSecond === undefined) {
    const asked = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    ticksPerSecond = Number.isFinite(asked) && asked > 0 ? asked : 100;
  }
  return ticksPerSecond;
}

/**
 * CPU time of a whole process (user + system, every thread, those that ended too), ms, from
 * /proc/<pid>/stat (Linux); undefined when the process is gone.
 */
async function readProcessCpuMs(pid: number): Promise<number | undefined> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime
    // are the 12th and 13th of them (fields 14 and 15 of the whole line).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / userHz() : undefined;
  } catch {
    return undefined;
  }
}

/** CPU ms of each named process, read now (processes gone are left out). */
export async function readProcessesCpuMs(pids: Readonly<Record<string, number>>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const ms = await readProcessCpuMs(pid);
    if (ms !== undefined) out[name] = ms;
  }
  return out;
}

/**
 * What each process spent between two readings, per unit of work ("ms per room"), and the total,
 * in one line for a figure's note: "kube-apiserver 9.1, etcd 2.0, ...; total 15.2 ms CPU per room".
 */
export function describeCpuPer(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>, units: number, unit: string): { totalMs: number; note: string } {
  const parts: [string, number][] = [];
  for (const [name, end] of Object.entries(after)) {
    const start = before[name];
    if (start !== undefined) parts.push([name, (end - start) / units]);
  }
  parts.sort((a, b) => b[1] - a[1]);
  const totalMs = parts.reduce((sum, [, ms]) => sum + ms, 0);
  return { totalMs, note: `${parts.map(([name, ms]) => `${name} ${ms.toFixed(2)}`).join(', ')}; total ${totalMs.toFixed(2)} ms CPU per ${unit}` };
}
