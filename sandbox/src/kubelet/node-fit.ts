/**
 * The scheduler's filter and choice, as a pure function: which simulated node a pod fits on, or
 * why none does, in the words the real kube-scheduler uses in its `Unschedulable` condition.
 *
 * Filters, in kube-scheduler's order: node unschedulable, taints vs tolerations, nodeSelector and
 * required node affinity, `pods` capacity, free host ports. A node is rejected by the first filter
 * it fails. Among the nodes that fit, the least loaded wins (then the first by name).
 */
import type { V1Node, V1NodeSelectorRequirement, V1NodeSelectorTerm, V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';

export interface NodeCandidate {
  name: string;
  labels: Readonly<Record<string, string>>;
  taints: readonly V1Taint[];
  unschedulable: boolean;
  podCapacity: number;
}

/**
 * What the scheduler reads of a Node, as the Node object says now: its labels, taints and cordon
 * (`spec.unschedulable`). The `pods` capacity is the simulated kubelet's own setting.
 */
export function nodeCandidate(node: V1Node, podCapacity: number): NodeCandidate {
  return {
    name: node.metadata?.name ?? '',
    labels: { ...(node.metadata?.labels ?? {}) },
    taints: (node.spec?.taints ?? []).map((t) => ({ key: t.key, effect: t.effect, ...(t.value !== undefined ? { value: t.value } : {}) })),
    unschedulable: node.spec?.unschedulable === true,
    podCapacity,
  };
}

/** Whether two views of a node (undefined: no Node object) would schedule alike. */
export function sameCandidate(a: NodeCandidate | undefined, b: NodeCandidate | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface NodeLoad {
  podCount: number;
  /** `PROTOCOL/port` keys in use by non-terminated pods on the node (a Set or a Map of counts). */
  usedPorts: { has(port: string): boolean };
}

export type FitResult = { node: string } | { node?: undefined; message: string };

const REASON_UNSCHEDULABLE_NODE = 'node(s) were unschedulable';
const REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
const REASON_TOO_MANY_PODS = 'Too many pods';
const REASON_PORTS = "node(s) didn't have free ports for the requested pod ports";

function matchesRequirement(req: V1NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && values[0] !== undefined && Number(value) > Number(values[0]);
    case 'Lt': return value !== undefined && values[0] !== undefined && Number(value) < Number(values[0]);
    default: return false;
  }
}

function matchesTerm(term: V1NodeSelectorTerm, node: NodeCandidate): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return exprs.every((r) => matchesRequirement(r, node.labels[r.key]))
    && fields.every((r) => r.key === 'metadata.name' && matchesRequirement(r, node.name));
}

function matchesNodeSelection(pod: V1Pod, node: NodeCandidate): boolean {
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && !terms.some((t) => matchesTerm(t, node))) return false;
  return true;
}

/**
 * Kubernetes' `Toleration.ToleratesTaint`: an empty effect matches every effect, an empty key
 * (only valid with `Exists`) every key; `Exists` ignores the value, `Equal` (the default) compares it.
 */
function tolerates(t: V1Toleration, taint: V1Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case 'Exists': return true;
    case '':
    case 'Equal': return (t.value ?? '') === (taint.value ?? '');
    default: return false;
  }
}

/** The first taint with effect NoSchedule/NoExecute that no toleration of the pod covers. */
function untoleratedTaint(pod: V1Pod, node: NodeCandidate): V1Taint | undefined {
  const tolerations = pod.spec?.tolerations ?? [];
  return node.taints.find((taint) => (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerations.some((t) => tolerates(t, taint)));
}

function rejection(pod: V1Pod, ports: readonly string[], node: NodeCandidate, load: NodeLoad): string | undefined {
  if (node.unschedulable) return REASON_UNSCHEDULABLE_NODE;
  const taint = untoleratedTaint(pod, node);
  if (taint) return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
  if (!matchesNodeSelection(pod, node)) return REASON_AFFINITY;
  if (load.podCount >= node.podCapacity) return REASON_TOO_MANY_PODS;
  if (ports.some((p) => load.usedPorts.has(p))) return REASON_PORTS;
  return undefined;
}

/**
 * `0/3 nodes are available: 1 Too many pods, 2 node(s) didn't have free ports for the requested pod ports.`
 * As kube-scheduler's FitError, the "count reason" strings are sorted.
 */
export function unschedulableMessage(total: number, reasons: ReadonlyMap<string, number>): string {
  const parts = [...reasons.entries()].map(([reason, n]) => `${n} ${reason}`).sort();
  return `0/${total} nodes are available: ${parts.join(', ')}.`.replace(': .', '.');
}

export function fitPod(pod: V1Pod, ports: readonly string[], nodes: readonly NodeCandidate[], loadOf: (node: string) => NodeLoad): FitResult {
  const reasons = new Map<string, number>();
  let best: { name: string; podCount: number } | undefined;
  for (const node of nodes) {
    const load = loadOf(node.name);
    const reason = rejection(pod, ports, node, load);
    if (reason) {
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      continue;
    }
    if (!best || load.podCount < best.podCount || (load.podCount === best.podCount && node.name < best.name)) {
      best = { name: node.name, podCount: load.podCount };
    }
  }
  if (best) return { node: best.name };
  return { message: unschedulableMessage(nodes.length, reasons) };
}
