/**
 * Builds Operation objects, so the gateway and the operator enqueue exactly the same shape
 * (the input of each definition is typed in operation-inputs.ts).
 */
import type { Operation, OperationSource } from '../generated/resources';
import { API_VERSION } from '../resources/api-group';
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
      labels: {
        [SCHEDULER_LABEL]: o.schedulerName,
        [DEFINITION_LABEL]: labelSafe(o.definitionName),
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
      },
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

/** Label values allow at most 63 characters of [A-Za-z0-9_.-]. */
function labelSafe(v: string): string {
  const cleaned = v.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return cleaned || 'unknown';
}
