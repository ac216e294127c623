/**
 * What particular built-in kinds do on create and how they are validated beyond metadata:
 * pods get a Pending status and spec defaults, namespaces start Active with the `kubernetes`
 * finalizer, services get a cluster IP, CRDs are accepted and established at once.
 */
import { badRequest, type StatusCause } from './api-error';
import { fieldText, type KubeObject } from './kube-object';
import { validateCrdSchema } from './crd-schema';
import { nameProblems } from './object-meta-validation';
import type { ResourceType } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';
import { isQuantitySuffix, resourcesAboveLimits } from '../../../common/src/kube/quantity';

type Json = Record<string, unknown>;

export interface StrategyContext {
  now: string;
  /** Picks the next cluster IP for a Service. */
  nextClusterIp(): string;
}

function pod(obj: KubeObject): void {
  const spec: Json = isRecord(obj.spec) ? obj.spec : (obj.spec = {});
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.priority ??= 0;
  for (const list of ['containers', 'initContainers']) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      if (!isRecord(c)) continue;
      const image = typeof c.image === 'string' ? c.image : '';
      c.imagePullPolicy ??= image.endsWith(':latest') || !image.includes(':') ? 'Always' : 'IfNotPresent';
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.resources ??= {};
    }
  }
  obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
}

function crd(obj: KubeObject, now: string, old?: KubeObject): void {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const names = isRecord(spec.names) ? spec.names : {};
  const kind = fieldText(names.kind);
  const acceptedNames: Json = { ...names, singular: names.singular ?? kind.toLowerCase(), listKind: names.listKind ?? `${kind}List` };
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
  const storage = versions.find((v) => v.storage === true);
  const oldStatus = old && isRecord(old.status) ? old.status : {};
  const previous = Array.isArray(oldStatus.storedVersions) ? oldStatus.storedVersions.map(String) : [];
  const storedVersions = [...new Set([...previous, ...(storage ? [String(storage.name)] : [])])];
  const oldConditions = Array.isArray(oldStatus.conditions) ? oldStatus.conditions.filter(isRecord) : [];
  const since = (type: string): unknown => oldConditions.find((c) => c.type === type && c.status === 'True')?.lastTransitionTime ?? now;
  obj.status = {
    acceptedNames,
    conditions: [
      { type: 'NamesAccepted', status: 'True', lastTransitionTime: since('NamesAccepted'), reason: 'NoConflicts', message: 'no conflicts found' },
      { type: 'Established', status: 'True', lastTransitionTime: since('Established'), reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
    ],
    storedVersions,
  };
}

/** Secrets keep `stringData` only as base64 `data`, as the real server does. */
function secret(obj: KubeObject): void {
  if (typeof obj.type !== 'string' || obj.type === '') obj.type = 'Opaque';
  if (isRecord(obj.stringData)) {
    const data: Json = isRecord(obj.data) ? obj.data : {};
    for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

/**
 * Lease `acquireTime`/`renewTime` are MicroTime: RFC 3339 with exactly six fractional digits. The
 * real API server cannot decode anything else and answers 400 (a JavaScript Date has three).
 */
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

function lease(obj: KubeObject): void {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  for (const field of ['acquireTime', 'renewTime']) {
    const v = spec[field];
    if (v !== undefined && v !== null && (typeof v !== 'string' || !MICRO_TIME.test(v))) {
      throw badRequest(`Lease in version "v1" cannot be handled as a Lease: parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05.000000Z07:00": cannot parse it as a MicroTime (six fractional digits)`);
    }
  }
}

/** The pattern kube-apiserver names when it cannot decode a quantity (apimachinery's resource.Quantity). */
const QUANTITY_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/**
 * What apimachinery's quantity reader takes before it looks at the suffix: a sign, digits, one
 * decimal point, then suffix letters, a sign and digits (so `+`, `.5` and `Mi` read as numbers).
 * Digits after the number can only follow a letter or a sign, so no input makes it backtrack.
 */
const QUANTITY_FORM = /^[+-]?[0-9]*(?:\.[0-9]*)?([eEinumkKMGTP]+[+-]?[0-9]*|[+-][0-9]*)?$/;

/** Why kube-apiserver cannot decode `text` as a quantity, or undefined when it can. */
function quantityDecodeError(text: string): string | undefined {
  const form = QUANTITY_FORM.exec(text);
  if (text === '' || !form) return `quantities must match the regular expression '${QUANTITY_PATTERN}'`;
  return isQuantitySuffix(form[1] ?? '') ? undefined : "unable to parse quantity's suffix";
}

/**
 * A Pod's quantities (its containers' requests and limits, its overhead) are decoded before it
 * is validated: kube-apiserver answers 400, not 422, for one it cannot read (`1e1.5`).
 */
function podQuantities(obj: KubeObject): void {
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const lists: unknown[] = [];
  for (const list of ['containers', 'initContainers']) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      const resources = isRecord(c) && isRecord(c.resources) ? c.resources : {};
      lists.push(resources.requests, resources.limits);
    }
  }
  lists.push(spec.overhead);
  for (const values of lists) {
    if (!isRecord(values)) continue;
    for (const v of Object.values(values)) {
      const why = typeof v === 'string' ? quantityDecodeError(v) : undefined;
      if (why !== undefined) throw badRequest(`Pod in version "v1" cannot be handled as a Pod: ${why}`);
    }
  }
}

/** Changes a kind makes to a new object before it is stored. */
export function prepareForCreate(rt: ResourceType, obj: KubeObject, ctx: StrategyContext): void {
  if (rt.group === 'coordination.k8s.io' && rt.plural === 'leases') lease(obj);
  if (rt.group === '' && rt.plural === 'secrets') secret(obj);
  else if (rt.group === '' && rt.plural === 'pods') {
    podQuantities(obj);
    pod(obj);
  } else if (rt.group === '' && rt.plural === 'namespaces') {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
  } else if (rt.group === '' && rt.plural === 'services') {
    const spec: Json = isRecord(obj.spec) ? obj.spec : (obj.spec = {});
    spec.type ??= 'ClusterIP';
    if (spec.clusterIP === undefined && spec.type !== 'ExternalName') {
      spec.clusterIP = ctx.nextClusterIp();
      spec.clusterIPs = [spec.clusterIP];
    }
    spec.sessionAffinity ??= 'None';
    obj.status ??= { loadBalancer: {} };
  } else if (rt.group === 'apiextensions.k8s.io' && rt.plural === 'customresourcedefinitions') crd(obj, ctx.now);
}

/** Changes a kind makes to an updated object (keeps what clients may not change). */
export function prepareForUpdate(rt: ResourceType, obj: KubeObject, old: KubeObject, ctx: StrategyContext): void {
  if (rt.group === 'coordination.k8s.io' && rt.plural === 'leases') lease(obj);
  if (rt.group === '' && rt.plural === 'pods') podQuantities(obj);
  if (rt.group === '' && rt.plural === 'secrets') secret(obj);
  if (rt.group === 'apiextensions.k8s.io' && rt.plural === 'customresourcedefinitions') crd(obj, ctx.now, old);
  if (rt.group === '' && rt.plural === 'namespaces') {
    obj.spec = old.spec === undefined ? undefined : JSON.parse(JSON.stringify(old.spec));
  }
  if (rt.group === '' && rt.plural === 'services' && isRecord(obj.spec) && isRecord(old.spec)) {
    obj.spec.clusterIP ??= old.spec.clusterIP;
    obj.spec.clusterIPs ??= old.spec.clusterIPs;
  }
}

function validatePod(obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const containers = Array.isArray(spec.containers) ? spec.containers : [];
  if (containers.length === 0) causes.push({ reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' });
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const base = `spec.containers[${i}]`;
    if (!isRecord(c)) return;
    const name = typeof c.name === 'string' ? c.name : '';
    if (name === '') causes.push({ reason: 'FieldValueRequired', field: `${base}.name`, message: 'Required value' });
    else {
      for (const p of nameProblems(name, 'label')) causes.push({ reason: 'FieldValueInvalid', field: `${base}.name`, message: `Invalid value: ${JSON.stringify(name)}: ${p}` });
      if (seen.has(name)) causes.push({ reason: 'FieldValueDuplicate', field: `${base}.name`, message: `Duplicate value: ${JSON.stringify(name)}` });
      seen.add(name);
    }
    if (typeof c.image !== 'string' || c.image.trim() === '') causes.push({ reason: 'FieldValueRequired', field: `${base}.image`, message: 'Required value' });
    // kube-apiserver refuses a container that requests more cpu or memory than its limit.
    const resources = isRecord(c.resources) ? c.resources : {};
    for (const { resource, request, limit } of resourcesAboveLimits(isRecord(resources.requests) ? resources.requests : undefined, isRecord(resources.limits) ? resources.limits : undefined, ['cpu', 'memory'])) {
      causes.push({ reason: 'FieldValueInvalid', field: `${base}.resources.requests`, message: `Invalid value: ${JSON.stringify(request)}: must be less than or equal to ${resource} limit of ${limit}` });
    }
  });
  return causes;
}

function validateCrd(obj: KubeObject): StatusCause[] {
  return validateCrdSchema(obj);
}

const POD_UPDATE_MESSAGE = 'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** The parts of a pod spec an update may not change (images, deadline and tolerations may change). */
function immutablePodSpec(spec: unknown): unknown {
  const s: Json = isRecord(spec) ? { ...spec } : {};
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.schedulingGates;
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(s[list])) s[list] = (s[list] as unknown[]).map((c) => (isRecord(c) ? { ...c, image: undefined } : c));
  }
  return JSON.parse(JSON.stringify(s)) as unknown;
}

/** Kind-specific checks of an update against the stored object. */
export function validateKindUpdate(rt: ResourceType, obj: KubeObject, old: KubeObject): StatusCause[] {
  if (rt.group === '' && rt.plural === 'pods') {
    if (JSON.stringify(immutablePodSpec(obj.spec)) !== JSON.stringify(immutablePodSpec(old.spec))) {
      return [{ reason: 'FieldValueForbidden', field: 'spec', message: POD_UPDATE_MESSAGE }];
    }
  }
  return [];
}

/** Kind-specific validation of a new or updated object. */
export function validateKind(rt: ResourceType, obj: KubeObject): StatusCause[] {
  if (rt.group === '' && rt.plural === 'pods') return validatePod(obj);
  if (rt.group === 'apiextensions.k8s.io' && rt.plural === 'customresourcedefinitions') return validateCrd(obj);
  return [];
}
