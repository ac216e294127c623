/**
 * `npm test`'s runner. Jest runs twice:
 *   1. the unit, integration and end-to-end projects (on the embedded sandbox), two suites at once;
 *   2. the real-API-server tier (test/real-apiserver/) against real Kubernetes control planes from
 *      ROOMKEEPER_K8S_ASSETS, in three groups side by side, each one suite at a time: the whole
 *      end-to-end suite on a shared control plane of its own, the other shared-plane suites on a
 *      second one, and the suites that bring down a control plane of their own (outages, a 429
 *      window) spread over the groups. The runner starts the two shared planes; each group's output
 *      lines are prefixed with its name. Without the binaries the tier says NOT RUN, here and in
 *      each of its suites, and passes.
 * The two runs do not overlap: side by side, with five suites at once on 2 cores, operation leases
 * of the tests' 3 s expired and a 1,000-room chaos test could not bring its rooms up (tried).
 * Arguments are passed to both runs unchanged (`npm test -- test/e2e`); then the real tier is one
 * group on one plane. With `--selectProjects` only the projects named run (`npm run test:real --
 * test/real-apiserver/e2e-suite.test.ts`, `npm run test:real -- -t 'Ctrl-C' test/real-apiserver/npm-start.test.ts`).
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { controlPlaneAssets, REAL_APISERVER_INFO_ENV } from './control-plane';
import { startRealApiServer } from './real-apiserver';

const JEST = path.resolve(__dirname, '../../node_modules/.bin/jest');
const children = new Set<ReturnType<typeof spawn>>();

/** The real-tier suite that runs all of test/e2e (the longest): on a shared plane of its own. */
const E2E_SUITE = 'test/real-apiserver/e2e-suite\\.test\\.ts$';
/**
 * Real-tier suites that start, stop and kill a control plane of their own (`startOutageLab`):
 * they never touch a shared one, so each group can take one; they go where they even out the
 * groups' times (outage operations about 390 s alone, the e2e suite 460 s, the rest 390 s).
 */
const OUTAGE_OPERATIONS = 'test/real-apiserver/apiserver-outage-operations\\.test\\.ts$';
const THROTTLED_WRITES = 'test/real-apiserver/apiserver-throttled-writes\\.test\\.ts$';

/** Runs jest; with `prefix`, each line of its output is printed after it (two runs at once stay readable). */
function runJest(args: string[], env: NodeJS.ProcessEnv, prefix?: string): Promise<number> {
  const child = spawn(JEST, args, { stdio: prefix === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'], env });
  children.add(child);
  if (prefix !== undefined) {
    for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]] as const) {
      if (from) readline.createInterface({ input: from }).on('line', (line) => to.write(`${prefix} ${line}\n`));
    }
  }
  return new Promise<number>((resolve) => child.once('exit', (c, s) => {
    children.delete(child);
    resolve(c ?? (s ? 1 : 0));
  }));
}

