/**
 * Metrics on prom-client: counters, gauges and histograms with labels, one registry per
 * component (several components may share one Node process in tests and `npm start`), rendered
 * in the Prometheus text format at `/metrics`.
 *
 * Every registry's output ends with the process metrics of prom-client's `collectDefaultMetrics`
 * (CPU, memory, heap, GC, handles, `nodejs_eventloop_lag_*`): they are collected once per process
 * on a registry of their own, shared by every component in it, so they are never registered twice.
 *
 * Label names are declared when a metric is made (`labelNames`), or taken from the first labels
 * it is given. Counters and gauges also keep their values by label set so `get` and `sum` can
 * answer synchronously (tests, benchmarks).
 */
import * as prom from 'prom-client';
import { buildInfo } from './runtime/build-info';

export type Labels = Record<string, string | number>;

function labelKey(labels: Labels | undefined): string {
  if (!labels) return '';
  return Object.keys(labels).sort().map((k) => `${k}=${String(labels[k])}`).join('\u0000');
}

function matches(labels: Labels, match: Labels): boolean {
  return Object.entries(match).every(([k, v]) => String(labels[k]) === String(v));
}

/** Labels for prom-client, keys sorted: it renders them in the order it first saw them. */
function asPromLabels(labels: Labels | undefined): prom.LabelValues<string> {
  if (!labels) return {};
  const sorted: Labels = {};
  for (const k of Object.keys(labels).sort()) sorted[k] = labels[k] as string | number;
  return sorted;
}

/** A metric's series by label set: the labels of each, and (counters, gauges) its value. */
class Series {
  readonly byKey = new Map<string, { labels: Labels; value: number }>();
  entry(labels: Labels | undefined): { labels: Labels; value: number } {
    const key = labelKey(labels);
    let e = this.byKey.get(key);
    if (!e) {
      e = { labels: { ...labels }, value: 0 };
      this.byKey.set(key, e);
    }
    return e;
  }
  /** The label sets that include every pair of `match`; forgets them. */
  take(match: Labels): Labels[] {
    const taken: Labels[] = [];
    for (const [key, e] of this.byKey) {
      if (matches(e.labels, match)) {
        taken.push(e.labels);
        this.byKey.delete(key);
      }
    }
    return taken;
  }
  sum(match: Labels): number {
    let total = 0;
    for (const e of this.byKey.values()) if (matches(e.labels, match)) total += e.value;
    return total;
  }
}

/**
 * Makes the prom-client metric on first use when its label names were not declared: they are
 * the keys of the first labels it is given.
 */
class Lazy<M> {
  private metric: M | undefined;
  constructor(private readonly make: (labelNames: string[]) => M, labelNames: readonly string[] | undefined) {
    if (labelNames) this.metric = make([...labelNames]);
  }
  for(labels: Labels | undefined): M {
    this.metric ??= this.make(Object.keys(labels ?? {}).sort());
    return this.metric;
  }
  get made(): M | undefined { return this.metric; }
}

export interface MetricOptions {
  labelNames?: readonly string[];
}

export class Counter {
  private readonly prom: Lazy<prom.Counter>;
  private readonly series = new Series();
  constructor(readonly name: string, readonly help: string, registry: prom.Registry, opts: MetricOptions = {}) {
    this.prom = new Lazy((labelNames) => new prom.Counter({ name, help, labelNames, registers: [registry] }), opts.labelNames);
  }
  inc(labels?: Labels, by = 1): void {
    this.prom.for(labels).inc(asPromLabels(labels), by);
    this.series.entry(labels).value += by;
  }
  get(labels?: Labels): number { return this.series.byKey.get(labelKey(labels))?.value ?? 0; }
  /** The sum over the series whose labels include every pair of `match`. */
  sum(match: Labels = {}): number { return this.series.sum(match); }
  /** A child with its labels fixed once, for hot paths (no label formatting per increment). */
  bind(labels: Labels): { inc(by?: number): void } {
    const child = this.prom.for(labels).labels(asPromLabels(labels));
    const entry = this.series.entry(labels);
    return {
      inc: (by = 1) => {
        child.inc(by);
        entry.value += by;
      },
    };
  }
  /** Drops every series whose labels include all of `match` (its subject is gone); returns how many. */
  remove(match: Labels): number {
    const taken = this.series.take(match);
    for (const labels of taken) this.prom.made?.remove(asPromLabels(labels));
    return taken.length;
  }
}

