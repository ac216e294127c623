import { humanAge } from './table-convertor';
import { compareKubeVersions } from './discovery';

describe('humanAge', () => {
  const now = new Date('2024-01-10T00:00:00Z');
  const ago = (seconds: number): string => new Date(now.getTime() - seconds * 1000).toISOString();

  it.each([
    [5, '5s'],
    [119, '119s'],
    [150, '2m30s'],
    [600, '10m'],
    [3 * 3600 + 60, '3h1m'],
    [10 * 3600, '10h'],
    [3 * 86400 + 3600, '3d1h'],
    [30 * 86400, '30d'],
    [800 * 86400, '2y70d'],
  ])('%i seconds -> %s', (seconds, expected) => {
    expect(humanAge(ago(seconds), now)).toBe(expected);
  });

  it('says <unknown> for missing timestamps', () => {
    expect(humanAge(undefined, now)).toBe('<unknown>');
  });
});

describe('compareKubeVersions', () => {
  it('orders GA, beta, alpha, then others', () => {
    expect(['v1alpha1', 'v2', 'foo', 'v1beta2', 'v1', 'v1beta1'].sort(compareKubeVersions)).toEqual(['v2', 'v1', 'v1beta2', 'v1beta1', 'v1alpha1', 'foo']);
  });
});