async function main(): Promise<number> {
  const userArgs = process.argv.slice(2);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

  // `--selectProjects` given: one run of what was asked (with the real plane if it is asked for).
  // Both forms: `--selectProjects real-apiserver` and `--selectProjects=real-apiserver` (the one
  // `npm run test:real` uses, so that `npm run test:real -- -t 'Ctrl-C' <file>` reaches jest as options).
  const selected = userArgs.some((a) => a === '--selectProjects' || a.startsWith('--selectProjects='));
  const wantsReal = !selected || userArgs.some((a) => a === 'real-apiserver' || a === '--selectProjects=real-apiserver');
  // jest's --selectProjects takes a list, also in the `=` form: test paths after it would be read
  // as more project names (and every suite of the project would run), so it goes last.
  const jestArgs = [...userArgs.filter((a) => !a.startsWith('--selectProjects=')), ...userArgs.filter((a) => a.startsWith('--selectProjects='))];
  // --forceExit: a request still waiting out a Retry-After, or a socket of a stopped stack, must
  // not hold the run open once every suite has finished (seen: the run never ended).
  const sandboxTiers = selected && wantsReal ? 0 : await runJest(selected ? jestArgs : ['--maxWorkers=2', '--selectProjects', 'unit', 'integration', 'e2e', '--passWithNoTests', '--forceExit', ...jestArgs], process.env);
  if (!wantsReal) return sandboxTiers;
  const started = Date.now();
  const realTier = await runRealTier(selected, jestArgs).catch((err: unknown) => {
    process.stderr.write(`npm test: the real API server tier could not start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    return 1;
  });
  process.stdout.write(`[real-apiserver] tier ${realTier === 0 ? 'passed' : 'FAILED'}; it added ${Math.round((Date.now() - started) / 1000)} s to this run\n`);
  return sandboxTiers !== 0 ? sandboxTiers : realTier;
}

/** The real-API-server tier: its control planes, then its groups of suites side by side. */
async function runRealTier(selected: boolean, jestArgs: string[]): Promise<number> {
  const assets = controlPlaneAssets();
  // --forceExit: a suite that fails half-way may leave a killed API server's sockets behind; the run must end.
  const tier = ['--selectProjects', 'real-apiserver', '--runInBand', '--forceExit', '--passWithNoTests'];
  if ('missing' in assets) {
    process.stdout.write(`\n[real-apiserver] NOT RUN: ${assets.missing}\n`);
    return runJest(selected ? ['--runInBand', '--forceExit', ...jestArgs] : [...tier, ...jestArgs], { ...process.env, ROOMKEEPER_REAL_APISERVER_NOT_RUN: assets.missing });
  }
  // The whole tier (no file or option given): three groups; otherwise what was asked, on one plane.
  const whole = jestArgs.every((a) => a === 'real-apiserver' || a.startsWith('--selectProjects'));
  // Each group names the shared plane it uses; the outage-operations suite is given the second
  // one's too, as the sign that the tier runs (it never touches it).
  const groups: Array<{ name: string; args: string[]; plane: number }> = whole
    ? [
      { name: '[real e2e]', args: [...tier, E2E_SUITE, THROTTLED_WRITES], plane: 0 },
      { name: '[real plane]', args: [...tier, '--testPathIgnorePatterns', '/node_modules/', E2E_SUITE, THROTTLED_WRITES, OUTAGE_OPERATIONS], plane: 1 },
      { name: '[outage ops]', args: [...tier, OUTAGE_OPERATIONS], plane: 1 },
    ]
    : [{ name: '', args: selected ? ['--runInBand', '--forceExit', ...jestArgs] : [...tier, ...jestArgs], plane: 0 }];
  const planes: Array<Awaited<ReturnType<typeof startRealApiServer>>> = [];
  try {
    const started = Date.now();
    const count = Math.max(...groups.map((g) => g.plane)) + 1;
    const starts = await Promise.allSettled(Array.from({ length: count }, () => startRealApiServer(assets.dir)));
    for (const r of starts) if (r.status === 'fulfilled') planes.push(r.value); // stopped below whatever happens
    for (const r of starts) if (r.status === 'rejected') throw r.reason;
    for (const { info } of planes) {
      process.stdout.write(`\n[real-apiserver] RUN: kube-apiserver v1.28 at ${info.url} with etcd and kube-controller-manager, ready and prepared in ${Date.now() - started} ms (logs: ${info.dir})\n`);
    }
    const codes = await Promise.all(groups.map((g) =>
      runJest(g.args, { ...process.env, [REAL_APISERVER_INFO_ENV]: planes[g.plane]?.infoFile }, g.name === '' ? undefined : g.name)));
    return codes.find((c) => c !== 0) ?? 0;
  } finally {
    await Promise.all(planes.map(({ plane }) => plane.stop()));
  }
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`npm test: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
