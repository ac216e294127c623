import * as path from 'node:path';
import { whereStopped } from './real-apiserver';

const root = path.resolve(__dirname, '../..');
const started = (file: string): string => `[suite started] ${path.join(root, file)}`;

describe('whereStopped: where a run on the plane was when its deadline stopped it', () => {
  it('names the suite started and not ended, and the last test that ended', () => {
    const output = [
      started('test/e2e/a.test.ts'),
      '[test ended] passed: a works',
      'PASS e2e test/e2e/a.test.ts (3.1 s)',
      started('test/e2e/b.test.ts'),
      '[test ended] passed: b begins',
      '[test ended] failed: b goes on',
    ].join('\n');
    expect(whereStopped(output)).toBe('1 of 2 suites started had ended; still running: test/e2e/b.test.ts; the last test to end: failed: b goes on');
  });

  it('says when every suite had ended and jest had not exited', () => {
    const output = [started('test/e2e/a.test.ts'), '[test ended] passed: a works', 'FAIL e2e test/e2e/a.test.ts (3.1 s)'].join('\n');
    expect(whereStopped(output)).toBe('1 of 1 suites started had ended, none was running: jest had not exited after them; the last test to end: passed: a works');
  });

  it('says when no test had ended', () => {
    expect(whereStopped(started('test/e2e/a.test.ts'))).toBe('0 of 1 suites started had ended; still running: test/e2e/a.test.ts; no test had ended');
  });
});
