/**
 * A fault-injecting proxy in front of a Kubernetes API server (the real kube-apiserver of the
 * real-API-server tier, or the sandbox), for chaos tests on the real plane.
 *
 * It listens on plain HTTP on 127.0.0.1 and forwards every request to the upstream server (HTTPS
 * with the plane's CA, or HTTP), passing the caller's own `Authorization` header through, so each
 * component keeps its identity (the chart's ServiceAccounts) and RBAC. Responses are streamed, so
 * watches work through it. A component is pointed at it through its kubeconfig:
 * `proxy.kubeConfig(kc)` is `kc` with the server replaced by the proxy (plain HTTP: client-node
 * wants `skipTLSVerify` for that, and nothing is left to verify on the loopback hop).
 *
 * Faults, switched on and off by the test while the components run:
 * - `set(rules)`: requests matching a rule (by verb and/or resource, a share of them) are answered
 *   by the proxy instead of the server: an HTTP status with a Kubernetes `Status` body (429 with
 *   `Retry-After`, 410 Expired, 500...), a 200 watch that carries one `ERROR` event with 410
 *   Expired (`watch-expired`, as kube-apiserver ends a watch from a compacted resourceVersion),
 *   or a connection reset (`reset`: the socket is destroyed without an answer), or a lost answer
 *   (`lost-answer`: forwarded, so a write lands, then the socket is destroyed), or no answer at all
 *   (`unanswered`: held open and silent until the faults change). The first rule that matches decides.
 * - `cutWatches()`: ends every open watch now, cleanly (as the server's watch timeout does).
 * - `resetConnections()`: destroys every open client connection.
 * - `requests(filter)`: how many requests arrived (answered by a fault or not), by verb/resource;
 *   `injected` how many a fault answered. Tests bound LIST/WATCH counts with these (no hot loop).
 *
 * Example (the outage issue's "429 to every write for 60 s"):
 *   const proxy = await startFaultProxy({ upstream: plane.url, caFile: plane.caFile });
 *   const stack = await startStack({ external: true, kubeConfigFor: (_c, kc) => proxy.kubeConfig(kc) });
 *   proxy.set([{ verbs: WRITE_VERBS, fault: { status: 429, retryAfterSeconds: 1 } }]);
 *   ... 60 s later: proxy.clear();
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import * as k8s from '@kubernetes/client-node';

/** Kubernetes verbs as the proxy classifies requests (as kube-apiserver's RequestInfo does). */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';
export const WRITE_VERBS: readonly Verb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export type Fault =
  /** An HTTP answer with a `Status` body; 429 and 503 carry `Retry-After` (default 1 s). */
  | { status: number; retryAfterSeconds?: number }
  /** A watch answered 200 with one ERROR event (410 Expired), then ended. Other verbs: HTTP 410. */
  | { kind: 'watch-expired' }
  /** The connection is destroyed without an answer. */
  | { kind: 'reset' }
  /** The request reaches the server (a write lands), then the connection is destroyed before its answer. */
  | { kind: 'lost-answer' }
  /** The request is never answered: its connection stays open, silent, until `clear()` (or `set()`) resets it. */
  | { kind: 'unanswered' };

export interface FaultRule {
  /** Only these verbs (default: every verb). */
  verbs?: readonly Verb[];
  /** Only these resources, by plural (`pods`, `gamerooms`; default: every resource). */
  resources?: readonly string[];
  /** Share of matching requests answered by the fault, 0..1 (default 1). */
  rate?: number;
  fault: Fault;
}

/** What the proxy saw of one request. */
export interface RequestInfo {
  verb: Verb | 'other';
  /** Plural; '' for non-resource paths (discovery, /readyz). */
  resource: string;
  subresource: string;
  namespace: string;
}

