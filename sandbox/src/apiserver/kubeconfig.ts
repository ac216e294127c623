/** The kubeconfig that points kubectl, helm and client-node at a sandbox. */
const SANDBOX_CONTEXT = 'roomkeeper-sandbox';
const SANDBOX_TOKEN = 'roomkeeper-sandbox-token';

export function kubeconfigYaml(serverUrl: string, namespace = 'default'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${SANDBOX_CONTEXT}`,
    '  cluster:',
    `    server: ${serverUrl}`,
    // client-node refuses plain HTTP unless this is set; kubectl ignores it for http URLs.
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${SANDBOX_CONTEXT}`,
    '  user:',
    `    token: ${SANDBOX_TOKEN}`,
    'contexts:',
    `- name: ${SANDBOX_CONTEXT}`,
    '  context:',
    `    cluster: ${SANDBOX_CONTEXT}`,
    `    user: ${SANDBOX_CONTEXT}`,
    `    namespace: ${namespace}`,
    `current-context: ${SANDBOX_CONTEXT}`,
    '',
  ].join('\n');
}
