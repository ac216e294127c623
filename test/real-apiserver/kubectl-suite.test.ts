/**
 * The kubectl user's acceptance tests (test/operator/kubectl-scheduler.test.ts: apply, printer
 * columns, edit the image -> create / new version / switch in the history, an invalid Scheduler
 * refused at admission with the field named, delete through the finalizer) on the real API
 * server, with the real kubectl as administrator and the operator as the chart's ServiceAccount.
 */
import { realApiServer, reportNotRun, runSuitesOnPlane } from '../support/real-apiserver';

describe('kubectl acceptance on the real API server', () => {
  test('test/operator/kubectl-scheduler.test.ts passes against kube-apiserver', async () => {
    const plane = realApiServer();
    if (!plane) {
      expect(reportNotRun('kubectl acceptance')).toMatch(/NOT RUN/);
      return;
    }
    const output = await runSuitesOnPlane(plane, 'kubectl acceptance', 'integration', ['test/operator/kubectl-scheduler.test.ts']);
    const summary = output.split('\n').filter((l) => /^Tests:/.test(l)).join('; ');
    process.stdout.write(`\n[real-apiserver] kubectl acceptance: ${summary}\n`);
    expect(summary).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(summary).not.toMatch(/failed|skipped/);
  }, 600_000);
});