export class Gauge {
  private readonly prom: Lazy<prom.Gauge>;
  private readonly series = new Series();
  constructor(readonly name: string, readonly help: string, registry: prom.Registry, collect?: () => void, opts: MetricOptions = {}) {
    this.prom = new Lazy((labelNames) => new prom.Gauge({
      name, help, labelNames, registers: [registry], ...(collect ? { collect: () => collect() } : {}),
    }), opts.labelNames);
    // A gauge with a collect function renders even before its first value.
    if (collect) this.prom.for(undefined);
  }
  set(value: number, labels?: Labels): void {
    this.prom.for(labels).set(asPromLabels(labels), value);
    this.series.entry(labels).value = value;
  }
  get(labels?: Labels): number { return this.series.byKey.get(labelKey(labels))?.value ?? 0; }
  sum(match: Labels = {}): number { return this.series.sum(match); }
  reset(): void {
    this.prom.made?.reset();
    this.series.byKey.clear();
  }
  /** Drops every series whose labels include all of `match`; returns how many. */
  remove(match: Labels): number {
    const taken = this.series.take(match);
    for (const labels of taken) this.prom.made?.remove(asPromLabels(labels));
    return taken.length;
  }
}

const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Histogram {
  private readonly prom: Lazy<prom.Histogram>;
  private readonly series = new Series();
  constructor(readonly name: string, readonly help: string, registry: prom.Registry, readonly buckets: number[] = DEFAULT_BUCKETS, opts: MetricOptions = {}) {
    this.prom = new Lazy((labelNames) => new prom.Histogram({ name, help, labelNames, buckets, registers: [registry] }), opts.labelNames);
  }
  observe(value: number, labels?: Labels): void {
    this.prom.for(labels).observe(asPromLabels(labels), value);
    this.series.entry(labels);
  }
  /** A child with its labels fixed once, for hot paths. */
  bind(labels: Labels): { observe: (value: number) => void } {
    const child = this.prom.for(labels).labels(asPromLabels(labels));
    this.series.entry(labels);
    return { observe: (value: number) => child.observe(value) };
  }
  /** Drops every series whose labels include all of `match`; returns how many. */
  remove(match: Labels): number {
    const taken = this.series.take(match);
    for (const labels of taken) this.prom.made?.remove(asPromLabels(labels));
    return taken.length;
  }
  /** Starts a timer; calling the result observes the elapsed seconds. */
  startTimer(labels?: Labels): (more?: Labels) => number {
    const start = process.hrtime.bigint();
    return (more?: Labels) => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.observe(seconds, { ...labels, ...more });
      return seconds;
    };
  }
}

type Metric = Counter | Gauge | Histogram;

let processRegistry: prom.Registry | undefined;

/**
 * The process's own metrics, once per process: prom-client's defaults (with the event-loop lag
 * histogram) plus `nodejs_heap_used_bytes`, a name this project exported before prom-client.
 */
function processMetrics(): prom.Registry {
  if (processRegistry) return processRegistry;
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  new prom.Gauge({
    name: 'nodejs_heap_used_bytes',
    help: 'V8 heap used in bytes.',
    registers: [registry],
    collect() { this.set(process.memoryUsage().heapUsed); },
  });
  const build = buildInfo();
  new prom.Gauge({
    name: 'roomkeeper_build_info',
    help: 'Always 1: the build of Roomkeeper this process runs, its version (package.json) and revision (the git commit: ROOMKEEPER_REVISION, set in the image, or the checkout npm start runs from; unknown if neither).',
    labelNames: ['version', 'revision'],
    registers: [registry],
  }).set({ version: build.version, revision: build.revision }, 1);
  processRegistry = registry;
  return registry;
}

/** One registry per component; each part of it registers its metrics here. */
export class MetricsRegistry {
  private readonly registry = new prom.Registry();
  private readonly metrics = new Map<string, Metric>();
  constructor() {
    processMetrics();
  }
  counter(name: string, help: string, opts?: MetricOptions): Counter {
    return this.register(name, Counter, () => new Counter(name, help, this.registry, opts));
  }
  gauge(name: string, help: string, collect?: () => void, opts?: MetricOptions): Gauge {
    return this.register(name, Gauge, () => new Gauge(name, help, this.registry, collect, opts));
  }
  histogram(name: string, help: string, buckets?: number[], opts?: MetricOptions): Histogram {
    return this.register(name, Histogram, () => new Histogram(name, help, this.registry, buckets, opts));
  }
  /** Drops every series, in every metric, whose labels include all of `match` (e.g. a deleted scheduler). */
  removeSeries(match: Labels): number {
    let removed = 0;
    for (const m of this.metrics.values()) removed += m.remove(match);
    return removed;
  }
  /** The sum of a counter's or gauge's series whose labels include `match` (0 if there is none). */
  sum(name: string, match: Labels = {}): number {
    const m = this.metrics.get(name);
    return m instanceof Counter || m instanceof Gauge ? m.sum(match) : 0;
  }
  /** This component's metrics and the process's, in the Prometheus text format. */
  async render(): Promise<string> {
    const own = await this.registry.metrics();
    const proc = await processMetrics().metrics();
    return `${own}\n${proc}`;
  }
  private register<T extends Metric>(name: string, kind: abstract new (...args: never[]) => T, make: () => T): T {
    const existing = this.metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind)) throw new Error(`metric ${name} is already registered as another type`);
      return existing;
    }
    const m = make();
    this.metrics.set(name, m);
    return m;
  }
}

export const PROMETHEUS_CONTENT_TYPE = prom.Registry.PROMETHEUS_CONTENT_TYPE;
