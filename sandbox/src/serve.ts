/**
 * `npm run sandbox`: only the sandbox API server — no CRDs, no nodes, no operator — like a bare
 * kube-apiserver. It writes a kubeconfig (ROOMKEEPER_KUBECONFIG_FILE, default
 * `.roomkeeper/sandbox-kubeconfig`) and runs until SIGINT/SIGTERM. Point `E2E_KUBECONFIG` at it
 * to run the end-to-end suites down the real-cluster path:
 *
 *   npm run sandbox &
 *   E2E_KUBECONFIG=.roomkeeper/sandbox-kubeconfig npm run test:e2e
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createLogger } from '../../common/src/logger';
import { startSandbox } from './index';

async function main(): Promise<void> {
  const logger = createLogger('sandbox', { level: process.env.ROOMKEEPER_LOG_LEVEL ?? 'warn' });
  const file = path.resolve(process.env.ROOMKEEPER_KUBECONFIG_FILE ?? path.join('.roomkeeper', 'sandbox-kubeconfig'));
  const sandbox = await startSandbox({ port: Number(process.env.ROOMKEEPER_SANDBOX_PORT ?? 0), logger });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await sandbox.writeKubeconfig(file);
  process.stdout.write(`Sandbox API server: ${sandbox.url}\nkubeconfig: ${file}\n`);
  const stop = (): void => {
    void sandbox.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(`sandbox failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
