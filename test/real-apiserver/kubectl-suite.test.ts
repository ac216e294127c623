/**
 * The kubectl user's acceptance tests (test/operator/kubectl-scheduler.test.ts: apply, printer
 * columns, edit the image -> create / new version / switch in the history, an invalid Scheduler
 * refused at admission with the field named, delete through the finalizer) on the real API
 * server, with the real kubectl as administrator and the operator as the chart's ServiceAccount.
 */
import { PLANE_SUITES } from '../support/plane-suites';
import { expectSuitesPassOnPlane } from '../support/real-apiserver';

describe('kubectl acceptance on the real API server', () => {
  test('test/operator/kubectl-scheduler.test.ts passes against kube-apiserver', () => expectSuitesPassOnPlane({
    what: 'kubectl acceptance', project: 'integration', files: PLANE_SUITES.kubectlAcceptance,
    deadlineMs: 570_000,
  }), 600_000);
});
