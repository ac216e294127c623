import { RevisionWaiters } from './revision-waiters';

describe('RevisionWaiters', () => {
  it('releases a waiter with true once the revision reaches its target, and not before', async () => {
    const waiters = new RevisionWaiters();
    const waiting = waiters.wait(10n, 60_000);
    waiters.advance(9n);
    expect(waiters.size).toBe(1);
    waiters.advance(10n);
    await expect(waiting).resolves.toBe(true);
    expect(waiters.size).toBe(0);
  });

  it('releases a waiter with false when its time is up or when all are released', async () => {
    const waiters = new RevisionWaiters();
    await expect(waiters.wait(5n, 1)).resolves.toBe(false);
    const stopped = waiters.wait(5n, 60_000);
    waiters.releaseAll();
    await expect(stopped).resolves.toBe(false);
    expect(waiters.size).toBe(0);
  });
});
