/**
 * `npm run bench`: every benchmark in sequence, then one table of figures with targets and
 * PASS/MISS, written to bench/results.json and bench/RESULTS.md. Never part of `npm test`.
 * A benchmark that fails is reported as such and the others still run.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONFIG_SCHEMA } from '../common/src/config';
import { run as addRooms } from './add-rooms';
import { allocationBenchName, run as allocationThroughput } from './allocation-throughput';
import { loneAllocationBenchName, run as loneAllocation } from './lone-allocation';
import { REPLICA_CONTENTION_BENCH, run as replicaContention } from './replica-contention';
import { run as creationThroughput } from './creation-throughput';
import { run as forwardingOverhead } from './forwarding-overhead';
import { run as pingFlood } from './ping-flood';
import { run as pingThroughput } from './ping-throughput';
import { run as rollingSwitch } from './rolling-switch';
import { run as scale, scaleBenchName } from './scale';
import { run as soak } from './soak';
import { run as steadyFleet } from './steady-fleet';
import { realTargetAvailable } from './support/bench-stack';
import { figure, markdownTable, textTable, type BenchOutcome } from './support/figures';

const real = realTargetAvailable();
/** On the real control plane, or a note that it could not run here. */
function onRealApiServer(name: string, run: () => Promise<BenchOutcome>): () => Promise<BenchOutcome> {
  return real.ok ? run : () => Promise.resolve({ name, figures: [], notes: [`NOT RUN: ${real.reason}`], durationMs: 0 });
}

const BENCHMARKS: { name: string; run: () => Promise<BenchOutcome> }[] = [
  { name: '1. add_rooms 1,000', run: () => addRooms('sandbox') },
  { name: '1r. add_rooms 1,000, real API server', run: onRealApiServer('1r. add_rooms 1,000, real API server', () => addRooms('real')) },
  { name: '2. creation throughput', run: () => creationThroughput('sandbox') },
  { name: '2r. creation throughput, real API server', run: onRealApiServer('2r. creation throughput, real API server', () => creationThroughput('real')) },
  { name: '3+5. steady fleet of 10,000 rooms', run: steadyFleet },
  { name: '4. ping throughput', run: pingThroughput },
  { name: '6. forwarding overhead', run: forwardingOverhead },
  { name: '7. unauthenticated ping flood', run: pingFlood },
  { name: '8. rolling switch, 1,000 rooms', run: rollingSwitch },
  { name: '9. soak, 10k rooms, churn and leader kills', run: soak },
  { name: scaleBenchName('real'), run: onRealApiServer(scaleBenchName('real'), () => scale('real')) },
  { name: allocationBenchName('sandbox', 1000), run: () => allocationThroughput('sandbox') },
  { name: allocationBenchName('sandbox', 10_000), run: () => allocationThroughput('sandbox', 10_000) },
  { name: allocationBenchName('real', 1000), run: onRealApiServer(allocationBenchName('real', 1000), () => allocationThroughput('real')) },
  { name: allocationBenchName('real', 10_000), run: onRealApiServer(allocationBenchName('real', 10_000), () => allocationThroughput('real', 10_000)) },
  { name: loneAllocationBenchName('sandbox', 10_000), run: () => loneAllocation('sandbox') },
  { name: loneAllocationBenchName('real', 10_000), run: onRealApiServer(loneAllocationBenchName('real', 10_000), () => loneAllocation('real')) },
  { name: REPLICA_CONTENTION_BENCH, run: replicaContention },
];

async function main(): Promise<void> {
  const began = new Date();
  const outcomes: BenchOutcome[] = [];
  for (const b of BENCHMARKS) {
    process.stdout.write(`running ${b.name}...\n`);
    const t0 = Date.now();
    try {
      const outcome = await b.run();
      outcomes.push(outcome);
      process.stdout.write(`${textTable(outcome.figures)}\n(${((Date.now() - t0) / 1000).toFixed(1)} s)\n\n`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      outcomes.push({ name: b.name, figures: [], notes: [], durationMs: Date.now() - t0, error: message });
      process.stdout.write(`FAILED: ${message}\n\n`);
    }
  }
  const limits = [
    figure('client rate limit (default)', 'kubeQps', CONFIG_SCHEMA.kubeQps.default, 'req/s', { note: CONFIG_SCHEMA.kubeQps.env }),
    figure('client rate limit (default)', 'kubeBurst', CONFIG_SCHEMA.kubeBurst.default, 'requests', { note: CONFIG_SCHEMA.kubeBurst.env }),
  ];
  const figures = [...outcomes.flatMap((o) => o.figures), ...limits];
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '', memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` };
  const totalSeconds = (Date.now() - began.getTime()) / 1000;
  const results = { startedAt: began.toISOString(), totalSeconds: Math.round(totalSeconds), machine, benchmarks: outcomes, defaults: limits };
  await fs.writeFile(path.join(__dirname, 'results.json'), JSON.stringify(results, null, 2) + '\n');

  const md = [
    '# Benchmark results',
    '',
    `Measured ${began.toISOString()} by \`npm run bench\` (${Math.round(totalSeconds)} s) on ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGb} GB, Node ${machine.node}. One measured run per figure unless a note says otherwise.`,
    '',
    markdownTable(figures),
    '',
    '## How each was measured',
    '',
    ...outcomes.flatMap((o) => [`### ${o.name}`, '', ...o.notes.map((n) => `- ${n}`), ...(o.error ? [`- **Failed:** ${o.error}`] : []), '']),
  ].join('\n');
  await fs.writeFile(path.join(__dirname, 'RESULTS.md'), md);

  process.stdout.write(`\nAll benchmarks (${Math.round(totalSeconds)} s)\n${textTable(figures)}\n\nWritten: bench/results.json, bench/RESULTS.md\n`);
  process.exit(outcomes.some((o) => o.error) ? 1 : 0);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.stack : String(err));
    process.exit(1);
  });
}
