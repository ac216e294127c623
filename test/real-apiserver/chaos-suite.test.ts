/**
 * The fault-injection scenarios of test/chaos that run on any cluster, on the real API server:
 * operator and gateway as the Helm chart's ServiceAccounts (test/support/real-apiserver.ts).
 * - operator-down.test.ts: the operator scaled to 0 while room pods and rooms go (scenario 5);
 * - watch-faults.test.ts: watches cut, answered 410 (status and ERROR event), 500 and reset,
 *   through test/support/fault-proxy.ts in front of kube-apiserver (scenario 6);
 * - unanswered-watch.test.ts: a gateway watch held unanswered by the fault proxy fails /healthz;
 * - api-outage-liveness.test.ts: every request of the operator held unanswered: /healthz stays
 *   200 (a reconcile's waits on the API are not counted), /readyz 503 says the API does not answer.
 */
import { PLANE_SUITES } from '../support/plane-suites';
import { expectSuitesPassOnPlane } from '../support/real-apiserver';

describe('chaos scenarios on the real API server', () => {
  test('the operator down, watch faults, an unanswered watch and an unanswered operator through the fault proxy', () => expectSuitesPassOnPlane({
    what: 'test/chaos (operator down, watch faults, unanswered watch, API outage liveness)', project: 'integration',
    // ROOMKEEPER_CHAOS_FILES (comma-separated paths) runs only those suites, while working on them.
    files: process.env.ROOMKEEPER_CHAOS_FILES?.split(',').filter(Boolean) ?? PLANE_SUITES.chaos,
    figures: (output) => output.split('\n').filter((l) => l.includes('[chaos]')).join('\n'),
    deadlineMs: 870_000,
  }), 900_000);
});
