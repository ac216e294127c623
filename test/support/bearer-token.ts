/**
 * A kubeconfig whose current user sends `token` as its bearer token. The sandbox authenticates
 * nobody; its fault injection singles one component's requests out by the token (`match.token`).
 */
import * as k8s from '@kubernetes/client-node';

export function withToken(kc: k8s.KubeConfig, token: string): k8s.KubeConfig {
  const out = new k8s.KubeConfig();
  const user = kc.getCurrentUser();
  out.loadFromOptions({ clusters: kc.clusters, contexts: kc.contexts, currentContext: kc.currentContext, users: kc.users.map((u) => (u.name === user?.name ? { ...u, token } : u)) });
  return out;
}
