/**
 * Child process: matchmakers for the allocation benchmark, so they never share an event loop with
 * the gateway they measure. Call `run(AllocateRun)` -> AllocateResult: `concurrency` requests in
 * flight until `total` rooms were allocated or the gateway answers 429 (none left). Bodies are empty
 * (Maestro's form), or carry a new `allocationId` per request when `idPrefix` is set (the form the
 * README asks matchmakers to use).
 */
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
  const began = performance.now();
  await Promise.all(Array.from({ length: load.concurrency }, async () => {
    while (!exhausted && allocated < load.total) {
      const t0 = performance.now();
      const init: RequestInit = load.idPrefix === undefined
        ? { method: 'POST', headers: { authorization: load.authorization } }
        : { method: 'POST', headers: { authorization: load.authorization, 'content-type': 'application/json' }, body: JSON.stringify({ allocationId: `${load.idPrefix}-${sent++}` }) };
      const res = await fetch(load.url, init);
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
