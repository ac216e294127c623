/** Resident memory of another process, read from /proc (Linux). */
import { promises as fs } from 'node:fs';

export interface ProcessMemory {
  /** Current resident set size, bytes. */
  rssBytes: number;
  /** Peak resident set size since the process started (VmHWM), bytes. */
  peakRssBytes: number;
}

export async function readProcessMemory(pid: number): Promise<ProcessMemory> {
  const text = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
}

export const MB = 1024 * 1024;
