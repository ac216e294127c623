/**
 * A list+watch cache that does not die, built on client-node's `Watch`.
 *
 * client-node's own informer stops for good after a watch error other than 410 Gone or a client
 * timeout, and backs off longer after every clean reconnect (DESIGN.md, known pitfalls). This
 * one relists on 410, resumes from the last resourceVersion after a clean end at once, retries
 * errors with capped backoff, and tells callers whether the first list has synced. An optional
 * `transform` keeps only the fields a component reads (at 10,000 rooms a full Pod per room is
 * most of the operator's memory). Callbacks should only enqueue keys (STYLE.md principle 1).
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../logger';
import type { Counter, Gauge, Histogram, MetricsRegistry } from '../metrics';
import type { AccessAnswers } from './api-access';
import { apiErrorFields, describeApiError, responseStatus, socketErrorCode } from './clients';
import { whatToDo } from './diagnosis';
import { toMillis } from './timestamps';
import { RevisionWaiters } from '../runtime/revision-waiters';

export type EventType = 'add' | 'update' | 'delete';

/** One page of a LIST (client-node's parameter names). */
export interface ListPage { limit: number; _continue?: string }

/**
 * Objects per page of a relist: a fresh operator at 10,000 rooms never holds a whole LIST of
 * pods or rooms (its raw JSON and the objects parsed from it) at once, only a page before its
 * `transform` slims it (the slim objects of the pages wait for the last one: see `relist`).
 */
export const LIST_PAGE_SIZE = 500;

export interface InformerOptions<T extends k8s.KubernetesObject> {
  kc: k8s.KubeConfig;
  /** Watch path, e.g. `/apis/roomkeeper.io/v1/schedulers` or `/api/v1/pods`. */
  path: string;
  /**
   * Lists the objects; given `page`, one page of them (`limit`, and the `continue` token of the
   * page before). The informer lists page by page when the list honours it.
   */
  list: (page?: ListPage) => Promise<k8s.KubernetesListObject<T>>;
  labelSelector?: string;
  name: string;
  logger: Logger;
  /** Told each change the cache applied; on an update, `before` is the object the cache held until then. */
  onEvent?: (type: EventType, obj: T, before?: T) => void;
  /** Keeps what the cache needs of each object (default: the object as it came). */
  transform?: (obj: T) => T;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Counts relists and watch restarts by informer name. */
  metrics?: MetricsRegistry;
  /**
   * Named indexes (client-go's Indexers): the key each object is filed under in that index, the
   * keys (an object may be filed under several), or undefined for none. Kept with the cache on
   * every add, update and delete, so a reader asks for the objects under one key (`byIndex`,
   * `indexCount`) without walking the whole cache. A key `group\u0000rest` is also listed under
   * its group (`indexKeys`): a reader finds the keys of one group without walking the index.
   */
  indexers?: Record<string, Indexer<T>>;
  /** Told how the API server answered each list and watch (`KubeClients.access`: /readyz). */
  access?: AccessAnswers;
}

/** Where an object is filed in one index: one key, several, or none (undefined). */
export type Indexer<T> = (obj: T) => string | readonly string[] | undefined;

/** Calls `fn` with each key of an indexer's answer. */
function eachKey(keys: string | readonly string[] | undefined, fn: (key: string) => void): void {
  if (typeof keys === 'string') fn(keys);
  else if (keys) for (const k of keys) fn(k);
}

/** The group of a key `group\u0000rest`, or undefined for a key without one. */
function groupOf(key: string): string | undefined {
  const at = key.indexOf('\u0000');
  return at < 0 ? undefined : key.slice(0, at);
}

function filedUnder(keys: string | readonly string[] | undefined, key: string): boolean {
  return keys === key || (Array.isArray(keys) && keys.includes(key));
}

/**
 * Files `obj` under each of `keys` and unfiles it from each key of `was` it left. Runs on every
 * watch event of an indexed cache (every room status change), so a single key, the common case,
 * allocates nothing.
 */
function refile<T>(byKey: Map<string, Bucket<T>>, key: string, was: string | readonly string[] | undefined, now: string | readonly string[] | undefined, obj: T | undefined): void {
  if (typeof was === 'string') {
    if (!obj || !filedUnder(now, was)) unfileFrom(byKey, was, key);
  } else if (was) {
    for (const k of was) if (!obj || !filedUnder(now, k)) unfileFrom(byKey, k, key);
  }
  if (!obj) return;
  // Filed there before too: only the object is newer.
  if (typeof now === 'string') fileIn(byKey, now, key, obj);
  else if (now) for (const k of now) fileIn(byKey, k, key, obj);
}

