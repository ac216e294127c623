/**
 * Which Roomkeeper operator stands back, as pure tables: liveness of the labelled Leases on this
 * replica's clock, and the judgement (the operator of the Lease made first reconciles); and what
 * the watch does when the API server refuses its list.
 */
import { ApiException, type CoordinationV1Api } from '@kubernetes/client-node';
import { captureLogs } from '../../../test/support/log-capture';
import { waitFor } from '../../../test/support/wait';
import { judge, liveLeases, OtherOperators, standBackMessage, type OperatorLease, type Sightings, type Verdict } from './other-operators';

const lease = (namespace: string, createdAt: string, over: Partial<OperatorLease> = {}): OperatorLease => ({
  namespace, name: `${namespace}-roomkeeper-operator`, holder: `${namespace}-pod-1`, renewTime: '2026-12-03T10:00:00.000000Z', createdAt, durationMs: 15_000, ...over,
});
const A = lease('ns-a', '2026-12-01T08:00:00Z');
const B = lease('ns-b', '2026-12-02T08:00:00Z');
const C = lease('ns-c', '2026-12-03T08:00:00Z');
const own = (l: OperatorLease) => ({ namespace: l.namespace, name: l.name });
const keys = (ls: readonly OperatorLease[] | undefined) => (ls ?? []).map((l) => l.namespace);

describe('liveLeases: held and renewed within its duration, as this replica saw it', () => {
  const T = 1_000_000;
  test.each<[string, OperatorLease, Sightings, number, boolean]>([
    ['seen for the first time: live (its renewals are not known yet)', A, new Map(), T, true],
    ['released (no holder): not live', { ...A, holder: '' }, new Map(), T, false],
    ['unchanged for less than its duration: live', A, new Map([[`ns-a/${A.name}`, { holder: A.holder, renewTime: A.renewTime, at: T - 14_999 }]]), T, true],
    ['unchanged for its duration: expired, whatever its renewTime says', A, new Map([[`ns-a/${A.name}`, { holder: A.holder, renewTime: A.renewTime, at: T - 15_000 }]]), T, false],
    ['renewed since the last look: live again', A, new Map([[`ns-a/${A.name}`, { holder: A.holder, renewTime: '2026-12-03T09:59:58.000000Z', at: T - 60_000 }]]), T, true],
    ['taken by another holder since: live', A, new Map([[`ns-a/${A.name}`, { holder: 'gone-pod', renewTime: A.renewTime, at: T - 60_000 }]]), T, true],
  ])('%s', (_what, l, before, now, live) => {
    const { live: found, sightings } = liveLeases([l], before, now);
    expect(found.length === 1).toBe(live);
    expect(sightings.get(`ns-a/${A.name}`)?.renewTime).toBe(l.renewTime);
  });

  test('a sighting is kept while nothing changes, so expiry counts from the first time it was seen', () => {
    const first = liveLeases([A], new Map(), 0).sightings;
    const second = liveLeases([A], first, 10_000);
    expect(second.live).toEqual([A]);
    expect(liveLeases([A], second.sightings, 15_000).live).toEqual([]);
  });
});

