/**
 * What the outage tests on the real control plane check, shared by their suites: a cluster-wide
 * GameRoom watch that applies a suite's rules to every event (and to what happened while it was
 * not watching), pings sent as a game server sends them, the gateway's pending status writes, the
 * management API's answer during an outage, and the state every operation and fleet must end in.
 */
import * as k8s from '@kubernetes/client-node';
import * as fs from 'node:fs';
import type { GameRoom, Operation } from '../../common/src/generated/resources';
import { roomToken } from '../../common/src/rooms/room-token';
import type { SimRoomsStats } from '../../sandbox/src/rooms/sim-rooms';
import { controlPlaneAssets, startControlPlane, type ControlPlane } from './control-plane';
import { startFaultProxy, type FaultProxy } from './fault-proxy';
import { managementCall } from './http';
import { prepareForRoomkeeper, realApiServer, realClusterEnv } from './real-apiserver';
import { schedulerObject, startStack, type Stack, type StackOptions } from './stack';
import { waitFor } from './wait';

/** The simulated game servers' ping counters now (all zero in a stack without them). */
export function pingStats(s: Stack): SimRoomsStats {
  return s.simulation?.rooms?.stats() ?? { activeRooms: 0, pingsSent: 0, pingFailures: 0, pingFailuresByNamespace: {}, pingsByStatus: { ready: 0, occupied: 0, terminating: 0 }, recentFailures: [] };
}

/**
 * Fails, naming the failed pings (what the gateway answered, or the client's error), if any failed
 * since `before`, except those of rooms in the `except` namespaces; returns how many of those failed.
 */
export function expectNoPingFailedSince(before: SimRoomsStats, now: SimRoomsStats, except: readonly string[] = []): number {
  const inNamespace = (s: SimRoomsStats, ns: string): number => s.pingFailuresByNamespace[ns] ?? 0;
  const excepted = except.reduce((n, ns) => n + inNamespace(now, ns) - inNamespace(before, ns), 0);
  const failed = now.pingFailures - before.pingFailures - excepted;
  const others = now.recentFailures.filter((f) => !except.some((ns) => f.pod.startsWith(`${ns}/`)));
  if (failed > 0) throw new Error(`${failed} of ${now.pingsSent - before.pingsSent} pings failed; the last failures: ${JSON.stringify(others.slice(-failed))}`);
  return excepted;
}

/**
 * The operator's settings in the outage suites: the chart's room timeouts (120 s initialization,
 * 240 s ping) and the expiry brake's default grace (one ping timeout); controller-runtime's
 * leader-election timings; a 2 s health check.
 */
const OUTAGE_CONFIG: StackOptions['config'] = {
  roomInitTimeout: 120_000, roomPingTimeout: 240_000, expiryGrace: 0, healthInterval: 2000,
  leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2000, operationLeaseTtl: 5000,
};

/** A control plane of a suite's own (outages must not disturb the shared one) and one stack on it. */
export interface OutageLab {
  plane: ControlPlane;
  stack: Stack;
  /** With `throughProxy`: the fault proxy the operator and the gateway reach kube-apiserver by. */
  proxy?: FaultProxy;
  stop(): Promise<void>;
}

/**
 * Starts the lab, or resolves to undefined when the real tier does not run here. The stack runs
 * as the chart's identities; with `throughProxy` the operator and the gateway go through a fault
 * proxy, while the simulated kubelet and rooms (the data plane) reach kube-apiserver directly.
 */
