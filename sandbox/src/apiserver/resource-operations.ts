/**
 * The REST semantics of every resource: create, read, list, update, patch and delete with
 * resourceVersions, optimistic concurrency, generation, the status and scale subresources,
 * finalizers, graceful pod deletion, namespace rules and custom-resource schemas.
 *
 * The HTTP layer parses requests and calls these; the garbage collector calls them too.
 */
import { randomUUID } from 'node:crypto';
import { posix as posixPath } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../../../common/src/logger';
import {
  ApiError, alreadyExists, badRequest, conflict, forbidden, gone, invalid, notFound, tooLargeResourceVersion, unsupportedMediaType,
  type StatusCause,
} from './api-error';
import { pruneUnknownBuiltinFields } from './builtin-fields';
import { evaluateJsonPath } from './crd-schema';
import { parseSupportedFieldSelector, supportedFieldLabels } from './field-selector';
import { prepareForCreate, prepareForUpdate, validateKind, validateKindUpdate, type StrategyContext } from './kind-strategies';
import { compactMetadata, deepCopy, fieldText, type KubeObject } from './kube-object';
import { labelSelectorToString, parseLabelSelector } from './label-selector';
import type { ObjectStore, StoredObject } from './object-store';
import { validateObjectMeta } from './object-meta-validation';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch';
import { refuseTooDeep } from './request-parsing';
import type { ResourceRegistry } from './resource-registry';
import { apiVersionOf, findVersion, resourceKey, type ResourceType, type ResourceVersion, type ResourceView } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';
import { jsonEqual } from '../../../common/src/json/json-equal';
import { systemClock, type Clock } from '../../../common/src/runtime/clock';
import { rfc3339 } from '../../../common/src/kube/timestamps';

type Json = Record<string, unknown>;

export interface Scope {
  rt: ResourceType;
  version: string;
  /** '' for cluster-scoped resources and all-namespace lists. */
  namespace: string;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  fieldManager?: string;
}

export interface WriteResult {
  object: KubeObject;
  warnings: string[];
  /** true when a patch or update created the object (201). */
  created?: boolean;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continueToken?: string;
  /** A parseable resourceVersion (request-parsing checked it); '' or absent = the latest. */
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export interface ResourceOperationsDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  logger: Logger;
  /** The clock (injected so tests can control time). */
  now?: Clock;
}

const GENERATE_NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * A continue token in kube-apiserver's format (storage.EncodeContinue): unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the last item>"}`, the key relative to the
 * list's prefix; rv -1 continues at the latest resourceVersion.
 */
