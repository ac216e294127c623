/**
 * Kubernetes Events (`events.k8s.io/v1`) through one small recorder that aggregates, as
 * client-go's events broadcaster does: the first occurrence of an event (same object, type,
 * reason, action and note) is created at once; repeats within `windowMs` of the last one only
 * count, and the count is written as the Event's `series` at most once per `flushIntervalMs`.
 * A flapping room therefore costs one create and a patch now and then, never one write per
 * occurrence. The recorder remembers at most `maxKeys` events (the least recently seen go), and
 * creates Events at most `maxCreatesPerSecond` a second with a burst of `createBurst`, **for each
 * kind of object they regard**: distinct rooms removed by the thousand must not take the API
 * budget of the operations themselves, nor silence the Events of their Scheduler. Events past a
 * kind's budget are dropped, counted and logged.
 *
 * Recording never throws and never waits: an Event is a courtesy to the person running
 * `kubectl describe`, and a failed write is logged and dropped.
 */
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../logger';
import { apiErrorFields, isNamespaceTerminating, MERGE_PATCH } from './clients';
import type { Clock } from '../runtime/clock';
import { TokenBucket } from './rate-limiter';

export interface EventSubject {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped objects (their Events go to `default`, as client-go does). */
  namespace?: string;
  uid?: string;
}

export interface KubeEvent {
  regarding: EventSubject;
  type: 'Normal' | 'Warning';
  /** Why, in UpperCamelCase (`OperationFinished`); at most 128 characters. */
  reason: string;
  /** What was done (`ExecuteOperation`); at most 128 characters. */
  action: string;
  /** A human-readable sentence; cut to 1 kB. */
  note: string;
}

/** The two writes the recorder makes (EventsV1Api in production, a fake in unit tests). */
export interface EventSink {
  create(namespace: string, body: k8s.EventsV1Event): Promise<unknown>;
  patchSeries(namespace: string, name: string, series: { count: number; lastObservedTime: Date }): Promise<unknown>;
}

export function eventSinkOf(api: k8s.EventsV1Api): EventSink {
  return {
    create: (namespace, body) => api.createNamespacedEvent({ namespace, body }),
    patchSeries: (namespace, name, series) => api.patchNamespacedEvent({ namespace, name, body: { series: { count: series.count, lastObservedTime: new k8s.V1MicroTime(series.lastObservedTime.getTime()) } } }, MERGE_PATCH),
  };
}

export interface EventRecorderOptions {
  sink: EventSink;
  /** `reportingController`, e.g. `roomkeeper.io/operator`. */
  controller: string;
  /** `reportingInstance`: this replica's identity. */
  instance: string;
  logger: Logger;
  now?: Clock;
  windowMs?: number;
  flushIntervalMs?: number;
  maxKeys?: number;
  maxCreatesPerSecond?: number;
  /** Creates a kind may make at once before `maxCreatesPerSecond` applies. */
  createBurst?: number;
}

interface Aggregate {
  namespace: string;
  name: string;
  count: number;
  written: number;
  lastObserved: number;
  /** The create, while it is in flight (a series patch waits for it). */
  creating: Promise<boolean> | undefined;
}

const MAX_NOTE = 1024;
const MAX_FIELD = 128;

export class EventRecorder {
  private readonly seen = new Map<string, Aggregate>();
  private readonly windowMs: number;
  private readonly flushIntervalMs: number;
  private readonly maxKeys: number;
  private readonly now: Clock;
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly maxCreatesPerSecond: number;
  private readonly createBurst: number;
  /** One create budget per kind of regarded object (a handful of kinds, never user input). */
  private readonly budgets = new Map<string, TokenBucket>();
  private dropped = 0;
  private droppedLoggedAt = 0;

  constructor(private readonly opts: EventRecorderOptions) {
    this.windowMs = opts.windowMs ?? 10 * 60_000;
    this.flushIntervalMs = opts.flushIntervalMs ?? 5_000;
    this.maxKeys = opts.maxKeys ?? 4096;
    this.now = opts.now ?? Date.now;
    this.maxCreatesPerSecond = opts.maxCreatesPerSecond ?? 20;
    this.createBurst = opts.createBurst ?? 50;
  }

  /** Events not created because their kind's budget was spent. */
  get droppedCount(): number {
    return this.dropped;
  }

