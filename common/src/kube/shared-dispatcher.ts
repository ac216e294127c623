/**
 * client-node 2.x builds a new undici Agent for every request when the cluster has TLS options
 * (`insecure-skip-tls-verify`, which the sandbox's kubeconfig needs for plain HTTP, or a CA or
 * client certificate). Each Agent keeps its connection open, so thousands of requests leave
 * thousands of idle sockets (EMFILE at 10,000 pods). `withSharedDispatcher` returns a KubeConfig
 * that behaves like the given one but hands every request the same dispatcher, so connections are
 * pooled and reused. The given KubeConfig is not modified.
 */
import type { KubeConfig } from '@kubernetes/client-node';

type RequestContextLike = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type Dispatcher = NonNullable<ReturnType<RequestContextLike['getDispatcher']>>;

export interface SharedDispatcherKubeConfig {
  kubeConfig: KubeConfig;
  /** Closes the pooled connections; call after the last request. */
  close(): Promise<void>;
  /**
   * Call when a request failed at the transport level. A second after the last such failure the
   * pooled connections are replaced by fresh ones (the old pool is destroyed, failing what still
   * waits on it): an undici pool that lost its server under load (a killed API server, with
   * many requests in flight) was seen to hang every later request for good, while a fresh pool
   * worked at once. Waiting for a quiet second lets an outage end first.
   */
  transportFailed(): void;
}

const RESET_AFTER_QUIET_MS = 1_000;

export function withSharedDispatcher(kubeConfig: KubeConfig): SharedDispatcherKubeConfig {
  const shared = Object.create(kubeConfig) as KubeConfig;
  let dispatcher: Dispatcher | undefined;
  shared.applySecurityAuthentication = async (context: RequestContextLike): Promise<void> => {
    await kubeConfig.applySecurityAuthentication(context);
    const own = context.getDispatcher();
    if (own === undefined) return;
    dispatcher ??= own;
    if (own !== dispatcher) context.setDispatcher(dispatcher);
  };
  let resetTimer: NodeJS.Timeout | undefined;
  const reset = (): void => {
    resetTimer = undefined;
    const old = dispatcher;
    dispatcher = undefined; // the next request's own agent becomes the shared one
    void old?.destroy().catch(() => undefined);
  };
  return {
    kubeConfig: shared,
    async close() {
      if (resetTimer) clearTimeout(resetTimer);
      const d = dispatcher;
      dispatcher = undefined;
      if (d) await d.destroy().catch(() => undefined);
    },
    transportFailed() {
      if (resetTimer) clearTimeout(resetTimer);
      resetTimer = setTimeout(reset, RESET_AFTER_QUIET_MS);
      resetTimer.unref();
    },
  };
}
