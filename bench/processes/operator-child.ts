/**
 * Child process: the operator alone (as `operator/src/main.ts` runs it), so its resident memory
 * is its own. Argument: OperatorChildArg. Calls: `memory` (process.memoryUsage()).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { loadConfig, type Config } from '../../common/src/config';
import { EventForwarder } from '../../common/src/forwarding';
import { createLogger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { startOperator } from '../../operator/src/operator';
import { serveParent, childArg } from '../support/child-rpc';

export interface OperatorChildArg {
  kubeconfigYaml: string;
  /** Config overrides on top of the environment and the production defaults. */
  config: Partial<Record<keyof Config, unknown>>;
}

serveParent<{ opsUrl: string | undefined }>(async () => {
  const arg = childArg() as OperatorChildArg;
  const kc = new KubeConfig();
  kc.loadFromString(arg.kubeconfigYaml);
  const config = loadConfig(process.env, arg.config);
  const logger = createLogger('operator', { level: config.logLevel });
  const metrics = new MetricsRegistry();
  const forwarder = new EventForwarder({ logger, metrics });
  const operator = await startOperator({ kubeConfig: kc, config, logger, metrics, forwarder });
  return {
    payload: { opsUrl: operator.opsUrl },
    handlers: {
      metrics: () => metrics.render(),
      memory: () => process.memoryUsage(),
      /** With --expose-gc: memory after a full collection (what is really retained). */
      memoryAfterGc: () => {
        (globalThis as { gc?: () => void }).gc?.();
        return process.memoryUsage();
      },
      isLeader: () => operator.isLeader,
    },
    stop: async () => {
      await operator.stop();
      forwarder.close();
    },
  };
});
