import { silentLogger } from '../logger';
import { ForwarderClientPool, ForwarderPoolClosedError } from './forwarder-client-pool';

describe('ForwarderClientPool', () => {
  let now = 0;
  let pool: ForwarderClientPool;

  beforeEach(() => {
    now = 1_000_000;
    pool = new ForwarderClientPool({ logger: silentLogger(), idleTimeoutMs: 60_000, sweepIntervalMs: 0, now: () => now });
  });

  afterEach(() => pool.close());

  it('creates one client per address, lazily, and reuses it', () => {
    expect(pool.size).toBe(0);
    const a1 = pool.acquire('127.0.0.1:1001');
    const a2 = pool.acquire('127.0.0.1:1001');
    const b = pool.acquire('127.0.0.1:1002');
    expect(a1.client).toBe(a2.client);
    expect(b.client).not.toBe(a1.client);
    expect(pool.size).toBe(2);
  });

  it('closes clients idle longer than the idle timeout, but never one with a call in flight', () => {
    pool.acquire('127.0.0.1:1001').release();
    const busy = pool.acquire('127.0.0.1:1002');

    now += 59_000;
    expect(pool.sweepIdle()).toBe(0);
    now += 2_000;
    expect(pool.sweepIdle()).toBe(1);
    expect(pool.size).toBe(1);

    busy.release();
    busy.release(); // releasing twice counts once
    now += 61_000;
    expect(pool.sweepIdle()).toBe(1);
    expect(pool.size).toBe(0);
  });

  it('treats a client as used when it is released, not when it was acquired', () => {
    const lease = pool.acquire('127.0.0.1:1001');
    now += 120_000;
    lease.release();
    now += 30_000;
    expect(pool.sweepIdle()).toBe(0);
  });

  it('creates a fresh client for an address after its idle client was closed', () => {
    const first = pool.acquire('127.0.0.1:1001');
    first.release();
    now += 61_000;
    pool.sweepIdle();
    expect(pool.acquire('127.0.0.1:1001').client).not.toBe(first.client);
  });

  it('refuses leases once closed', () => {
    pool.acquire('127.0.0.1:1001');
    pool.close();
    expect(pool.size).toBe(0);
    expect(() => pool.acquire('127.0.0.1:1001')).toThrow(ForwarderPoolClosedError);
  });
});
