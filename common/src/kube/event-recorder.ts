/**
 * Kubernetes Events (`events.k8s.io/v1`) through one small recorder that aggregates, as
 * client-go's events broadcaster does: the first occurrence of an event (same object, type,
 * reason, action and note) is created at once; repeats within `windowMs` of the last one only
 * count, and the count is written as the Event's `series` at most once per `flushIntervalMs`.
 * A flapping room therefore costs one create and a patch now and then, never one write per
 * occurrence. The recorder remembers at most `maxKeys` events (the least recently seen go).
 *
 * Creates are budgeted twice. **Each kind of regarded object** has a token bucket of
 * `maxCreatesPerSecond` with a burst of `createBurst` (20/s, 50): the operator's overall cap, so
 * that rooms removed by the thousand neither take the API budget of the operations themselves nor
 * silence their Scheduler's Events. Within a kind, **each subject** (the namespace of a
 * namespaced object: a scheduler's rooms live in the namespace named after it; the name of a
 * cluster-scoped one, so the Scheduler itself) has a bucket of `subjectCreatesPerSecond` with a
 * burst of `subjectCreateBurst` (a quarter of the rate and half the burst: 5/s, 25), and takes
 * from its kind's bucket in three tiers, so one scheduler's flood cannot starve another's Events:
 *
 * - a quiet subject (one that asked for fewer than half its burst lately: its first Events in a
 *   while) may take the kind's last tokens;
 * - a subject within its share (its own bucket not empty) leaves the kind's last fifth of the
 *   burst (10) to the quiet ones;
 * - a subject past its share may still borrow what nobody else uses, but only while the kind's
 *   bucket is more than half full, so a lone busy scheduler gets the kind's whole rate and never
 *   the half of the burst the others need.
 *
 * At most `maxSubjects` subject buckets are kept (the least recently used go; a subject seen
 * again starts with a full bucket, as it would after its quiet while). Events past these budgets
 * are dropped and counted; at most once a minute a warning tells, per kind, how many were dropped
 * since the last one and whose (the subjects with the most drops).
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
  /** Creates a second for each kind of regarded object (the overall cap); 20. */
  maxCreatesPerSecond?: number;
  /** Creates a kind may make at once before `maxCreatesPerSecond` applies; 50. */
  createBurst?: number;
  /** Creates a second for one subject (a namespace, or a cluster-scoped object's name) within its kind's share; a quarter of `maxCreatesPerSecond`. */
  subjectCreatesPerSecond?: number;
  /** Creates one subject may make at once within its share; half of `createBurst`. */
  subjectCreateBurst?: number;
  /** Subject buckets kept (the least recently used go); 4096. */
  maxSubjects?: number;
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
/** At most one dropped-Events warning in this long. */
const DROPPED_LOG_INTERVAL_MS = 60_000;
/** Subjects named in a dropped-Events warning. */
const DROPPED_TOP = 5;
/** Subjects whose drops are tallied between two warnings (the kinds' counts stay exact). */
const MAX_DROPPED_SUBJECTS = 1024;

/**
 * A subject's two buckets: `creates`, its share of its kind's creates; `asks`, the same size,
 * spent by every Event it asks for, created or not: a subject is quiet while it has asked for
 * fewer than half its burst lately. (Its `creates` alone would not tell: a flooding subject that
 * its kind refuses banks creates and would pass for quiet.)
 */
interface SubjectBudget {
  creates: TokenBucket;
  asks: TokenBucket;
}

/** Whose Events share a budget within a kind: a namespace, or a cluster-scoped object by name. */
interface Subject {
  kind: string;
  namespace?: string;
  name?: string;
}

