/**
 * kube-apiserver refuses a Pod whose container requests more cpu or memory than its limit
 * (`must be less than or equal to cpu limit`). A room is such a Pod, so a scheduler definition
 * that asks for it is refused before anything is written, in the definition's own field names.
 * The CRD cannot state the rule: Kubernetes v1.28's CEL has no quantity library.
 */
import type { SchedulerSpec } from '../generated/resources';
import { resourcesAboveLimits } from '../kube/quantity';
import { joinIndex, withPrefix } from './field-path';
import type { FieldError } from './result';

const RESOURCES = ['cpu', 'memory'] as const;

/**
 * Each container resource whose request is above its limit, as an error on the request's field:
 * `spec.containers[0].requests.cpu` in the definition, after `prefix` (`spec` names the field of
 * the Scheduler resource). A quantity that does not parse is the schema's to report, not this rule's.
 */
export function requestsAboveLimits(definition: SchedulerSpec, prefix = ''): FieldError[] {
  return definition.spec.containers.flatMap((container, i) => {
    const path = joinIndex(withPrefix(prefix, 'spec.containers'), i);
    return resourcesAboveLimits(container.requests, container.limits, RESOURCES).map(({ resource, limit }) => ({
      field: `${path}.requests.${resource}`,
      message: `must be less than or equal to the ${resource} limit ${JSON.stringify(limit)} (${path}.limits.${resource}): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit`,
    }));
  });
}
