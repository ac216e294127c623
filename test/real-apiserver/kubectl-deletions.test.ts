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
import { realApiServer, reportNotRun, runSuitesOnPlane } from '../support/real-apiserver';

describe('kubectl deletions on the real API server', () => {
  test('test/operator/kubectl-deletions.test.ts passes against kube-apiserver', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('kubectl deletions')).toMatch(/NOT RUN/);
      return;
    }
    const output = await runSuitesOnPlane(plane, 'kubectl deletions', 'integration', ['test/operator/kubectl-deletions.test.ts']);
    const lines = output.slice(output.indexOf('[kubectl-deletions]')).split('\n');
    const figures = lines.slice(0, lines.findIndex((l, i) => i > 0 && !/^ {2}\S/.test(l)));
    const summary = output.split('\n').filter((l) => /^Tests:/.test(l)).join('; ');
    process.stdout.write(`\n[real-apiserver] kubectl deletions: ${summary}\n${figures.join('\n')}\n`);
    expect(summary).toMatch(/Tests:\s+12 passed, 12 total/);
  }, 420_000);
});
