/**
 * The operator process: configuration, cluster connection, forwarder, signals. Everything else
 * is in `operator.ts`.
 */
import { loadConfig } from '../../common/src/config';
import { EventForwarder } from '../../common/src/forwarding';
import { discoverKubeConfig } from '../../common/src/kube/clients';
import { createLogger, toggleDebugOnSignal } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { onShutdownSignal } from '../../common/src/ops-server';
import { startOperator } from './operator';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('operator', { level: config.logLevel });
  toggleDebugOnSignal(logger);
  const cluster = discoverKubeConfig();
  if (!cluster) {
    logger.error('no cluster configured: set KUBECONFIG, or run in a pod (or use `npm start` for the embedded sandbox)');
    process.exit(2);
  }
  const metrics = new MetricsRegistry();
  const forwarder = new EventForwarder({ logger, metrics });
  const operator = await startOperator({ kubeConfig: cluster.kc, config, logger, metrics, forwarder });
  logger.info('operator started', { cluster: cluster.source, opsUrl: operator.opsUrl, identity: operator.identity });
  onShutdownSignal(logger, config.shutdownTimeout, async () => {
    await operator.stop();
    forwarder.close();
  });
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: 'error', component: 'operator', message: 'failed to start', error: String(err) }));
  process.exit(1);
});
