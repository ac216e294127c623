/**
 * Child process: one gateway replica alone (as `api-gateway/src/main.ts` runs it), so a chaos
 * test can SIGKILL it. Argument: GatewayChildArg. Ready payload: its URLs.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { loadConfig, type Config } from '../../common/src/config';
import { createLogger } from '../../common/src/logger';
import { startGateway } from '../../api-gateway/src/main';
import { childArg, serveParent } from '../../bench/support/child-rpc';

export interface GatewayChildArg {
  kubeconfigYaml: string;
  /** Config overrides on top of the environment and the production defaults. */
  config: Partial<Record<keyof Config, unknown>>;
  replicaId: string;
}

serveParent<{ roomsUrl: string; managementUrl: string }>(async () => {
  const arg = childArg() as GatewayChildArg;
  const kc = new KubeConfig();
  kc.loadFromString(arg.kubeconfigYaml);
  const config = loadConfig(process.env, arg.config);
  const gateway = await startGateway({ kubeConfig: kc, config, logger: createLogger('gateway', { level: config.logLevel }), host: '127.0.0.1', replicaId: arg.replicaId });
  return { payload: { roomsUrl: gateway.roomsUrl, managementUrl: gateway.managementUrl }, handlers: {}, stop: () => gateway.stop() };
});
