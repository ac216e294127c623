/**
 * Child process: matchmakers for the allocation benchmark, so they never share an event loop with
 * the gateway they measure. Call `run(AllocateRun)` -> AllocateResult: `concurrency` requests in
 * flight (empty bodies) until `total` rooms were allocated or the gateway answers 429 (none left).
 */
import { serveParent } from '../support/child-rpc';

export interface AllocateRun { url: string; authorization: string; total: number; concurrency: number }

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
  const began = performance.now();
  await Promise.all(Array.from({ length: load.concurrency }, async () => {
    while (!exhausted && allocated < load.total) {
      const t0 = performance.now();
      const res = await fetch(load.url, { method: 'POST', headers: { authorization: load.authorization } });
      await res.arrayBuffer();
      latenciesMs.push(performance.now() - t0);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 200) allocated++;
      else if (res.status === 429) exhausted = true;
      else throw new Error(`allocate answered ${res.status}`);
    }
  }));
  return { allocated, seconds: (performance.now() - began) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b), statuses };
}

serveParent<null>(() => Promise.resolve({ payload: null, handlers: { run }, stop: () => Promise.resolve() }));
