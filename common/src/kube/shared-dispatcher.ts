/**
 * client-node 2.x does the whole TLS setup on every request when the cluster has TLS options
 * (`insecure-skip-tls-verify`, which the sandbox's kubeconfig needs for plain HTTP, or a CA or
 * client certificate): it reads the CA, certificate and key files again and builds a new undici
 * Agent. Each Agent keeps its connection open, so thousands of requests leave thousands of idle
 * sockets (EMFILE at 10,000 pods), and the file reads and the Agent cost about 0.1 ms of CPU a
 * request (4 % of the operator's CPU while add_rooms creates 1,000 rooms on kube-apiserver).
 * `withSharedDispatcher` returns a KubeConfig that behaves like the given one but reads the TLS
 * material once and hands every request the same dispatcher, so connections are pooled and reused.
 * Headers (tokens, which client-node's authenticators refresh) are still made per request. The
 * given KubeConfig is not modified. Watches get a pool of their own, over HTTP/1.1, so each has a
 * connection of its own (`http1Agent`). With `userAgent`, every request and watch says who sent it
 * (client-node's own is `kubernetes-client-javascript/<version>`, or `undici` without its
 * middleware): the API server's audit log and its slow-request lines name the component.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, Dispatcher as UndiciDispatcher } from 'undici';

type RequestContextLike = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type Dispatcher = NonNullable<ReturnType<RequestContextLike['getDispatcher']>>;

/**
 * The two steps of client-node's `applySecurityAuthentication` (private in its types) that do
 * the TLS work: `applyHTTPSOptions` reads the CA, certificate and key into the options (and adds
 * the Impersonate-User header); `createDispatcher` builds an Agent from them.
 */
interface TlsSteps {
  applyHTTPSOptions(opts: HttpsOptions): void;
  createDispatcher(cluster: unknown, agentOptions: unknown): Dispatcher | undefined;
}
type HttpsOptions = Record<string, unknown> & { headers?: Record<string, string> };

/** The TLS steps of a KubeConfig, seen through their own type; undefined if this client-node has none. */
function tlsStepsOf(kc: KubeConfig): TlsSteps | undefined {
  const steps = kc as unknown as Partial<Record<keyof TlsSteps, unknown>>;
  return typeof steps.applyHTTPSOptions === 'function' && typeof steps.createDispatcher === 'function' ? (kc as unknown as TlsSteps) : undefined;
}

/**
 * A pool like the one client-node builds for a direct TLS connection, but speaking HTTP/1.1, for
 * watches: undici 8 offers HTTP/2 by default and kube-apiserver takes it, so a process's watches
 * shared one TCP connection with all its requests. While the operator created a fleet of 3,000
 * rooms (50 creates in flight), kube-apiserver closed its pod watch as too slow about every 4 s
 * and the pod cache learned of changes 10 to 40 s late, so rooms whose pods were ready stayed
 * `pending` that long; a watcher on a connection of its own saw the same changes within 2 s.
 * Over HTTP/1.1 each watch has its own connection. Undefined for anything but a direct TLS
 * connection (a proxy, plain HTTP), whose watches keep client-node's dispatcher.
 */
function http1Agent(kc: KubeConfig, cluster: unknown, agentOptions: unknown): Dispatcher | undefined {
  const opts = kc.createDispatcherOptions(cluster as Parameters<KubeConfig['createDispatcherOptions']>[0], agentOptions as Parameters<KubeConfig['createDispatcherOptions']>[1]);
  return opts.type === 'agent' ? new Agent({ connect: opts.connect, allowH2: false }) : undefined;
}

/** Whether a request is a watch (client-node's `Watch` adds `watch=true`). */
function isWatch(url: string): boolean {
  return /[?&]watch=(true|1)(&|$)/.test(url);
}

export interface SharedDispatcherKubeConfig {
  kubeConfig: KubeConfig;
  /** Closes the pooled connections; call after the last request. */
  close(): Promise<void>;
  /**
   * Call when a request failed at the transport level. A second after the last such failure the
   * pooled connections are replaced by fresh ones: an undici pool that lost its server under load
   * (a killed API server, with many requests in flight) was seen to hang every later request for
   * good, while a fresh pool worked at once. Waiting for a quiet second lets an outage end first.
   * Requests sent from then on use the fresh pool, even those handed the pool before (they hold
   * `CurrentPool`, not the pool); requests in flight on the old one may finish for
   * RETIRE_GRACE_MS, then it is destroyed, failing what still waits on it with
   * UND_ERR_DESTROYED (`isRetiredPoolFailure`), which is no news about the fresh pool.
   */
  transportFailed(): void;
  /** How many times the pools were replaced (`transportFailed`). */
  replacements(): number;
}

const RESET_AFTER_QUIET_MS = 1_000;
/**
 * How long the requests in flight on a replaced pool may still finish. Destroying it at once
 * failed them all: with a tenth of the creates' answers lost, every quiet second failed the 50
 * creates and the leader Lease renewal then in flight (CI: the operator lost its Lease).
 */
