/**
 * Benchmark 11: the allocate API (issue 13). 1,000 ready rooms (GameRooms in the sandbox, in the
 * gateway's cache); matchmakers (CONCURRENCY requests in flight, in their own process, so they
 * never share the gateway's event loop) allocate until every room is taken. Measured: allocations per second, p50/p99 latency of each answer, and the
 * ratio to a bare loop doing the same compare-and-swap status writes (one merge patch of
 * `status.allocation` with the room's resourceVersion) with the same client library and the
 * gateway's client rate limit, on another scheduler of 1,000 ready rooms, with the same
 * concurrency. Each side first runs unmeasured on WARM_UP_ROOMS rooms of its own, then waits for its
 * client's rate limiter to refill, so both measured runs start warm and with a full burst.
 * Targets: ratio >= 0.7, p99 <= 100 ms. Then the same on a third scheduler with a new
 * allocationId in every request, as the README asks matchmakers to do: an id the cache does not
 * know costs its AllocationClaim (a create; the kept claims are deleted later in batches) besides
 * the room's write, and the check that no other room took the id, made on the cache once it shows
 * that write (a list of the scheduler's rooms only when the cache does not show it in time).
 * `BENCH_TARGET=real` (11r) runs the same on the real control plane (kube-apiserver and etcd),
 * where the API server, not the client, is what the two compete for. 11x runs it on the sandbox
 * with 10,000 ready rooms per scheduler (`BENCH_ROOMS=10000`): each run then outlasts the client's
 * burst, so both sides meet the client rate limit, and choosing a room walks a fleet ten times larger.
 */
import type { GameRoom } from '../common/src/generated/resources';
import { makeKubeClients } from '../common/src/kube/clients';
import { RoomkeeperApi } from '../common/src/kube/roomkeeper-api';
import * as path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { AllocateResult, AllocateRun } from './processes/allocate-child';
import { PROCESSES_DIR, type BenchTarget } from './support/bench-stack';
import { forkChild } from './support/child-rpc';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { sumMetric, sumMetricText } from './support/metric-sum';
import { startPingLab } from './support/ping-lab';
import { runStandalone } from './support/standalone';

/** The benchmark's name for a target and a fleet size. */
export function allocationBenchName(target: BenchTarget, rooms: number): string {
  const size = `${rooms.toLocaleString('en-US')} ready rooms`;
  return target === 'real' ? `11r. allocations, ${size}, real API server` : rooms === 1000 ? `11. allocations, ${size}` : `11x. allocations, ${size}`;
}
const CONCURRENCY = 8;
/**
 * Rooms each side handles, unmeasured, before its measured run: a measured run of 1,000 rooms lasts
 * under a second, so without it the figure mixes in the first requests' cost (code not yet
 * compiled by V8, connections being opened) on the side measured first or last.
 */
const WARM_UP_ROOMS = 200;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** User plus system CPU of a `process.cpuUsage` difference, in milliseconds. */
function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

interface LoopResult { done: number; failed: number; seconds: number; latenciesMs: number[] }

/** Runs `one` from CONCURRENCY workers until `total` succeeded or a worker's call says stop. */
async function drive(total: number, one: (i: number) => Promise<'ok' | 'failed' | 'stop'>): Promise<LoopResult> {
  let next = 0;
  let done = 0;
  let failed = 0;
  const latenciesMs: number[] = [];
  const began = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (done < total) {
      const i = next++;
      if (i >= total * 2) return;
      const t0 = performance.now();
      const r = await one(i);
      latenciesMs.push(performance.now() - t0);
      if (r === 'ok') done++;
      else if (r === 'failed') failed++;
      else return;
    }
  }));
  return { done, failed, seconds: (performance.now() - began) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b) };
}

