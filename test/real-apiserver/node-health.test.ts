/**
 * A node turning NotReady brings the health check of the schedulers with rooms on it at once, on
 * the real API server: the suite test/operator/node-health.test.ts (an add_rooms held after
 * repeated 403s from the fault proxy is tried again as soon as its room's node turns NotReady, and
 * the operator's nodes cache holds the slim Node) against kube-apiserver v1.28 with
 * kube-controller-manager (whose node lifecycle controller taints the NotReady node and marks its
 * pods not ready), the operator and gateway running as the chart's ServiceAccounts.
 */
import { PLANE_SUITES } from '../support/plane-suites';
import { expectSuitesPassOnPlane } from '../support/real-apiserver';

describe('node health on the real API server', () => {
  test('test/operator/node-health.test.ts passes against kube-apiserver', () => expectSuitesPassOnPlane({
    what: 'node health', project: 'integration', files: PLANE_SUITES.nodeHealth, tests: 2,
    deadlineMs: 270_000,
  }), 300_000);
});
