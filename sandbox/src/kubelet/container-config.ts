/**
 * What a kubelet checks before it creates a container: every environment variable taken from a
 * Secret or a ConfigMap (`valueFrom.secretKeyRef`, `valueFrom.configMapKeyRef`, not `optional`)
 * must find its object and key in the pod's namespace. When one does not, the container is not
 * created: it waits with reason `CreateContainerConfigError` and the kubelet's message, and the
 * kubelet tries again later (a pod worker's retry), so it starts once the object exists.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';

/** The data keys of a Secret or ConfigMap, or why it could not be read (a 404 or another error). */
export type ConfigSource = { keys: ReadonlySet<string> } | { notFound: true } | { error: string };

export interface ConfigLookup {
  secret(namespace: string, name: string): Promise<ConfigSource>;
  configMap(namespace: string, name: string): Promise<ConfigSource>;
}

interface EnvReference { kind: 'Secret' | 'ConfigMap'; name: string; key: string }

function references(container: V1Container): EnvReference[] {
  const refs: EnvReference[] = [];
  for (const env of container.env ?? []) {
    const secret = env.valueFrom?.secretKeyRef;
    const configMap = env.valueFrom?.configMapKeyRef;
    if (secret && secret.optional !== true) refs.push({ kind: 'Secret', name: secret.name ?? '', key: secret.key });
    if (configMap && configMap.optional !== true) refs.push({ kind: 'ConfigMap', name: configMap.name ?? '', key: configMap.key });
  }
  return refs;
}

/** Whether any container of the pod takes a variable from a Secret or a ConfigMap (no lookup needed otherwise). */
export function hasConfigReferences(pod: V1Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => references(c).length > 0);
}

/**
 * For each container that cannot be created, the kubelet's message (as kube v1.28 words it:
 * `secret "game-secrets" not found`, `couldn't find key api-key in Secret ns/game-secrets`).
 * Each object is read once per call.
 */
export async function containerConfigErrors(pod: V1Pod, lookup: ConfigLookup): Promise<Map<string, string>> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const read = new Map<string, Promise<ConfigSource>>();
  const source = (ref: EnvReference): Promise<ConfigSource> => {
    const id = `${ref.kind}/${ref.name}`;
    let found = read.get(id);
    if (!found) {
      found = ref.kind === 'Secret' ? lookup.secret(namespace, ref.name) : lookup.configMap(namespace, ref.name);
      read.set(id, found);
    }
    return found;
  };
  const errors = new Map<string, string>();
  for (const container of pod.spec?.containers ?? []) {
    for (const ref of references(container)) {
      const got = await source(ref);
      let message: string | undefined;
      if ('notFound' in got) message = `${ref.kind.toLowerCase()} "${ref.name}" not found`;
      else if ('error' in got) message = got.error;
      else if (!got.keys.has(ref.key)) message = `couldn't find key ${ref.key} in ${ref.kind} ${namespace}/${ref.name}`;
      if (message !== undefined) {
        errors.set(container.name, message);
        break;
      }
    }
  }
  return errors;
}
