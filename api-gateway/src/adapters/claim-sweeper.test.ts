/**
 * ClaimSweeper: the AllocationClaims a replica keeps after their try are deleted in batches, one
 * deletecollection per namespace for every second whose claims are all released and due, and never
 * before they are due.
 */
import { silentLogger } from '../../../common/src/logger';
import { waitFor } from '../../../test/support/wait';
import { CLAIM_REPLICA_LABEL, CLAIM_SECOND_LABEL, ClaimSweeper } from './claim-sweeper';

function sweeper(clock: { now: number }, calls: { namespace: string; selector: string }[]): ClaimSweeper {
  return new ClaimSweeper({
    replica: 'r1', logger: silentLogger(), intervalMs: 5, now: () => clock.now,
    deleteCollection: (namespace, selector) => {
      calls.push({ namespace, selector });
      return Promise.resolve();
    },
  });
}

describe('ClaimSweeper', () => {
  it('labels a claim with the replica and the second it is made in', () => {
    const s = sweeper({ now: 12_345_678 }, []);
    expect(s.labels()).toEqual({ [CLAIM_REPLICA_LABEL]: 'r1', [CLAIM_SECOND_LABEL]: '12345' });
  });

  it('deletes the kept claims of a second once all of its claims are released and due: one request per namespace', async () => {
    const clock = { now: 1_000_000 };
    const calls: { namespace: string; selector: string }[] = [];
    const s = sweeper(clock, calls);
    s.opened('a', 'u1', '1000');
    s.opened('a', 'u2', '1000');
    s.opened('a', 'u3', '1001');
    s.opened('b', 'u4', '1000');
    expect(s.released('u1', 6000)).toBe(true);
    expect(s.released('u3', 6000)).toBe(true);
    expect(s.released('u4', 6000)).toBe(true);
    // A try that wrote no room: the caller deletes its claim at once.
    expect(s.released('u2', 0)).toBe(false);
    // Unknown to the sweeper (made by another store): the caller deletes it.
    expect(s.released('u9', 6000)).toBe(false);
    // Two sweeps run before the claims are due: neither deletes anything.
    await waitFor(() => s.sweeps >= 2, { message: 'two sweeps before the claims are due' });
    expect(calls).toEqual([]);
    clock.now += 6000;
    await waitFor(() => calls.length === 2, { message: 'one sweep per namespace' });
    expect(calls).toEqual([
      { namespace: 'a', selector: `${CLAIM_REPLICA_LABEL}=r1,${CLAIM_SECOND_LABEL} in (1000,1001)` },
      { namespace: 'b', selector: `${CLAIM_REPLICA_LABEL}=r1,${CLAIM_SECOND_LABEL} in (1000)` },
    ]);
    await s.stop();
    expect(calls).toHaveLength(2);
  });

  it('holds a second while one of its claims is still open, and sweeps again after a failed request', async () => {
    const clock = { now: 2_000_000 };
    const calls: { namespace: string; selector: string }[] = [];
    const fail = { on: true, tries: 0 };
    const s = new ClaimSweeper({
      replica: 'r1', logger: silentLogger(), intervalMs: 5, now: () => clock.now,
      deleteCollection: (namespace, selector) => {
        fail.tries++;
        if (fail.on) return Promise.reject(new Error('429 too many requests'));
        calls.push({ namespace, selector });
        return Promise.resolve();
      },
    });
    s.opened('a', 'u1', '2000');
    s.opened('a', 'u2', '2000');
    s.released('u1', 10);
    clock.now += 20;
    const before = s.sweeps;
    await waitFor(() => s.sweeps >= before + 2, { message: 'two sweeps while u2 is open' });
    expect(fail.tries).toBe(0);
    s.released('u2', 10);
    clock.now += 20;
    await waitFor(() => fail.tries >= 2, { message: 'a failed sweep, tried again' });
    fail.on = false;
    await waitFor(() => calls.length === 1, { message: 'the second swept once the API server answers' });
    await s.stop();
    expect(calls).toHaveLength(1);
  });

  it('on stop, waits until the kept claims are due and deletes them', async () => {
    const calls: { namespace: string; selector: string }[] = [];
    const s = new ClaimSweeper({ replica: 'r1', logger: silentLogger(), intervalMs: 60_000, deleteCollection: (namespace, selector) => { calls.push({ namespace, selector }); return Promise.resolve(); } });
    s.opened('a', 'u1', '3000');
    s.released('u1', 50);
    await s.stop();
    expect(calls).toEqual([{ namespace: 'a', selector: `${CLAIM_REPLICA_LABEL}=r1,${CLAIM_SECOND_LABEL} in (3000)` }]);
  });
});