export interface FaultProxy {
  /** The proxy's URL (http://127.0.0.1:port). */
  readonly url: string;
  /** `kc` with its current cluster's server replaced by the proxy (credentials unchanged). */
  kubeConfig(kc: k8s.KubeConfig): k8s.KubeConfig;
  set(rules: readonly FaultRule[]): void;
  clear(): void;
  /** Ends every open watch cleanly; returns how many were cut. */
  cutWatches(): number;
  /** Destroys every open client connection; returns how many there were. */
  resetConnections(): number;
  /** Requests received since the start (or the last `resetCounts`), optionally of one verb/resource. */
  requests(filter?: { verb?: Verb; resource?: string }): number;
  resetCounts(): void;
  /** Requests a fault answered. */
  readonly injected: number;
  /** Watches open now. */
  readonly openWatches: number;
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The API server, e.g. https://127.0.0.1:6443 or the sandbox's http URL. */
  upstream: string;
  /** The upstream's CA (HTTPS); without it the upstream certificate is not verified. */
  caFile?: string;
  /** Random source for `rate` (default Math.random). */
  random?: () => number;
}

/** Classifies a request path as kube-apiserver does (verb, resource, subresource, namespace). */
export function requestInfo(method: string, rawUrl: string): RequestInfo {
  const url = new URL(rawUrl, 'http://proxy');
  let segs = url.pathname.split('/').filter(Boolean);
  if (segs[0] === 'api') segs = segs.slice(2);
  else if (segs[0] === 'apis') segs = segs.slice(3);
  else return { verb: 'other', resource: '', subresource: '', namespace: '' };
  let watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  if (segs[0] === 'watch') {
    watch = true;
    segs = segs.slice(1);
  }
  let namespace = '';
  if (segs[0] === 'namespaces' && segs.length >= 3) {
    namespace = segs[1] ?? '';
    segs = segs.slice(2);
  }
  const [resource = '', name, subresource = ''] = segs;
  if (!resource) return { verb: 'other', resource: '', subresource: '', namespace };
  const verbs: Record<string, Verb> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  let verb: Verb;
  if (method === 'GET') verb = watch ? 'watch' : name ? 'get' : 'list';
  else if (method === 'DELETE') verb = name ? 'delete' : 'deletecollection';
  else verb = verbs[method] ?? 'get';
  return { verb, resource, subresource, namespace };
}

function statusBody(code: number, reason: string, message: string, retryAfterSeconds?: number): string {
  return JSON.stringify({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code,
    ...(retryAfterSeconds !== undefined ? { details: { retryAfterSeconds } } : {}),
  });
}

