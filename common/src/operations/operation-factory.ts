/**
 * Builds Operation objects, so the gateway and the operator enqueue exactly the same shape
 * (the input of each definition is typed in operation-inputs.ts).
 */
import type { Operation, OperationSource } from '../generated/resources';
import { API_VERSION } from '../resources/api-group';
import { isLabelValue } from '../kube/label-syntax';
import { DEFINITION_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, SCHEDULER_LABEL } from '../resources/labels';

export interface NewOperation {
  id: string;
  schedulerName: string;
  definitionName: string;
  /** The definition's input (`OperationInputs[definition]` for the known ones). */
  input?: object;
  priority?: boolean;
  source: OperationSource;
  /** Milliseconds; defaults to now. */
  enqueuedAt?: number;
}

export function buildOperation(o: NewOperation): Operation {
  return {
    apiVersion: API_VERSION,
    kind: 'Operation',
    metadata: {
      name: o.id,
      labels: operationLabels(o.schedulerName, o.definitionName),
    },
    spec: {
      schedulerName: o.schedulerName,
      definitionName: o.definitionName,
      input: { ...o.input },
      priority: o.priority ?? false,
      enqueuedAt: new Date(o.enqueuedAt ?? Date.now()).toISOString(),
      source: o.source,
      cancelRequested: false,
    },
  };
}

/**
 * The labels of an Operation of a scheduler and definition: those the gateway's and the operator's
 * carry from their creation, and the operator puts on one written past them (`labelsToWrite`), so
 * `kubectl get rkop -l roomkeeper.io/scheduler=<name>` lists every operation of a scheduler.
 */
export function operationLabels(schedulerName: string, definitionName: string): Record<string, string> {
  return {
    [SCHEDULER_LABEL]: schedulerName,
    [DEFINITION_LABEL]: labelSafe(definitionName),
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
  };
}

/**
 * What an Operation's labels lack against `operationLabels` of its spec (whose schedulerName and
 * definitionName are immutable), as a merge patch of `metadata.labels`, or undefined when they
 * lack nothing: an Operation written with kubectl (`kubectl create -f`) carries none of them.
 * Derived from the object alone, so it is written once per operation, also after a restart.
 * - The scheduler and definition labels are set when absent or when they name something else
 *   than the spec does (the spec is what the queue runs by).
 * - A scheduler name that is no label value (no Scheduler can have it) gets no label, and a
 *   scheduler label it carries is removed (null): it names another scheduler than the spec.
 * - `app.kubernetes.io/managed-by` is added when absent; another tool's value (Helm's, an Argo
 *   CD's) is left, so the two never take turns writing it.
 */
export function labelsToWrite(op: Pick<Operation, 'metadata' | 'spec'>): Record<string, string | null> | undefined {
  const have = op.metadata.labels ?? {};
  const want = operationLabels(op.spec.schedulerName, op.spec.definitionName);
  const write: Record<string, string | null> = {};
  if (!isLabelValue(op.spec.schedulerName)) {
    if (have[SCHEDULER_LABEL] !== undefined) write[SCHEDULER_LABEL] = null;
  } else if (have[SCHEDULER_LABEL] !== want[SCHEDULER_LABEL]) write[SCHEDULER_LABEL] = want[SCHEDULER_LABEL] as string;
  if (have[DEFINITION_LABEL] !== want[DEFINITION_LABEL]) write[DEFINITION_LABEL] = want[DEFINITION_LABEL] as string;
  if (have[MANAGED_BY_LABEL] === undefined) write[MANAGED_BY_LABEL] = MANAGED_BY_VALUE;
  return Object.keys(write).length > 0 ? write : undefined;
}

/** Label values allow at most 63 characters of [A-Za-z0-9_.-]. */
function labelSafe(v: string): string {
  const cleaned = v.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return cleaned || 'unknown';
}
