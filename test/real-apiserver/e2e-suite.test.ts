/**
 * The whole end-to-end suite (test/e2e) on the real API server: operator and gateway as the Helm
 * chart's ServiceAccounts with the chart's environment, the simulated kubelet and rooms as their
 * own identity, the harness as administrator (test/support/real-apiserver.ts).
 */
import { realApiServer, reportNotRun, runSuitesOnPlane } from '../support/real-apiserver';

describe('end-to-end suite on the real API server', () => {
  test('every test/e2e suite passes under the chart RBAC', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('test/e2e')).toMatch(/NOT RUN/);
      return;
    }
    // ROOMKEEPER_E2E_FILES (comma-separated paths) runs only those suites, while working on them.
    const files = process.env.ROOMKEEPER_E2E_FILES?.split(',').filter(Boolean) ?? ['test/e2e/'];
    const output = await runSuitesOnPlane(plane, 'end-to-end suites', 'e2e', files);
    const summary = output.split('\n').filter((l) => /^(Tests|Test Suites):/.test(l)).join('\n');
    process.stdout.write(`\n[real-apiserver] test/e2e: ${summary.replace(/\n/g, '; ')}\n`);
    expect(summary).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(summary).not.toMatch(/failed|skipped/);
  }, 900_000);
});
