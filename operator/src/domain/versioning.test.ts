import { parseVersion } from '../../../common/src/resources/scheduler-version';
import { compareVersions, InvalidVersionError, nextVersion, VersionsExhaustedError } from './versioning';

describe('nextVersion', () => {
  it.each<[string[], string, 'major' | 'minor', string]>([
    [[], 'v1.0.0', 'minor', 'v1.1.0'],
    [[], 'v1.0.0', 'major', 'v2.0.0'],
    [['v1.0.0', 'v1.1.0'], 'v1.1.0', 'minor', 'v1.2.0'],
    [['v1.0.0', 'v1.1.0', 'v2.0.0'], 'v1.0.0', 'minor', 'v1.2.0'],
    [['v1.0.0', 'v1.1.0', 'v2.0.0'], 'v1.0.0', 'major', 'v3.0.0'],
    [['v1.0.0', 'v2.0.0', 'v2.3.0'], 'v2.0.0', 'minor', 'v2.4.0'],
    [['v1.9.0', 'v1.10.0'], 'v1.9.0', 'minor', 'v1.11.0'],
    [['garbage', 'v1.0.0'], 'v1.0.0', 'minor', 'v1.1.0'],
  ])('%j from %s, %s change: %s', (existing, active, change, expected) => {
    expect(nextVersion(existing, active, change)).toBe(expected);
  });

  it("follows Maestro's e2e sequence", () => {
    const versions = ['v1.0.0'];
    let active = 'v1.0.0';
    const step = (change: 'major' | 'minor'): string => {
      const v = nextVersion(versions, active, change);
      versions.push(v);
      active = v;
      return v;
    };
    expect(step('minor')).toBe('v1.1.0');
    expect(step('major')).toBe('v2.0.0');
    active = 'v1.0.0'; // switch back
    expect(step('minor')).toBe('v1.2.0');
    expect(step('major')).toBe('v3.0.0');
  });

  it('rejects an active that is not a version', () => {
    expect(() => nextVersion([], '1.0', 'minor')).toThrow(InvalidVersionError);
  });

  it('numbers up to 9 digits, and says which version took the last number', () => {
    expect(nextVersion(['v999999998.0.0'], 'v1.0.0', 'major')).toBe('v999999999.0.0');
    expect(() => nextVersion(['v999999999.0.0'], 'v1.0.0', 'major')).toThrow('no major version can be numbered after v999999999.0.0: a version number has at most 9 digits (SchedulerVersion objects made by hand can take the last one); '
      + 'delete that SchedulerVersion (kubectl get schedulerversions lists them) if no room runs it, then send the change again');
    expect(() => nextVersion(['v1.999999999.0'], 'v1.0.0', 'minor')).toThrow(VersionsExhaustedError);
  });
});

describe('parseVersion and compareVersions', () => {
  it.each<[string, ReturnType<typeof parseVersion>]>([
    ['v1.2.3', { major: 1, minor: 2, patch: 3 }],
    ['v10.0.0', { major: 10, minor: 0, patch: 0 }],
    ['1.2.3', undefined],
    ['v1.2', undefined],
    ['v01.2.3', undefined],
    ['v1.2.3-rc1', undefined],
    ['v99999999999999999999.0.0', undefined],
    ['', undefined],
  ])('parses %p', (text, expected) => {
    expect(parseVersion(text)).toEqual(expected);
  });

  it('orders numerically', () => {
    expect(['v1.10.0', 'v2.0.0', 'v1.2.0', 'v1.9.1', 'v1.9.0'].sort(compareVersions)).toEqual(['v1.2.0', 'v1.9.0', 'v1.9.1', 'v1.10.0', 'v2.0.0']);
    expect(compareVersions('v1.0.0', 'v1.0.0')).toBe(0);
    expect(() => compareVersions('x', 'v1.0.0')).toThrow(InvalidVersionError);
  });
});
