/**
 * The whole end-to-end suite (test/e2e) on the real API server: operator and gateway as the Helm
 * chart's ServiceAccounts with the chart's environment, the simulated kubelet and rooms as their
 * own identity, the harness as administrator (test/support/real-apiserver.ts).
 */
import { PLANE_SUITES } from '../support/plane-suites';
import { expectSuitesPassOnPlane } from '../support/real-apiserver';

describe('end-to-end suite on the real API server', () => {
  test('every test/e2e suite passes under the chart RBAC', () => expectSuitesPassOnPlane({
    what: 'test/e2e', project: 'e2e',
    // ROOMKEEPER_E2E_FILES (comma-separated paths) runs only those suites, while working on them.
    files: process.env.ROOMKEEPER_E2E_FILES?.split(',').filter(Boolean) ?? PLANE_SUITES.e2e,
    deadlineMs: 1_470_000,
  }), 1_500_000);
});
