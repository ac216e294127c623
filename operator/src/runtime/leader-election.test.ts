/**
 * LeaderElector against the sandbox API server, with real client-node over HTTP. Each candidate
 * has its own bearer token, so the sandbox counts its lease reads and writes apart; the follower's
 * clock is injected, so "the lease has not expired yet" is decided by the test, not by waiting.
 */
import * as k8s from '@kubernetes/client-node';
import { silentLogger } from '../../../common/src/logger';
import { startSandbox, type Sandbox } from '../../../sandbox/src/index';
import { waitFor } from '../../../test/support/wait';
import { LeaderElector } from './leader-election';

const LEASE = { namespace: 'default', name: 'election-test' };
const LEASE_MS = 15_000;

interface Candidate {
  elector: LeaderElector;
  identity: string;
  /** Calls of onStartedLeading and onStoppedLeading. */
  counts: { started: number; stopped: number };
}

describe('LeaderElector on the sandbox', () => {
  let sandbox: Sandbox;
  let coordination: k8s.CoordinationV1Api;
  const candidates: Candidate[] = [];

  const candidate = (identity: string, now: () => number): Candidate => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sandbox.kubeconfigYaml().replace(/token: .*/, `token: ${identity}`));
    const counts = { started: 0, stopped: 0 };
    const elector = new LeaderElector({
      coordination: kc.makeApiClient(k8s.CoordinationV1Api), ...LEASE, identity,
      leaseDurationMs: LEASE_MS, renewDeadlineMs: 10_000, retryPeriodMs: 20, logger: silentLogger(), now,
      onStartedLeading: () => counts.started++,
      onStoppedLeading: () => counts.stopped++,
    });
    const c = { elector, identity, counts };
    candidates.push(c);
    return c;
  };
  /** Lease requests of one candidate so far, by verb. */
  const requests = (c: Candidate, verb: string): number => sandbox.faults.requests({ verb, resource: 'leases', token: c.identity });
  const lease = async (): Promise<k8s.V1LeaseSpec> => (await coordination.readNamespacedLease(LEASE)).spec ?? {};

  beforeAll(async () => {
    sandbox = await startSandbox();
    coordination = sandbox.kubeConfig().makeApiClient(k8s.CoordinationV1Api);
  });

  afterEach(async () => {
    for (const c of candidates.splice(0)) await c.elector.stop();
    await coordination.deleteNamespacedLease(LEASE).catch(() => undefined);
  });

  afterAll(async () => {
    await sandbox.stop();
  });

  test('a follower leaves a fresh lease alone, without writing, and takes it over once it has expired on its own clock', async () => {
    const a = candidate('candidate-a', Date.now);
    a.elector.start();
    await waitFor(() => a.elector.isLeader, { message: 'a leads' });
    expect((await lease()).holderIdentity).toBe('candidate-a');
    a.elector.halt(); // killed: it neither renews nor releases

    let followerNow = Date.now();
    const b = candidate('candidate-b', () => followerNow);
    b.elector.start();
    await waitFor(() => requests(b, 'get') >= 3, { message: 'b has looked at the lease three times' });
    expect(b.elector.isLeader).toBe(false);
    expect(requests(b, 'update') + requests(b, 'create')).toBe(0);

    followerNow += LEASE_MS + 1;
    await waitFor(() => b.elector.isLeader, { message: 'b takes over the expired lease' });
    expect(b.counts).toEqual({ started: 1, stopped: 0 });
    expect(await lease()).toMatchObject({ holderIdentity: 'candidate-b', leaseTransitions: 1 });
  });

  test('a leader that stops releases the lease, and a standby takes over without waiting out the lease', async () => {
    const a = candidate('candidate-a', Date.now);
    a.elector.start();
    await waitFor(() => a.elector.isLeader, { message: 'a leads' });
    const frozen = Date.now();
    const b = candidate('candidate-b', () => frozen); // its clock never moves: it cannot see an expiry
    b.elector.start();
    await waitFor(() => requests(b, 'get') >= 3, { message: 'b has looked at the lease three times' });
    expect(b.elector.isLeader).toBe(false);

    await a.elector.stop();
    expect(a.counts).toEqual({ started: 1, stopped: 1 });
    await waitFor(() => b.elector.isLeader, { message: 'b takes over the released lease' });
    expect(await lease()).toMatchObject({ holderIdentity: 'candidate-b', leaseTransitions: 1 });
  });

  test('a leader renews with one update each time, not a read and an update', async () => {
    const a = candidate('candidate-a', Date.now);
    a.elector.start();
    await waitFor(() => a.elector.isLeader, { message: 'a leads' });
    const gets = requests(a, 'get');
    const updates = requests(a, 'update');
    await waitFor(() => requests(a, 'update') >= updates + 5, { message: 'a renewed five more times' });
    expect(requests(a, 'get')).toBe(gets);
    expect((await lease()).holderIdentity).toBe('candidate-a');
  });

  test('a leader that finds the lease taken by another steps down once', async () => {
    const a = candidate('candidate-a', Date.now);
    a.elector.start();
    await waitFor(() => a.elector.isLeader, { message: 'a leads' });
    // a renews every 20 ms: a replace from a read it has renewed since is a conflict; read again then.
    await waitFor(async () => {
      const current = await coordination.readNamespacedLease(LEASE);
      return coordination.replaceNamespacedLease({ ...LEASE, body: { ...current, spec: { ...(current.spec ?? {}), holderIdentity: 'intruder', renewTime: new k8s.V1MicroTime(Date.now()) } } });
    }, { message: 'the lease taken by an intruder' });
    await waitFor(() => !a.elector.isLeader, { message: 'a steps down' });
    expect(a.counts).toEqual({ started: 1, stopped: 1 });
    expect(a.elector.writeFence()).toMatch(/^its leader Lease default\/election-test was taken by intruder$/);
  });

  test('a leader whose clock passed its renew deadline since it last renewed (a paused process) is fenced at the first ask, before its loop runs, and steps down once; leading again lifts the fence', async () => {
    let now = Date.now();
    const a = candidate('candidate-a', () => now);
    expect(a.elector.writeFence()).toBeUndefined(); // never led: not fenced
    a.elector.start();
    await waitFor(() => a.elector.isLeader, { message: 'a leads' });
    expect(a.elector.writeFence()).toBeUndefined();
    a.elector.halt(); // its loop does not run: the process is paused
    now += 10_001;
    expect(a.elector.writeFence()).toMatch(/^its leader Lease default\/election-test was not renewed within the renew deadline, 10 s; last renewed at \S+Z$/);
    expect(a.elector.isLeader).toBe(false);
    expect(a.elector.writeFence()).toBeDefined();
    expect(a.counts).toEqual({ started: 1, stopped: 1 });
    a.elector.start(); // resumed: the Lease is still its own
    await waitFor(() => a.elector.isLeader, { message: 'a leads again' });
    expect(a.elector.writeFence()).toBeUndefined();
    expect(a.counts).toEqual({ started: 2, stopped: 1 });
  });

  test('a leader that stops is not fenced: its last writes (the hand-over) go out', async () => {
    const a = candidate('candidate-a', Date.now);
    a.elector.start();
    await waitFor(() => a.elector.isLeader, { message: 'a leads' });
    await a.elector.stop();
    expect(a.elector.writeFence()).toBeUndefined();
  });
});
