/**
 * kubectl users cannot break a scheduler (issue 21), on the real API server: the suite
 * test/operator/kubectl-deletions.test.ts (namespace, active version, a running Operation, a
 * running add_rooms, GameRooms, a GameRoom with --cascade=orphan, the leader Lease, a pod
 * force-deleted, the rooms-token Secret,
 * the GameRoom CRD — each deleted with
 * the real kubectl; and an add_rooms failing the same way again and again)
 * against kube-apiserver v1.28 with kube-controller-manager (the namespace controller and the
 * garbage collector are the real ones), the operator and gateway running as the chart's
 * ServiceAccounts.
 */
import { PLANE_SUITES } from '../support/plane-suites';
import { expectSuitesPassOnPlane } from '../support/real-apiserver';

/** The suite's figures: the `[kubectl-deletions]` line and its indented lines. */
function deletionFigures(output: string): string {
  const lines = output.slice(output.indexOf('[kubectl-deletions]')).split('\n');
  return lines.slice(0, lines.findIndex((l, i) => i > 0 && !/^ {2}\S/.test(l))).join('\n');
}

describe('kubectl deletions on the real API server', () => {
  test('test/operator/kubectl-deletions.test.ts passes against kube-apiserver', () => expectSuitesPassOnPlane({
    what: 'kubectl deletions', project: 'integration', files: PLANE_SUITES.kubectlDeletions, tests: 14, figures: deletionFigures,
    deadlineMs: 390_000,
  }), 420_000);
});
