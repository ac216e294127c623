/**
 * One operator in the test process, as the chart runs it on the shared real plane: the chart's
 * ServiceAccount and settings (its Lease, which its Role grants by name, and its leader timings), a
 * test-sized health interval, and its log kept in memory for the test to read. Resolves once it leads.
 */
import type * as k8s from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import { loadConfig } from '../../common/src/config';
import { createLogger } from '../../common/src/logger';
import { startOperator, type RunningOperator } from '../../operator/src/operator';
import type { RealApiServer } from './real-apiserver';
import { waitFor } from './wait';

export interface ChartOperator {
  operator: RunningOperator;
  /** Everything it logged so far (JSON lines, level info and up). */
  logged: () => string;
}

export async function startChartOperator(plane: RealApiServer, opts: { kubeConfig: k8s.KubeConfig; random?: () => number }): Promise<ChartOperator> {
  let logged = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logged += chunk.toString();
      done();
    },
  });
  const operator = await startOperator({
    kubeConfig: opts.kubeConfig,
    // The chart's leader timings (15 s, 10 s, 2 s), not shorter ones: on a loaded 2-core CI machine a
    // 4 s renew deadline was missed mid-operation (CI, 2026-12-07). A free Lease is taken at once.
    config: loadConfig(plane.chartEnv.operator, { operatorPort: 0, healthInterval: 1000 }),
    logger: createLogger('operator', { level: 'info', stream }),
    serveOps: false,
    ...(opts.random ? { random: opts.random } : {}),
  });
  try {
    await waitFor(() => operator.isLeader, { timeoutMs: 60_000, message: 'the test operator leads' });
  } catch (err) {
    await operator.stop();
    throw new Error(`${(err as Error).message}\n${logged.slice(-3000)}`, { cause: err });
  }
  return { operator, logged: () => logged };
}
