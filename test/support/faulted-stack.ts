/**
 * A stack in which one component alone meets faults: on a cluster (E2E_KUBECONFIG) it goes
 * through test/support/fault-proxy.ts, on the sandbox it carries a bearer token of its own that
 * the sandbox's fault injection matches (`match: { token }`). The test sets the faults through
 * `proxy` or `stack.sandbox.faults`; `clear` ends them either way, `stop` ends everything.
 */
import { withToken } from './bearer-token';
import { faultProxyForE2eCluster, type FaultProxy } from './fault-proxy';
import { startStack, type Stack, type StackOptions } from './stack';

export interface FaultedStack {
  readonly stack: Stack;
  /** The fault proxy in front of the cluster; undefined on the sandbox. */
  readonly proxy: FaultProxy | undefined;
  clear(): void;
  stop(): Promise<void>;
}

export async function startFaultedStack(component: 'operator' | 'gateway', token: string, opts: StackOptions): Promise<FaultedStack> {
  const proxy = await faultProxyForE2eCluster();
  let stack: Stack | undefined;
  const clear = (): void => {
    proxy?.clear();
    stack?.sandbox?.faults.clear();
  };
  try {
    stack = await startStack({
      ...opts, external: true,
      kubeConfigFor: (c, kc) => (c !== component ? kc : proxy ? proxy.kubeConfig(kc) : withToken(kc, token)),
    });
  } catch (err) {
    await proxy?.close();
    throw err;
  }
  const started = stack;
  return {
    stack: started, proxy, clear,
    stop: async () => {
      clear();
      await started.stop();
      await proxy?.close();
    },
  };
}
