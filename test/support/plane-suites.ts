/**
 * The sandbox-tier suites that the real-API-server tier runs again on a real control plane, each
 * through its wrapper in test/real-apiserver/. When `npm test` runs the whole real tier, the
 * sandbox tier leaves them out: a real kube-apiserver is the judge of what crosses the API, and on
 * 2 cores running each of them twice cost about 2.5 min (2026-12-04, `.ci/run` in a clean clone:
 * the sandbox tiers took 310 s without them, 463 s with them). `npm run test:e2e`,
 * `npm run test:integration` and a path given to `npm test` still run them on the sandbox.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

// Not stack.ts's REPO_ROOT: importing stack.ts would load the operator and the sandbox into npm test's runner.
const ROOT = path.resolve(__dirname, '../..');

export const PLANE_SUITES = {
  /** test/real-apiserver/e2e-suite.test.ts */
  e2e: ['test/e2e/'],
  /** test/real-apiserver/chaos-suite.test.ts */
  chaos: ['test/chaos/operator-down.test.ts', 'test/chaos/watch-faults.test.ts', 'test/chaos/unanswered-watch.test.ts', 'test/chaos/api-outage-liveness.test.ts'],
  /** test/real-apiserver/kubectl-suite.test.ts */
  kubectlAcceptance: ['test/operator/kubectl-scheduler.test.ts'],
  /** test/real-apiserver/kubectl-deletions.test.ts */
  kubectlDeletions: ['test/operator/kubectl-deletions.test.ts'],
  /** test/real-apiserver/node-health.test.ts */
  nodeHealth: ['test/operator/node-health.test.ts'],
} as const;

/** Suites that do more on the sandbox than on a cluster, so the sandbox tier keeps them: 20 version rounds there, 2 on a cluster. */
const MORE_ON_THE_SANDBOX = new Set(['test/e2e/version-sequence.test.ts']);

/** The test files (relative to the checkout) that the sandbox tier leaves to the real tier. */
export function suitesLeftToThePlane(): string[] {
  return Object.values(PLANE_SUITES).flat().flatMap((p) => (p.endsWith('/')
    ? fs.readdirSync(path.join(ROOT, p), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.test.ts')).map((f) => `${p}${f}`).sort()
    : [p])).filter((f) => !MORE_ON_THE_SANDBOX.has(f));
}