function continueTokenOf(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Reads a continue token as kube-apiserver v1.28 does (storage.DecodeContinue), refusing it with
 * its 400 `invalid continue token: continue key is not valid...`.
 */
function parseContinueToken(token: string): { rv: number; start: string } {
  const refuse = (why: string) => badRequest(`invalid continue token: continue key is not valid${why}`);
  if (!BASE64URL.test(token) || token.length % 4 === 1) {
    const bad = token.search(/[^A-Za-z0-9_-]/);
    throw refuse(`: illegal base64 data at input byte ${bad >= 0 ? bad : token.length - 1}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (err) {
    throw refuse(`: ${err instanceof Error ? err.message : String(err)}`);
  }
  const fields = isRecord(parsed) ? parsed : {};
  const version = typeof fields.v === 'string' ? fields.v : '';
  const rv = typeof fields.rv === 'number' && Number.isInteger(fields.rv) ? fields.rv : 0;
  const start = typeof fields.start === 'string' ? fields.start : '';
  if (version !== 'meta.k8s.io/v1') throw refuse(`: server does not recognize this encoded version ${version}`);
  if (rv === 0) throw refuse(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (start === '') throw refuse(': encoded start key empty (version meta.k8s.io/v1)');
  // A start key that would reach out of the list's prefix (`../x`): Go's path.Clean changes it.
  const rooted = start.startsWith('/') ? start : `/${start}`;
  const cleaned = posixPath.normalize(rooted).replace(/(.)\/$/, '$1');
  if (cleaned !== rooted) throw refuse(`: ${start}`);
  return { rv, start: rooted.slice(1) };
}

const FUTURE_REVISION = 'etcdserver: mvcc: required revision is a future revision';
const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';
const CONTINUE_TOO_OLD = 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function setPath(obj: Json, jsonPath: string, value: unknown): void {
  const parts = jsonPath.replace(/^\./, '').split('.');
  const last = parts.pop() ?? '';
  let cur: Json = obj;
  for (const p of parts) {
    if (!isRecord(cur[p])) cur[p] = {};
    cur = cur[p] as Json;
  }
  cur[last] = value;
}

/**
 * The resourceVersion an update or patch leaves on the object, held to kube-apiserver's rules:
 * empty or absent means "unconditional", which a custom resource's strategy refuses (422 naming
 * metadata.resourceVersion, worded by resource as kube-apiserver words it); any other value must
 * be the stored one (409).
 */
function checkUpdateResourceVersion(rt: ResourceType, name: string, rv: string | undefined, current: string | undefined): void {
  if (rv === undefined || rv === '') {
    if (!rt.custom) return;
    const cause = { reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' };
    throw new ApiError(422, 'Invalid', `${rt.plural}.${rt.group} "${name}" is invalid: ${cause.field}: ${cause.message}`, { name, group: rt.group, kind: rt.plural, causes: [cause] });
  }
  if (rv !== current) throw conflict(rt, name);
}

function isPod(rt: ResourceType): boolean {
  return rt.group === '' && rt.plural === 'pods';
}

function isNamespace(rt: ResourceType): boolean {
  return rt.group === '' && rt.plural === 'namespaces';
}

export class ResourceOperations {
  private readonly store: ObjectStore;
  private readonly registry: ResourceRegistry;
  private readonly logger: Logger;
  private readonly now: Clock;
  private clusterIpCounter = 10;

  constructor(deps: ResourceOperationsDeps) {
    this.store = deps.store;
    this.registry = deps.registry;
    this.logger = deps.logger;
    this.now = deps.now ?? systemClock;
  }

  private key(rt: ResourceType): string {
    return resourceKey(rt.group, rt.plural);
  }

  private versionInfo(scope: Scope): ResourceVersion {
    const v = findVersion(scope.rt, scope.version) ?? scope.rt.versions[0];
    if (!v) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    return v;
  }

  private strategyContext(): StrategyContext {
    return {
      now: rfc3339(this.now()),
      nextClusterIp: () => {
        const n = this.clusterIpCounter++;
        return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
      },
    };
  }

  // ------------------------------------------------------------------ reads

  getStored(scope: Scope, name: string): StoredObject {
    const stored = this.store.get(this.key(scope.rt), scope.namespace, name);
    if (!stored) throw notFound(scope.rt, name);
    return stored;
  }

  list(scope: Scope, options: ListOptions = {}): ListResult {
    const key = this.key(scope.rt);
    const labels = parseLabelSelector(options.labelSelector);
    const fields = parseSupportedFieldSelector(options.fieldSelector, this.fieldLabels(scope));
    // resourceVersion 0 without a continue token is read from kube-apiserver's watch cache, which v1.28 does not page.
    const fromCache = options.resourceVersion === '0' && !options.continueToken;
    const limit = options.limit && options.limit > 0 && !fromCache ? options.limit : undefined;
    // The key of an object under the list's prefix, as etcd orders them (`ns/name` across namespaces:
    // `a-b/x` comes before `a/x`).
    const keyOf = scope.rt.namespaced && !scope.namespace ? (o: StoredObject) => `${o.namespace}/${o.name}` : (o: StoredObject) => o.name;
    let listRv = this.store.resourceVersion;
    let start: string | undefined;
    if (options.continueToken) {
      const token = parseContinueToken(options.continueToken);
      if (options.resourceVersion && options.resourceVersion !== '0') throw badRequest('specifying resource version is not allowed when using continue');
      if (token.rv > listRv) throw new ApiError(500, '', FUTURE_REVISION);
      if (token.rv > 0 && token.rv < this.store.compactedRv(key)) {
        // As kube-apiserver answers a continue token etcd has compacted: with a token that goes on at the latest revision.
        throw gone(CONTINUE_TOO_OLD, { continue: Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -1, start: token.start })).toString('base64url') });
      }
      if (token.rv > 0) listRv = token.rv;
      start = token.start;
    } else if (options.resourceVersion && options.resourceVersion !== '0' && (limit !== undefined || options.resourceVersionMatch === 'Exact')) {
      // Read from etcd at (Exact, or a limit without a match) or after (NotOlderThan) that revision.
      const rv = BigInt(options.resourceVersion);
      if (options.resourceVersionMatch === 'NotOlderThan') {
        if (rv > BigInt(listRv)) throw tooLargeResourceVersion(rv, listRv, 0);
      } else {
        if (rv > BigInt(listRv)) throw new ApiError(500, '', FUTURE_REVISION);
        if (rv < BigInt(this.store.compactedRv(key))) throw gone(LIST_TOO_OLD);
        // Under the resourceVersion asked for, as etcd answers; the objects are as they are now (no history).
        listRv = Number(rv);
      }
    }
    let keyed = this.store.list(key, scope.namespace || undefined).map((o) => ({ key: keyOf(o), o }));
    if (options.labelSelector || options.fieldSelector) {
      keyed = keyed.filter(({ o }) => labels(o.obj.metadata.labels) && fields(o.obj));
    }
    if (start !== undefined) {
      const from = start;
      keyed = keyed.filter((k) => k.key >= from);
    }
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const all = keyed.map((k) => k.o);
    const items = limit === undefined ? all : all.slice(0, limit);
    const last = keyed[items.length - 1];
    if (items.length === all.length || last === undefined) return { items: all, resourceVersion: String(listRv) };
    return {
      items,
      resourceVersion: String(listRv),
      continueToken: continueTokenOf(listRv, last.key),
      // kube-apiserver counts the rest only when nothing is filtered out (etcd counts keys, not matches).
      ...(options.labelSelector || options.fieldSelector ? {} : { remainingItemCount: all.length - items.length }),
    };
  }

  /** The field labels `scope`'s resource can be selected by. */
  fieldLabels(scope: Scope): Set<string> {
    return supportedFieldLabels(this.key(scope.rt), this.versionInfo(scope).selectableFields ?? []);
  }

  // ------------------------------------------------------------------ schema and validation

  /** Unknown fields: Strict refuses them (400), Warn reports them; they are dropped either way. */
  private unknownFields(scope: Scope, paths: string[], opts: WriteOptions): string[] {
    const unknown = paths.map((p) => p.replace(/^\./, '')).filter((p) => !p.startsWith('metadata'));
    if (unknown.length === 0) return [];
    if (opts.fieldValidation === 'Strict') {
      const list = unknown.map((p) => `unknown field "${p}"`).join(', ');
      throw badRequest(`${scope.rt.kind} in version "${scope.version}" cannot be handled as a ${scope.rt.kind}: strict decoding error: ${list}`);
    }
    return opts.fieldValidation === 'Warn' ? unknown.map((p) => `unknown field "${p}"`) : [];
  }

  /**
   * Drops fields the type does not declare (built-ins: the Go type; custom resources: the schema),
   * then for custom resources defaults and validates. Returns warnings, throws 400/422.
   */
  private applySchema(scope: Scope, obj: KubeObject, old: KubeObject | undefined, onlyStatus: boolean, opts: WriteOptions): string[] {
    if (!scope.rt.custom) {
      const metadata = obj.metadata;
      const warnings = this.unknownFields(scope, pruneUnknownBuiltinFields(scope.rt, scope.version, obj), opts);
      obj.metadata = metadata;
      return warnings;
    }
    const schema = this.versionInfo(scope).schema;
    if (!schema) return [];
    const metadata = obj.metadata;
    const warnings = this.unknownFields(scope, schema.prune(obj), opts);
    obj.metadata = metadata;
    schema.applyDefaults(obj);
    let causes = schema.validate(obj, old);
    // With a scale subresource, the replicas at specReplicasPath must be a non-negative int32 (the
    // Scale holds an int32); the cause names the path as the CRD writes it (".spec.roomsReplicas"),
    // as kube-apiserver does.
    const scale = this.versionInfo(scope).scale;
    const replicas = scale && !onlyStatus ? evaluateJsonPath(obj, scale.specReplicasPath) : undefined;
    if (scale && typeof replicas === 'number' && (replicas < 0 || replicas > INT32_MAX)) {
      const rule = replicas < 0 ? 'should be a non-negative integer' : `should be less than or equal to ${INT32_MAX}`;
      causes = [...causes, { reason: 'FieldValueInvalid', field: scale.specReplicasPath, message: `Invalid value: ${replicas}: ${rule}` }];
    }
    if (onlyStatus) {
      // kube-apiserver validates a status write's status against the status schema alone, so its
      // causes name fields from within the status (`lostRooms`, not `status.lostRooms`); the CEL
      // rules it could not check then still say so, for the object (`<nil>`).
      const underStatus = (c: StatusCause) => c.field.startsWith('status.');
      const statusCauses = causes.filter((c) => c.field === 'status' || underStatus(c));
      causes = statusCauses.length === 0 ? [] : [
        ...statusCauses.map((c) => (underStatus(c) ? { ...c, field: c.field.slice('status.'.length) } : c)),
        ...causes.filter((c) => c.field === '<nil>'),
      ];
    }
    if (causes.length > 0) throw invalid(scope.rt.kind, scope.rt.group, obj.metadata.name ?? '', causes);
    return warnings;
  }

  private validate(scope: Scope, obj: KubeObject, old?: KubeObject): void {
    const causes: StatusCause[] = [
      ...validateObjectMeta(obj, scope.rt.nameRule, scope.rt.namespaced),
      ...validateKind(scope.rt, obj),
      ...(old ? validateKindUpdate(scope.rt, obj, old) : []),
    ];
    if (causes.length > 0) throw invalid(scope.rt.kind, scope.rt.group, obj.metadata.name ?? '', causes);
  }

  private checkNamespace(scope: Scope, name: string): void {
    if (!scope.rt.namespaced) return;
    const ns = this.store.get(resourceKey('', 'namespaces'), '', scope.namespace);
    if (!ns) throw notFound({ group: '', plural: 'namespaces' }, scope.namespace);
    if (ns.obj.metadata.deletionTimestamp) {
      throw forbidden(scope.rt, name, `unable to create new content in namespace ${scope.namespace} because it is being terminated`);
    }
  }

  /**
   * The Priority admission plugin at a pod's creation: a `priorityClassName` must name an existing
   * PriorityClass, whose value and preemption policy the pod takes (a pod may not set another
   * value). A pod without one keeps priority 0 (the sandbox has no global-default class).
   */
  private admitPodPriority(scope: Scope, obj: KubeObject): void {
    const spec = isRecord(obj.spec) ? obj.spec : undefined;
    const className = spec?.priorityClassName;
    if (!spec || typeof className !== 'string' || className === '') return;
    const name = obj.metadata.name ?? '';
    const pc = this.store.get(resourceKey('scheduling.k8s.io', 'priorityclasses'), '', className)?.obj;
    if (!pc) throw forbidden(scope.rt, name, `no PriorityClass with name ${className} was found`);
    const value = typeof pc.value === 'number' ? pc.value : 0;
    if (typeof spec.priority === 'number' && spec.priority !== 0 && spec.priority !== value) {
      throw forbidden(scope.rt, name, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`);
    }
    spec.priority = value;
    spec.preemptionPolicy = typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : 'PreemptLowerPriority';
  }

  private generateName(scope: Scope, prefix: string): string {
    for (let attempt = 0; attempt < 20; attempt++) {
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += GENERATE_NAME_CHARS.charAt(Math.floor(Math.random() * GENERATE_NAME_CHARS.length));
      const name = `${prefix}${suffix}`;
      if (!this.store.get(this.key(scope.rt), scope.namespace, name)) return name;
    }
    throw new ApiError(500, 'InternalError', `could not generate a unique name from "${prefix}"`);
  }

  // ------------------------------------------------------------------ create

  create(scope: Scope, body: unknown, opts: WriteOptions = {}): WriteResult {
    if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
    const obj = body as KubeObject;
    const meta = isRecord(obj.metadata) ? obj.metadata : {};
    obj.metadata = meta;
    const rt = scope.rt;
    if (rt.namespaced) {
      if (meta.namespace && meta.namespace !== scope.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = scope.namespace;
    } else delete meta.namespace;
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName !== '') {
      meta.name = this.generateName(scope, meta.generateName);
    }
    obj.apiVersion = apiVersionOf(rt.group, scope.version);
    obj.kind = rt.kind;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== '0') {
      // what etcd3 storage answers on the real server
      throw new ApiError(500, 'InternalError', 'Internal error occurred: resourceVersion should not be set on objects to be created');
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    delete meta.selfLink;
    if (rt.generation) meta.generation = 1;
    else delete meta.generation;
    if (rt.custom && this.versionInfo(scope).status) delete obj.status;
    compactMetadata(meta);
    prepareForCreate(rt, obj, this.strategyContext());
    const warnings = this.applySchema(scope, obj, undefined, false, opts);
    this.validate(scope, obj);
    const name = obj.metadata.name ?? '';
    this.checkNamespace(scope, name);
    if (rt.group === '' && rt.plural === 'pods') this.admitPodPriority(scope, obj);
    if (this.store.get(this.key(rt), scope.namespace, name)) throw alreadyExists(rt, name);
    if (opts.dryRun) {
      return { object: obj, warnings };
    }
    const stored = this.store.commit(this.key(rt), 'ADDED', obj);
    return { object: stored.obj, warnings };
  }

  // ------------------------------------------------------------------ update

  /** PUT of the main resource or of `status`. */
  update(scope: Scope, name: string, body: unknown, opts: WriteOptions = {}, subresource?: 'status'): WriteResult {
    if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
    const candidate = body as KubeObject;
    if (!isRecord(candidate.metadata)) candidate.metadata = {};
    const bodyName = candidate.metadata.name;
    if (bodyName && bodyName !== name) {
      throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
    }
    const old = this.getStored(scope, name);
    checkUpdateResourceVersion(scope.rt, name, candidate.metadata.resourceVersion, old.obj.metadata.resourceVersion);
    return this.updateFrom(scope, old, candidate, opts, subresource);
  }

  private updateFrom(scope: Scope, old: StoredObject, candidate: KubeObject, opts: WriteOptions, subresource?: 'status'): WriteResult {
    const rt = scope.rt;
    const versionInfo = this.versionInfo(scope);
    const oldObj = old.obj;
    let obj: KubeObject;
    if (subresource === 'status') {
      obj = deepCopy(oldObj);
      if (candidate.status === undefined) delete obj.status;
      else obj.status = candidate.status;
    } else {
      obj = candidate;
      if (versionInfo.status) {
        if (oldObj.status === undefined) delete obj.status;
        else obj.status = deepCopy(oldObj.status);
      }
    }
    const meta = obj.metadata;
    meta.name = oldObj.metadata.name;
    if (rt.namespaced) meta.namespace = oldObj.metadata.namespace;
    else delete meta.namespace;
    meta.uid = oldObj.metadata.uid;
    meta.creationTimestamp = oldObj.metadata.creationTimestamp;
    meta.resourceVersion = oldObj.metadata.resourceVersion;
    if (oldObj.metadata.deletionTimestamp) {
      // No new finalizer on an object being deleted (kube-apiserver checks it in the generic and,
      // for custom resources, again in the custom-resource strategy: two causes).
      const added = (meta.finalizers ?? []).filter((f) => !(oldObj.metadata.finalizers ?? []).includes(f));
      if (added.length > 0) {
        const cause = { reason: 'FieldValueForbidden', field: 'metadata.finalizers', message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}` };
        throw invalid(rt.kind, rt.group, oldObj.metadata.name ?? '', rt.custom ? [cause, cause] : [cause]);
      }
      meta.deletionTimestamp = oldObj.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = oldObj.metadata.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    delete meta.managedFields;
    delete meta.selfLink;
    compactMetadata(meta);
    if (oldObj.metadata.generation !== undefined) meta.generation = oldObj.metadata.generation;
    else delete meta.generation;
    obj.apiVersion = oldObj.apiVersion ?? apiVersionOf(rt.group, scope.version);
    obj.kind = rt.kind;
    if (subresource !== 'status') prepareForUpdate(rt, obj, oldObj, this.strategyContext());
    const warnings = this.applySchema(scope, obj, deepCopy(oldObj), subresource === 'status', opts);
    this.validate(scope, obj, oldObj);
    if (rt.generation && subresource !== 'status' && this.specChanged(versionInfo, obj, oldObj)) {
      meta.generation = (oldObj.metadata.generation ?? 0) + 1;
    }
    if (jsonEqual(obj, oldObj)) {
      return { object: oldObj, warnings };
    }
    if (opts.dryRun) {
      return { object: obj, warnings };
    }
    if (!isNamespace(rt) && meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && (meta.deletionGracePeriodSeconds ?? 0) === 0) {
      const removed = this.store.commit(this.key(rt), 'DELETED', obj);
      return { object: removed.obj, warnings };
    }
    const stored = this.store.commit(this.key(rt), 'MODIFIED', obj);
    return { object: stored.obj, warnings };
  }

  /** Anything outside metadata (and status, when it is a subresource) changed. */
  private specChanged(versionInfo: ResourceVersion, obj: KubeObject, old: KubeObject): boolean {
    const strip = (o: KubeObject): Json => {
      const rest: Json = { ...o };
      delete rest.metadata;
      delete rest.apiVersion;
      delete rest.kind;
      if (versionInfo.status) delete rest.status;
      return rest;
    };
    return !jsonEqual(strip(obj), strip(old));
  }

  // ------------------------------------------------------------------ patch

  /** Applies a patch; with `view`, the patch applies to the view's shape of the stored object. */
  patch(scope: Scope, name: string, type: PatchType, rawBody: string, opts: WriteOptions = {}, subresource?: 'status', view?: ResourceView): WriteResult {
    if (type === 'strategic' && scope.rt.custom) {
      throw unsupportedMediaType('application/strategic-merge-patch+json', ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    }
    let patchBody: unknown;
    try {
      patchBody = type === 'apply' ? parseYaml(rawBody) : JSON.parse(rawBody);
    } catch (err) {
      throw badRequest(`error decoding patch: ${err instanceof Error ? err.message : String(err)}`);
    }
    refuseTooDeep(patchBody, 'the patch');
    const existing = this.store.get(this.key(scope.rt), scope.namespace, name);
    if (!existing) {
      if (type === 'apply' && subresource === undefined) {
        if (!isRecord(patchBody)) throw badRequest('apply patch must be an object');
        const meta = isRecord(patchBody.metadata) ? patchBody.metadata : (patchBody.metadata = {});
        meta.name ??= name;
        delete meta.resourceVersion;
        return { ...this.create(scope, view ? view.toStorage(patchBody) : patchBody, opts), created: true };
      }
      throw notFound(scope.rt, name);
    }
    const current = view ? deepCopy(view.fromStorage(existing.obj)) : deepCopy(existing.obj);
    let patched: unknown;
    switch (type) {
      case 'merge':
        patched = applyMergePatch(current, patchBody);
        break;
      case 'json':
        patched = applyJsonPatch(current, patchBody);
        break;
      case 'strategic':
        patched = applyStrategicMergePatch(current, patchBody);
        break;
      case 'apply':
        patched = scope.rt.custom ? applyMergePatch(current, patchBody) : applyStrategicMergePatch(current, patchBody);
        break;
    }
    if (!isRecord(patched)) throw badRequest('the patch did not produce an object');
    refuseTooDeep(patched, 'the object the patch makes');
    const candidate = (view ? view.toStorage(patched) : patched) as KubeObject;
    if (!isRecord(candidate.metadata)) candidate.metadata = {};
    checkUpdateResourceVersion(scope.rt, name, candidate.metadata.resourceVersion, existing.obj.metadata.resourceVersion);
    if (candidate.metadata.name !== undefined && candidate.metadata.name !== name) {
      throw badRequest(`the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`);
    }
    return this.updateFrom(scope, existing, candidate, opts, subresource);
  }

  // ------------------------------------------------------------------ delete

  delete(scope: Scope, name: string, options: DeleteOptions = {}): KubeObject {
    const rt = scope.rt;
    const old = this.getStored(scope, name);
    const pre = options.preconditions ?? {};
    if (pre.uid && pre.uid !== old.obj.metadata.uid) {
      throw conflict(rt, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.obj.metadata.uid ?? ''}`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== old.obj.metadata.resourceVersion) {
      throw conflict(rt, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.obj.metadata.resourceVersion ?? ''}`);
    }
    if (options.dryRun) {
      return old.obj;
    }
    const obj = deepCopy(old.obj);
    const meta = obj.metadata;
    const now = this.now();
    if (isNamespace(rt)) {
      if (meta.deletionTimestamp) {
        return old.obj;
      }
      meta.deletionTimestamp = rfc3339(now);
      meta.deletionGracePeriodSeconds = 0;
      obj.status = { ...(isRecord(obj.status) ? obj.status : {}), phase: 'Terminating' };
      return this.store.commit(this.key(rt), 'MODIFIED', obj).obj;
    }
    const policy = options.propagationPolicy ?? (options.orphanDependents === true ? 'Orphan' : 'Background');
    const finalizers = [...(meta.finalizers ?? [])];
    if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
    let grace = 0;
    if (isPod(rt)) {
      const spec = isRecord(obj.spec) ? obj.spec : {};
      const phase = isRecord(obj.status) ? obj.status.phase : undefined;
      grace = options.gracePeriodSeconds ?? (typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30);
      if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') grace = 0;
      if (grace < 0) grace = 0;
    }
    if (grace > 0) {
      if (meta.deletionTimestamp && (meta.deletionGracePeriodSeconds ?? 0) <= grace && jsonEqual(finalizers, meta.finalizers ?? [])) {
        return old.obj;
      }
      meta.deletionTimestamp = rfc3339(now + grace * 1000);
      meta.deletionGracePeriodSeconds = grace;
      if (finalizers.length > 0) meta.finalizers = finalizers;
      return this.store.commit(this.key(rt), 'MODIFIED', obj).obj;
    }
    if (finalizers.length > 0) {
      const alreadyDeleting = meta.deletionTimestamp !== undefined && meta.deletionGracePeriodSeconds === 0;
      if (alreadyDeleting && jsonEqual(finalizers, meta.finalizers ?? [])) {
        return old.obj;
      }
      if (!meta.deletionTimestamp || (meta.deletionGracePeriodSeconds ?? 0) > 0) meta.deletionTimestamp = rfc3339(now);
      meta.deletionGracePeriodSeconds = 0;
      meta.finalizers = finalizers;
      return this.store.commit(this.key(rt), 'MODIFIED', obj).obj;
    }
    if (this.logger.isDebugEnabled()) this.logger.debug('object deleted', { resource: this.key(rt), namespace: scope.namespace, name });
    return this.store.commit(this.key(rt), 'DELETED', obj).obj;
  }

  deleteCollection(scope: Scope, listOptions: ListOptions, options: DeleteOptions = {}): KubeObject[] {
    const { items } = this.list(scope, { labelSelector: listOptions.labelSelector, fieldSelector: listOptions.fieldSelector });
    const out: KubeObject[] = [];
    for (const item of items) {
      try {
        out.push(this.delete({ ...scope, namespace: item.namespace }, item.name, options));
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return out;
  }

  /** Removes an object from storage at once (garbage collector, namespace controller, CRD cleanup). */
  removeNow(rt: ResourceType, stored: StoredObject): void {
    const current = this.store.get(this.key(rt), stored.namespace, stored.name);
    if (!current) return;
    this.store.commit(this.key(rt), 'DELETED', deepCopy(current.obj));
  }

  /** Internal write (garbage collector): replaces the object's metadata fields given, without checks. */
  updateMetadata(rt: ResourceType, stored: StoredObject, change: (meta: KubeObject['metadata']) => void): void {
    const current = this.store.get(this.key(rt), stored.namespace, stored.name);
    if (!current) return;
    const obj = deepCopy(current.obj);
    change(obj.metadata);
    if (jsonEqual(obj, current.obj)) return;
    if (!isNamespace(rt) && obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length === 0 && (obj.metadata.deletionGracePeriodSeconds ?? 0) === 0) {
      this.store.commit(this.key(rt), 'DELETED', obj);
      return;
    }
    this.store.commit(this.key(rt), 'MODIFIED', obj);
  }

  // ------------------------------------------------------------------ scale

  private scaleSpec(scope: Scope): NonNullable<ResourceVersion['scale']> {
    const scale = this.versionInfo(scope).scale;
    if (!scale) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    return scale;
  }

  toScale(scope: Scope, obj: KubeObject): Json {
    const spec = this.scaleSpec(scope);
    const specReplicas = evaluateJsonPath(obj, spec.specReplicasPath);
    const statusReplicas = evaluateJsonPath(obj, spec.statusReplicasPath);
    let selector = spec.labelSelectorPath ? evaluateJsonPath(obj, spec.labelSelectorPath) : undefined;
    if (isRecord(selector)) selector = labelSelectorToString(selector);
    const meta = obj.metadata;
    const status: Json = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
    if (typeof selector === 'string' && selector !== '') status.selector = selector;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: meta.name,
        ...(meta.namespace ? { namespace: meta.namespace } : {}),
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
        creationTimestamp: meta.creationTimestamp,
      },
      spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
      status,
    };
  }

  getScale(scope: Scope, name: string): Json {
    return this.toScale(scope, this.getStored(scope, name).obj);
  }

  updateScale(scope: Scope, name: string, body: unknown, opts: WriteOptions = {}): Json {
    if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
    const existing = this.getStored(scope, name);
    const meta = isRecord(body.metadata) ? body.metadata : {};
    if (meta.resourceVersion && meta.resourceVersion !== existing.obj.metadata.resourceVersion) throw conflict(scope.rt, name);
    const replicas = isRecord(body.spec) ? body.spec.replicas : undefined;
    const decodeError = scaleReplicasDecodeError(replicas);
    if (decodeError) throw badRequest(decodeError);
    // A negative count is the custom resource's to refuse (its schema and its scale rule), as on
    // kube-apiserver, which copies the Scale's replicas into the object before validating it.
    const obj = deepCopy(existing.obj);
    setPath(obj, this.scaleSpec(scope).specReplicasPath, replicas ?? 0);
    const result = this.updateFrom(scope, existing, obj, opts);
    return this.toScale(scope, result.object);
  }

  patchScale(scope: Scope, name: string, type: PatchType, rawBody: string, opts: WriteOptions = {}): Json {
    const current = this.getScale(scope, name);
    let body: unknown;
    try {
      body = type === 'apply' ? parseYaml(rawBody) : JSON.parse(rawBody);
    } catch (err) {
      throw badRequest(`error decoding patch: ${err instanceof Error ? err.message : String(err)}`);
    }
    const patched = type === 'json' ? applyJsonPatch(current, body) : type === 'strategic' ? applyStrategicMergePatch(current, body) : applyMergePatch(current, body);
    // kube-apiserver decodes the patched Scale into its Go type: a count an int32 cannot hold is a
    // 422 that names the patch, not a field.
    const decodeError = scaleReplicasDecodeError(isRecord(patched) && isRecord(patched.spec) ? patched.spec.replicas : undefined);
    if (decodeError) throw invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${decodeError}` }]);
    return this.updateScale(scope, name, patched, opts);
  }

  // ------------------------------------------------------------------ pods/binding and pods/eviction

  bind(scope: Scope, podName: string, body: unknown, opts: WriteOptions = {}): void {
    const target = isRecord(body) && isRecord(body.target) ? body.target : {};
    const nodeName = typeof target.name === 'string' ? target.name : '';
    if (nodeName === '') throw invalid('Binding', '', podName, [{ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' }]);
    const existing = this.getStored(scope, podName);
    const meta = isRecord(body) && isRecord(body.metadata) ? body.metadata : {};
    if (meta.resourceVersion && meta.resourceVersion !== existing.obj.metadata.resourceVersion) throw conflict(scope.rt, podName);
    if (meta.uid && meta.uid !== existing.obj.metadata.uid) {
      throw conflict(scope.rt, podName, `Precondition failed: UID in precondition: ${fieldText(meta.uid)}, UID in object meta: ${existing.obj.metadata.uid ?? ''}`);
    }
    const obj = deepCopy(existing.obj);
    if (obj.metadata.deletionTimestamp) throw conflict(scope.rt, podName, 'pod is being deleted, cannot be assigned to a host');
    const spec: Json = isRecord(obj.spec) ? obj.spec : (obj.spec = {});
    if (spec.nodeName) throw conflict(scope.rt, podName, `pod ${podName} is already assigned to node "${fieldText(spec.nodeName)}"`);
    spec.nodeName = nodeName;
    const status: Json = isRecord(obj.status) ? obj.status : (obj.status = {});
    const conditions = Array.isArray(status.conditions) ? status.conditions.filter((c) => !(isRecord(c) && c.type === 'PodScheduled')) : [];
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(this.now()) });
    status.conditions = conditions;
    if (opts.dryRun) return;
    this.store.commit(this.key(scope.rt), 'MODIFIED', obj);
  }
}

const INT32_MAX = 2 ** 31 - 1;

/** Why a Scale's spec.replicas cannot be decoded into autoscaling/v1's int32 (absent reads as 0), or undefined. */
function scaleReplicasDecodeError(replicas: unknown): string | undefined {
  if (replicas === undefined || replicas === null) return undefined;
  if (typeof replicas === 'number' && Number.isInteger(replicas) && replicas >= -(INT32_MAX + 1) && replicas <= INT32_MAX) return undefined;
  const shown = typeof replicas === 'number' ? `number ${replicas}` : typeof replicas;
  return `json: cannot unmarshal ${shown} into Go struct field ScaleSpec.spec.replicas of type int32`;
}
