/**
 * The operator process: configuration, cluster connection, forwarder, signals. Everything else
 * is in `operator.ts`.
 */
import { loadConfig } from '../../common/src/config';
import { EventForwarder } from '../../common/src/forwarding';
import { discoverKubeConfig } from '../../common/src/kube/clients';
import { createLogger, exitOnStartFailure, toggleDebugOnSignal } from '../../common/src/logger';
import { MetricsRegistry } from '../../common/src/metrics';
import { onShutdownSignal } from '../../common/src/ops-server';
import { startOperator, type RunningOperator } from './operator';

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
  // Installed before the start, which may wait long (caches that cannot list): a signal then
  // exits saying so. Until the start resolves this replica has not campaigned for leadership, so
  // it runs no operation and holds no Lease: there is nothing to hand over.
  const started: { operator?: RunningOperator } = {};
  onShutdownSignal(logger, config.shutdownTimeout, async (signal) => {
    const { operator } = started;
    if (!operator) {
      logger.info(`stopping before the operator finished starting (${signal}): it led nothing and ran no operation`);
      forwarder.close();
      return;
    }
    await operator.stop(signal);
    forwarder.close();
  });
  const operator = await startOperator({ kubeConfig: cluster.kc, config, logger, metrics, forwarder });
  started.operator = operator;
  logger.info('operator started', { cluster: cluster.source, opsUrl: operator.opsUrl, identity: operator.identity });
}

main().catch((err: unknown) => exitOnStartFailure('operator', err));
