/**
 * `npm test`'s runner. Jest runs twice:
 *   1. the unit, integration and end-to-end projects (on the embedded sandbox), three suites at once
 *      (on 2 cores, 2026-12-03/04: 653–691 s with two, 436 and 448 s with three, 361 s with four; they
 *      mostly wait on their deadlines' polls, about 44 % of the CPU idle even with three). When the
 *      whole real tier follows (no argument, the binaries present), the suites it runs again on a
 *      real plane (test/support/plane-suites.ts) are left out here: 310 s instead of 463 s in CI on 2026-12-04;
 *   2. the real-API-server tier (test/real-apiserver/) against real Kubernetes control planes from
 *      ROOMKEEPER_K8S_ASSETS, in three groups side by side, each one suite at a time: the whole
 *      end-to-end suite on a shared control plane of its own; the other shared-plane suites on a
 *      second one; and the suites that start, stop and kill a control plane of their own (outages,
 *      a 429 window), so the three groups' times even out (about 700 s each on 2 cores). The output lines of the
 *      first and third groups are prefixed `[real e2e]` and `[outages]`. Without the binaries the
 *      tier says NOT RUN, here and in each of its suites, and passes.
 * Tried on 2 cores and not kept: both runs at once (2026-12-01; five suites at a time: test
 * operation leases expired, a 1,000-room chaos test could not bring its rooms up). The three
 * groups were tried on 2026-12-01 too and withdrawn when the outage-operations suite's 1,000 rooms
 * once saw 36 pings reset at one instant; that was the simulated rooms' ping client writing to
 * keep-alive sockets the gateway had timed out, fixed on 2026-12-03 (sandbox/src/rooms/ping-client.ts).
 * Arguments are passed to both runs unchanged (`npm test -- test/e2e`). With `--selectProjects`
 * only the projects named run (`npm run test:real -- test/real-apiserver/e2e-suite.test.ts`,
 * `npm run test:real -- -t 'Ctrl-C' test/real-apiserver/npm-start.test.ts`).
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { controlPlaneAssets, REAL_APISERVER_INFO_ENV } from './control-plane';
import { suitesLeftToThePlane } from './plane-suites';
import { escapeRegExp } from './regexp';
import { startRealApiServer } from './real-apiserver';

const JEST = path.resolve(__dirname, '../../node_modules/.bin/jest');
const children = new Set<ReturnType<typeof spawn>>();

/** The real-tier suite that runs all of test/e2e (the longest, about 480 s alone): on a shared plane of its own. */
const E2E_SUITE = 'test/real-apiserver/e2e-suite\\.test\\.ts$';
/** The README walkthrough on the plane (about 40 s): with the e2e suite, in the group that ended first. */
const README_WALKTHROUGH = 'test/real-apiserver/readme-walkthrough\\.test\\.ts$';
/**
 * The real-tier suites that start, stop and kill a control plane of their own
 * (`startOutageLab`): they never touch a shared one. Alone: outage 195 s, outage operations
 * 300 s, throttled writes 110 s; the other shared-plane suites about 590 s together.
 */
const OUTAGES = 'test/real-apiserver/apiserver-(outage|outage-operations)\\.test\\.ts$';
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
  const assets = controlPlaneAssets();
  // The whole run with the real tier: the suites it runs again on a real plane are not run on the sandbox first.
  const leftToThePlane = userArgs.length === 0 && !('missing' in assets) ? suitesLeftToThePlane() : [];
  if (leftToThePlane.length > 0) {
    process.stdout.write(`[sandbox] ${leftToThePlane.length} suites run on the real control plane below instead (test/support/plane-suites.ts); \`npm run test:e2e\` and \`npm run test:integration\` run them on the sandbox\n`);
  }
  const ignored = leftToThePlane.length > 0 ? ['--testPathIgnorePatterns', '/node_modules/', ...leftToThePlane.map((f) => `/${escapeRegExp(f)}$`)] : [];
  const sandboxTiers = selected && wantsReal ? 0 : await runJest(selected ? jestArgs : ['--maxWorkers=3', ...ignored, '--selectProjects', 'unit', 'integration', 'e2e', '--passWithNoTests', '--forceExit', ...jestArgs], process.env);
  if (!wantsReal) return sandboxTiers;

  const started = Date.now();
  // --forceExit: a suite that fails half-way may leave a killed API server's sockets behind; the run must end.
  const tier = ['--selectProjects', 'real-apiserver', '--runInBand', '--forceExit', '--passWithNoTests'];
  // The whole tier (no file or option given): three groups; otherwise what was asked, on one plane.
  const whole = jestArgs.every((a) => a === 'real-apiserver' || a.startsWith('--selectProjects'));
  // Each group names the shared plane it uses (the outage suites never touch theirs: it is the
  // sign for them that the tier runs).
  const asked = selected ? ['--runInBand', '--forceExit', ...jestArgs] : [...tier, ...jestArgs];
  const groups: Array<{ name: string | undefined; args: string[]; plane: number }> = whole
    ? [
      { name: '[real e2e]', args: [...tier, E2E_SUITE, README_WALKTHROUGH], plane: 0 },
      { name: undefined, args: [...tier, '--testPathIgnorePatterns', '/node_modules/', E2E_SUITE, README_WALKTHROUGH, THROTTLED_WRITES, OUTAGES], plane: 1 },
      { name: '[outages]', args: [...tier, OUTAGES, THROTTLED_WRITES], plane: 1 },
    ]
    : [{ name: undefined, args: asked, plane: 0 }];
  const planes: Array<Awaited<ReturnType<typeof startRealApiServer>>> = [];
  let realTier: number;
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    if ('missing' in assets) {
      env.ROOMKEEPER_REAL_APISERVER_NOT_RUN = assets.missing;
      process.stdout.write(`\n[real-apiserver] NOT RUN: ${assets.missing}\n`);
      realTier = await runJest(asked, env); // every suite says NOT RUN
    } else {
      const count = Math.max(...groups.map((g) => g.plane)) + 1;
      const starts = await Promise.allSettled(Array.from({ length: count }, () => startRealApiServer(assets.dir)));
      for (const r of starts) if (r.status === 'fulfilled') planes.push(r.value); // stopped below whatever happens
      for (const r of starts) if (r.status === 'rejected') throw r.reason;
      for (const { info } of planes) {
        process.stdout.write(`\n[real-apiserver] RUN: kube-apiserver v1.28 at ${info.url} with etcd and kube-controller-manager, ready and prepared in ${Date.now() - started} ms (logs: ${info.dir})\n`);
      }
      const codes = await Promise.all(groups.map((g) => runJest(g.args, { ...env, [REAL_APISERVER_INFO_ENV]: planes[g.plane]?.infoFile }, g.name)));
      realTier = codes.find((c) => c !== 0) ?? 0;
    }
  } finally {
    await Promise.all(planes.map(({ plane }) => plane.stop()));
  }
  process.stdout.write(`[real-apiserver] tier ${realTier === 0 ? 'passed' : 'FAILED'}; it added ${Math.round((Date.now() - started) / 1000)} s to this run\n`);
  return sandboxTiers !== 0 ? sandboxTiers : realTier;
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`npm test: the real API server tier could not start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