describe('judge: the operator of the Lease made first reconciles; every other stands back', () => {
  test.each<[string, OperatorLease, OperatorLease[], OperatorLease[], string | undefined, string[]]>([
    ['alone', A, [A], [A], undefined, []],
    ['the older of two: goes on, and knows of the newer', A, [A, B], [A, B], undefined, ['ns-b']],
    ['the newer of two: stands back for the older', B, [A, B], [A, B], 'ns-a', []],
    ['the newest of three: stands back for the oldest', C, [A, B, C], [A, B, C], 'ns-a', []],
    ['the middle of three: stands back for the oldest, and knows of the newest', B, [A, B, C], [A, B, C], 'ns-a', ['ns-c']],
    ['no Lease of its own yet (just started): the newest', B, [A], [A], 'ns-a', []],
    ['the older one released or expired: goes on', B, [A, B], [B], undefined, []],
    ['its own Lease not live (another replica of it just stopped): judged by its creation all the same', B, [A, B], [A], 'ns-a', []],
    ['made in the same second, a moment later (its creation stamp): stands back, whatever the names', lease('ns-0', '2026-12-01T08:00:00.400000Z'),
      [A, lease('ns-0', '2026-12-01T08:00:00.400000Z')], [A, lease('ns-0', '2026-12-01T08:00:00.400000Z')], 'ns-a', []],
    ['made in the same second, a moment earlier: goes on', lease('ns-z', '2026-12-01T08:00:00.100000Z'), [lease('ns-z', '2026-12-01T08:00:00.100000Z'), lease('ns-0', '2026-12-01T08:00:00.400000Z')], [lease('ns-z', '2026-12-01T08:00:00.100000Z'), lease('ns-0', '2026-12-01T08:00:00.400000Z')], undefined, ['ns-0']],
    ['made in the same instant: the namespace/name decides', lease('ns-b', A.createdAt), [A, lease('ns-b', A.createdAt)], [A, lease('ns-b', A.createdAt)], 'ns-a', []],
    ['same namespace, another lease name (two releases in one namespace): one stands back', lease('ns-a', B.createdAt, { name: 'z-lease' }), [A, lease('ns-a', B.createdAt, { name: 'z-lease' })], [A, lease('ns-a', B.createdAt, { name: 'z-lease' })], 'ns-a', []],
  ])('%s', (_what, mine, all, live, standBackFor, newer) => {
    const verdict = judge(own(mine), all, live);
    expect(verdict.standBackFor?.namespace).toBe(standBackFor);
    expect(keys(verdict.newer)).toEqual(newer);
    expect(verdict.others).toBe(live.filter((l) => l !== mine && !(l.namespace === mine.namespace && l.name === mine.name)).length);
  });

  test('a Lease\'s creation stamp is read over its creationTimestamp, and a new holder changes no verdict', async () => {
    const made = (namespace: string, created: string, stamp: string | undefined, holder: string, acquireTime: string) => ({
      metadata: { namespace, name: `${namespace}-roomkeeper-operator`, creationTimestamp: new Date(created), annotations: stamp ? { 'roomkeeper.io/lease-created-at': stamp } : {} as Record<string, string> },
      spec: { holderIdentity: holder, renewTime: new Date(), acquireTime: new Date(acquireTime), leaseDurationSeconds: 15 },
    });
    // Both made in one second, ns-z's first: ns-z's operator, back after a crash, holds its Lease
    // again (a new acquireTime, later than ns-0's), and still goes on while ns-0's stands back.
    let items = [made('ns-z', '2026-12-01T08:00:00Z', '2026-12-01T08:00:00.100000Z', 'z-pod-1', '2026-12-01T08:00:00.100000Z'), made('ns-0', '2026-12-01T08:00:00Z', '2026-12-01T08:00:00.400000Z', '0-pod-1', '2026-12-01T08:00:00.400000Z')];
    const coordination = { listLeaseForAllNamespaces: () => Promise.resolve({ items }) } as unknown as CoordinationV1Api;
    const logger = captureLogs('info', 'operator').logger;
    const ofZ = new OtherOperators({ coordination, own: { namespace: 'ns-z', name: 'ns-z-roomkeeper-operator' }, intervalMs: 60_000, logger, now: Date.now, onChange: () => undefined });
    const of0 = new OtherOperators({ coordination, own: { namespace: 'ns-0', name: 'ns-0-roomkeeper-operator' }, intervalMs: 60_000, logger, now: Date.now, onChange: () => undefined });
    try {
      await Promise.all([ofZ.start(), of0.start()]);
      expect([ofZ.verdict.standBackFor?.namespace, of0.verdict.standBackFor?.namespace]).toEqual([undefined, 'ns-z']);
      items = [made('ns-z', '2026-12-01T08:00:00Z', '2026-12-01T08:00:00.100000Z', 'z-pod-2', '2026-12-01T09:00:00.000000Z'), items[1] as ReturnType<typeof made>];
      await Promise.all([ofZ.lookNow(), of0.lookNow()]);
      expect([ofZ.verdict.standBackFor?.namespace, of0.verdict.standBackFor?.namespace]).toEqual([undefined, 'ns-z']);
      // Without the stamp (Leases made before it), the second of the creationTimestamp, then the names.
      items = items.map((l) => ({ ...l, metadata: { ...l.metadata, annotations: {} } }));
      await Promise.all([ofZ.lookNow(), of0.lookNow()]);
      expect([ofZ.verdict.standBackFor?.namespace, of0.verdict.standBackFor?.namespace]).toEqual(['ns-0', undefined]);
    } finally {
      ofZ.stop();
      of0.stop();
    }
  });

  test('the message names both Leases, who holds the older, and what to do', () => {
    expect(standBackMessage(own(B), A)).toBe(
      'another Roomkeeper operator leads in this cluster (Lease ns-a/ns-a-roomkeeper-operator, held by ns-a-pod-1, made before this operator\'s Lease ns-b/ns-b-roomkeeper-operator): '
      + 'Schedulers are cluster-scoped, so this operator reconciles nothing and executes no operation while that one runs. '
      + 'Run one Roomkeeper per cluster: uninstall this release (helm list -n ns-b, then helm uninstall <release> -n ns-b), or uninstall the one in namespace ns-a and this operator takes over by itself',
    );
  });

  test('for a Lease of its own namespace (the release\'s leaseName changed), it says so, not to uninstall the one there', () => {
    const older = { ...A, name: 'old-lease-name', durationMs: 15_000 };
    const message = standBackMessage({ namespace: A.namespace, name: 'new-lease-name' }, older);
    expect(message).toContain('Both Leases are in namespace ns-a: an operator still running with Lease name old-lease-name (this release before its leaseName changed, or a second install here) holds it. ');
    expect(message).toContain('this one takes over by itself within 15 s; if it stays, stop the operator holding it (its pod: ns-a-pod-1), or kubectl delete lease old-lease-name -n ns-a once that one is gone');
    expect(message).not.toContain('uninstall');
  });
});