export async function startOutageLab(opts: { config?: StackOptions['config']; simulation: StackOptions['simulation']; throughProxy?: boolean }): Promise<OutageLab | undefined> {
  const assets = controlPlaneAssets();
  if (!realApiServer() || 'missing' in assets) return undefined;
  const saved = { ...process.env };
  const plane = await startControlPlane({ assetsDir: assets.dir });
  let proxy: FaultProxy | undefined;
  const stopPlane = async (): Promise<void> => {
    await proxy?.close();
    await plane.stop();
    if (fs.existsSync(plane.dir)) fs.rmSync(plane.dir, { recursive: true, force: true });
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]; // eslint-disable-line @typescript-eslint/no-dynamic-delete -- the environment is a dictionary: restoring it removes the variables the lab added
    Object.assign(process.env, saved);
  };
  try {
    Object.assign(process.env, realClusterEnv(prepareForRoomkeeper(plane)));
    if (opts.throughProxy) proxy = await startFaultProxy({ upstream: plane.url, caFile: plane.caFile });
    const through = proxy;
    const stack = await startStack({
      external: true,
      config: { ...OUTAGE_CONFIG, ...opts.config },
      simulation: opts.simulation,
      ...(through ? { kubeConfigFor: (component: 'operator' | 'gateway' | 'simulation', kc: k8s.KubeConfig) => (component === 'simulation' ? kc : through.kubeConfig(kc)) } : {}),
    });
    return {
      plane, stack, proxy,
      async stop() {
        proxy?.clear();
        await stack.stop().catch(() => undefined);
        await stopPlane();
      },
    };
  } catch (err) {
    await stopPlane();
    throw err;
  }
}
export const ENDED = ['finished', 'error', 'canceled'];


/** A create body: the test scheduler with `grace` as the pods' termination grace period. */
export function createBody(name: string, grace: string, overrides: Record<string, unknown> = {}, env: { name: string; value: string }[] = []): Record<string, unknown> {
  const spec = (schedulerObject(name, overrides, env) as { spec: Record<string, unknown> & { spec: Record<string, unknown> } }).spec;
  return { name, ...spec, spec: { ...spec.spec, terminationGracePeriod: grace } };
}

export const live = (rooms: readonly GameRoom[]): GameRoom[] => rooms.filter((r) => !r.metadata.deletionTimestamp && !r.spec.validation);
/** What these tests count as serving: a room ready or occupied. */
export const readyOrOccupied = (status: string | undefined): boolean => status === 'ready' || status === 'occupied';
export const serving = (rooms: readonly GameRoom[]): GameRoom[] => live(rooms).filter((r) => readyOrOccupied(r.status?.status));
export const key = (r: GameRoom): string => `${String(r.metadata.namespace)}/${String(r.metadata.name)}`;
/**
 * Whether this event is the room's removal: its deletionTimestamp appears, or it is deleted
 * without the watch having seen one. A room deleted in the foreground is removed once, when its
 * deletionTimestamp appears; its final delete (pods gone, finalizer released) is not a second
 * removal, and counts taken at that later moment say nothing of the deletion's decision.
 */
export const removedNow = (event: 'add' | 'update' | 'delete', room: GameRoom, prev: GameRoom | undefined): boolean =>
  event === 'delete' ? !prev?.metadata.deletionTimestamp : Boolean(room.metadata.deletionTimestamp) && !prev?.metadata.deletionTimestamp;

/**
 * Every GameRoom event of the cluster while kube-apiserver is up, checked by `rules`; on each
 * (re)start, a room seen before and missing from the new list counts as deleted while unwatched.
 */
export class RoomWatch {
  readonly violations: string[] = [];
  private readonly last = new Map<string, GameRoom>();
  private informer: k8s.Informer<GameRoom & k8s.KubernetesObject> | undefined;
  private running = false;
  private listing = false;

  /**
   * `rules` gets each event, the room before it, every room after it, and, for a change found by
   * a re-list, the rooms as the watch last saw them before it stopped (what changed meanwhile
   * happened in an order nobody saw).
   */
  constructor(private readonly s: Stack, private readonly rules: (event: 'add' | 'update' | 'delete', room: GameRoom, prev: GameRoom | undefined, all: GameRoom[], unwatchedSince?: ReadonlyMap<string, GameRoom>) => string[]) {}

  rooms(namespace: string): GameRoom[] {
    return [...this.last.values()].filter((r) => r.metadata.namespace === namespace);
  }

