/**
 * Benchmark 7: memory under an unauthenticated ping flood (issue 12, H2). The real gateway runs
 * in the bench process with production defaults (per-room tokens on) against the sandbox API
 * server in its own process; a child process sends 100,000 `PUT .../ping` requests over HTTP,
 * each with fresh random 2,000-character scheduler and room names and no token or a wrong one.
 * Figure: growth of the bench process's resident memory (the gateway is the only thing working
 * in it meanwhile) from after a warm-up flood of the same shape to after the flood, each once the
 * process has settled: a full GC, then idle (20 s at least) until RSS stops falling (V8 returns the heap pages
 * it freed to the system a few seconds after allocation slows down; until then a busy Node
 * process keeps ~200 MB of freed pages, with short names as with long ones). Target: < 20 MB.
 * The peak RSS during the flood is reported beside it.
 */
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { forkChild } from './support/child-rpc';
import { PROCESSES_DIR, startBenchStack } from './support/bench-stack';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { MB } from './support/process-memory';
import { runStandalone } from './support/standalone';
import type { FloodResult, FloodRun } from './processes/flood-child';

const NAME = '7. unauthenticated ping flood';
const REQUESTS = Number(process.env.BENCH_FLOOD_REQUESTS ?? 100_000);
const WARMUP = 20_000;
const NAME_CHARS = 2_000;
const CONNECTIONS = 50;

/** A full, synchronous GC, so the figures compare live memory rather than GC timing. */
function fullGc(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Memory once settled: a full GC, then idle for at least 20 s (V8's memory reducer acts about
 * 8 s after allocation slows) and until RSS fell by less than 1 MB over the last 10 s; 90 s at most.
 */
async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  fullGc();
  const samples: number[] = [];
  for (let waited = 0; waited < 90_000; waited += 2_000) {
    await sleep(2_000);
    samples.push(process.memoryUsage().rss);
    const tenSecondsAgo = samples[samples.length - 6];
    if (waited >= 20_000 && tenSecondsAgo !== undefined && tenSecondsAgo - samples[samples.length - 1]! < MB) break;
  }
  fullGc();
  return process.memoryUsage();
}

/** Samples RSS every 250 ms while `work` runs; resolves with its result and the highest sample. */
async function withPeakRss<T>(work: Promise<T>): Promise<{ result: T; peakRss: number }> {
  let peakRss = process.memoryUsage().rss;
  const timer = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 250);
  try {
    return { result: await work, peakRss };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const stack = await startBenchStack({ operator: 'none' });
  try {
    const sender = await forkChild<null>(path.join(PROCESSES_DIR, 'flood-child.ts'));
    try {
      const url = stack.gateway.roomsUrl;
      const shape = { url, connections: CONNECTIONS, nameChars: NAME_CHARS };
      const idle = await settledMemory();
      await sender.call<FloodResult>('flood', { ...shape, requests: WARMUP } satisfies FloodRun);
      const before = await settledMemory();
      const { result, peakRss } = await withPeakRss(sender.call<FloodResult>('flood', { ...shape, requests: REQUESTS } satisfies FloodRun));
      const after = await settledMemory();
      const answered = Object.values(result.statuses).reduce((a, b) => a + b, 0);
      const statusNote = Object.entries(result.statuses).map(([s, n]) => `${n} x ${s}`).join(', ');
      figures.push(figure(NAME, 'RSS growth', (after.rss - before.rss) / MB, 'MB', { target: { op: '<=', value: 20 }, note: `${(before.rss / MB).toFixed(1)} -> ${(after.rss / MB).toFixed(1)} MB, settled` }));
      figures.push(figure(NAME, 'heap growth', (after.heapUsed - before.heapUsed) / MB, 'MB'));
      figures.push(figure(NAME, 'RSS growth since idle, warm-up included', (after.rss - idle.rss) / MB, 'MB', { note: `idle ${(idle.rss / MB).toFixed(1)} MB, settled` }));
      figures.push(figure(NAME, 'peak RSS during the flood', peakRss / MB, 'MB', { note: 'sampled every 250 ms; freed V8 pages not yet returned count here' }));
      figures.push(figure(NAME, 'flood rate', (answered / result.durationMs) * 1000, 'req/s', { note: `${statusNote}; ${result.errors} connection errors` }));
      if (result.errors > 0 || (result.statuses['401'] ?? 0) !== REQUESTS) throw new Error(`expected ${REQUESTS} answers 401, got ${statusNote} and ${result.errors} errors`);
      return {
        name: NAME, figures, durationMs: Date.now() - began,
        notes: [`${REQUESTS} pings after a ${WARMUP}-ping warm-up of the same shape, ${CONNECTIONS} keep-alive connections from a child process; scheduler and room names ${NAME_CHARS} random characters each, fresh for every request; half without a token, half with a wrong one; gateway with production defaults in the bench process; RSS and heap from process.memoryUsage(), settled (full GC, then idle for 20 s or more until RSS stops falling); 1 run.`],
      };
    } finally {
      await sender.stop();
    }
  } finally {
    await stack.stop();
  }
}

if (require.main === module) runStandalone(run);
