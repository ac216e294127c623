/**
 * Benchmark 13: allocation through one gateway replica and through two (the chart's default), with
 * rooms short. A scheduler of ROOMS rooms whose game servers are this benchmark: each allocated
 * room reports `occupied` (naming its allocation) to a replica chosen at random, plays MATCH_MS,
 * and reports `ready` again. CONCURRENCY matchmakers allocate as fast as they are answered, over
 * the replicas in turn, for SECONDS, so rooms run short and every replica chases the last free
 * ones. Measured, for `packed` and `distributed`: allocations, answers 429 and 503, lost
 * compare-and-swaps (`roomkeeper_allocation_conflicts_total`, each one more GET and write on the
 * API server) per allocation, and the replicas each one came to share rooms with
 * (`roomkeeper_allocation_replicas`). One replica loses none (it skips its own claims in flight);
 * two race for the rooms their caches still show free, and split the equally good rooms once they
 * have seen each other's allocations (`status.allocation.replica`). On the sandbox, every part in
 * this process. `npx tsx bench/replica-contention.ts`.
 */
import { roomToken } from '../common/src/rooms/room-token';
import { managementCall } from '../test/support/http';
import { schedulerObject, startStack, type Stack } from '../test/support/stack';
import { waitFor } from '../test/support/wait';
import { figure, type BenchOutcome, type Figure } from './support/figures';
import { runStandalone } from './support/standalone';

export const REPLICA_CONTENTION_BENCH = '13. allocation with rooms short, one gateway replica and two';
const ROOMS = 100;
const CONCURRENCY = 8;
const SECONDS = 40;
const MATCH_MS = 1500;

interface Round { allocated: number; noRoom: number; contention: number; conflicts: number; replicas: number[] }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/** One scheduler of ROOMS ready rooms, played through `replicas` gateways with `strategy`. */
async function round(replicas: number, strategy: 'packed' | 'distributed'): Promise<Round> {
  const stack: Stack = await startStack({ config: { roomPingTimeout: 600_000, roomInitTimeout: 600_000 }, simulation: { nodes: 2, pingIntervalMs: 300 } });
  try {
    const name = 'bench-contention';
    const spec = (schedulerObject(name, { roomsReplicas: ROOMS, maxSurge: '50%' }, [{ name: 'ROOMKEEPER_SIM_ROOM', value: 'never-ping' }]) as { spec: Record<string, unknown> }).spec;
    const created = await managementCall(stack, 'POST', '/schedulers', { name, ...spec });
    if (created.status !== 200) throw new Error(`create scheduler answered ${created.status}: ${JSON.stringify(created.body)}`);
    const gateways = [stack.gateway, ...await Promise.all(Array.from({ length: replicas - 1 }, () => stack.addGateway()))].flatMap((g) => (g ? [g] : []));
    let timestamp = 1;
    const ping = async (room: string, body: Record<string, unknown>): Promise<void> => {
      const g = gateways[Math.floor(Math.random() * gateways.length)];
      const res = await fetch(`${g?.roomsUrl ?? ''}/scheduler/${name}/rooms/${room}/ping`, {
        method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${roomToken(stack.config.roomTokenSecret, name, room)}` },
        body: JSON.stringify({ ...body, timestamp: timestamp++ }),
      });
      await res.arrayBuffer();
    };
    // Every room reports ready once its pod runs, and every replica sees them all.
    const pinged = new Set<string>();
    await waitFor(async () => {
      const rooms = (await stack.api.listGameRooms(name)).items.filter((r) => !r.spec.validation && r.status?.host);
      for (const r of rooms) if (!pinged.has(r.metadata.name ?? '')) { await ping(r.metadata.name ?? '', { status: 'ready' }); pinged.add(r.metadata.name ?? ''); }
      return (await stack.api.listGameRooms(name)).items.filter((r) => r.status?.status === 'ready').length >= ROOMS;
    }, { timeoutMs: 300_000, intervalMs: 500, message: `${ROOMS} ready rooms` });
    for (const g of gateways) {
      await waitFor(async () => {
        const res = await fetch(`${g.managementUrl}/schedulers/info?game=test-game`, { headers: { authorization: stack.authHeader } });
        return ((await res.json()) as { schedulers?: { roomsReady: number }[] }).schedulers?.[0]?.roomsReady === ROOMS;
      }, { timeoutMs: 60_000, message: 'every replica sees the ready rooms' });
    }
    const counts = { allocated: 0, noRoom: 0, contention: 0 };
    const matches: Promise<void>[] = [];
    const end = Date.now() + SECONDS * 1000;
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const g = gateways[next++ % gateways.length];
        const res = await fetch(`${g?.managementUrl ?? ''}/scheduler/${name}/rooms/allocate`, {
          method: 'POST', headers: { authorization: stack.authHeader, 'content-type': 'application/json' }, body: JSON.stringify({ strategy }),
        });
        const answer = await res.json() as { roomId?: string; allocationId?: string };
        if (res.status === 200 && answer.roomId) {
          counts.allocated++;
          const room = answer.roomId;
          matches.push((async () => {
            await ping(room, { status: 'occupied', allocationId: answer.allocationId });
            await sleep(MATCH_MS);
            await ping(room, { status: 'ready' });
          })());
        } else {
          if (res.status === 429) counts.noRoom++;
          else if (res.status === 503) counts.contention++;
          else throw new Error(`allocate answered ${res.status}: ${JSON.stringify(answer)}`);
          await sleep(100);
        }
      }
    }));
    await Promise.all(matches);
    let conflicts = 0;
    const shares: number[] = [];
    for (const g of gateways) {
      conflicts += await metric(g.managementUrl, 'roomkeeper_allocation_conflicts_total');
      shares.push(await metric(g.managementUrl, 'roomkeeper_allocation_replicas'));
    }
    return { ...counts, conflicts, replicas: shares };
  } finally {
    await stack.stop();
  }
}

export async function run(): Promise<BenchOutcome> {
  const began = Date.now();
  const figures: Figure[] = [];
  for (const strategy of ['packed', 'distributed'] as const) {
    for (const replicas of [1, 2]) {
      const r = await round(replicas, strategy);
      figures.push(figure(REPLICA_CONTENTION_BENCH, `${strategy}, ${replicas} replica${replicas > 1 ? 's' : ''}: lost compare-and-swaps per allocation`, r.conflicts / Math.max(1, r.allocated), '',
        { note: `${r.allocated} allocations, ${r.noRoom} answered 429, ${r.contention} answered 503; ${r.conflicts} lost compare-and-swaps; rooms shared among ${r.replicas.join(' and ')} replicas (as each replica saw it)` }));
    }
  }
  return {
    name: REPLICA_CONTENTION_BENCH, figures, durationMs: Date.now() - began,
    notes: [`${ROOMS} rooms on the sandbox (2 simulated nodes), gateways, operator and game servers in the bench process; ${CONCURRENCY} matchmakers allocating as fast as answered for ${SECONDS} s over the replicas in turn; each match ${MATCH_MS} ms; pings to a replica at random; one run per row.`],
  };
}

if (require.main === module) runStandalone(run);
