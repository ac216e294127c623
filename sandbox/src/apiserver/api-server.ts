/**
 * The HTTP front of the sandbox API server (node:http): routes Kubernetes REST paths to
 * discovery, resource operations and watches, negotiates JSON/Table/metadata output, applies
 * injected faults, and maps every error to a `Status` body in one place.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../../../common/src/logger';
import { ApiError, badRequest, methodNotAllowed, statusBody, tooLargeResourceVersion, unsupportedMediaType } from './api-error';
import {
  boolParam, checkReadResourceVersion, integerParam, listReadsStorage, outputFormat, parseJsonBody, parseResourcePath, patchTypeOf, refuseTooDeep, splitPath,
  validateListOptions, verbOf, writeOptions, type OutputFormat, type ResourcePath,
} from './request-parsing';
import type { Discovery } from './discovery';
import { SERVER_VERSION } from './discovery';
import type { Faults } from './fault-injector';
import { parseSupportedFieldSelector } from './field-selector';
import type { KubeObject } from './kube-object';
import { parseLabelSelector } from './label-selector';
import { OpenApiDocuments } from './openapi-documents';
import { decodeProtobufBody } from './protobuf-body';
import type { ObjectStore, StoredObject } from './object-store';
import type { DeleteOptions, ListOptions, ResourceOperations, Scope } from './resource-operations';
import type { ResourceRegistry } from './resource-registry';
import { apiVersionOf, resourceKey, type ResourceType } from './resource-type';
import { toTable, type IncludeObject } from './table-convertor';
import { objectJson, WatchStream } from './watch-stream';
import { isRecord } from '../../../common/src/json/is-record';
import type { Clock } from '../../../common/src/runtime/clock';

type Json = Record<string, unknown>;

export interface ApiServerDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  operations: ResourceOperations;
  discovery: Discovery;
  faults: Faults;
  logger: Logger;
  bookmarkIntervalMs: number;
  now: Clock;
  /** Waits out injected latency; ends early when `signal` aborts (the request's connection closed). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const JSON_TYPE = 'application/json';
const TABLE_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const AGGREGATED_V2 = 'g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
/** Injected faults a watch carries from its start. */
interface WatchFaults {
  cutAfterEvents?: number;
  delayMs?: number;
  /** The client's bearer token, so tests can count one client's open watches. */
  token?: string;
}

