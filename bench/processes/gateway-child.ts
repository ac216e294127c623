/**
 * Child process: the gateway alone (as `api-gateway/src/main.ts` runs it), so its resident memory
 * is its own. Argument: GatewayChildArg. Ready payload: its URLs. Calls: `metrics` (its
 * Prometheus text).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { startGateway } from '../../api-gateway/src/main';
import { loadConfig, type Config } from '../../common/src/config';
import { createLogger } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { serveParent, childArg } from '../support/child-rpc';

export interface GatewayChildArg {
  kubeconfigYaml: string;
  /** Config overrides on top of the environment and the production defaults. */
  config: Partial<Record<keyof Config, unknown>>;
}

export interface GatewayReady { managementUrl: string; roomsUrl: string }

serveParent<GatewayReady>(async () => {
  const arg = childArg<GatewayChildArg>();
  const kc = new KubeConfig();
  kc.loadFromString(arg.kubeconfigYaml);
  const config = loadConfig(process.env, arg.config);
  const logger = createLogger('gateway', { level: config.logLevel });
  const metrics = new MetricsRegistry();
  const gateway = await startGateway({ config, kubeConfig: kc, host: '127.0.0.1', logger, metrics, replicaId: 'bench-gateway-child' });
  return {
    payload: { managementUrl: gateway.managementUrl, roomsUrl: gateway.roomsUrl },
    handlers: { metrics: () => metrics.render() },
    stop: () => gateway.stop(),
  };
});
