/**
 * Child process: matchmakers for the allocation benchmark, so they never share an event loop with
 * the gateway they measure. Call `run(AllocateRun)` -> AllocateResult: `concurrency` requests in
 * flight until `total` rooms were allocated or the gateway answers 429 (none left). Bodies are empty
 * (Maestro's form), or carry a new `allocationId` per request when `idPrefix` is set (the form the
 * README asks matchmakers to use).
 *
 * The matchmakers are the load, not what is measured, and on these 2 cores every millisecond of
 * their CPU is taken from the gateway and the API server. So the empty-body run writes one fixed
 * request on `concurrency` raw keep-alive sockets and reads back only each answer's status code and
 * length, as wrk and autocannon do (about a fifth of a core at 1,100 requests/s, where undici's
 * `request` took half a core and `fetch` more than that); what the gateway handed out is checked on
 * the rooms afterwards. The run with bodies goes through undici's `request` on one keep-alive pool.
 */
import * as net from 'node:net';
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

/**
 * One keep-alive socket that sends `request` once per `send()` and resolves the answer's status
 * code. The gateway answers with Content-Length (never chunked), which is all the framing read here.
 */
interface RawConnection { send(): Promise<number>; close(): void }

function rawConnection(url: URL, request: Buffer): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let waiting: { resolve: (status: number) => void; reject: (err: Error) => void } | undefined;
    const fail = (err: Error) => {
      const w = waiting;
      waiting = undefined;
      w?.reject(err);
    };
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const headEnd = buf.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = buf.subarray(0, headEnd).toString('latin1');
        const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
        if (length === undefined) {
          fail(new Error(`an answer without Content-Length: ${head.split('\r\n')[0] ?? ''}`));
          return;
        }
        const end = headEnd + 4 + Number(length);
        if (buf.length < end) return;
        buf = buf.subarray(end);
        const w = waiting;
        waiting = undefined;
        w?.resolve(Number(head.slice('HTTP/1.1 '.length, 'HTTP/1.1 200'.length)));
      }
    });
    socket.once('error', (err) => {
      reject(err);
      fail(err);
    });
    socket.once('close', () => fail(new Error('the gateway closed the connection before it answered')));
    socket.once('connect', () => resolve({
      send: () => new Promise<number>((res, rej) => {
        waiting = { resolve: res, reject: rej };
        socket.write(request);
      }),
      close: () => socket.destroy(),
    }));
  });
}

/** `concurrency` matchmakers, each sending with `send(worker)` until `total` rooms are allocated or an answer is 429. */
async function matchmakers(load: AllocateRun, send: (worker: number) => Promise<number>): Promise<AllocateResult> {
  let allocated = 0;
  let exhausted = false;
  const latenciesMs: number[] = [];
  const statuses: Record<string, number> = {};
  const began = performance.now();
  await Promise.all(Array.from({ length: load.concurrency }, async (_, worker) => {
    while (!exhausted && allocated < load.total) {
      const t0 = performance.now();
      const code = await send(worker);
      latenciesMs.push(performance.now() - t0);
      statuses[code] = (statuses[code] ?? 0) + 1;
      if (code === 200) allocated++;
      else if (code === 429) exhausted = true;
      else throw new Error(`allocate answered ${code}`);
    }
  }));
  return { allocated, seconds: (performance.now() - began) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b), statuses };
}

async function run(arg: unknown): Promise<AllocateResult> {
  const load = arg as AllocateRun;
  const url = new URL(load.url);
  if (load.idPrefix === undefined) {
    const request = Buffer.from(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${load.authorization}\r\nContent-Length: 0\r\n\r\n`, 'latin1');
    const connections = await Promise.all(Array.from({ length: load.concurrency }, () => rawConnection(url, request)));
    try {
      return await matchmakers(load, (worker) => (connections[worker] as RawConnection).send());
    } finally {
      for (const c of connections) c.close();
    }
  }
  const idPrefix = load.idPrefix;
  let sent = 0;
  const pool = new Pool(url.origin, { connections: load.concurrency });
  try {
    return await matchmakers(load, async () => {
      const res = await pool.request({
        method: 'POST', path: url.pathname, headers: { authorization: load.authorization, 'content-type': 'application/json' }, body: JSON.stringify({ allocationId: `${idPrefix}-${sent++}` }),
      });
      await res.body.arrayBuffer();
      return res.statusCode;
    });
  } finally {
    await pool.close();
  }
}

serveParent<null>(() => Promise.resolve({ payload: null, handlers: { run }, stop: () => Promise.resolve() }));