const REASONS: Record<number, string> = {
  403: 'Forbidden', 409: 'Conflict', 410: 'Expired', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/**
 * A fault proxy in front of the cluster E2E_KUBECONFIG names, for a chaos suite that runs on it;
 * undefined when it is not set (the suite runs on the sandbox and its own fault injection).
 */
export async function faultProxyForE2eCluster(): Promise<FaultProxy | undefined> {
  const external = process.env.E2E_KUBECONFIG;
  if (!external) return undefined;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(external);
  const cluster = kc.getCurrentCluster()!;
  return startFaultProxy({ upstream: cluster.server, caFile: cluster.caFile });
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(options.upstream);
  const secure = upstream.protocol === 'https:';
  const ca = options.caFile ? fs.readFileSync(options.caFile) : undefined;
  const agent = secure
    ? new https.Agent({ keepAlive: true, maxSockets: 256, ca, rejectUnauthorized: Boolean(ca) })
    : new http.Agent({ keepAlive: true, maxSockets: 256 });
  const random = options.random ?? Math.random;
  let rules: readonly FaultRule[] = [];
  let injected = 0;
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const watches = new Set<{ end(): void }>();
  /** Connections of `unanswered` requests, reset when the faults change. */
  const held = new Set<Socket>();
  const releaseHeld = (): void => {
    for (const s of [...held]) s.destroy();
    held.clear();
  };

  const count = (info: RequestInfo): void => {
    const key = `${info.verb} ${info.resource}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const pick = (info: RequestInfo): Fault | undefined => {
    for (const r of rules) {
      if (r.verbs && !r.verbs.includes(info.verb as Verb)) continue;
      if (r.resources && !r.resources.includes(info.resource)) continue;
      if (random() < (r.rate ?? 1)) return r.fault;
      return undefined;
    }
    return undefined;
  };

  const answer = (req: http.IncomingMessage, res: http.ServerResponse, info: RequestInfo, fault: Fault): void => {
    injected++;
    req.resume();
    if ('kind' in fault && fault.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if ('kind' in fault && fault.kind === 'unanswered') {
      held.add(req.socket);
      req.socket.once('close', () => held.delete(req.socket));
      return;
    }
    if ('kind' in fault && info.verb === 'watch') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: JSON.parse(statusBody(410, 'Expired', 'too old resource version (injected by the fault proxy)')) as unknown })}\n`);
      return;
    }
    const status = 'status' in fault ? fault.status : 410;
    const retryAfter = 'status' in fault && (status === 429 || status === 503) ? fault.retryAfterSeconds ?? 1 : undefined;
    const headers: http.OutgoingHttpHeaders = { 'Content-Type': 'application/json' };
    if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
    res.writeHead(status, headers);
    res.end(statusBody(status, REASONS[status] ?? 'InternalError', `injected by the fault proxy (HTTP ${status})`, retryAfter));
  };

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, info: RequestInfo, loseAnswer = false): void => {
    const headers = { ...req.headers, host: upstream.host };
    delete headers.connection;
    const send = secure ? https.request : http.request;
    const up = send({
      protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent,
    }, (upRes) => {
      if (loseAnswer) {
        upRes.resume();
        req.socket.destroy();
        return;
      }
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      if (info.verb === 'watch') {
        const handle = {
          end: () => {
            upRes.destroy();
            res.end();
          },
        };
        watches.add(handle);
        const done = () => watches.delete(handle);
        upRes.on('close', done);
        res.on('close', () => {
          done();
          upRes.destroy();
        });
        res.flushHeaders();
      }
      upRes.pipe(res);
    });
    up.on('error', (err) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'Content-Type': 'application/json' });
        res.end(statusBody(502, 'InternalError', `fault proxy: upstream unreachable: ${err.message}`));
      } else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  };

  const server = http.createServer((req, res) => {
    const info = requestInfo(req.method ?? 'GET', req.url ?? '/');
    count(info);
    const fault = info.verb === 'other' ? undefined : pick(info);
    if (fault && 'kind' in fault && fault.kind === 'lost-answer') {
      injected++;
      forward(req, res, info, true);
    } else if (fault) answer(req, res, info, fault);
    else forward(req, res, info);
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    kubeConfig(kc: k8s.KubeConfig): k8s.KubeConfig {
      const current = kc.getCurrentCluster();
      const out = new k8s.KubeConfig();
      out.loadFromOptions({
        clusters: kc.clusters.map((c) => (c.name === current?.name ? { name: c.name, server: url, skipTLSVerify: true } : c)),
        users: kc.users,
        contexts: kc.contexts,
        currentContext: kc.currentContext,
      });
      return out;
    },
    set(next: readonly FaultRule[]): void {
      rules = [...next];
      releaseHeld();
    },
    clear(): void {
      rules = [];
      releaseHeld();
    },
    cutWatches(): number {
      const open = [...watches];
      for (const w of open) w.end();
      return open.length;
    },
    resetConnections(): number {
      const open = [...sockets];
      for (const s of open) s.destroy();
      return open.length;
    },
    requests(filter: { verb?: Verb; resource?: string } = {}): number {
      let n = 0;
      for (const [key, c] of counts) {
        const [verb, resource] = key.split(' ') as [string, string];
        if ((filter.verb === undefined || filter.verb === verb) && (filter.resource === undefined || filter.resource === resource)) n += c;
      }
      return n;
    },
    resetCounts(): void {
      counts.clear();
    },
    get injected() {
      return injected;
    },
    get openWatches() {
      return watches.size;
    },
    async close(): Promise<void> {
      rules = [];
      releaseHeld();
      for (const w of [...watches]) w.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      agent.destroy();
    },
  };
}