interface SubjectDrops {
  subject: Subject;
  dropped: number;
}

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
  private readonly subjectCreatesPerSecond: number;
  private readonly subjectCreateBurst: number;
  private readonly maxSubjects: number;
  /** Kind tokens a subject within its share leaves to quiet subjects. */
  private readonly quietReserve: number;
  /** One create budget per kind of regarded object (a handful of kinds, never user input). */
  private readonly budgets = new Map<string, TokenBucket>();
  /** One create budget per subject of a kind, the least recently used first. */
  private readonly subjectBudgets = new Map<string, SubjectBudget>();
  private dropped = 0;
  /** Since the last dropped-Events warning: per kind, and per subject (bounded). */
  private droppedByKind = new Map<string, number>();
  private droppedBySubject = new Map<string, SubjectDrops>();
  private droppedUntallied = 0;
  private droppedSince: number;
  private droppedLoggedAt: number | undefined;

  constructor(private readonly opts: EventRecorderOptions) {
    this.windowMs = opts.windowMs ?? 10 * 60_000;
    this.flushIntervalMs = opts.flushIntervalMs ?? 5_000;
    this.maxKeys = opts.maxKeys ?? 4096;
    this.now = opts.now ?? Date.now;
    this.maxCreatesPerSecond = opts.maxCreatesPerSecond ?? 20;
    this.createBurst = opts.createBurst ?? 50;
    this.subjectCreatesPerSecond = opts.subjectCreatesPerSecond ?? this.maxCreatesPerSecond / 4;
    this.subjectCreateBurst = opts.subjectCreateBurst ?? Math.max(1, this.createBurst / 2);
    this.maxSubjects = opts.maxSubjects ?? 4096;
    this.quietReserve = Math.floor(this.createBurst / 5);
    this.droppedSince = this.now();
  }

  /** Events not created because their kind's or their subject's budget was spent, since the recorder started. */
  get droppedCount(): number {
    return this.dropped;
  }

  /** Subject budgets held now (at most `maxSubjects`). */
  get subjectBudgetCount(): number {
    return this.subjectBudgets.size;
  }

  record(event: KubeEvent): void {
    const now = this.now();
    this.logDroppedIfDue(now);
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
    if (!this.takeCreateBudget(event.regarding, now)) return;
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
    // The drops not told yet are told now, whatever the minute: no later line would tell them.
    if (this.droppedByKind.size > 0) this.logDropped(this.now());
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private takeCreateBudget(regarding: EventSubject, now: number): boolean {
    const { kind } = regarding;
    let kindBudget = this.budgets.get(kind);
    if (!kindBudget) {
      kindBudget = new TokenBucket(this.maxCreatesPerSecond, this.createBurst, this.now);
      this.budgets.set(kind, kindBudget);
    }
    const subject: Subject = regarding.namespace ? { kind, namespace: regarding.namespace } : { kind, name: regarding.name };
    const subjectKey = subjectKeyOf(subject);
    let own = this.subjectBudgets.get(subjectKey);
    if (own) {
      this.subjectBudgets.delete(subjectKey); // most recently used last
    } else {
      own = { creates: new TokenBucket(this.subjectCreatesPerSecond, this.subjectCreateBurst, this.now), asks: new TokenBucket(this.subjectCreatesPerSecond, this.subjectCreateBurst, this.now) };
    }
    this.subjectBudgets.set(subjectKey, own);
    while (this.subjectBudgets.size > this.maxSubjects) {
      const oldest = this.subjectBudgets.keys().next().value;
      if (oldest === undefined) break;
      this.subjectBudgets.delete(oldest);
    }
    const quiet = own.asks.available() > own.asks.burst / 2;
    own.asks.spend();
    const ownLeft = own.creates.available();
    const kindLeft = kindBudget.available();
    // The kind's tokens this subject must leave to others: none when it is quiet, the quiet ones'
    // reserve while it is within its share, half the kind's burst once it is past its share.
    const leave = ownLeft < 1 ? this.createBurst / 2 : quiet ? 0 : this.quietReserve;
    if (kindLeft >= leave + 1) {
      kindBudget.tryTake();
      own.creates.tryTake();
      return true;
    }
    this.countDropped(subject, subjectKey, now);
    return false;
  }

  private countDropped(subject: Subject, subjectKey: string, now: number): void {
    this.dropped++;
    this.droppedByKind.set(subject.kind, (this.droppedByKind.get(subject.kind) ?? 0) + 1);
    const tally = this.droppedBySubject.get(subjectKey);
    if (tally) tally.dropped++;
    else if (this.droppedBySubject.size < MAX_DROPPED_SUBJECTS) this.droppedBySubject.set(subjectKey, { subject, dropped: 1 });
    else this.droppedUntallied++;
    this.logDroppedIfDue(now);
  }

  private logDroppedIfDue(now: number): void {
    if (this.droppedByKind.size === 0) return;
    if (this.droppedLoggedAt !== undefined && now - this.droppedLoggedAt < DROPPED_LOG_INTERVAL_MS) return;
    this.logDropped(now);
  }

  /** One line for the drops since the last one: per kind, and the subjects with the most. */
  private logDropped(now: number): void {
    const droppedByKind = Object.fromEntries(this.droppedByKind);
    const mostDropped = [...this.droppedBySubject.values()]
      .sort((a, b) => b.dropped - a.dropped)
      .slice(0, DROPPED_TOP)
      .map(({ subject, dropped }) => ({ ...subject, dropped }));
    const since = new Date(this.droppedSince).toISOString();
    this.opts.logger.warn(
      `Kubernetes Events dropped since ${since}: ${describeCounts(droppedByKind)}; most from ${mostDropped.map(describeSubject).join(', ')}. `
      + `The operator creates at most ${this.maxCreatesPerSecond} a second (bursts of ${this.createBurst}) for each kind, and for one namespace or cluster-scoped object ${this.subjectCreatesPerSecond} a second (bursts of ${this.subjectCreateBurst}) while others ask too; `
      + 'the work these Events tell of went on, only the Events are missing from kubectl describe',
      {
        droppedByKind, mostDropped, subjectsWithDrops: this.droppedBySubject.size + this.droppedUntallied, droppedSinceStart: this.dropped, since,
        maxCreatesPerSecond: this.maxCreatesPerSecond, createBurst: this.createBurst,
        subjectCreatesPerSecond: this.subjectCreatesPerSecond, subjectCreateBurst: this.subjectCreateBurst,
      },
    );
    this.droppedLoggedAt = now;
    this.droppedSince = now;
    this.droppedByKind = new Map();
    this.droppedBySubject = new Map();
    this.droppedUntallied = 0;
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

function subjectKeyOf(s: Subject): string {
  return s.namespace !== undefined ? `${s.kind}\u0000namespace\u0000${s.namespace}` : `${s.kind}\u0000name\u0000${s.name ?? ''}`;
}

function describeSubject(d: { kind: string; namespace?: string; name?: string; dropped: number }): string {
  return d.namespace !== undefined ? `${d.kind} in namespace ${d.namespace} ${d.dropped}` : `${d.kind} ${d.name ?? ''} ${d.dropped}`;
}

function describeCounts(byKind: Record<string, number>): string {
  return Object.entries(byKind).map(([kind, n]) => `${kind} ${n}`).join(', ');
}
