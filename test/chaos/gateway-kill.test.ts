/**
 * One of two gateways killed under 1,000 pinging rooms (the operations issue's fault scenario 9).
 * Two gateway replicas, one in the test's process and one a child process, behind a round-robin
 * balancer that stands in for the Service (a backend that refuses or drops a connection leaves
 * the rotation, as a pod that fails its readiness leaves the endpoints). The 1,000 simulated rooms
 * ping through it every 2 s (980 simulated game servers; the other 20 rooms' game servers are the test, flipping between ready
 * and occupied. The child gateway is SIGKILLed (no flush, no goodbye) while they ping. Checked on
 * every room event, from before the kill to the end: no room is deleted and no room leaves ready
 * or occupied (no room expires falsely). At the end every status the flipping rooms were answered
 * `success` for (the last one each sent) is their GameRoom's status: no accepted status is lost.
 * Sandbox only.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { forkChild, type ChildHandle } from '../../bench/support/child-rpc';
import { roomToken } from '../../common/src/rooms/room-token';
import { managementCall } from '../support/http';
import { listenLocally } from '../support/local-server';
import { REPO_ROOT, schedulerObject, startStack, TEST_CONFIG, type Stack } from '../support/stack';
import { waitFor } from '../support/wait';
import type { GatewayChildArg } from './gateway-child';
import { liveRooms, servingRooms, watchFleet } from './fleet-watch';

const NAME = 'gateway-kill';
/** 1,000 pinging rooms: 980 simulated game servers and 20 the test plays. */
const ROOMS = 980;
const FLIPPERS = 20;
const PING_INTERVAL_MS = 2000;
const PING_TIMEOUT_MS = 30_000;
/** How long the fleet pings through the surviving gateway after the kill: 1.5 ping timeouts. */
const AFTER_KILL_MS = 45_000;
const CREDENTIALS = { authUsername: 'tester', authPassword: 'test-password', roomTokenSecret: 'test-room-token-secret' };

