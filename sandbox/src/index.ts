/**
 * The embedded sandbox: an in-process Kubernetes API server that the real kubectl, helm and
 * @kubernetes/client-node talk to as to a real cluster (HTTP on 127.0.0.1, any bearer token).
 *
 *   const sandbox = await startSandbox({ crdDirs: ['crds'] });
 *   const kc = sandbox.kubeConfig();               // client-node
 *   await sandbox.writeKubeconfig(file);           // kubectl / helm
 *   sandbox.faults.set({ errorRate: 1, errorStatus: 429, match: { verb: 'list', resource: 'pods' } });
 *   sandbox.faults.forceGone();                    // every resume from an older RV gets 410; open watches end
 *   sandbox.writeCount('pods');                    // API writes per resource, for benchmarks
 *   await sandbox.idle();                          // garbage collection / namespace cleanup done
 *   await sandbox.stop();
 *
 * What it is not: there are no controllers (a Deployment never gets pods), server-side apply is a
 * plain merge without field ownership, and protobuf request bodies are read only for the kinds
 * kubectl/helm send that way in practice (Namespace, Secret, ConfigMap, ServiceAccount, Eviction).
 */
export { startSandbox } from './apiserver/sandbox';
export type { Sandbox } from './apiserver/sandbox';