/**
 * The objects filed under one index key: most keys of a sparse index (an id) file one object, kept
 * as a record; a second object turns the bucket into a map by object key. At 10,000 rooms with 9
 * allocationIds each, a map per key takes 23 MB of heap; a record, 7 MB.
 */
type Bucket<T> = { key: string; obj: T } | Map<string, T>;

function fileIn<T>(byKey: Map<string, Bucket<T>>, indexKey: string, key: string, obj: T): void {
  const bucket = byKey.get(indexKey);
  if (bucket === undefined) byKey.set(indexKey, { key, obj });
  else if (bucket instanceof Map) bucket.set(key, obj);
  else if (bucket.key === key) bucket.obj = obj;
  else byKey.set(indexKey, new Map([[bucket.key, bucket.obj], [key, obj]]));
}

function unfileFrom<T>(byKey: Map<string, Bucket<T>>, indexKey: string, key: string): void {
  const bucket = byKey.get(indexKey);
  if (bucket instanceof Map) {
    bucket.delete(key);
    if (bucket.size === 0) byKey.delete(indexKey);
  } else if (bucket?.key === key) {
    byKey.delete(indexKey);
  }
}

function keyOf(obj: k8s.KubernetesObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** What a cache can see (`ResilientInformer.sight`). */
export interface Sight {
  impaired: boolean;
  since: number;
  recoveredAt: number;
}

/** The sight of several caches taken together: impaired if one is, current since the latest of them regained it. */
export function sightOfAll(parts: readonly Sight[]): Sight {
  return { impaired: parts.some((p) => p.impaired), since: Math.max(0, ...parts.map((p) => p.since)), recoveredAt: Math.max(0, ...parts.map((p) => p.recoveredAt)) };
}

export class ResilientInformer<T extends k8s.KubernetesObject> {
  private readonly objects = new Map<string, T>();
  private readonly byNamespace = new Map<string, Map<string, T>>();
  /** Index name -> index key -> the objects filed there (by object key). */
  private readonly indexes = new Map<string, Map<string, Bucket<T>>>();
  /** Index name -> group -> the keys of that index in the group that hold objects (see `indexers`). */
  private readonly keyGroups = new Map<string, Map<string, Set<string>>>();
  private readonly indexers: readonly (readonly [string, Indexer<T>])[];
  private readonly watch: k8s.Watch;
  private resourceVersion = '';
  private stopped = true;
  private backoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private request: AbortController | undefined;
  private syncedOnce = false;
  private readonly syncWaiters: (() => void)[] = [];
  /** Callers of `waitForResourceVersion`, each with the revision it waits for. */
  private readonly revisionWaiters = new RevisionWaiters();
  private generation = 0;
  private lastErrorText: string | undefined;
  /** Since a list or watch failed, until one succeeds again: the cache may be missing changes. */
  private impaired = true;
  private sightRegainedAt = 0;
  /** When sight was last regained after being lost once the cache had synced (0: never lost). */
  private recoveredAt = 0;
  /** The ERROR event (410 Expired) that ended the current watch, if one did. */
  private expired: Error | undefined;
  /** Whether the last retry was for a 410: a 410 after it backs off further, not from the start. */
  private lastRetryExpired = false;
  /** The list page, or the start of a watch, waiting for its answer now (`pendingRequest`). */
  private pending: { since: number; verb: 'list' | 'watch' } | undefined;

  private readonly counters: { relists: Counter; watchRestarts: Counter; changeAge: Histogram; impaired: Gauge } | undefined;

  constructor(private readonly opts: InformerOptions<T>) {
    this.indexers = Object.entries(opts.indexers ?? {});
    this.counters = opts.metrics && {
      relists: opts.metrics.counter('roomkeeper_informer_relists_total', 'Full LISTs of an informer (the first, and after a 410 or a failed watch), by informer.', { labelNames: ['informer'] }),
      watchRestarts: opts.metrics.counter('roomkeeper_informer_watch_restarts_total', 'Watches that ended and were started again, by informer and why (expired: 410, error, closed: a clean end).', { labelNames: ['informer', 'reason'] }),
      impaired: opts.metrics.gauge('roomkeeper_informer_impaired', 'By informer: 1 while its cache may be missing changes (before its first list, and from a failed list or watch until one succeeds again), else 0. The operator\'s health checks wait while one of its decision caches is impaired.', undefined, { labelNames: ['informer'] }),
      changeAge: opts.metrics.histogram('roomkeeper_informer_change_age_seconds', 'How old a change was when its watch event reached the cache, by informer: now minus the time of the object\'s latest write (metadata.managedFields, whole seconds, the API server\'s clock). Grows when the process reads its watches more slowly than changes come.', CHANGE_AGE_BUCKETS, { labelNames: ['informer'] }),
    };
    this.counters?.impaired.set(1, { informer: opts.name });
    this.backoffMs = opts.minBackoffMs ?? 500;
    this.watch = new k8s.Watch(opts.kc);
  }

  /** Starts list+watch; resolves once the first list has been loaded (or the informer is stopped). */
  async start(): Promise<void> {
    await this.begin();
    // Stopped while the first list was read: nothing will sync, and stop() has already released its waiters.
    if (!this.syncedOnce && !this.stopped) await new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  /**
   * Starts list+watch and resolves after the first attempt, whether it synced or failed (then
   * `synced` is false, `lastError` says why, and it keeps retrying in the background).
   */
  async begin(): Promise<void> {
    this.stopped = false;
    this.generation++;
    await this.run(this.generation);
  }

  get name(): string {
    return this.opts.name;
  }

  get synced(): boolean {
    return this.syncedOnce;
  }

  /**
   * Whether the cache can be trusted to be current, and since when: `impaired` from a failed list
   * or watch until the next one succeeds; `since` is when it last succeeded after being impaired
   * (a first list, a relist, or a watch reconnected after an error); `recoveredAt` the same, not
   * counting the first list (0 until sight is lost once). Decisions that would be fatal on stale
   * data (expiring rooms) wait for fresh sight.
   */
  get sight(): Sight {
    return { impaired: this.impaired, since: this.sightRegainedAt, recoveredAt: this.recoveredAt };
  }

  private regainSight(): void {
    if (!this.impaired) return;
    this.impaired = false;
    this.sightRegainedAt = Date.now();
    // Sight lost after the first list and regained (a watch or list failed, a relist): `recoveredAt`.
    if (this.syncedOnce) this.recoveredAt = this.sightRegainedAt;
    this.counters?.impaired.set(0, { informer: this.opts.name });
  }

  /**
   * The list request (one page), or the start of a watch, that has not been answered yet, and
   * since when; undefined while a watch runs or a retry waits (the liveness check's view).
   */
  get pendingRequest(): { since: number; verb: 'list' | 'watch' } | undefined {
    return this.pending;
  }

  /** Why the last list or watch failed; cleared by the next successful list. */
  get lastError(): string | undefined {
    return this.lastErrorText;
  }

  /** The cached objects (of one namespace): a new array on each call, which the caller owns. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.objects.values()];
    return [...(this.byNamespace.get(namespace)?.values() ?? [])];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(namespace ? `${namespace}/${name}` : name);
  }

  /** The cached objects filed under `key` in the index `index` (see `indexers`): a new array. */
  byIndex(index: string, key: string): T[] {
    const bucket = this.indexes.get(index)?.get(key);
    return bucket instanceof Map ? [...bucket.values()] : bucket ? [bucket.obj] : [];
  }

  /** The keys of the index `index` in `group` (keys `group\u0000...`) that hold objects: a new array. */
  indexKeys(index: string, group: string): string[] {
    return [...(this.keyGroups.get(index)?.get(group) ?? [])];
  }

  /** How many cached objects are filed under `key` in the index `index`. */
  indexCount(index: string, key: string): number {
    const bucket = this.indexes.get(index)?.get(key);
    return bucket instanceof Map ? bucket.size : bucket ? 1 : 0;
  }

  /**
   * Resolves true once the cache has applied every change the API server had made when it was at
   * `resourceVersion` (the cache reached an event, bookmark or list at or past it), false after
   * `timeoutMs` or when the informer stops. Kubernetes calls resourceVersions opaque; etcd's, like
   * the sandbox's, are one revision counter for every object, and events come in its order. Only
   * decimal versions are compared: any other answers false at once, so the caller reads afresh.
   */
  waitForResourceVersion(resourceVersion: string, timeoutMs: number): Promise<boolean> {
    const target = revisionOf(resourceVersion);
    if (target === undefined || this.stopped) return Promise.resolve(false);
    const now = revisionOf(this.resourceVersion);
    if (now !== undefined && now >= target) return Promise.resolve(true);
    return this.revisionWaiters.wait(target, timeoutMs);
  }

  /** Releases the waiters whose revision the cache has now reached. */
  private advanced(): void {
    if (this.revisionWaiters.size === 0) return;
    const now = revisionOf(this.resourceVersion);
    if (now === undefined) return;
    this.revisionWaiters.advance(now);
  }

  stop(): Promise<void> {
    this.revisionWaiters.releaseAll();
    this.stopped = true;
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.request?.abort();
    this.request = undefined;
    this.pending = undefined;
    for (const w of this.syncWaiters.splice(0)) w();
    return Promise.resolve();
  }

  /** Whether a run of `generation` is still the one to go on (not stopped, not superseded); may change across an await. */
  private isCurrent(generation: number): boolean {
    return !this.stopped && generation === this.generation;
  }

  private async run(generation: number): Promise<void> {
    if (!this.isCurrent(generation)) return;
    let verb: 'list' | 'watch' = this.resourceVersion ? 'watch' : 'list';
    try {
      this.pending = { since: Date.now(), verb };
      if (!this.resourceVersion) await this.relist();
      verb = 'watch';
      if (!this.isCurrent(generation)) return;
      this.pending = { since: Date.now(), verb };
      const query: Record<string, string | boolean> = { resourceVersion: this.resourceVersion, allowWatchBookmarks: true };
      if (this.opts.labelSelector) query.labelSelector = this.opts.labelSelector;
      this.expired = undefined;
      // client-node reports a watch refused (a status other than 200, or no connection) through
      // the done callback, before `watch` resolves: such a watch never started, and sight is not regained.
      const attempt = { ended: false };
      const request = await this.watch.watch(this.opts.path, query, (phase, obj: T & { code?: number }) => this.onWatchEvent(phase, obj), (err: unknown) => {
        attempt.ended = true;
        this.request = undefined;
        if (!this.isCurrent(generation)) return;
        this.countWatchRestart(!err && this.expired ? 'expired' : err && !isTimeout(err) ? 'error' : 'closed');
        // The server ended the watch with an ERROR event (410 Expired): relist, after the
        // backoff, so a server that keeps answering so is not asked again and again at once.
        if (!err && this.expired) this.retryLater(this.expired, generation, 'watch');
        else if (err && !isTimeout(err)) this.retryLater(err, generation, 'watch');
        else this.schedule(0, generation); // a clean end (server timeout): resume at once
      });
      if (attempt.ended) return;
      if (!this.isCurrent(generation)) {
        request.abort(); // stopped while the watch connected
        return;
      }
      this.request = request;
      this.opts.access?.answered({ verb: 'watch', path: this.opts.path }, 200, this.opts.name);
      this.regainSight();
    } catch (err) {
      this.retryLater(err, generation, verb);
    } finally {
      if (this.isCurrent(generation)) this.pending = undefined;
    }
  }

  /**
   * What the cache keeps of an object: the `transform`'s slim form, and never `managedFields`
   * (server-side apply's bookkeeping, kilobytes per object that no component reads).
   */
  private keep(raw: T): T {
    if (raw.metadata?.managedFields) delete raw.metadata.managedFields;
    return this.opts.transform ? this.opts.transform(raw) : raw;
  }

  private countWatchRestart(reason: 'expired' | 'error' | 'closed'): void {
    this.counters?.watchRestarts.inc({ informer: this.opts.name, reason });
  }

  private async relist(): Promise<void> {
    this.counters?.relists.inc({ informer: this.opts.name });
    // The listed objects, slimmed page by page, applied once the last page is in: a cache that
    // took each page as it came would show, between pages, objects deleted on the server beside
    // the ones listed (counts no server ever had), and decisions made on counts would act on them.
    const listed: T[] = [];
    let resourceVersion = '';
    let token: string | undefined;
    do {
      // Every page is of the snapshot of the first (kube-apiserver: the continue token pins it;
      // an expired token is a 410, and the next relist starts over).
      const list = await this.opts.list({ limit: LIST_PAGE_SIZE, ...(token ? { _continue: token } : {}) });
      // Each page is a request of its own: the next one waits from now.
      if (this.pending) this.pending = { since: Date.now(), verb: 'list' };
      // `items` is declared required, but an empty custom-object list is plain JSON and may leave it out.
      for (const raw of (list.items as T[] | undefined) ?? []) listed.push(this.keep(raw));
      resourceVersion = list.metadata?.resourceVersion ?? resourceVersion;
      // Typed lists (core) carry `_continue`; custom objects come as plain JSON with `continue`.
      const meta: { _continue?: string; continue?: string } | undefined = list.metadata;
      token = meta?._continue || meta?.continue || undefined;
    } while (token && !this.stopped);
    if (this.stopped) return;
    const seen = new Set(listed.map(keyOf));
    for (const [key, obj] of [...this.objects]) {
      if (!seen.has(key)) this.remove(obj);
    }
    for (const obj of listed) this.upsert(obj);
    this.resourceVersion = resourceVersion;
    this.advanced();
    // A relist may have jumped over changes: sight counts from here. The backoff is reset by
    // the watch's first event, not here: a list that works while every watch fails at once
    // must not make the informer list and watch in a tight loop.
    this.impaired = true;
    this.regainSight();
    this.lastErrorText = undefined;
    this.opts.access?.answered({ verb: 'list', path: this.opts.path }, 200, this.opts.name);
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private onWatchEvent(phase: string, raw: T & { code?: number }): void {
    if (phase === 'ERROR') {
      // 410 Gone (or any error event): the server ends the watch; relist from scratch then.
      this.resourceVersion = '';
      this.expired = Object.assign(new Error(`watch ended by the server: ${raw.code ?? ''} ${(raw as { reason?: string }).reason ?? ''} ${(raw as { message?: string }).message ?? ''}`.replace(/\s+/g, ' ').trim()), { statusCode: raw.code });
      return;
    }
    const rv = raw.metadata?.resourceVersion;
    // Any event but an error shows the watch works: the next failure backs off from the start.
    this.backoffMs = this.opts.minBackoffMs ?? 500;
    if (phase === 'BOOKMARK') {
      if (rv) this.resourceVersion = rv;
      this.advanced();
      return;
    }
    if (this.counters && phase !== 'DELETED') {
      const writtenAt = latestWrite(raw);
      if (writtenAt !== undefined) this.counters.changeAge.observe(Math.max(0, Date.now() - writtenAt) / 1000, { informer: this.opts.name });
    }
    const obj = this.keep(raw);
    if (phase === 'ADDED' || phase === 'MODIFIED') this.upsert(obj);
    else if (phase === 'DELETED') this.remove(obj);
    if (rv) this.resourceVersion = rv;
    this.advanced();
  }

  private upsert(obj: T): void {
    const key = keyOf(obj);
    const existing = this.objects.get(key);
    if (existing && existing.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    this.objects.set(key, obj);
    const ns = obj.metadata?.namespace;
    if (ns) {
      let m = this.byNamespace.get(ns);
      if (!m) this.byNamespace.set(ns, (m = new Map<string, T>()));
      m.set(key, obj);
    }
    this.reindex(key, existing, obj);
    if (existing) this.opts.onEvent?.('update', obj, existing);
    else this.opts.onEvent?.('add', obj);
  }

  private remove(obj: T): void {
    const key = keyOf(obj);
    const existing = this.objects.get(key);
    if (!existing) return;
    this.objects.delete(key);
    const ns = existing.metadata?.namespace;
    if (ns) {
      const m = this.byNamespace.get(ns);
      m?.delete(key);
      if (m && m.size === 0) this.byNamespace.delete(ns);
    }
    this.reindex(key, existing, undefined);
    this.opts.onEvent?.('delete', existing);
  }

  /** Moves the object `key` from where `before` was filed in each index to where `after` is. */
  private reindex(key: string, before: T | undefined, after: T | undefined): void {
    for (const [index, keyIn] of this.indexers) {
      let byKey = this.indexes.get(index);
      if (!byKey) this.indexes.set(index, (byKey = new Map<string, Bucket<T>>()));
      const was = before ? keyIn(before) : undefined;
      const now = after ? keyIn(after) : undefined;
      refile(byKey, key, was, now, after);
      if (was !== now) this.regroup(index, byKey, was, now);
    }
  }

  /** Keeps `keyGroups` of one index after an object left the keys `was` for `now`. */
  private regroup(index: string, byKey: Map<string, Bucket<T>>, was: string | readonly string[] | undefined, now: string | readonly string[] | undefined): void {
    let groups = this.keyGroups.get(index);
    eachKey(was, (k) => {
      const group = groupOf(k);
      if (group === undefined || byKey.has(k)) return;
      const keys = groups?.get(group);
      keys?.delete(k);
      if (keys?.size === 0) groups?.delete(group);
    });
    eachKey(now, (k) => {
      const group = groupOf(k);
      if (group === undefined || !byKey.has(k)) return;
      if (!groups) this.keyGroups.set(index, (groups = new Map<string, Set<string>>()));
      let keys = groups.get(group);
      if (!keys) groups.set(group, (keys = new Set<string>()));
      keys.add(k);
    });
  }

  private retryLater(err: unknown, generation: number, verb: 'list' | 'watch'): void {
    const status = responseStatus(err);
    if (status !== undefined) this.opts.access?.answered({ verb, path: this.opts.path }, status, this.opts.name);
    const expired = status === 410;
    // 410 as an HTTP status: the resourceVersion is too old to resume from; relist next time.
    if (expired) this.resourceVersion = '';
    // A 410 comes from a server that is up: the relist goes after the shortest backoff, not after
    // the one an outage before it grew (kube-apiserver back after 60 s: the caches stayed as they
    // were for 30 s more, and decisions were made on them). A 410 after a 410 backs off further,
    // so a server that keeps answering so is not asked again and again at once.
    if (expired && !this.lastRetryExpired) this.backoffMs = this.opts.minBackoffMs ?? 500;
    this.lastRetryExpired = expired;
    const delay = this.backoffMs;
    // A refused connection (nobody listening: kube-apiserver down) costs the server nothing: it is
    // asked again at least every few seconds, so the caches are current soon after it is back.
    const max = this.opts.maxBackoffMs ?? 30_000;
    this.backoffMs = Math.min(socketErrorCode(err) === 'ECONNREFUSED' ? Math.min(REFUSED_BACKOFF_CAP_MS, max) : max, this.backoffMs * 2);
    const hint = whatToDo(err, { server: this.opts.kc.getCurrentCluster()?.server ?? '(no server)', path: this.opts.path, verb });
    this.lastErrorText = hint ? `${describeApiError(err)}; ${hint}` : describeApiError(err);
    this.impaired = true;
    this.counters?.impaired.set(1, { informer: this.opts.name });
    const message = verb === 'list' ? 'list failed, retrying' : expired ? 'watch expired (410), relisting' : 'watch failed, restarting';
    // Just after this process was paused, a broken watch or a timed-out list is the pause's (pauses.ts).
    const pause = this.opts.access?.afterPause?.() ?? {};
    this.opts.logger.warn(message, { informer: this.opts.name, path: this.opts.path, ...apiErrorFields(err), ...(hint && pause.afterPause === undefined ? { whatToDo: hint } : {}), ...pause, retryInMs: delay });
    this.schedule(delay, generation);
  }

  private schedule(delayMs: number, generation: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run(generation);
    }, delayMs);
  }
}

/** Buckets of `roomkeeper_informer_change_age_seconds`: the times carry whole seconds, so the first bucket is 1 s. */
const CHANGE_AGE_BUCKETS = [1, 2, 5, 10, 30, 60, 120, 300];

/**
 * When the object was last written, in ms: the latest `managedFields` time (each writer's entry
 * carries the time of its last change, to the second); undefined when it has none.
 */
function latestWrite(obj: k8s.KubernetesObject): number | undefined {
  let latest: number | undefined;
  for (const entry of obj.metadata?.managedFields ?? []) {
    const at = toMillis(entry.time);
    if (at !== undefined && (latest === undefined || at > latest)) latest = at;
  }
  return latest;
}

/** The longest wait between tries while the server refuses connections. */
const REFUSED_BACKOFF_CAP_MS = 4000;

function isTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TimeoutError';
}

/** A resourceVersion as etcd's revision number, or undefined when it is not a decimal integer. */
function revisionOf(resourceVersion: string): bigint | undefined {
  return /^[0-9]{1,30}$/.test(resourceVersion) ? BigInt(resourceVersion) : undefined;
}
