/**
 * A jest reporter for suites run on the real plane (test/support/real-apiserver.ts): it prints when
 * each suite starts and when each test ends, so a run stopped at its deadline can name the suite
 * it was in and the last test that ended (jest prints a suite's results only once it ends).
 */
class SuiteProgressReporter {
  onTestFileStart(test) {
    process.stderr.write(`[suite started] ${test.path}\n`);
  }

  onTestCaseResult(test, result) {
    process.stderr.write(`[test ended] ${result.status}: ${result.fullName}\n`);
  }
}

module.exports = SuiteProgressReporter;
