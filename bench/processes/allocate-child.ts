/**
 * Child process: matchmakers for the allocation benchmark, so they never share an event loop with
 * the gateway they measure. Call `run(AllocateRun)` -> AllocateResult: `concurrency` requests in
 * flight until `total` rooms were allocated or the gateway answers 429 (none left). Bodies are empty
 * (Maestro's form), or carry a new `allocationId` per request when `idPrefix` is set (the form the
 * README asks matchmakers to use). Requests go through undici's `request` on one keep-alive pool, not
 * `fetch`: on these 2 cores the matchmakers' own client CPU (WHATWG requests and streams) would
 * otherwise take more than half a core from the gateway it measures (a CPU profile: 59 % busy).
 */
import { Pool } from 'undici';
import { serveParent } from '../support/child-rpc';

export interface AllocateRun { url: string; authorization: string; total: number; concurrency: number; idPrefix?: string }

export interface AllocateResult {
  allocated: number;
  seconds: number;
  /** Milliseconds of every answer, sorted. */
  latenciesMs: number[];
  /** HTTP status -> answers. */
  statuses: Record<string, number>;
}

async function run(arg: unknown): Promise<AllocateResult> {
  const load = arg as AllocateRun;
  let allocated = 0;
  let exhausted = false;
  const latenciesMs: number[] = [];
  const statuses: Record<string, number> = {};
  let sent = 0;
  const url = new URL(load.url);
  const pool = new Pool(url.origin, { connections: load.concurrency });
  const began = performance.now();
  try {
    await Promise.all(Array.from({ length: load.concurrency }, async () => {
      while (!exhausted && allocated < load.total) {
        const t0 = performance.now();
        const res = await pool.request(load.idPrefix === undefined
          ? { method: 'POST', path: url.pathname, headers: { authorization: load.authorization } }
          : { method: 'POST', path: url.pathname, headers: { authorization: load.authorization, 'content-type': 'application/json' }, body: JSON.stringify({ allocationId: `${load.idPrefix}-${sent++}` }) });
        await res.body.arrayBuffer();
        latenciesMs.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode === 200) allocated++;
        else if (res.statusCode === 429) exhausted = true;
        else throw new Error(`allocate answered ${res.statusCode}`);
      }
    }));
  } finally {
    await pool.close();
  }
  return { allocated, seconds: (performance.now() - began) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b), statuses };
}

serveParent<null>(() => Promise.resolve({ payload: null, handlers: { run }, stop: () => Promise.resolve() }));
