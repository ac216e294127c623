/**
 * Small readers for Pod fields.
 *
 * Objects in an informer's cache come from two places: the initial list (deserialized by
 * client-node, so timestamps are `Date`s) and watch events (raw JSON, so timestamps are strings).
 * These helpers accept both, and never use `instanceof` (client-node objects may come from
 * another realm under jest).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { fnv1a32 } from '../../../common/src/text/fnv';

/** `namespace/name`, the key pods are queued under. */
export function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** Splits a `namespace/name` key. */
export function splitPodKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The plain `value` of a container's env var; `valueFrom` is not resolved. */
export function envValue(container: V1Container, name: string): string | undefined {
  for (const e of container.env ?? []) if (e.name === name && typeof e.value === 'string') return e.value;
  return undefined;
}

/** The first plain value of an env var across the pod's containers. */
export function podEnvValue(pod: V1Pod, name: string): string | undefined {
  for (const c of pod.spec?.containers ?? []) {
    const v = envValue(c, name);
    if (v !== undefined) return v;
  }
  return undefined;
}

export function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

export function isTerminating(pod: V1Pod): boolean {
  const deletion: unknown = pod.metadata?.deletionTimestamp; // plain JSON from the watch: may be null
  return deletion !== undefined && deletion !== null;
}

/** `PROTOCOL/port` for every host port the pod asks for. */
export function hostPortsOf(pod: V1Pod): string[] {
  const out: string[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (typeof p.hostPort === 'number' && p.hostPort > 0) out.push(`${p.protocol ?? 'TCP'}/${p.hostPort}`);
    }
  }
  return out;
}

/** A short deterministic hex digest (FNV-1a, repeated) for fake container and image ids. */
export function fakeDigest(input: string, hexLength = 64): string {
  let out = '';
  let round = 0;
  while (out.length < hexLength) {
    out += fnv1a32(input, 0x811c9dc5 ^ round).toString(16).padStart(8, '0');
    round++;
  }
  return out.slice(0, hexLength);
}