export async function run(target: BenchTarget = 'sandbox', rooms = 1000): Promise<BenchOutcome> {
  const NAME = allocationBenchName(target, rooms);
  const began = Date.now();
  const figures: Figure[] = [];
  const lab = await startPingLab({}, target);
  const cfg = lab.stack.gatewayConfig;
  // The bare loop's client: client-node as the gateway's, with the gateway's rate limit.
  const bareClients = makeKubeClients(lab.stack.kc, { qps: cfg.kubeQps, burst: cfg.kubeBurst });
  const bareApi = new RoomkeeperApi(bareClients.custom);
  try {
    await lab.addFleet('bench-alloc-bare', rooms);
    await lab.addFleet('bench-alloc', rooms);
    await lab.addFleet('bench-alloc-ids', rooms);
    await lab.addFleet('bench-alloc-warm-bare', WARM_UP_ROOMS);
    await lab.addFleet('bench-alloc-warm', WARM_UP_ROOMS);

    // Bare: the same CAS write per room, rooms read once (as the gateway's cache has them).
    const bareLoop = async (scheduler: string, total: number) => {
      const bareRooms: GameRoom[] = (await lab.stack.api.listGameRooms(scheduler)).items;
      return drive(total, async (i) => {
        const room = bareRooms[i];
        if (!room) return 'stop';
        const now = Date.now();
        try {
          await bareApi.patchGameRoomStatus(scheduler, room.metadata.name as string, {
            metadata: { resourceVersion: room.metadata.resourceVersion },
            status: { status: 'allocated', allocation: { id: `bare-${i}`, requestHash: 'x', allocatedAt: new Date(now).toISOString(), expiresAt: new Date(now + 300_000).toISOString(), endedAt: null, endReason: null, metadata: null } },
          });
          return 'ok';
        } catch {
          return 'failed';
        }
      });
    };
    // Each measured run starts with the client's rate limiter full, as the other side's does.
    const refill = () => delay(Math.ceil((cfg.kubeBurst / cfg.kubeQps) * 1000) + 500);
    await bareLoop('bench-alloc-warm-bare', WARM_UP_ROOMS);
    await refill();
    const bareCpu = process.cpuUsage();
    const bare = await bareLoop('bench-alloc-bare', rooms);

    const bareCpuMs = cpuMs(process.cpuUsage(bareCpu));
    const auth = `Basic ${Buffer.from(`${cfg.authUsername}:${cfg.authPassword}`).toString('base64')}`;
    const child = await forkChild<null>(path.join(PROCESSES_DIR, 'allocate-child.ts'));
    const allocate = (scheduler: string, idPrefix?: string, total = rooms) => child.call<AllocateResult>('run', {
      url: `${lab.stack.gateway.managementUrl}/scheduler/${scheduler}/rooms/allocate`, authorization: auth, total, concurrency: CONCURRENCY, ...(idPrefix ? { idPrefix } : {}),
    } satisfies AllocateRun);
    let result: AllocateResult;
    let withIds: AllocateResult;
    let inside: number;
    let gatewayCpuMs = Number.NaN;
    let conflicts: number;
    let checks: { cache: number; list: number };
    let limiterWaitMs = Number.NaN;
    try {
      await allocate('bench-alloc-warm', undefined, WARM_UP_ROOMS);
      await refill();
      const gatewayCpu = process.cpuUsage();
      result = await allocate('bench-alloc');
      gatewayCpuMs = cpuMs(process.cpuUsage(gatewayCpu));
      // A histogram's _sum and _count are read from the Prometheus text (the registry sums counters and gauges only).
      const text = await lab.stack.gatewayMetrics.render();
      inside = sumMetricText(text, 'roomkeeper_allocation_duration_seconds_sum') / Math.max(1, sumMetricText(text, 'roomkeeper_allocation_duration_seconds_count'));
      conflicts = sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_allocation_conflicts_total', {});
      const limiterWait = async () => sumMetricText(await lab.stack.gatewayMetrics.render(), 'roomkeeper_kube_client_rate_limiter_wait_seconds_sum');
      const waitedBefore = await limiterWait();
      withIds = await allocate('bench-alloc-ids', 'match');
      limiterWaitMs = (await limiterWait() - waitedBefore) * 1000;
      checks = { cache: sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_allocation_replay_checks_total', { by: 'cache' }), list: sumMetric(lab.stack.gatewayMetrics, 'roomkeeper_allocation_replay_checks_total', { by: 'list' }) };
    } finally {
      await child.stop();
    }
    const gateway = { done: result.allocated, seconds: result.seconds, latenciesMs: result.latenciesMs };
    const heldOf = async (scheduler: string) => {
      const rooms = (await lab.stack.api.listGameRooms(scheduler)).items.filter((r) => r.status?.allocation && !r.status.allocation.endedAt);
      return { held: rooms.length, distinct: new Set(rooms.map((r) => r.status?.allocation?.id)).size };
    };
    const { held, distinct } = await heldOf('bench-alloc');
    const ids = await heldOf('bench-alloc-ids');

    const bareRate = bare.done / bare.seconds;
    const gwRate = gateway.done / gateway.seconds;
    const answers = Object.entries(result.statuses).map(([s, n]) => `${n}x ${s}`).join(', ');
    figures.push(figure(NAME, 'bare CAS status writes', bareRate, 'writes/s', { note: `${bare.done} writes, ${bare.failed} failed, p99 ${percentile(bare.latenciesMs, 99).toFixed(1)} ms` }));
    figures.push(figure(NAME, 'gateway allocations', gwRate, 'alloc/s', { note: `${gateway.done} allocated (${answers}); ${conflicts} lost compare-and-swaps; ${held} rooms held, ${distinct} distinct ids` }));
    figures.push(figure(NAME, 'gateway / bare', gwRate / bareRate, 'ratio', { target: { op: '>=', value: 0.7 } }));
    figures.push(figure(NAME, 'CPU per bare write, bench process', bareCpuMs / Math.max(1, bare.done + bare.failed), 'ms', { note: 'process.cpuUsage of the process that runs the bare loop (and the gateway), user + system' }));
    figures.push(figure(NAME, 'CPU per allocation, gateway process', gatewayCpuMs / Math.max(1, gateway.done), 'ms', { note: 'process.cpuUsage of the gateway\'s process over the empty-body run, user + system: the bare loop\'s write plus HTTP and choosing the room' }));
    figures.push(figure(NAME, 'mean time inside the allocate use case', inside * 1000, 'ms', { note: 'from roomkeeper_allocation_duration_seconds: the rest of an answer is HTTP, authentication and routing' }));
    figures.push(figure(NAME, 'allocation p50 latency', percentile(gateway.latenciesMs, 50), 'ms'));
    figures.push(figure(NAME, 'allocation p99 latency', percentile(gateway.latenciesMs, 99), 'ms', { target: { op: '<=', value: 100 } }));
    const idAnswers = Object.entries(withIds.statuses).map(([s, n]) => `${n}x ${s}`).join(', ');
    figures.push(figure(NAME, 'gateway allocations, a new allocationId each', withIds.allocated / withIds.seconds, 'alloc/s', { note: `${withIds.allocated} allocated (${idAnswers}); ${ids.held} rooms held, ${ids.distinct} distinct ids; after each write, no other room with the id made sure of by the cache ${checks.cache} times, by a list ${checks.list} times; p50 ${percentile(withIds.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(withIds.latenciesMs, 99).toFixed(1)} ms; the gateway's requests waited ${(limiterWaitMs / Math.max(1, withIds.allocated)).toFixed(1)} ms per allocation for its client rate limit (${cfg.kubeQps} req/s, its burst spent by the empty-body run; two writes per allocation: the AllocationClaim and the room)` }));
    if (gateway.done !== rooms || held !== rooms || distinct !== rooms) throw new Error(`expected ${rooms} distinct allocations; answers ${answers}, ${held} rooms held, ${distinct} distinct ids`);
    if (withIds.allocated !== rooms || ids.held !== rooms || ids.distinct !== rooms) throw new Error(`expected ${rooms} distinct allocations with ids; answers ${idAnswers}, ${ids.held} rooms held, ${ids.distinct} distinct ids`);
    return {
      name: NAME, figures, durationMs: Date.now() - began,
      notes: [`${rooms} ready GameRooms per scheduler ${target === 'real' ? 'on kube-apiserver v1.28 with etcd and kube-controller-manager (local processes on the same cores)' : 'in the sandbox (own process)'}, gateway in the bench process with production defaults, matchmakers in their own process (client limit ${cfg.kubeQps} req/s, burst ${cfg.kubeBurst}); ${CONCURRENCY} requests in flight, empty bodies (no allocationId: no fresh list), until every room was taken, then on a third scheduler with a new allocationId in each body; bare loop first, same client library and rate limit, same concurrency, one CAS merge patch per room; each side first warmed on ${WARM_UP_ROOMS} rooms of its own (not measured), then waited for its client's rate limiter to refill; 1 measured run each.`],
    };
  } finally {
    await bareClients.close();
    await lab.stop();
  }
}

if (require.main === module) runStandalone(() => run(process.env.BENCH_TARGET === 'real' ? 'real' : 'sandbox', Number(process.env.BENCH_ROOMS ?? 1000)));