  record(event: KubeEvent): void {
    const now = this.now();
    const key = keyOf(event);
    const known = this.seen.get(key);
    if (known && now - known.lastObserved <= this.windowMs) {
      known.count += 1;
      known.lastObserved = now;
      this.seen.delete(key); // most recently seen last
      this.seen.set(key, known);
      this.scheduleFlush();
      return;
    }
    if (!this.takeCreateBudget(event.regarding.kind, now)) return;
    const namespace = event.regarding.namespace ?? 'default';
    const name = `${event.regarding.name}.${(now * 1000 + (this.sequence++ % 1000)).toString(16)}`;
    const aggregate: Aggregate = { namespace, name, count: 1, written: 1, lastObserved: now, creating: undefined };
    this.seen.delete(key);
    this.seen.set(key, aggregate);
    while (this.seen.size > this.maxKeys) {
      const oldest = this.seen.keys().next().value;
      if (oldest === undefined) break;
      this.seen.delete(oldest);
    }
    aggregate.creating = this.track(this.opts.sink.create(namespace, this.body(event, namespace, name, now)).then(
      () => true,
      (err: unknown) => {
        const fields = { reason: event.reason, regarding: `${event.regarding.kind}/${event.regarding.name}`, ...apiErrorFields(err) };
        // A room's Event during its scheduler's deletion: the namespace goes, and the Event with it.
        if (isNamespaceTerminating(err)) this.opts.logger.debug('Kubernetes Event not created: its namespace is being deleted, as a scheduler\'s deletion deletes it', fields);
        else this.opts.logger.warn('could not create a Kubernetes Event', fields);
        return false;
      },
    ));
  }

  /** Writes every count not yet written (tests and shutdown); resolves when the writes are done. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const writes: Promise<unknown>[] = [];
    for (const a of this.seen.values()) {
      if (a.count === a.written) continue;
      const count = a.count;
      const lastObservedTime = new Date(a.lastObserved);
      a.written = count;
      writes.push(this.track((async () => {
        if (!(await a.creating)) return;
        try {
          await this.opts.sink.patchSeries(a.namespace, a.name, { count, lastObservedTime });
        } catch (err) {
          this.opts.logger.warn('could not update the count of a Kubernetes Event', { event: a.name, namespace: a.namespace, count, ...apiErrorFields(err) });
        }
      })()));
    }
    await Promise.all([...writes, ...this.pending]);
  }

  /** Stops the flush timer after writing what is pending. */
  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private takeCreateBudget(kind: string, now: number): boolean {
    let budget = this.budgets.get(kind);
    if (!budget) {
      budget = new TokenBucket(this.maxCreatesPerSecond, this.createBurst, this.now);
      this.budgets.set(kind, budget);
    }
    if (budget.tryTake()) return true;
    this.dropped++;
    if (now - this.droppedLoggedAt >= 60_000) {
      this.droppedLoggedAt = now;
      this.opts.logger.warn('Kubernetes Events dropped: more asked for than the recorder creates per second', { kind, dropped: this.dropped, maxCreatesPerSecond: this.maxCreatesPerSecond, createBurst: this.createBurst });
    }
    return false;
  }

  /** Stops without writing anything more (a crash, as tests simulate it). */
  abandon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.seen.clear();
  }

  private scheduleFlush(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushIntervalMs);
    this.timer.unref();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  private body(event: KubeEvent, namespace: string, name: string, now: number): k8s.EventsV1Event {
    const { regarding } = event;
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: new k8s.V1MicroTime(now),
      reportingController: this.opts.controller.slice(0, MAX_FIELD),
      reportingInstance: this.opts.instance.slice(0, MAX_FIELD),
      action: event.action.slice(0, MAX_FIELD),
      reason: event.reason.slice(0, MAX_FIELD),
      type: event.type,
      note: event.note.length > MAX_NOTE ? `${event.note.slice(0, MAX_NOTE - 3)}...` : event.note,
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: regarding.name,
        ...(regarding.namespace ? { namespace: regarding.namespace } : {}),
        ...(regarding.uid ? { uid: regarding.uid } : {}),
      },
    };
  }
}

function keyOf(e: KubeEvent): string {
  const r = e.regarding;
  return [r.apiVersion, r.kind, r.namespace ?? '', r.name, r.uid ?? '', e.type, e.reason, e.action, e.note].join('\u0000');
}
