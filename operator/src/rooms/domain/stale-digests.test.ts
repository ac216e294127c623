import type { PingDigest } from '../../../../common/src/generated/resources';
import { digestStaleAfterMs, digestWrittenAt, staleDigests } from './stale-digests';

const NOW = Date.parse('2026-12-02T10:00:00Z');
const MIN = 60_000;

function digest(name: string, opts: { flushedAt?: string; createdAt?: string; resourceVersion?: string; deleting?: boolean } = {}): PingDigest {
  return {
    apiVersion: 'roomkeeper.io/v1', kind: 'PingDigest',
    metadata: {
      name, namespace: 'arena', resourceVersion: opts.resourceVersion ?? '7', creationTimestamp: (opts.createdAt ?? '2026-12-02T08:00:00Z') as unknown as Date,
      ...(opts.deleting ? { deletionTimestamp: '2026-12-02T09:59:00Z' as unknown as Date } : {}),
    },
    spec: { scheduler: 'arena', replica: name.replace('roomkeeper-pings-', '') },
    ...(opts.flushedAt !== undefined ? { status: { lastPings: '{}', flushedAt: opts.flushedAt } } : {}),
  };
}

describe('stale PingDigests (their gateway replica is gone)', () => {
  it('are those not written for 2 x (ping timeout + flush interval): 9 min with the defaults', () => {
    expect(digestStaleAfterMs({ pingTimeoutMs: 4 * MIN, flushIntervalMs: 30_000 })).toBe(9 * MIN);
  });

  test.each([
    ['written just now', { flushedAt: String(NOW - 1000) }, false],
    ['written 9 min ago, exactly the limit', { flushedAt: String(NOW - 9 * MIN) }, false],
    ['written 9 min and 1 ms ago', { flushedAt: String(NOW - 9 * MIN - 1) }, true],
    ['written ahead of the operator\'s clock (a gateway clock ahead)', { flushedAt: String(NOW + 5 * MIN) }, false],
    ['never flushed, created 2 h ago', { createdAt: '2026-12-02T08:00:00Z' }, true],
    ['never flushed, created 1 min ago', { createdAt: '2026-12-02T09:59:00Z' }, false],
    ['an unreadable flushedAt counts from creation (2 h ago)', { flushedAt: 'soon' }, true],
    ['already being deleted', { flushedAt: String(NOW - 60 * MIN), deleting: true }, false],
  ])('%s: stale %s', (_what, opts, stale) => {
    expect(staleDigests([digest('roomkeeper-pings-gw-a', opts)], NOW, 9 * MIN).map((d) => d.name)).toEqual(stale ? ['roomkeeper-pings-gw-a'] : []);
  });

  it('names each with the resourceVersion it was judged on, its replica and when it was written, oldest first', () => {
    const found = staleDigests([
      digest('roomkeeper-pings-gw-live', { flushedAt: String(NOW - 10_000) }),
      digest('roomkeeper-pings-gw-b', { flushedAt: String(NOW - 20 * MIN), resourceVersion: '41' }),
      digest('roomkeeper-pings-gw-a', { flushedAt: String(NOW - 60 * MIN), resourceVersion: '12' }),
    ], NOW, 9 * MIN);
    expect(found).toEqual([
      { name: 'roomkeeper-pings-gw-a', resourceVersion: '12', replica: 'gw-a', writtenAt: NOW - 60 * MIN },
      { name: 'roomkeeper-pings-gw-b', resourceVersion: '41', replica: 'gw-b', writtenAt: NOW - 20 * MIN },
    ]);
  });

  it('reads when a digest was written from status.flushedAt, else its creation', () => {
    expect(digestWrittenAt(digest('d', { flushedAt: '1700000000000' }))).toBe(1_700_000_000_000);
    expect(digestWrittenAt(digest('d', { createdAt: '2026-12-02T08:00:00Z' }))).toBe(Date.parse('2026-12-02T08:00:00Z'));
  });
});
