/**
 * Benchmark 7: memory under an unauthenticated ping flood (issue 12, H2). The real gateway runs
 * in the bench process with production defaults (per-room tokens on) against the sandbox API
 * server in its own process; a child process sends 100,000 `PUT .../ping` requests over HTTP,
 * each with fresh random 2,000-character scheduler and room names and no token or a wrong one.
 * Figure: growth of the bench process's resident memory (the gateway is the only thing working
 * in it meanwhile) from after a warm-up flood of the same shape to after the flood, both after a
 * full GC. Target: < 20 MB. The warm-up is reported too: under its first burst of 50 busy
 * connections a Node process's RSS rises once to a plateau (about 150-200 MB of anonymous memory
 * here, outside the JS heap, the same with 10-character names and with a bare app), then stays.
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

function settledMemory(): NodeJS.MemoryUsage {
  fullGc();
  return process.memoryUsage();
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
      const idle = settledMemory();
      await sender.call<FloodResult>('flood', { ...shape, requests: WARMUP } satisfies FloodRun);
      const before = settledMemory();
      const result = await sender.call<FloodResult>('flood', { ...shape, requests: REQUESTS } satisfies FloodRun);
      const after = settledMemory();
      const answered = Object.values(result.statuses).reduce((a, b) => a + b, 0);
      const statusNote = Object.entries(result.statuses).map(([s, n]) => `${n} x ${s}`).join(', ');
      figures.push(figure(NAME, 'RSS growth', (after.rss - before.rss) / MB, 'MB', { target: { op: '<=', value: 20 }, note: `${(before.rss / MB).toFixed(1)} -> ${(after.rss / MB).toFixed(1)} MB after a full GC each` }));
      figures.push(figure(NAME, 'heap growth', (after.heapUsed - before.heapUsed) / MB, 'MB'));
      figures.push(figure(NAME, 'RSS rise during the warm-up', (before.rss - idle.rss) / MB, 'MB', { note: `idle ${(idle.rss / MB).toFixed(1)} MB; heap ${((before.heapUsed - idle.heapUsed) / MB).toFixed(1)} MB of it` }));
      figures.push(figure(NAME, 'flood rate', (answered / result.durationMs) * 1000, 'req/s', { note: `${statusNote}; ${result.errors} connection errors` }));
      if (result.errors > 0 || (result.statuses['401'] ?? 0) !== REQUESTS) throw new Error(`expected ${REQUESTS} answers 401, got ${statusNote} and ${result.errors} errors`);
      return {
        name: NAME, figures, durationMs: Date.now() - began,
        notes: [`${REQUESTS} pings after a ${WARMUP}-ping warm-up of the same shape, ${CONNECTIONS} keep-alive connections from a child process; scheduler and room names ${NAME_CHARS} random characters each, fresh for every request; half without a token, half with a wrong one; gateway with production defaults in the bench process; RSS and heap from process.memoryUsage() after a forced full GC; 1 run.`],
      };
    } finally {
      await sender.stop();
    }
  } finally {
    await stack.stop();
  }
}

if (require.main === module) runStandalone(run);
