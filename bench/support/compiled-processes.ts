/**
 * Bench children compiled to JavaScript and run by plain node, as the image runs the operator and
 * the gateway (`node dist/...`), so a child's resident memory holds no TypeScript loader.
 * Compiled once per bench process with `bench/tsconfig.processes.json` into
 * `.roomkeeper/bench-dist/` (ignored by git).
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const OUT = path.join(ROOT, '.roomkeeper/bench-dist');
let built = false;

/** The compiled path of `bench/processes/<name>.ts`, compiling the children first if needed. */
export function compiledScript(name: string): string {
  if (!built) {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'bench/tsconfig.processes.json')], { cwd: ROOT, stdio: 'inherit' });
    built = true;
  }
  return path.join(OUT, 'bench/processes', `${name}.js`);
}