const RETIRE_GRACE_MS = 5_000;

/** Whether a request failed because the pool it was sent on was replaced and destroyed (`transportFailed`). */
export function isRetiredPoolFailure(code: string | undefined): boolean {
  return code === 'UND_ERR_DESTROYED';
}

/** The dispatcher every request is handed: it sends on the pool current when the request leaves. */
class CurrentPool extends UndiciDispatcher {
  constructor(private readonly pool: () => UndiciDispatcher) {
    super();
  }

  override dispatch(options: UndiciDispatcher.DispatchOptions, handler: UndiciDispatcher.DispatchHandler): boolean {
    return this.pool().dispatch(options, handler);
  }
}

/** Lets `pool`'s requests in flight finish, and destroys it after RETIRE_GRACE_MS if some have not. */
function retire(pool: Dispatcher): void {
  const destroyLater = setTimeout(() => void pool.destroy().catch(() => undefined), RETIRE_GRACE_MS);
  destroyLater.unref();
  void pool.close().then(() => clearTimeout(destroyLater), () => undefined);
}

export function withSharedDispatcher(kubeConfig: KubeConfig, options: { userAgent?: string } = {}): SharedDispatcherKubeConfig {
  const shared = Object.create(kubeConfig) as KubeConfig;
  /** The pool of watches (`http1Agent`); null when they share the requests' pool. */
  let watches: Dispatcher | null | undefined;
  let tls: HttpsOptions | undefined;
  const original = tlsStepsOf(kubeConfig);
  const userAgent = options.userAgent;
  // A client-node without these steps would build an Agent per request again: say so at once.
  if (!original) throw new Error('@kubernetes/client-node no longer has KubeConfig.applyHTTPSOptions/createDispatcher: update common/src/kube/shared-dispatcher.ts');
  /** The pool requests are sent on now; undefined until the first request, and after a reset. */
  let pool: Dispatcher | undefined;
  /** What the last request's pool was made from, to make the next one when a request comes first. */
  let madeFrom: [cluster: unknown, agentOptions: unknown] | undefined;
  const current = new CurrentPool(() => {
    pool ??= madeFrom && original.createDispatcher.call(shared, ...madeFrom);
    if (!pool) throw new Error('no connection pool: a request was handed CurrentPool before any pool was made');
    return pool;
  });
  // client-node's own applySecurityAuthentication runs with `this` = shared (it inherits the
  // method), so it comes here for the TLS material and the dispatcher.
  const steps = shared as unknown as TlsSteps;
  steps.applyHTTPSOptions = (opts) => {
    if (tls === undefined) {
      const read: HttpsOptions = {};
      original.applyHTTPSOptions.call(shared, read);
      tls = read;
    }
    Object.assign(opts, tls, tls.headers ? { headers: { ...tls.headers } } : {});
    if (userAgent) opts.headers = { ...opts.headers, 'User-Agent': userAgent };
  };
  steps.createDispatcher = (cluster, agentOptions) => {
    watches ??= http1Agent(shared, cluster, agentOptions) ?? null;
    madeFrom = [cluster, agentOptions];
    pool ??= original.createDispatcher.call(shared, cluster, agentOptions);
    return pool && current;
  };
  // Requests keep the shared pool (HTTP/2 where the server offers it); a watch is handed the
  // HTTP/1.1 pool once client-node has done the rest (headers, the shared pool's TLS material).
  shared.applySecurityAuthentication = async (ctx) => {
    await kubeConfig.applySecurityAuthentication.call(shared, ctx);
    if (watches && isWatch(ctx.getUrl())) ctx.setDispatcher(watches);
  };
  let resetTimer: NodeJS.Timeout | undefined;
  let replaced = 0;
  /** The pools in use, forgotten: the next request makes new ones. */
  const takePools = (): Dispatcher[] => {
    const old = [pool, watches ?? undefined].filter((d): d is Dispatcher => d !== undefined);
    pool = undefined;
    watches = undefined;
    return old;
  };
  const reset = (): void => {
    resetTimer = undefined;
    // From the files as they are now (a rotated certificate), for the next request made. A request
    // handed the pool before and sent first makes it from the material read last: if that is out
    // of date, its connections fail, and the next reset reads the files again.
    tls = undefined;
    for (const old of takePools()) retire(old);
    replaced++;
  };
  return {
    kubeConfig: shared,
    async close() {
      if (resetTimer) clearTimeout(resetTimer);
      for (const old of takePools()) await old.destroy().catch(() => undefined);
    },
    transportFailed() {
      if (resetTimer) clearTimeout(resetTimer);
      resetTimer = setTimeout(reset, RESET_AFTER_QUIET_MS);
      resetTimer.unref();
    },
    replacements: () => replaced,
  };
}
