/**
 * `npm test`'s runner. Two tiers run at the same time (each spends about half its time waiting on
 * deadlines, leases and outages, so together they keep a 2-core machine busy):
 *   1. the unit, integration and end-to-end projects (on the embedded sandbox), two suites at once;
 *   2. the real-API-server tier (test/real-apiserver/) against real Kubernetes control planes from
 *      ROOMKEEPER_K8S_ASSETS, in three groups side by side, each one suite at a time: the whole
 *      end-to-end suite on a control plane of its own (E2E_SUITE), the other shared-plane suites on
 *      a second one, and the suites that bring down a control plane of their own (outages, a 429
 *      window: OWN_PLANE). The runner starts the two shared planes. Without the binaries the tier
 *      says NOT RUN, here and in each of its suites, and passes.
 * Each real-tier group's output lines are prefixed with its name.
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

/**
 * The real-tier suites that start, stop and kill a control plane of their own
 * (`startOutageLab`): they never touch the shared one, so they run beside its suites.
 */
const OWN_PLANE = 'test/real-apiserver/apiserver-(outage|outage-operations|throttled-writes)\\.test\\.ts$';

/** The real-tier suite that runs all of test/e2e: the longest, so on a plane of its own. */
const E2E_SUITE = 'test/real-apiserver/e2e-suite\\.test\\.ts$';

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
  const sandboxRun = selected && wantsReal ? Promise.resolve(0) : runJest(selected ? jestArgs : ['--maxWorkers=2', '--selectProjects', 'unit', 'integration', 'e2e', '--passWithNoTests', '--forceExit', ...jestArgs], process.env);
  if (!wantsReal) return sandboxRun;
  const started = Date.now();
  const realRun = runRealTier(selected, jestArgs).catch((err: unknown) => {
    process.stderr.write(`npm test: the real API server tier could not start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    return 1;
  });
  const [sandboxTiers, realTier] = await Promise.all([sandboxRun, realRun]);
  process.stdout.write(`[real-apiserver] tier ${realTier === 0 ? 'passed' : 'FAILED'}; it took ${Math.round((Date.now() - started) / 1000)} s${selected ? '' : ', beside the sandbox tiers'}\n`);
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
  // Each group names the shared plane it uses; the own-plane suites are given the second one's
  // too, as the sign that the tier runs (they never touch it).
  const groups: Array<{ name: string; args: string[]; plane: number }> = whole
    ? [
      { name: '[real e2e]', args: [...tier, E2E_SUITE], plane: 0 },
      { name: '[real plane]', args: [...tier, '--testPathIgnorePatterns', '/node_modules/', OWN_PLANE, E2E_SUITE], plane: 1 },
      { name: '[own planes]', args: [...tier, OWN_PLANE], plane: 1 },
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