  private seen(event: 'add' | 'update' | 'delete', room: GameRoom): void {
    // A list arrives one room at a time, and the rooms this watch held before it may have changed
    // or gone meanwhile: counts over a half-applied list mean nothing. Checked once it is whole.
    if (this.listing) return;
    const prev = this.last.get(key(room));
    if (event === 'delete') this.last.delete(key(room));
    else this.last.set(key(room), room);
    for (const v of this.rules(event, room, prev, [...this.last.values()])) this.violations.push(v);
  }

  async start(): Promise<void> {
    const informer = k8s.makeInformer<GameRoom & k8s.KubernetesObject>(this.s.kc, '/apis/roomkeeper.io/v1/gamerooms', () => this.s.api.listGameRooms());
    informer.on('add', (r) => this.seen('add', r));
    informer.on('update', (r) => this.seen('update', r));
    informer.on('delete', (r) => this.seen('delete', r));
    // A watch broken while the server is up (not expected): watch again, as a controller does.
    informer.on('error', () => setTimeout(() => {
      if (this.running) informer.start().catch(() => undefined);
    }, 1000));
    this.informer = informer;
    this.running = true;
    this.listing = true;
    try {
      await informer.start();
    } finally {
      this.listing = false;
    }
    // The list is whole: the state before it becomes the listed one at once, and each change the
    // list shows is checked against that consistent state (rooms gone meanwhile as deletions).
    const listed = new Map((informer.list() as GameRoom[]).map((r) => [key(r), r]));
    const before = new Map(this.last);
    this.last.clear();
    for (const [k, r] of listed) this.last.set(k, r);
    const all = [...this.last.values()];
    for (const [k, prev] of before) {
      if (!listed.has(k)) for (const v of this.rules('delete', prev, prev, all, before)) this.violations.push(v);
    }
    for (const [k, room] of listed) {
      const prev = before.get(k);
      if (prev?.metadata.resourceVersion === room.metadata.resourceVersion) continue;
      for (const v of this.rules(prev ? 'update' : 'add', room, prev, all, before)) this.violations.push(v);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.informer?.stop();
    this.informer = undefined;
  }
}

/** A room's ping as its game server sends it; resolves to whether it was answered 200 `success`. */
async function ping(s: Stack, scheduler: string, room: string, status: string): Promise<boolean> {
  const res = await fetch(`${s.roomsUrl}/scheduler/${scheduler}/rooms/${room}/ping`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(s.config.roomTokenSecret, scheduler, room)}` },
    body: JSON.stringify({ status, timestamp: Math.floor(Date.now() / 1000) }),
  });
  const body = await res.json().catch(() => undefined) as { success?: boolean } | undefined;
  return res.status === 200 && body?.success === true;
}

/** Pings the given rooms with their wanted status every 2 s until stopped; counts answers that were not `success`. */
export function pinger(s: Stack, scheduler: string, wanted: Map<string, string>): { failures: string[]; readonly rounds: number; stop(): Promise<void> } {
  // boolean, not `true`: stop() clears it while the loop runs.
  let running = true as boolean;
  let rounds = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (running) {
      await Promise.all([...wanted].map(async ([room, status]) => {
        const ok = await ping(s, scheduler, room, status).catch(() => false);
        if (!ok) failures.push(`${room} ${status}`);
      }));
      rounds++;
      await new Promise((r) => setTimeout(r, 2000));
    }
  })();
  return { failures, get rounds() {
    return rounds;
  }, async stop() {
    running = false;
    await loop;
  } };
}

/** The gateway's count of room status changes answered but not yet written. */
export async function pendingWrites(s: Stack): Promise<number> {
  const text = await (await fetch(`${String(s.managementUrl)}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('roomkeeper_ping_status_writes_pending'));
  return Number(line?.split(/\s+/).at(-1) ?? NaN);
}

