import { versionsBeyondHistory, type StoredVersion } from './version-history';

/** Versions made one second apart, in the order given. */
function made(...versions: string[]): StoredVersion[] {
  return versions.map((version, i) => ({ version, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace('.000', '') }));
}

describe('versionsBeyondHistory', () => {
  test('keeps the newest versions up to the limit and names the rest, oldest first', () => {
    const versions = made('v1.0.0', 'v1.1.0', 'v1.2.0', 'v1.3.0', 'v1.4.0');
    expect(versionsBeyondHistory(versions, { limit: 2, keep: new Set() })).toEqual(['v1.0.0', 'v1.1.0', 'v1.2.0']);
    expect(versionsBeyondHistory(versions, { limit: 5, keep: new Set() })).toEqual([]);
  });

  test('keeps what is named in keep (active, named by an operation, run by rooms) beyond the limit', () => {
    const versions = made('v1.0.0', 'v1.1.0', 'v1.2.0', 'v1.3.0');
    expect(versionsBeyondHistory(versions, { limit: 1, keep: new Set(['v1.0.0', 'v1.2.0']) })).toEqual(['v1.1.0']);
  });

  test('keeps the greatest version of every major, so no later version gets a deleted one\'s number', () => {
    // Active switched back to v1.3.0 after two majors: the next minor is v1.5.0 only while v1.4.0 exists.
    const versions = made('v1.0.0', 'v1.3.0', 'v1.4.0', 'v2.0.0', 'v2.1.0', 'v3.0.0', 'v3.1.0');
    expect(versionsBeyondHistory(versions, { limit: 1, keep: new Set(['v1.3.0']) })).toEqual(['v1.0.0', 'v2.0.0', 'v3.0.0']);
  });

  test('orders by creation, then by number within one second; ignores names that are not versions', () => {
    const sameSecond = [{ version: 'v1.1.0', createdAt: '2026-01-01T00:00:00Z' }, { version: 'v1.0.0', createdAt: '2026-01-01T00:00:00Z' }, { version: 'v1.2.0', createdAt: '2026-01-01T00:00:00Z' }];
    expect(versionsBeyondHistory([...sameSecond, { version: 'not-a-version', createdAt: undefined }], { limit: 1, keep: new Set() })).toEqual(['v1.0.0', 'v1.1.0']);
  });
});