/** A round-robin HTTP balancer in front of the gateways' rooms ports, as a Service is. */
async function startBalancer(): Promise<{ url: string; setBackends(urls: string[]): void; readonly down: string[]; close(): Promise<void> }> {
  let backends: string[] = [];
  const down: string[] = [];
  let next = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const server = http.createServer((req, res) => {
    const live = backends.filter((b) => !down.includes(b));
    const target = live[next++ % Math.max(1, live.length)];
    if (!target) {
      res.writeHead(503).end();
      return;
    }
    const url = new URL(target);
    const up = http.request({ hostname: url.hostname, port: url.port, method: req.method, path: req.url, headers: req.headers, agent }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', () => {
      if (!down.includes(target)) down.push(target);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(up);
  });
  const local = await listenLocally(server);
  return {
    url: local.url,
    setBackends: (urls) => (backends = urls),
    down,
    close: async () => {
      await local.close();
      agent.destroy();
    },
  };
}

describe('one of two gateways is killed under 1,000 pinging rooms', () => {
  let stack: Stack;
  let balancer: Awaited<ReturnType<typeof startBalancer>>;
  let child: ChildHandle<{ roomsUrl: string; managementUrl: string }> | undefined;
  beforeAll(async () => {
    balancer = await startBalancer();
    stack = await startStack({
      roomsApiUrl: balancer.url,
      config: { healthInterval: 1000, roomPingTimeout: PING_TIMEOUT_MS, roomInitTimeout: 60_000 },
      simulation: { nodes: 4, pingIntervalMs: PING_INTERVAL_MS, startDelayMs: 20 },
    });
    const arg: GatewayChildArg = {
      kubeconfigYaml: stack.sandbox!.kubeconfigYaml(), replicaId: 'gateway-child',
      config: { ...TEST_CONFIG, ...CREDENTIALS, gatewayPort: 0, roomsPort: 0, pingFlushInterval: 500, logLevel: 'error' },
    };
    child = await forkChild(path.join(REPO_ROOT, 'test', 'chaos', 'gateway-child.ts'), { arg });
    balancer.setBackends([stack.gateway!.roomsUrl, child.ready.roomsUrl]);
  }, 120_000);
  afterAll(async () => {
    if (child && fs.existsSync(`/proc/${child.pid}`)) await child.stop();
    await stack.stop();
    await balancer.close();
  });

  test('no room expires falsely and no accepted status is lost', async () => {
    const body = { name: NAME, ...(schedulerObject(NAME, { roomsReplicas: ROOMS + FLIPPERS, maxSurge: '25%' }) as { spec: object }).spec };
    expect((await managementCall(stack, 'POST', '/schedulers', body)).status).toBe(200);
    let serving = 0;
    await waitFor(async () => (serving = servingRooms((await stack.api.listGameRooms(NAME)).items).length) === ROOMS + FLIPPERS,
      { timeoutMs: 240_000, intervalMs: 1000, message: `${ROOMS + FLIPPERS} serving rooms` }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message} (${serving} serving)`);
    });

    // The fleet settled: every room serving and no operation left (a room that expired while the
    // fleet was created has been replaced).
    await waitFor(async () => {
      const ops = (await stack.api.listOperations(NAME)).items;
      const rooms = (await stack.api.listGameRooms(NAME)).items;
      return ops.every((o) => ['finished', 'error'].includes(o.status?.status ?? 'pending')) && rooms.length === ROOMS + FLIPPERS && servingRooms(rooms).length === ROOMS + FLIPPERS;
    }, { timeoutMs: 120_000, intervalMs: 1000, message: 'the fleet settled' });
    const expiredAtCreation = (await stack.api.listOperations(NAME)).items
      .filter((o) => o.spec.definitionName === 'remove_rooms' && (o.spec.input as { reason?: string }).reason === 'expired_room')
      .reduce((n, o) => n + ((o.spec.input as { roomsIds?: unknown[] }).roomsIds?.length ?? 0), 0);
    const opsBefore = new Set((await stack.api.listOperations(NAME)).items.map((o) => o.metadata.name));
    const flippers = liveRooms((await stack.api.listGameRooms(NAME)).items).slice(0, FLIPPERS).map((r) => r.metadata.name as string);
    for (const room of flippers) stack.simulation!.rooms!.silence(room);
    const accepted = new Map<string, string>();
    /** Each flipping room's last answer that was no success, for the message of a wait that times out. */
    const lastRefusal = new Map<string, string>();
    const ping = async (room: string, status: string): Promise<void> => {
      const res = await fetch(`${balancer.url}/scheduler/${NAME}/rooms/${room}/ping`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(CREDENTIALS.roomTokenSecret, NAME, room)}` },
        body: JSON.stringify({ status, timestamp: Math.floor(Date.now() / 1000) }),
      }).catch((err: unknown) => {
        lastRefusal.set(room, `${status}: ${String(err)}`);
        return undefined;
      });
      const text = res ? await res.text().catch(() => '') : '';
      const answer = res?.ok ? (() => { try { return JSON.parse(text) as { success?: boolean }; } catch { return undefined; } })() : undefined;
      if (answer?.success === true) accepted.set(room, status);
      else if (res) lastRefusal.set(room, `${status}: ${res.status} ${text.slice(0, 300)}`);
    };
    let round = 0;
    let flipping = true;
    const players = (async () => {
      // Each flipping room's game server sends its status every second, and changes it every 3 s.
      while (flipping) {
        const status = Math.floor(round++ / 3) % 2 === 0 ? 'occupied' : 'ready';
        await Promise.all(flippers.map((room, i) => ping(room, i % 2 === 0 ? status : status === 'ready' ? 'occupied' : 'ready')));
        await new Promise((r) => setTimeout(r, 1000)); // the game servers' ping interval: the load under test, not a wait for a state
      }
    })();

    let armed = false;
    const watch = await watchFleet(stack, NAME, (_fleet, e) => {
      if (!armed || e.kind !== 'room') return undefined;
      const room = e.object as { metadata: { deletionTimestamp?: unknown }; status?: { status?: string } };
      if (e.type === 'delete' || room.metadata.deletionTimestamp) return `room ${e.name} was deleted`;
      const status = room.status?.status;
      return status === 'ready' || status === 'occupied' ? undefined : `room ${e.name} is ${String(status)}`;
    });
    try {
      // Every flipping room's status through the gateways before the kill.
      await waitFor(() => flippers.every((r) => accepted.has(r)), { timeoutMs: 30_000, message: 'the flipping rooms answered' }).catch((err: unknown) => {
        const silent = flippers.filter((r) => !accepted.has(r)).map((r) => `${r} (${lastRefusal.get(r) ?? 'no answer yet'})`);
        throw new Error(`${(err as Error).message}; not accepted: ${silent.join(', ')}`);
      });
      armed = true;
      const pingsBefore = stack.simulation!.rooms!.stats();
      process.kill(child!.pid, 'SIGKILL');
      await waitFor(() => !fs.existsSync(`/proc/${child!.pid}`) || fs.readFileSync(`/proc/${child!.pid}/stat`, 'utf8').split(' ')[2] === 'Z',
        { timeoutMs: 10_000, message: 'the child gateway dead' });
      const killedAt = Date.now();
      // Rooms keep pinging through the survivor for 1.5 ping timeouts.
      await waitFor(() => Date.now() - killedAt >= AFTER_KILL_MS && balancer.down.length === 1, { timeoutMs: AFTER_KILL_MS + 30_000, intervalMs: 500, message: 'the killed gateway out of the rotation' });
      flipping = false;
      await players;
      const pingsAfter = stack.simulation!.rooms!.stats();

      // Every flipping room's GameRoom shows the last status it was answered success for.
      const mismatch = async () => {
        const rooms = new Map((await stack.api.listGameRooms(NAME)).items.map((r) => [r.metadata.name as string, r.status?.status]));
        return flippers.filter((r) => rooms.get(r) !== accepted.get(r)).map((r) => `${r}: accepted ${String(accepted.get(r))}, GameRoom ${String(rooms.get(r))}`);
      };
      await waitFor(async () => (await mismatch()).length === 0, { timeoutMs: 20_000, message: 'every accepted status applied' }).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}: ${(await mismatch()).join('; ')}`);
      });
      const expiries = (await stack.api.listOperations(NAME)).items.filter((o) => !opsBefore.has(o.metadata.name))
        .filter((o) => o.spec.definitionName === 'remove_rooms' && (o.spec.input as { reason?: string }).reason === 'expired_room');
      expect(expiries.map((o) => (o.spec.input as { details?: unknown }).details)).toEqual([]);
      expect(servingRooms((await stack.api.listGameRooms(NAME)).items)).toHaveLength(ROOMS + FLIPPERS);
      const sent = pingsAfter.pingsSent - pingsBefore.pingsSent;
      const failed = pingsAfter.pingFailures - pingsBefore.pingFailures;
      process.stdout.write(`\n[chaos] gateway kill: ${ROOMS} rooms pinging every ${PING_INTERVAL_MS} ms; after the SIGKILL, ${sent} pings sent, ${failed} failed (the killed gateway's in-flight and the first refused), ${watch.events} room events checked; ${expiredAtCreation} rooms had expired while the fleet was created, before the test began\n`);
      expect(watch.violations).toEqual([]);
    } finally {
      flipping = false;
      await players;
      await watch.stop();
    }
  }, 480_000);
});
