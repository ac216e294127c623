/**
 * The README walkthrough (test/readme/readme-walkthrough.test.ts) on the real API server, as a
 * platform engineer follows it "on a cluster of your own": `npm start` and the second shell with
 * KUBECONFIG set to the cluster (its administrator), every command run in order and every answer
 * compared with the one the README shows. The sandbox run of the same file stays: it is the
 * newcomer's path.
 */
import { expectSuitesPassOnPlane } from '../support/real-apiserver';

describe('the README walkthrough on the real API server', () => {
  test('test/readme/readme-walkthrough.test.ts passes with npm start on kube-apiserver', () => expectSuitesPassOnPlane({
    what: 'README walkthrough', project: 'integration', files: ['test/readme/readme-walkthrough.test.ts'],
    deadlineMs: 870_000,
  }), 900_000);
});
