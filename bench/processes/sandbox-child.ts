/**
 * Child process: the sandbox API server alone, so its memory and CPU are its own. Ready payload:
 * its URL and kubeconfig. Calls: `writeCount(resource?)`, `count({resource, namespace})`.
 */
import * as path from 'node:path';
import { startSandbox } from '../../sandbox/src/index';
import { serveParent } from '../support/child-rpc';

export interface SandboxReady { url: string; kubeconfigYaml: string }

serveParent<SandboxReady>(async () => {
  const sandbox = await startSandbox({ crdDirs: [path.resolve(__dirname, '../../crds')], watchWindow: 50_000 });
  return {
    payload: { url: sandbox.url, kubeconfigYaml: sandbox.kubeconfigYaml() },
    handlers: {
      writeCount: (resource) => sandbox.writeCount(typeof resource === 'string' ? resource : undefined),
      count: (arg) => {
        const { resource, namespace } = (arg ?? {}) as { resource?: string; namespace?: string };
        return sandbox.store.count(resource, namespace);
      },
    },
    stop: () => sandbox.stop(),
  };
});
