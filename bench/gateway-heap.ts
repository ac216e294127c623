/**
 * Gateway live heap at N rooms (issue 19): what the gateway's memory holds per room, without the
 * whole scale benchmark. The sandbox API server runs in its own process; the gateway runs alone in
 * another, compiled, as the image runs it (node flags from BENCH_GATEWAY_NODE_FLAGS, by default
 * the chart's gateway.maxHeapMB). N GameRooms are created shaped as the operator makes them
 * (labels, the create-request annotation, the status the operator and a first ping write), then
 * every room pings twice (per-room tokens on, as in production), so the token cache, the ping
 * recorder's per-room state and the forwarding throttle hold every room.
 *
 * Figures, each after a full GC in the gateway: heapUsed and RSS with no room, with N rooms cached
 * and after the pings; the heap per room. Then every room pings in a loop for
 * BENCH_GATEWAY_HEAP_STEADY_SECONDS (default 60): the most resident memory meanwhile. `BENCH_GATEWAY_HEAP_ROOMS` sets N (default 10,000).
 * Run: `npx tsx bench/gateway-heap.ts`.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { GameRoom, Scheduler } from '../common/src/generated/resources';
import { isConflict, makeKubeClients, retryTransient } from '../common/src/kube/clients';
import { RoomkeeperApi } from '../common/src/kube/roomkeeper-api';
import { API_VERSION } from '../common/src/resources/api-group';
import { CREATE_REQUEST_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL, VERSION_LABEL } from '../common/src/resources/labels';
import { roomToken } from '../common/src/rooms/room-token';
import { waitFor } from '../test/support/wait';
import { BENCH_SECRETS, chartNodeFlags, PROCESSES_DIR } from './support/bench-stack';
import { forkChild, type ChildHandle } from './support/child-rpc';
import { compiledScript } from './support/compiled-processes';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { MB, readProcessMemory } from './support/process-memory';
import { benchSchedulerSpec } from './support/scheduler-body';
import { runStandalone } from './support/standalone';
import type { GatewayChildArg, GatewayMemory, GatewayReady } from './processes/gateway-child';
import type { SandboxReady } from './processes/sandbox-child';

const NAME = '10l. gateway live heap at N rooms (sandbox)';
const ROOMS = Number(process.env.BENCH_GATEWAY_HEAP_ROOMS ?? 10_000);
const SCHEDULER = 'heap-a';
const PING_ROUNDS = 2;
const STEADY_MS = Number(process.env.BENCH_GATEWAY_HEAP_STEADY_SECONDS ?? 60) * 1000;

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  }));
}

/** A GameRoom as the operator creates it, with the status the operator and the room's first ping write. */
function operatorShapedRoom(name: string, port: number): { room: GameRoom; status: NonNullable<GameRoom['status']> } {
  const now = new Date().toISOString();
  return {
    room: {
      apiVersion: API_VERSION,
      kind: 'GameRoom',
      metadata: {
        name, namespace: SCHEDULER,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [SCHEDULER_LABEL]: SCHEDULER, [VERSION_LABEL]: 'v1.0.0' },
        annotations: { [CREATE_REQUEST_ANNOTATION]: randomUUID() },
      },
      spec: { scheduler: SCHEDULER, version: 'v1.0.0', validation: false },
    },
    status: {
      status: 'ready', instanceStatus: 'ready', pingStatus: 'ready', runningMatches: 0, lastPingAt: now, createdAt: now,
      host: `10.0.${(port >> 8) & 255}.${port & 255}`, ports: [{ name: 'game', protocol: 'UDP', port, containerPort: 7777 }],
    },
  };
}

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  const progress = (what: string) => process.stdout.write(`[gateway-heap] ${Math.round((Date.now() - began) / 1000)} s: ${what}\n`);
  const stops: (() => Promise<void>)[] = [];
  const nodeFlags = chartNodeFlags('gateway');
  let error: string | undefined;
  try {
    // A loaded machine (this runs at a low CPU priority) may take minutes to start the sandbox.
    const sandbox = await forkChild<SandboxReady>(path.join(PROCESSES_DIR, 'sandbox-child.ts'), { startTimeoutMs: 300_000 });
    const kc = new KubeConfig();
    kc.loadFromString(sandbox.ready.kubeconfigYaml);
    stops.push(() => sandbox.stop());
    const clients = makeKubeClients(kc, { qps: 10_000, burst: 10_000 });
    stops.push(() => {
      clients.limiter.drain();
      return Promise.resolve();
    });
    const api = new RoomkeeperApi(clients.custom);
    const arg: GatewayChildArg = { kubeconfigYaml: sandbox.ready.kubeconfigYaml, config: { logLevel: 'error', ...BENCH_SECRETS, gatewayPort: 0, roomsPort: 0 } };
    const gateway: ChildHandle<GatewayReady> = await forkChild<GatewayReady>(compiledScript('gateway-child'), { arg, nodeFlags, compiled: true, startTimeoutMs: 300_000 });
    stops.push(() => gateway.stop());
    const memory = () => gateway.call<GatewayMemory>('memory');
    const record = (label: string, m: GatewayMemory) => {
      figures.push(figure(NAME, `${label}: heapUsed after a full GC`, m.heapUsed / MB, 'MB', { note: `RSS ${(m.rss / MB).toFixed(1)} MB, heapTotal ${(m.heapTotal / MB).toFixed(1)} MB, external ${(m.external / MB).toFixed(1)} MB, ${m.cachedRooms} rooms cached` }));
      progress(`${label}: heapUsed ${(m.heapUsed / MB).toFixed(1)} MB, RSS ${(m.rss / MB).toFixed(1)} MB`);
    };
    const empty = await memory();
    record('no room', empty);

    await retryTransient(() => clients.core.createNamespace({ body: { metadata: { name: SCHEDULER } } }), 10);
    await retryTransient(() => api.createScheduler({ apiVersion: API_VERSION, kind: 'Scheduler', metadata: { name: SCHEDULER }, spec: benchSchedulerSpec() as unknown as Scheduler['spec'] }), 10);
    const names = Array.from({ length: ROOMS }, (_, i) => `${SCHEDULER}-${i.toString(36).padStart(5, '0')}`);
    // Connections fail now and then on a loaded machine: retried (a create that landed answers 409).
    await pool(names.map((name, i) => ({ name, port: 10_000 + i })), 20, async ({ name, port }) => {
      const { room, status } = operatorShapedRoom(name, port);
      await retryTransient(() => api.createGameRoom(room), 10).catch((err: unknown) => {
        if (!isConflict(err)) throw err;
      });
      await retryTransient(() => api.patchGameRoomStatus(SCHEDULER, name, { status }), 10);
    });
    progress(`${ROOMS} rooms created`);
    await waitFor(async () => (await memory()).cachedRooms >= ROOMS, { timeoutMs: 600_000, intervalMs: 2000, message: `the gateway's cache did not reach ${ROOMS} rooms` });
    const cached = await memory();
    record(`${ROOMS} rooms cached`, cached);

    let failed = 0;
    let sent = 0;
    const pingAll = () => pool(names, 50, async (roomId) => {
      sent++;
      try {
        const res = await fetch(`${gateway.ready.roomsUrl}/scheduler/${SCHEDULER}/rooms/${roomId}/ping`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(BENCH_SECRETS.roomTokenSecret, SCHEDULER, roomId)}` },
          body: JSON.stringify({ status: 'ready', timestamp: Math.floor(Date.now() / 1000) }),
        });
        if ((await res.text()) !== '{"success":true}') failed++;
      } catch {
        failed++;
      }
    });
    for (let round = 0; round < PING_ROUNDS; round++) await pingAll();
    const pinged = await memory();
    record(`${ROOMS} rooms cached, each pinged ${PING_ROUNDS} times`, pinged);

    // Steady: every room pings again and again (as fast as this process sends them); the
    // gateway's resident memory is sampled each second, without forcing a GC.
    let maxRss = 0;
    const sampler = setInterval(() => {
      void readProcessMemory(gateway.pid).then((m) => {
        maxRss = Math.max(maxRss, m.rssBytes);
      }, () => undefined);
    }, 1000);
    const sentBefore = sent;
    const steadyStart = Date.now();
    try {
      while (Date.now() - steadyStart < STEADY_MS) await pingAll();
    } finally {
      clearInterval(sampler);
    }
    const rssAfter = (await readProcessMemory(gateway.pid)).rssBytes;
    const rate = (sent - sentBefore) / ((Date.now() - steadyStart) / 1000);
    figures.push(figure(NAME, `RSS while every room pings (max over ${Math.round((Date.now() - steadyStart) / 1000)} s, no forced GC)`, maxRss / MB, 'MB', { note: `${rate.toFixed(0)} pings/s; RSS at the end ${(rssAfter / MB).toFixed(1)} MB` }));
    progress(`steady pings: max RSS ${(maxRss / MB).toFixed(1)} MB at ${rate.toFixed(0)} pings/s`);
    record('after the steady pings', await memory());
    figures.push(figure(NAME, 'heap per room (cached and pinged, after a full GC)', (pinged.heapUsed - empty.heapUsed) / ROOMS / 1024, 'KB', { note: `cache alone ${((cached.heapUsed - empty.heapUsed) / ROOMS / 1024).toFixed(2)} KB a room` }));
    figures.push(figure(NAME, 'pings not answered {"success":true}', failed, 'pings', { target: { op: '<=', value: 0 } }));
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
    progress(`failed: ${error}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
  const notes = [`Sandbox API server and gateway (compiled, plain node, flags "${nodeFlags.join(' ')}") each in its own process; production defaults (per-room tokens on); ${ROOMS} operator-shaped GameRooms in one scheduler; 1 run.`];
  return { name: NAME, figures, notes, durationMs: Date.now() - began, ...(error !== undefined ? { error } : {}) };
}

if (require.main === module) runStandalone(() => run());
