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
}

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
  return {
    kubeConfig: shared,
    async close() {
      const d = dispatcher;
      dispatcher = undefined;
      if (d) await d.destroy().catch(() => undefined);
    },
  };
}
