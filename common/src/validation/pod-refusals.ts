/**
 * Rules of a Pod that kube-apiserver checks and a room's definition can break, but the CRD cannot
 * state, so a scheduler definition that breaks one is refused before anything is written, in the
 * definition's own field names (`podRefusals`):
 * - a container requesting more cpu or memory than its limit (`must be less than or equal to cpu
 *   limit`): Kubernetes v1.28's CEL has no quantity library;
 * - annotations above 256 KiB in all (keys and values): CEL has no sum over a map.
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
function requestsAboveLimits(definition: SchedulerSpec, prefix = ''): FieldError[] {
  return definition.spec.containers.flatMap((container, i) => {
    const path = joinIndex(withPrefix(prefix, 'spec.containers'), i);
    return resourcesAboveLimits(container.requests, container.limits, RESOURCES).map(({ resource, limit }) => ({
      field: `${path}.requests.${resource}`,
      message: `must be less than or equal to the ${resource} limit ${JSON.stringify(limit)} (${path}.limits.${resource}): Kubernetes refuses a pod that requests more than its limit; lower the request or raise the limit`,
    }));
  });
}

/** kube-apiserver's limit of a Pod's annotations, keys and values together (TotalAnnotationSizeLimitB). */
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

/** The room pods' annotations when, keys and values together, they pass the limit of a Pod's. */
function annotationsTooLarge(definition: Pick<SchedulerSpec, 'annotations'>, prefix = ''): FieldError[] {
  const bytes = Object.entries(definition.annotations ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (bytes <= ANNOTATIONS_MAX_BYTES) return [];
  return [{ field: withPrefix(prefix, 'annotations'), message: `are ${bytes} bytes in all (keys and values), above the ${ANNOTATIONS_MAX_BYTES} (256 KiB) Kubernetes takes on a pod: every room's pod would be refused; make them smaller` }];
}

/** Every Pod rule above the definition breaks, each on its field. */
export function podRefusals(definition: SchedulerSpec, prefix = ''): FieldError[] {
  return [...requestsAboveLimits(definition, prefix), ...annotationsTooLarge(definition, prefix)];
}
