/**
 * One watch connection: replays retained events after the requested resourceVersion (or the
 * current state), then streams store events as newline-delimited JSON, with bookmarks, a
 * timeout, selectors applied the way the real server does (an object that stops matching is
 * DELETED for this watcher), and 410 Expired as an ERROR event.
 */
import type { ServerResponse } from 'node:http';
import { statusBody } from './api-error';
import type { FieldMatcher } from './field-selector';
import type { LabelMatcher } from './label-selector';
import type { KubeObject } from './kube-object';
import type { EventType, ObjectStore, StoreEvent, StoredObject, StoreWatcher } from './object-store';
import type { ResourceType } from './resource-type';
import { toTable, type IncludeObject } from './table-convertor';
import type { Clock } from '../../../common/src/runtime/clock';

const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

export interface WatchOptions {
  resource: string;
  rt: ResourceType;
  version: string;
  apiVersion: string;
  /** Serves objects in another shape (resource views). */
  transform?: (obj: KubeObject) => KubeObject;
  namespace: string;
  labels: LabelMatcher;
  fields: FieldMatcher;
  filtered: boolean;
  /** The resourceVersion to resume after; undefined or '0' = send the current state first. */
  resourceVersion?: string;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutMs?: number;
  cutAfterEvents?: number;
  /** Each line (event, bookmark) is written this many ms after it was produced (fault injection). */
  delayMs?: number;
  table?: { include: IncludeObject };
  now: Clock;
}

/** The JSON of a stored object as seen through `apiVersion` (multi-version CRDs share storage). */
export function objectJson(stored: StoredObject, apiVersion: string): string {
  if (stored.obj.apiVersion === apiVersion) return stored.json;
  return JSON.stringify({ ...stored.obj, apiVersion });
}

export class WatchStream implements StoreWatcher {
  readonly namespace: string;
  private closed = false;
  private sent = 0;
  private tableHeadersSent = false;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  /** Lines held back by an injected watch delay, until they are written or the watch closes. */
  private readonly delayed = new Set<NodeJS.Timeout>();
  /**
   * A watch from a resourceVersion the store has not reached gets nothing up to it, as from
   * kube-apiserver's watch cache (events and bookmarks at or below it are held back); 0 otherwise.
   */
  private holdUpTo = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly res: ServerResponse,
    private readonly options: WatchOptions,
    private readonly onClosed: (w: WatchStream) => void,
  ) {
    this.namespace = options.namespace;
  }

  start(): void {
    const o = this.options;
    this.res.writeHead(200, {
      'Content-Type': o.table ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    this.res.flushHeaders();
    this.res.on('close', () => this.close());
    const rvText = o.resourceVersion;
    const initial = rvText === undefined || rvText === '' || rvText === '0';
    if (initial) {
      const current = this.store.list(o.resource, o.namespace || undefined);
      for (const s of current) {
        if (this.closed) return;
        if (this.matches(s.obj)) this.write('ADDED', s);
      }
    } else {
      const rv = Number(rvText);
      if (rv > this.store.resourceVersion) this.holdUpTo = rv;
      const events = Number.isFinite(rv) ? this.store.eventsSince(o.resource, rv) : undefined;
      if (!events) {
        this.writeRaw(JSON.stringify({
          type: 'ERROR',
          object: statusBody(410, 'Expired', `too old resource version: ${rvText} (${this.store.compactedRv(o.resource)})`),
        }) + '\n');
        this.close();
        return;
      }
      for (const e of events) {
        if (this.closed) return;
        this.onEvent(e);
      }
    }
    if (this.closed) return;
    this.store.addWatcher(o.resource, this);
    if (o.bookmarks) {
      this.bookmarkTimer = setInterval(() => this.bookmark(), o.bookmarkIntervalMs);
      this.bookmarkTimer.unref();
    }
    if (o.timeoutMs !== undefined) {
      this.timeoutTimer = setTimeout(() => this.close(), o.timeoutMs);
      this.timeoutTimer.unref();
    }
  }

  private matches(obj: KubeObject): boolean {
    if (!this.options.filtered) return true;
    return this.options.labels(obj.metadata.labels) && this.options.fields(obj);
  }

  onEvent(event: StoreEvent): void {
    if (this.closed || event.rv <= this.holdUpTo) return;
    if (this.namespace && event.object.namespace !== this.namespace) return;
    let type: EventType = event.type;
    if (this.options.filtered) {
      const now = this.matches(event.object.obj);
      if (event.type === 'DELETED') {
        if (!now && !(event.previous && this.matches(event.previous.obj))) return;
      } else {
        const before = event.previous !== undefined && event.type !== 'ADDED' && this.matches(event.previous.obj);
        if (now && !before) type = 'ADDED';
        else if (!now && before) type = 'DELETED';
        else if (!now && !before) return;
      }
    }
    if (this.options.table) {
      this.write(type, event.object);
      return;
    }
    const cacheKey = `${type}|${this.options.apiVersion}|${this.options.transform ? 'view' : ''}`;
    let line = event.cache.get(cacheKey);
    if (line === undefined) {
      line = `{"type":"${type}","object":${this.json(event.object)}}\n`;
      event.cache.set(cacheKey, line);
    }
    this.writeRaw(line);
    this.countSent();
  }

  private json(stored: StoredObject): string {
    const transform = this.options.transform;
    return transform ? JSON.stringify(transform(stored.obj)) : objectJson(stored, this.options.apiVersion);
  }

  private write(type: EventType, stored: StoredObject): void {
    const o = this.options;
    if (o.table) {
      const obj = JSON.parse(this.json(stored)) as KubeObject;
      const table = toTable(o.rt, o.version, [obj], { resourceVersion: String(stored.rv) }, { include: o.table.include, now: new Date(o.now()), noHeaders: this.tableHeadersSent });
      this.tableHeadersSent = true;
      this.writeRaw(`{"type":"${type}","object":${JSON.stringify(table)}}\n`);
    } else {
      this.writeRaw(`{"type":"${type}","object":${this.json(stored)}}\n`);
    }
    this.countSent();
  }

  private countSent(): void {
    this.sent++;
    const cut = this.options.cutAfterEvents;
    if (cut !== undefined && this.sent >= cut) this.close();
  }

  private bookmark(): void {
    if (this.closed || this.store.resourceVersion <= this.holdUpTo) return;
    const o = this.options;
    const metadata = { resourceVersion: String(this.store.resourceVersion) };
    this.writeRaw(JSON.stringify({ type: 'BOOKMARK', object: { kind: o.rt.kind, apiVersion: o.apiVersion, metadata } }) + '\n');
  }

  private writeRaw(line: string): void {
    const delay = this.options.delayMs;
    if (delay === undefined || delay <= 0) {
      this.writeNow(line);
      return;
    }
    const timer = setTimeout(() => {
      this.delayed.delete(timer);
      this.writeNow(line);
    }, delay);
    this.delayed.add(timer);
  }

  private writeNow(line: string): void {
    if (this.closed) return;
    this.res.write(line);
    // A watcher that does not keep up is dropped, as the real server does; it comes back and resumes or relists.
    if (this.res.writableLength > MAX_BUFFERED_BYTES) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    for (const timer of this.delayed) clearTimeout(timer);
    this.delayed.clear();
    this.store.removeWatcher(this.options.resource, this);
    if (!this.res.writableEnded) this.res.end();
    this.onClosed(this);
  }
}
