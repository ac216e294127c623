/**
 * Child process: the gateway alone (as `api-gateway/src/main.ts` runs it), so its resident memory
 * is its own. Argument: GatewayChildArg. Ready payload: its URLs. Calls: `metrics` (its
 * Prometheus text), `memory` (after a full GC: process.memoryUsage() and how many GameRooms the
 * cache holds).
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
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

export interface GatewayMemory extends NodeJS.MemoryUsage { cachedRooms: number }

/** A full, synchronous GC (without starting node with --expose-gc), so heapUsed is live memory. */
function fullGc(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
}

serveParent<GatewayReady>(async () => {
  const arg = childArg() as GatewayChildArg;
  const kc = new KubeConfig();
  kc.loadFromString(arg.kubeconfigYaml);
  const config = loadConfig(process.env, arg.config);
  const logger = createLogger('gateway', { level: config.logLevel });
  const metrics = new MetricsRegistry();
  const gateway = await startGateway({ config, kubeConfig: kc, host: '127.0.0.1', logger, metrics, replicaId: 'bench-gateway-child' });
  return {
    payload: { managementUrl: gateway.managementUrl, roomsUrl: gateway.roomsUrl },
    handlers: {
      metrics: () => metrics.render(),
      memory: (): GatewayMemory => {
        fullGc();
        return { ...process.memoryUsage(), cachedRooms: gateway.cached().gamerooms?.length ?? 0 };
      },
    },
    stop: () => gateway.stop(),
  };
});