describe('OtherOperators when the list is refused (RBAC without list on leases)', () => {
  test('decides nothing (nothing stands back), says so once with what to do, and judges again once the list is allowed', async () => {
    const logs = captureLogs('info', 'operator');
    let refuse = true;
    const coordination = {
      listLeaseForAllNamespaces: () => (refuse
        ? Promise.reject(new ApiException(403, 'leases is forbidden: User "system:serviceaccount:ns-b:b" cannot list resource "leases" in API group "coordination.k8s.io" at the cluster scope', {}, {}))
        : Promise.resolve({ items: [{ metadata: { namespace: 'ns-a', name: A.name, creationTimestamp: new Date(A.createdAt) }, spec: { holderIdentity: A.holder, renewTime: new Date(), leaseDurationSeconds: 15 } }] })),
    } as unknown as CoordinationV1Api;
    const changes: Verdict[] = [];
    const watch = new OtherOperators({ coordination, own: own(B), intervalMs: 10, logger: logs.logger, now: Date.now, onChange: (v) => changes.push(v) });
    await watch.start();
    try {
      await waitFor(() => logs.lines.length > 0, { timeoutMs: 5_000, message: 'the refusal logged' });
      expect(watch.verdict.standBackFor).toBeUndefined();
      expect(changes).toEqual([]);
      const refusals = logs.lines.filter((l) => String(l.message).startsWith('cannot list the leader Leases of the cluster'));
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toMatchObject({ level: 'warn', statusCode: 403 });
      refuse = false;
      await waitFor(() => watch.verdict.standBackFor?.namespace === 'ns-a', { timeoutMs: 5_000, message: 'stands back once the list is allowed' });
      expect(logs.lines.filter((l) => String(l.message).startsWith('cannot list the leader Leases of the cluster'))).toHaveLength(1);
    } finally {
      watch.stop();
    }
  });
});