function bearerToken(header: string | undefined): string | undefined {
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** How long kube-apiserver's watch cache waits for a resourceVersion it has not reached (blockTimeout). */
const CACHE_FRESHNESS_WAIT_MS = 3_000;

/** The list options of a request; `fieldSelector` as the storage resource reads it. */
function listOptionsOf(q: URLSearchParams, fieldSelector: string | undefined): ListOptions {
  return {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector,
    limit: integerParam(q.get('limit')),
    continueToken: q.get('continue') ?? undefined,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
  };
}

export class ApiServer {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  /** Open watches, with the bearer token of the client that opened each. */
  private readonly watches = new Map<WatchStream, string | undefined>();
  private address = '127.0.0.1:0';

  private readonly openapi: OpenApiDocuments;

  constructor(private readonly deps: ApiServerDeps) {
    this.openapi = new OpenApiDocuments(deps.store);
    this.server = http.createServer({ keepAlive: true }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => this.sendError(res, err));
    });
    // Short idle keep-alive: client-node opens a new agent per request, so idle sockets pile up otherwise.
    this.server.keepAliveTimeout = 5_000;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const bound = (this.server.address() as AddressInfo).port;
    this.address = `${host}:${bound}`;
    return bound;
  }

  /** Ends every open watch (fault injection); returns how many there were. */
  cutWatches(): number {
    const open = [...this.watches.keys()];
    for (const w of open) w.close();
    return open.length;
  }

  /** Watches open now, optionally only those of one bearer token. */
  openWatches(token?: string): number {
    let n = 0;
    for (const t of this.watches.values()) if (token === undefined || t === token) n++;
    return n;
  }

  async close(): Promise<void> {
    for (const w of [...this.watches.keys()]) w.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  // ------------------------------------------------------------------ responses

  private send(res: http.ServerResponse, code: number, body: string, contentType = JSON_TYPE, headers: http.OutgoingHttpHeaders = {}): void {
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private', ...headers });
    res.end(body);
  }

  private sendError(res: http.ServerResponse, err: unknown): void {
    if (err instanceof ApiError) {
      // kube-apiserver sends a Status's retryAfterSeconds as a Retry-After header too.
      const retry = err.details?.retryAfterSeconds;
      this.send(res, err.code, JSON.stringify(err.toStatus()), JSON_TYPE, retry ? { 'Retry-After': String(retry) } : {});
      return;
    }
    this.deps.logger.error('request failed', { error: err instanceof Error ? err.stack : String(err) });
    this.send(res, 500, JSON.stringify(statusBody(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`)));
  }

  private warningHeaders(warnings: string[]): http.OutgoingHttpHeaders {
    if (warnings.length === 0) return {};
    return { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) };
  }

  private sendObject(res: http.ServerResponse, code: number, scope: Scope, obj: KubeObject, format: OutputFormat, q: URLSearchParams, warnings: string[] = []): void {
    const apiVersion = apiVersionOf(scope.rt.group, scope.version);
    const headers = this.warningHeaders(warnings);
    if (format === 'table') {
      const table = toTable(scope.rt, scope.version, [obj], { resourceVersion: obj.metadata.resourceVersion ?? '' }, { include: this.includeObject(q), now: new Date(this.deps.now()) });
      this.send(res, code, JSON.stringify(table), TABLE_TYPE, headers);
      return;
    }
    if (format === 'metadata') {
      this.send(res, code, JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata }), JSON_TYPE, headers);
      return;
    }
    const body = obj.apiVersion === apiVersion || obj.kind === 'Status' ? JSON.stringify(obj) : JSON.stringify({ ...obj, apiVersion });
    this.send(res, code, body, JSON_TYPE, headers);
  }

  private includeObject(q: URLSearchParams): IncludeObject {
    const v = q.get('includeObject');
    return v === 'None' || v === 'Object' ? v : 'Metadata';
  }

  // ------------------------------------------------------------------ routing

  private async readRawBody(req: http.IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > MAX_BODY_BYTES) throw new ApiError(413, 'RequestEntityTooLarge', 'the request body is too large');
      chunks.push(buf);
    }
    return Buffer.concat(chunks);
  }

  private async readBody(req: http.IncomingMessage): Promise<string> {
    const contentType = req.headers['content-type'] ?? '';
    if (contentType.startsWith('application/vnd.kubernetes.protobuf') || contentType.startsWith('application/cbor')) {
      req.resume();
      throw unsupportedMediaType(contentType, ['application/json', 'application/yaml']);
    }
    return (await this.readRawBody(req)).toString('utf8');
  }

  private async readObjectBody(req: http.IncomingMessage): Promise<unknown> {
    const body = await this.decodeObjectBody(req);
    refuseTooDeep(body, 'the object');
    return body;
  }

  private async decodeObjectBody(req: http.IncomingMessage): Promise<unknown> {
    const contentType = req.headers['content-type'] ?? '';
    if (contentType.startsWith('application/vnd.kubernetes.protobuf')) return decodeProtobufBody(await this.readRawBody(req));
    const raw = await this.readBody(req);
    if (contentType.startsWith('application/yaml') && raw.trim() !== '') {
      try {
        return parseYaml(raw) as unknown;
      } catch (err) {
        throw badRequest(`error decoding YAML: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return parseJsonBody(raw);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (path === '/healthz' || path === '/livez' || path === '/readyz' || /^\/(healthz|livez|readyz)\//.test(path)) {
      this.send(res, 200, 'ok', 'text/plain; charset=utf-8');
      return;
    }
    if (path === '/version' || path === '/version/') {
      this.send(res, 200, JSON.stringify(SERVER_VERSION));
      return;
    }
    if (path === '/api' || path === '/api/' || path === '/apis' || path === '/apis/') {
      const core = path.startsWith('/api/') || path === '/api';
      if ((req.headers.accept ?? '').includes(AGGREGATED_V2)) {
        this.send(res, 200, JSON.stringify(this.deps.discovery.aggregated(core)), `application/json;${AGGREGATED_V2}`);
        return;
      }
      this.send(res, 200, JSON.stringify(core ? this.deps.discovery.apiVersions(this.address) : this.deps.discovery.apiGroupList()));
      return;
    }
    if (path === '/openapi/v2') {
      // An empty OpenAPI v2 document: clients find no schemas and skip client-side validation;
      // the server validates (fieldValidation) instead.
      this.send(res, 200, '', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
      return;
    }
    if (path === '/openapi/v3' || path === '/openapi/v3/') {
      this.send(res, 200, JSON.stringify(this.openapi.root()));
      return;
    }
    const openapiGv = /^\/openapi\/v3\/apis\/([^/]+)\/([^/]+)$/.exec(path);
    if (openapiGv) {
      const [, group = '', version = ''] = openapiGv;
      const doc = this.openapi.groupVersion(group, version);
      if (doc) {
        this.send(res, 200, JSON.stringify(doc));
        return;
      }
    }
    const segments = splitPath(path);
    const [first, second] = segments;
    if (first === 'apis' && second !== undefined && segments.length === 2) {
      const group = this.deps.discovery.apiGroup(second);
      if (group) {
        this.send(res, 200, JSON.stringify(group));
        return;
      }
    }
    const parsed = parseResourcePath(segments);
    if (parsed === 'discovery') {
      const [, a, b] = segments;
      const list = segments[0] === 'api' ? this.deps.discovery.apiResourceList('', a ?? '') : this.deps.discovery.apiResourceList(a ?? '', b ?? '');
      if (list) {
        this.send(res, 200, JSON.stringify(list));
        return;
      }
    }
    if (!parsed || parsed === 'discovery') {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    await this.handleResource(req, res, parsed, url.searchParams, method);
  }

  private async handleResource(req: http.IncomingMessage, res: http.ServerResponse, p: ResourcePath, q: URLSearchParams, method: string): Promise<void> {
    const rt = this.deps.registry.find(p.group, p.version, p.plural);
    if (!rt) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (!rt.namespaced && p.namespace) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const scope: Scope = { rt, version: p.version, namespace: p.namespace };
    // `?watch=true` watches a collection; on an object's own path kube-apiserver reads it as a get
    // (only the `/watch/` path watches one object).
    const watch = p.watchPath || (!p.name && boolParam(q.get('watch')));
    const verb = verbOf(method, p, watch);
    const token = bearerToken(req.headers.authorization);
    const fault = this.deps.faults.decide(verb, rt.plural, token);
    if (fault.latencyMs > 0) {
      // Held as a slow server holds it. A client that gives up, or the sandbox stopping (it closes
      // every connection), ends the wait, and the request is not served: no timer outlives it.
      const closed = new AbortController();
      res.once('close', () => closed.abort());
      await this.deps.sleep(fault.latencyMs, closed.signal);
      if (closed.signal.aborted) return;
    }
    if (fault.errorStatus === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault.errorStatus === 'expired' && watch) {
      this.send(res, 200, `${JSON.stringify({ type: 'ERROR', object: statusBody(410, 'Expired', 'too old resource version: injected fault') })}\n`);
      return;
    }
    if (fault.errorStatus === 401) {
      this.send(res, 401, JSON.stringify(statusBody(401, 'Unauthorized', 'Unauthorized')));
      return;
    }
    if (fault.errorStatus === 403) {
      this.send(res, 403, JSON.stringify(statusBody(403, 'Forbidden', `${rt.plural}${rt.group ? `.${rt.group}` : ''} is forbidden: cannot ${verb} resource "${rt.plural}" in API group "${rt.group}": injected fault`)));
      return;
    }
    if (fault.errorStatus === 410 || fault.errorStatus === 'expired') {
      this.send(res, 410, JSON.stringify(statusBody(410, 'Expired', 'too old resource version: injected fault')));
      return;
    }
    if (fault.errorStatus === 429) {
      const body = statusBody(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
      this.send(res, 429, JSON.stringify(body), JSON_TYPE, { 'Retry-After': '1' });
      return;
    }
    if (fault.errorStatus === 409) {
      this.send(res, 409, JSON.stringify(statusBody(409, 'Conflict', `Operation cannot be fulfilled on ${rt.plural}: injected fault`)));
      return;
    }
    if (fault.errorStatus === 500) {
      this.send(res, 500, JSON.stringify(statusBody(500, 'InternalError', 'Internal error occurred: injected fault')));
      return;
    }
    if (WRITE_VERBS.has(verb)) this.deps.store.countWrite(rt.view ? resourceKey(rt.view.storage.group, rt.view.storage.plural) : resourceKey(rt.group, rt.plural));
    if (rt.virtual) {
      if (method !== 'POST' || p.name) throw methodNotAllowed();
      const body = (req.headers['content-type'] ?? '').startsWith('application/json') ? await this.readObjectBody(req) : (await this.readRawBody(req), {});
      this.send(res, 201, JSON.stringify(this.review(rt.kind, body)));
      return;
    }
    if (method === 'GET') {
      if (!p.name || watch) validateListOptions(q, watch);
      checkReadResourceVersion(q, !p.name && !watch);
      // kube-apiserver serves a get with a resourceVersion, and a list that it does not send on to
      // etcd, from its watch cache, which waits for a resourceVersion it has not reached.
      if (!watch && (p.name ? true : !listReadsStorage(q))) await this.waitForResourceVersion(q.get('resourceVersion'));
    }
    const format = outputFormat(req.headers.accept);
    if (rt.view) {
      await this.handleView(req, res, p, q, method, rt, rt.view, watch, format, { cutAfterEvents: fault.cutWatchAfterEvents, delayMs: fault.watchDelayMs, token });
      return;
    }
    if (rt.namespaced && !p.namespace && p.name) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const ops = this.deps.operations;

    if (watch && method === 'GET' && !p.subresource) {
      let fieldSelector = q.get('fieldSelector') ?? '';
      if (p.name) fieldSelector = fieldSelector ? `${fieldSelector},metadata.name=${p.name}` : `metadata.name=${p.name}`;
      this.startWatch(res, scope, q, fieldSelector, format, { cutAfterEvents: fault.cutWatchAfterEvents, delayMs: fault.watchDelayMs, token });
      return;
    }

    if (!p.name) {
      switch (method) {
        case 'GET':
          this.sendList(res, scope, q, format);
          return;
        case 'POST': {
          const body = await this.readObjectBody(req);
          const result = ops.create(scope, body, writeOptions(q));
          this.sendObject(res, 201, scope, result.object, format, q, result.warnings);
          return;
        }
        case 'DELETE': {
          const options = this.deleteOptions(q, await this.readObjectBody(req));
          const deleted = ops.deleteCollection(scope, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined }, options);
          const apiVersion = apiVersionOf(rt.group, p.version);
          this.send(res, 200, JSON.stringify({ kind: rt.listKind, apiVersion, metadata: { resourceVersion: String(this.deps.store.resourceVersion) }, items: deleted }));
          return;
        }
        default:
          throw methodNotAllowed();
      }
    }

    const name = p.name;
    const sub = p.subresource;
    if (sub === undefined || sub === 'status') {
      const subresource = sub === 'status' ? 'status' : undefined;
      if (subresource && !(rt.versions.find((v) => v.name === p.version)?.status)) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      switch (method) {
        case 'GET': {
          const stored = ops.getStored(scope, name);
          this.sendStored(res, scope, stored, format, q);
          return;
        }
        case 'PUT': {
          const body = await this.readObjectBody(req);
          const result = ops.update(scope, name, body, writeOptions(q), subresource);
          this.sendObject(res, result.created ? 201 : 200, scope, result.object, format, q, result.warnings);
          return;
        }
        case 'PATCH': {
          const type = patchTypeOf(req.headers['content-type']);
          const raw = await this.readBody(req);
          const result = ops.patch(scope, name, type, raw, writeOptions(q), subresource);
          this.sendObject(res, result.created ? 201 : 200, scope, result.object, format, q, result.warnings);
          return;
        }
        case 'DELETE': {
          if (subresource) throw methodNotAllowed();
          const options = this.deleteOptions(q, await this.readObjectBody(req));
          const obj = ops.delete(scope, name, options);
          // kube-apiserver answers the deletion of a custom resource that is gone at once with a
          // Status, not the object (built-in kinds answer the object).
          if (scope.rt.custom && (obj.metadata.finalizers ?? []).length === 0 && !(obj.metadata.deletionGracePeriodSeconds ?? 0)) {
            this.send(res, 200, JSON.stringify({
              kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
              details: { name, group: scope.rt.group, kind: scope.rt.plural, uid: obj.metadata.uid },
            }));
            return;
          }
          this.sendObject(res, 200, scope, obj, format === 'table' ? 'json' : format, q);
          return;
        }
        default:
          throw methodNotAllowed();
      }
    }
    if (sub === 'scale' && rt.versions.find((v) => v.name === p.version)?.scale) {
      switch (method) {
        case 'GET':
          this.send(res, 200, JSON.stringify(ops.getScale(scope, name)));
          return;
        case 'PUT':
          this.send(res, 200, JSON.stringify(ops.updateScale(scope, name, await this.readObjectBody(req), writeOptions(q))));
          return;
        case 'PATCH': {
          const type = patchTypeOf(req.headers['content-type']);
          this.send(res, 200, JSON.stringify(ops.patchScale(scope, name, type, await this.readBody(req), writeOptions(q))));
          return;
        }
        default:
          throw methodNotAllowed();
      }
    }
    if (sub === 'binding' && rt.extraSubresources.includes('binding') && method === 'POST') {
      ops.bind(scope, name, await this.readObjectBody(req), writeOptions(q));
      this.send(res, 201, JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }));
      return;
    }
    if (sub === 'eviction' && rt.extraSubresources.includes('eviction') && method === 'POST') {
      const body = await this.readObjectBody(req);
      const deleteOptions = isRecord(body) ? body.deleteOptions : undefined;
      ops.delete(scope, name, this.deleteOptions(new URLSearchParams(), deleteOptions));
      this.send(res, 201, JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }));
      return;
    }
    if (sub === 'finalize' && rt.extraSubresources.includes('finalize') && method === 'PUT') {
      await this.readBody(req);
      this.sendStored(res, scope, ops.getStored(scope, name), format, q);
      return;
    }
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }

  /** A resource that is another shape of a stored resource (events.k8s.io/v1 Events). */
  private async handleView(
    req: http.IncomingMessage, res: http.ServerResponse, p: ResourcePath, q: URLSearchParams, method: string,
    rt: ResourceType, view: NonNullable<ResourceType['view']>, watch: boolean, format: OutputFormat, watchFaults: WatchFaults,
  ): Promise<void> {
    const storageRt = this.deps.registry.get(view.storage.group, view.storage.plural);
    if (!storageRt) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (rt.namespaced && !p.namespace && p.name) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const storageScope: Scope = { rt: storageRt, version: storageRt.versions[0]?.name ?? 'v1', namespace: p.namespace };
    const viewScope: Scope = { rt, version: p.version, namespace: p.namespace };
    const ops = this.deps.operations;
    const show = (o: KubeObject): KubeObject => view.fromStorage(o);
    const translate = (selector: string | null): string | undefined => selector
      ? selector.split(',').map((part) => {
        const m = /^([^=!]+)(.*)$/.exec(part.trim());
        const [, field = '', rest = ''] = m ?? [];
        return m ? `${view.fieldPath(field.trim())}${rest}` : part;
      }).join(',')
      : undefined;
    if (p.subresource) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (method === 'GET' && watch) {
      let fieldSelector = translate(q.get('fieldSelector')) ?? '';
      if (p.name) fieldSelector = fieldSelector ? `${fieldSelector},metadata.name=${p.name}` : `metadata.name=${p.name}`;
      this.startWatch(res, storageScope, q, fieldSelector, format, watchFaults, { apiVersion: apiVersionOf(rt.group, p.version), transform: show });
      return;
    }
    if (!p.name && method === 'GET') {
      const result = ops.list(storageScope, listOptionsOf(q, translate(q.get('fieldSelector'))));
      const meta: Json = { resourceVersion: result.resourceVersion };
      if (result.continueToken) meta.continue = result.continueToken;
      if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
      const items = result.items.map((s) => show(s.obj));
      if (format === 'table') {
        this.send(res, 200, JSON.stringify(toTable(rt, p.version, items, meta, { include: this.includeObject(q), now: new Date(this.deps.now()) })), TABLE_TYPE);
        return;
      }
      this.send(res, 200, JSON.stringify({ kind: rt.listKind, apiVersion: apiVersionOf(rt.group, p.version), metadata: meta, items }));
      return;
    }
    if (!p.name && method === 'POST') {
      const body = await this.readObjectBody(req);
      const result = ops.create(storageScope, isRecord(body) ? view.toStorage(body) : body, writeOptions(q));
      this.sendObject(res, 201, viewScope, show(result.object), format, q, result.warnings);
      return;
    }
    if (!p.name && method === 'DELETE') {
      const options = this.deleteOptions(q, await this.readObjectBody(req));
      const deleted = ops.deleteCollection(storageScope, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: translate(q.get('fieldSelector')) }, options);
      this.send(res, 200, JSON.stringify({ kind: rt.listKind, apiVersion: apiVersionOf(rt.group, p.version), metadata: { resourceVersion: String(this.deps.store.resourceVersion) }, items: deleted.map(show) }));
      return;
    }
    if (!p.name) throw methodNotAllowed();
    switch (method) {
      case 'GET':
        this.sendObject(res, 200, viewScope, show(ops.getStored(storageScope, p.name).obj), format, q);
        return;
      case 'PUT': {
        const body = await this.readObjectBody(req);
        const result = ops.update(storageScope, p.name, isRecord(body) ? view.toStorage(body) : body, writeOptions(q));
        this.sendObject(res, 200, viewScope, show(result.object), format, q, result.warnings);
        return;
      }
      case 'PATCH': {
        const type = patchTypeOf(req.headers['content-type']);
        const result = ops.patch(storageScope, p.name, type, await this.readBody(req), writeOptions(q), undefined, view);
        this.sendObject(res, result.created ? 201 : 200, viewScope, show(result.object), format, q, result.warnings);
        return;
      }
      case 'DELETE': {
        const options = this.deleteOptions(q, await this.readObjectBody(req));
        this.sendObject(res, 200, viewScope, show(ops.delete(storageScope, p.name, options)), 'json', q);
        return;
      }
      default:
        throw methodNotAllowed();
    }
  }

  /**
   * Waits, as kube-apiserver's watch cache does, up to 3 s for the store to reach the
   * resourceVersion a read names; then 504 Timeout `Too large resource version` (retry after 1 s).
   */
  private async waitForResourceVersion(rv: string | null): Promise<void> {
    if (!rv || rv === '0') return;
    const wanted = BigInt(rv);
    if (wanted <= BigInt(this.deps.store.resourceVersion)) return;
    if (!(await this.deps.store.reached(wanted, CACHE_FRESHNESS_WAIT_MS))) throw tooLargeResourceVersion(wanted, this.deps.store.resourceVersion, 1);
  }

  /** Access reviews: the sandbox has no authorization, so everything is allowed. */
  private review(kind: string, body: unknown): Json {
    const review: Json = isRecord(body) ? { ...body } : {};
    review.apiVersion = 'authorization.k8s.io/v1';
    review.kind = kind;
    review.metadata = isRecord(review.metadata) ? review.metadata : {};
    review.status = kind === 'SelfSubjectRulesReview'
      ? { resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false }
      : { allowed: true, reason: 'the sandbox API server allows every request' };
    return review;
  }

  private sendStored(res: http.ServerResponse, scope: Scope, stored: StoredObject, format: OutputFormat, q: URLSearchParams): void {
    if (format !== 'json') {
      this.sendObject(res, 200, scope, stored.obj, format, q);
      return;
    }
    this.send(res, 200, objectJson(stored, apiVersionOf(scope.rt.group, scope.version)));
  }

  private deleteOptions(q: URLSearchParams, body: unknown): DeleteOptions {
    const b = isRecord(body) ? body : {};
    const grace = integerParam(q.get('gracePeriodSeconds')) ?? (typeof b.gracePeriodSeconds === 'number' ? b.gracePeriodSeconds : undefined);
    const policy = q.get('propagationPolicy') ?? (typeof b.propagationPolicy === 'string' ? b.propagationPolicy : undefined);
    if (policy !== undefined && policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
      throw badRequest(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`);
    }
    const orphanParam = q.get('orphanDependents');
    const orphan = orphanParam !== null ? boolParam(orphanParam) : typeof b.orphanDependents === 'boolean' ? b.orphanDependents : undefined;
    const pre = isRecord(b.preconditions) ? b.preconditions : {};
    const dryRun = q.getAll('dryRun').length > 0 || (Array.isArray(b.dryRun) && b.dryRun.length > 0);
    return {
      gracePeriodSeconds: grace,
      propagationPolicy: policy,
      orphanDependents: orphan,
      preconditions: {
        uid: typeof pre.uid === 'string' ? pre.uid : undefined,
        resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
      },
      dryRun,
    };
  }

  private sendList(res: http.ServerResponse, scope: Scope, q: URLSearchParams, format: OutputFormat): void {
    const result = this.deps.operations.list(scope, listOptionsOf(q, q.get('fieldSelector') ?? undefined));
    const meta: Json = { resourceVersion: result.resourceVersion };
    if (result.continueToken) meta.continue = result.continueToken;
    if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
    const apiVersion = apiVersionOf(scope.rt.group, scope.version);
    if (format === 'table') {
      const table = toTable(scope.rt, scope.version, result.items.map((s) => s.obj), meta, { include: this.includeObject(q), now: new Date(this.deps.now()) });
      this.send(res, 200, JSON.stringify(table), TABLE_TYPE);
      return;
    }
    if (format === 'metadata') {
      const items = result.items.map((s) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: s.obj.metadata }));
      this.send(res, 200, JSON.stringify({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: meta, items }));
      return;
    }
    const items = result.items.map((s) => objectJson(s, apiVersion)).join(',');
    this.send(res, 200, `{"kind":${JSON.stringify(scope.rt.listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(meta)},"items":[${items}]}`);
  }

  private startWatch(
    res: http.ServerResponse, scope: Scope, q: URLSearchParams, fieldSelector: string, format: OutputFormat, watchFaults: WatchFaults,
    view?: { apiVersion: string; transform: (obj: KubeObject) => KubeObject },
  ): void {
    const labelSelector = q.get('labelSelector') ?? '';
    const timeoutSeconds = integerParam(q.get('timeoutSeconds'));
    const stream = new WatchStream(this.deps.store, res, {
      resource: resourceKey(scope.rt.group, scope.rt.plural),
      rt: scope.rt,
      version: scope.version,
      apiVersion: view?.apiVersion ?? apiVersionOf(scope.rt.group, scope.version),
      transform: view?.transform,
      namespace: scope.namespace,
      labels: parseLabelSelector(labelSelector),
      fields: parseSupportedFieldSelector(fieldSelector, this.deps.operations.fieldLabels(scope)),
      filtered: labelSelector !== '' || fieldSelector !== '',
      resourceVersion: q.get('resourceVersion') ?? undefined,
      bookmarks: boolParam(q.get('allowWatchBookmarks')),
      bookmarkIntervalMs: this.deps.bookmarkIntervalMs,
      // A negative timeout ends the watch at once, as on kube-apiserver; 0 or none, never.
      timeoutMs: timeoutSeconds !== undefined && timeoutSeconds !== 0 ? Math.max(0, timeoutSeconds * 1000) : undefined,
      cutAfterEvents: watchFaults.cutAfterEvents,
      delayMs: watchFaults.delayMs,
      table: format === 'table' ? { include: this.includeObject(q) } : undefined,
      now: this.deps.now,
    }, (w) => this.watches.delete(w));
    this.watches.set(stream, watchFaults.token);
    stream.start();
  }
}