/** During an outage the management API says what is going on: 503, code 14, the Kubernetes API named, Retry-After. */
export async function expectUnavailable(s: Stack, scheduler: string): Promise<void> {
  for (const [method, path, body] of [['GET', `/schedulers/${scheduler}`, undefined], ['POST', `/schedulers/${scheduler}/add-rooms`, { amount: 1 }]] as const) {
    const res = await managementCall(s, method, path, body);
    const answer = res.body as { code?: unknown; message?: unknown } | undefined;
    expect({ call: `${method} ${path}`, status: res.status, code: answer?.code, namesTheApi: /Kubernetes API/.test(String(answer?.message)), retryAfter: Number(res.retryAfter) > 0 })
      .toEqual({ call: `${method} ${path}`, status: 503, code: 14, namesTheApi: true, retryAfter: true });
  }
}

/** An operation as a line for failure messages. */
export const describeOp = (o: Operation): string => `${String(o.metadata.name)} ${o.spec.definitionName} ${o.status?.status ?? 'pending'}: ${(o.status?.executionHistory ?? []).map((h) => h.event).join(' | ')}`;

/**
 * Every operation ended, and one that did not finish says why: a line beyond "Starting operation"
 * and the last line that names the failure.
 */
export function expectEndedWithReason(ops: readonly Operation[]): void {
  const wrong = ops.filter((o) => {
    const history = (o.status?.executionHistory ?? []).map((h) => h.event);
    if (!ENDED.includes(o.status?.status ?? '')) return true;
    if (o.status?.status === 'finished') return history.at(-1) !== 'Operation finished';
    return !history.some((h) => /stuck|fail|error|could not|not found|unavailable|cancel/i.test(h) && !/^Operation ended in error$/.test(h));
  });
  expect(wrong.map(describeOp)).toEqual([]);
}

/** A later operation is accepted (after the 503s a client waits out) and finishes. */
export async function laterOperationFinishes(s: Stack, scheduler: string): Promise<void> {
  const added = await waitFor(async () => {
    const res = await managementCall(s, 'POST', `/schedulers/${scheduler}/add-rooms`, { amount: 1 });
    if (res.status === 503) expect(Number(res.retryAfter)).toBeGreaterThan(0);
    else expect(res.status).toBe(200);
    return res.status === 200 ? res : undefined;
  }, { timeoutMs: 120_000, intervalMs: 1000, message: `add-rooms on ${scheduler} accepted after the outage` });
  const answer = added.body as { operationId: string };
  await waitFor(async () => (await s.api.getOperation(answer.operationId)).status?.status === 'finished',
    { timeoutMs: 120_000, message: `add-rooms on ${scheduler} after the outage finished` }).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}\n${describeOp(await s.api.getOperation(answer.operationId))}`);
  });
}

/** Converged: as many live rooms as desired, each with its running pod, and no pod without a room. */
export async function expectConverged(s: Stack, scheduler: string): Promise<void> {
  let seen = '';
  await waitFor(async () => {
    const desired = (await s.api.getScheduler(scheduler)).spec.roomsReplicas ?? 0;
    const all = (await s.api.listGameRooms(scheduler)).items;
    const rooms = live(all).map((r) => r.metadata.name as string).sort();
    const validation = new Set(all.filter((r) => r.spec.validation).map((r) => r.metadata.name as string));
    const pods = (await s.core.listNamespacedPod({ namespace: scheduler })).items.filter((p) => !p.metadata?.deletionTimestamp && !validation.has(p.metadata?.name as string)).map((p) => p.metadata?.name as string).sort();
    seen = `desired ${desired}, ${rooms.length} live rooms, ${pods.length} pods, ${all.length - rooms.length} rooms terminating or validating`;
    return rooms.length === desired && JSON.stringify(pods) === JSON.stringify(rooms);
  }, { timeoutMs: 180_000, intervalMs: 500, message: `${scheduler}: rooms, pods and the desired count agree` }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; last seen: ${seen}`);
  });
}
