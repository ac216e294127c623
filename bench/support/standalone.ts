/** Running one benchmark file alone (`npx tsx bench/<name>.ts`): run it, print its table. */
import { textTable, type BenchOutcome } from './figures';

export function runStandalone(run: () => Promise<BenchOutcome>): void {
  run().then((outcome) => {
    process.stdout.write(`\n${outcome.name} (${(outcome.durationMs / 1000).toFixed(1)} s)\n${textTable(outcome.figures)}\n`);
    for (const n of outcome.notes) process.stdout.write(`  - ${n}\n`);
    if (outcome.error) process.stdout.write(`  ERROR: ${outcome.error}\n`);
    process.exit(outcome.error ? 1 : 0);
  }, (err: unknown) => {
    console.error(err instanceof Error ? err.stack : String(err));
    process.exit(1);
  });
}
